"""The Python verifiers reach every verdict of docs/receipt-test-vectors.json."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from conftest import VECTORS

from human_task_client import same_issuer, verify_receipt, verify_webhook

VECTORS_DATA: dict[str, Any] = json.loads(VECTORS.read_text(encoding="utf-8"))


@pytest.mark.parametrize("vector", VECTORS_DATA["receipts"], ids=lambda v: v["name"])
def test_receipt_vector(vector: dict[str, Any]) -> None:
    files = {f["name"]: base64.b64decode(f["content_base64"]) for f in vector["files"]} if "files" in vector else None
    verdict = verify_receipt(
        vector["receipt"],
        VECTORS_DATA["jwks"],
        issuer=vector["expected_issuer"],
        task_id=vector["expected_task_id"],
        operator_notes=vector["operator_notes"],
        files=files,
    )
    assert verdict.valid is vector["expected"]["valid"]
    assert verdict.failure == vector["expected"]["failure"]


@pytest.mark.parametrize("case", VECTORS_DATA["issuer_cases"], ids=lambda c: f"{c['iss']} ~ {c['expected_issuer']}")
def test_issuer_rule(case: dict[str, Any]) -> None:
    assert same_issuer(case["iss"], case["expected_issuer"]) is case["same"]


@pytest.mark.parametrize("vector", VECTORS_DATA["webhooks"], ids=lambda v: v["name"])
def test_webhook_vector(vector: dict[str, Any]) -> None:
    verdict = verify_webhook(vector["headers"], vector["body"], VECTORS_DATA["jwks"], now=VECTORS_DATA["now"], tolerance_seconds=VECTORS_DATA["webhook_tolerance_seconds"])
    assert verdict.valid is vector["expected"]["valid"]
    assert verdict.failure == vector["expected"]["failure"]
    if verdict.valid:
        assert verdict.event is not None and verdict.event["type"] == "task.delivered"


def test_webhook_body_as_bytes() -> None:
    vector = next(v for v in VECTORS_DATA["webhooks"] if v["name"] == "valid")
    assert verify_webhook(vector["headers"], vector["body"].encode(), VECTORS_DATA["jwks"], now=VECTORS_DATA["now"]).valid


def test_webhook_without_headers_is_a_format_failure() -> None:
    verdict = verify_webhook({}, "{}", VECTORS_DATA["jwks"], now=VECTORS_DATA["now"])
    assert (verdict.valid, verdict.failure) == (False, "format")
