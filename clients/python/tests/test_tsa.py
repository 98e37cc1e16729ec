"""The Python client's RFC 3161 check reaches every verdict of docs/tsa-test-vectors.json: tokens
from a real ``openssl ts -reply`` with test CAs, and changed copies (a flipped signature byte, a
changed TSTInfo, another certificate, another imprint, another CA, a refusal, garbage)."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from conftest import REPO

from human_task_client.tsa import TimestampError, check_timestamp_token

TSA_VECTORS: dict[str, Any] = json.loads((REPO / "docs" / "tsa-test-vectors.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("case", TSA_VECTORS["cases"], ids=lambda c: c["name"])
def test_tsa_vector(case: dict[str, Any]) -> None:
    trusted = TSA_VECTORS["certificates"][case["trusted"]] if case["trusted"] is not None else None
    expected = case["expected"]
    try:
        verdict = check_timestamp_token(base64.b64decode(case["token"]), TSA_VECTORS["data"].encode(), trusted)
    except TimestampError as error:
        assert not expected["valid"], str(error)
        assert expected["error"] in str(error)
        return
    assert expected["valid"], f"{case['name']} should fail with {expected.get('error')}"
    assert verdict.chained is expected["chained"]
    assert len(verdict.gen_time) >= 15 and verdict.gen_time.endswith("Z")
