"""The Python verifiers reach every verdict of docs/receipt-test-vectors.json."""

from __future__ import annotations

import base64
import hashlib
import json
from typing import Any

import pytest
from conftest import VECTORS

from human_task_client import approval_challenge, passkey_key_id, same_issuer, verify_receipt, verify_webhook

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
        operator_keys=VECTORS_DATA["operator_keys"],
    )
    assert verdict.valid is vector["expected"]["valid"]
    assert verdict.failure == vector["expected"]["failure"]
    assert [{"status": a.status, "problem": a.problem} for a in verdict.approvals] == vector["expected"].get("approvals", [])


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


def _vector(name: str) -> dict[str, Any]:
    return next(v for v in VECTORS_DATA["receipts"] if v["name"] == name)


def test_approvals_without_operator_keys_fail_rather_than_pass_unchecked() -> None:
    verdict = verify_receipt(_vector("v3-valid-approvals")["receipt"], VECTORS_DATA["jwks"])
    assert (verdict.valid, verdict.failure) == (False, "approvals")
    assert [a.problem or a.status for a in verdict.approvals] == ["key", "key", "key", "unsigned"]
    assert "no operator keys given" in verdict.approvals[0].detail


def test_approval_details_name_the_approval_and_the_rule() -> None:
    verdict = verify_receipt(_vector("v3-second-approval-tampered")["receipt"], VECTORS_DATA["jwks"], operator_keys=VECTORS_DATA["operator_keys"])
    assert verdict.approvals[0].detail.endswith("signed, user present and verified")
    assert verdict.approvals[1].detail.startswith("approvals[1] (key ")
    assert "signature does not verify" in verdict.approvals[1].detail
    retired = verify_receipt(_vector("v3-key-retired")["receipt"], VECTORS_DATA["jwks"], operator_keys=VECTORS_DATA["operator_keys"])
    assert "until 2026-11-01T00:00:00.000Z" in retired.approvals[0].detail


def test_approval_challenge_and_key_id_known_answers() -> None:
    subject = {"task_id": "tsk_01JABCDEF", "request_sha256": "a" * 64, "deliverable_sha256": "b" * 64}
    text = '{"deliverable_sha256":"' + "b" * 64 + '","request_sha256":"' + "a" * 64 + '","task_id":"tsk_01JABCDEF"}'
    assert approval_challenge(subject) == base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
    rfc7638 = {
        "kty": "RSA",
        "e": "AQAB",
        "n": "0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw",
    }
    assert passkey_key_id(rfc7638) == "NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs"
