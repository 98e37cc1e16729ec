"""Offline verification of receipts (compact JWS, EdDSA/Ed25519) and webhooks (Standard Webhooks,
asymmetric ``v1a``) against a JWKS. Verdicts list every check and name the first that failed, with
the names of docs/receipt-test-vectors.json, rather than raising.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from .approvals import ApprovalVerdict, verify_approvals
from .web_bot_auth import verify_web_bot_auth

_COMPACT = re.compile(r"^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$")
_HEX64 = re.compile(r"^[0-9a-f]{64}$")


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    detail: str


@dataclass(frozen=True)
class ReceiptVerdict:
    valid: bool
    #: The first check that failed: format, kid, signature, issuer, task_id, deliverable, attachments, approvals.
    failure: str | None
    kid: str | None
    payload: dict[str, Any] | None
    checks: list[Check] = field(default_factory=list)
    #: Each approval of a version-3 receipt, checked (empty for versions 1 and 2).
    approvals: list[ApprovalVerdict] = field(default_factory=list)


@dataclass(frozen=True)
class WebhookVerdict:
    valid: bool
    #: format, timestamp, signature or web_bot_auth.
    failure: str | None
    kid: str | None
    detail: str
    event: dict[str, Any] | None
    #: Whether the request's Web Bot Auth signature (Signature-Input) was checked too; it must verify when present.
    web_bot_auth: bool = False


def _b64url(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _public_key(jwk: Mapping[str, Any]) -> Ed25519PublicKey | None:
    if jwk.get("kty") != "OKP" or jwk.get("crv") != "Ed25519" or not isinstance(jwk.get("x"), str):
        return None
    try:
        return Ed25519PublicKey.from_public_bytes(_b64url(jwk["x"]))
    except (ValueError, binascii.Error):
        return None


def _bytes(data: bytes | bytearray | memoryview | str) -> bytes:
    return data.encode("utf-8") if isinstance(data, str) else bytes(data)


def verify_receipt(
    receipt: str,
    jwks: Mapping[str, Any],
    *,
    issuer: str | None = None,
    task_id: str | None = None,
    operator_notes: str | None = None,
    files: Mapping[str, bytes] | None = None,
    operator_keys: Mapping[str, Any] | None = None,
) -> ReceiptVerdict:
    """Verifies a receipt. ``files`` maps file names to their bytes: matched by content against a
    version-2 or 3 receipt's attachments (each signed file present, each given file signed).
    ``operator_keys`` is the service's /.well-known/operator-keys.json: each passkey attestation of a
    version-3 receipt is checked against it (without it, attested approvals fail)."""
    checks: list[Check] = []
    approvals: list[ApprovalVerdict] = []

    def done(kid: str | None, payload: dict[str, Any] | None) -> ReceiptVerdict:
        failed = next((c for c in checks if not c.ok), None)
        failure = None if failed is None else ("format" if failed.name == "payload" else failed.name)
        return ReceiptVerdict(failed is None, failure, kid, payload, checks, approvals)

    token = receipt.strip()
    try:
        if not _COMPACT.match(token):
            raise ValueError("not a compact JWS (three base64url parts)")
        header = json.loads(_b64url(token.split(".")[0]))
        if not isinstance(header, dict) or header.get("alg") != "EdDSA":
            raise ValueError("alg is not EdDSA")
        kid = header.get("kid")
        if not isinstance(kid, str) or not kid:
            raise ValueError("the header names no kid")
        checks.append(Check("format", True, "compact JWS, alg EdDSA"))
    except (ValueError, binascii.Error) as error:
        checks.append(Check("format", False, str(error)))
        return done(None, None)

    jwk = next((k for k in jwks.get("keys", []) if k.get("kid") == kid), None)
    checks.append(Check("kid", jwk is not None, f"key {kid} is published" if jwk else f"key {kid} is not in the JWKS"))
    if jwk is None:
        return done(kid, None)

    head, body, signature = token.split(".")
    key = _public_key(jwk)
    try:
        if key is None:
            raise InvalidSignature("the published key is not Ed25519")
        key.verify(_b64url(signature), f"{head}.{body}".encode("ascii"))
        payload = json.loads(_b64url(body))
        if not isinstance(payload, dict):
            raise ValueError("the payload is not an object")
        checks.append(Check("signature", True, f"signature valid (Ed25519, key {kid})"))
    except (InvalidSignature, ValueError, binascii.Error) as error:
        checks.append(Check("signature", False, f"signature invalid{': ' + str(error) if str(error) else ''}"))
        return done(kid, None)

    problems = _payload_problems(payload)
    checks.append(Check("payload", not problems, "; ".join(problems) or f"receipt_version {payload['receipt_version']}"))
    if problems:
        return done(kid, payload)
    if issuer is not None:
        expected = issuer.rstrip("/")
        ok = same_issuer(payload.get("iss"), expected)
        checks.append(Check("issuer", ok, f"issued by {expected}" if ok else f"issued by {payload.get('iss')}, not {expected}"))
    if task_id is not None:
        ok = payload.get("task_id") == task_id and payload.get("sub") == task_id
        checks.append(Check("task_id", ok, f"for {task_id}" if ok else f"for {payload.get('task_id')}, not {task_id}"))
    if operator_notes is not None:
        actual = hashlib.sha256(operator_notes.encode("utf-8")).hexdigest()
        ok = actual == payload.get("deliverable_sha256")
        checks.append(Check("deliverable", ok, f"deliverable sha256 {actual}" if ok else f"deliverable sha256 is {actual}, the receipt signed {payload.get('deliverable_sha256')}"))
    if files is not None:
        checks.append(_attachment_check(payload.get("attachments") or [] if payload.get("receipt_version") in (2, 3) else [], files))
    if payload.get("receipt_version") == 3:
        ok, detail, checked = verify_approvals(payload, operator_keys)
        approvals.extend(checked)
        checks.append(Check("approvals", ok, detail))
    return done(kid, payload)


_DEFAULT_PORTS = {"http": 80, "https": 443}
_LOOPBACK_V4 = re.compile(r"^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$")


def same_issuer(iss: Any, expected: str) -> bool:
    """The one issuer rule, shared with the server's CLI and the TypeScript client and pinned by
    ``issuer_cases`` in docs/receipt-test-vectors.json: same origin and path (scheme and port equal,
    default ports filled in; paths equal without trailing slashes; hosts equal ignoring case), and
    any two loopback hosts (localhost, 127.0.0.0/8, [::1]) count as one host."""
    if not isinstance(iss, str):
        return False
    a, b = _parse_issuer(iss), _parse_issuer(expected)
    if a is None or b is None:
        return iss.strip().rstrip("/") == expected.strip().rstrip("/")
    same_host = a[1] == b[1] or (_is_loopback(a[1]) and _is_loopback(b[1]))
    return a[0] == b[0] and a[2] == b[2] and a[3] == b[3] and same_host


def _parse_issuer(value: str) -> tuple[str, str, int, str] | None:
    try:
        parts = urlsplit(value.strip())
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS or not parts.hostname:
        return None
    return scheme, parts.hostname.lower(), port if port is not None else _DEFAULT_PORTS[scheme], parts.path.rstrip("/")


def _is_loopback(host: str) -> bool:
    return host in ("localhost", "::1") or bool(_LOOPBACK_V4.match(host))


def _payload_problems(payload: Mapping[str, Any]) -> list[str]:
    problems = []
    version = payload.get("receipt_version")
    if version not in (1, 2, 3) or isinstance(version, bool):
        problems.append(f"unknown receipt_version {version}")
    if version == 3 and not (isinstance(payload.get("approvals"), list) and payload["approvals"]):
        problems.append("approvals is not a non-empty list")
    if version in (2, 3) and not (isinstance(payload.get("attachments"), list) and all(_well_formed(a) for a in payload["attachments"])):
        problems.append("attachments is not a list of {name, media_type, size, sha256}")
    if not isinstance(payload.get("task_id"), str) or payload.get("sub") != payload.get("task_id"):
        problems.append("sub and task_id differ")
    if not isinstance(payload.get("deliverable_sha256"), str) or not _HEX64.match(payload["deliverable_sha256"]):
        problems.append("deliverable_sha256 is not a SHA-256 hex digest")
    return problems


def _well_formed(attachment: Any) -> bool:
    return (
        isinstance(attachment, dict)
        and isinstance(attachment.get("name"), str)
        and isinstance(attachment.get("media_type"), str)
        and isinstance(attachment.get("size"), int)
        and not isinstance(attachment.get("size"), bool)
        and isinstance(attachment.get("sha256"), str)
        and bool(_HEX64.match(attachment["sha256"]))
    )


def _attachment_check(signed: Sequence[Mapping[str, Any]], files: Mapping[str, bytes]) -> Check:
    """Every signed file present (by SHA-256 and size), and no received file the receipt does not sign."""
    received = [(name, len(_bytes(data)), hashlib.sha256(_bytes(data)).hexdigest()) for name, data in files.items()]
    problems = []
    for attachment in signed:
        if not any(digest == attachment.get("sha256") and size == attachment.get("size") for _, size, digest in received):
            problems.append(f"{attachment.get('name')} (sha256 {attachment.get('sha256')}) is missing or altered")
    for name, _, digest in received:
        if not any(attachment.get("sha256") == digest for attachment in signed):
            problems.append(f"{name} (sha256 {digest}) is not covered by the receipt")
    if problems:
        return Check("attachments", False, "; ".join(problems))
    return Check("attachments", True, f"all {len(signed)} file(s) match their signed sha256" if signed else "the receipt signs no files, and none were given")


def _header(headers: Mapping[str, str], name: str) -> str | None:
    for key, value in headers.items():
        if key.lower() == name:
            return value
    return None


def verify_webhook(
    headers: Mapping[str, str],
    body: bytes | str,
    jwks: Mapping[str, Any],
    *,
    now: float | None = None,
    tolerance_seconds: float = 300,
    authority: str | None = None,
    signer_origin: str | None = None,
    require_web_bot_auth: bool = False,
) -> WebhookVerdict:
    """Standard Webhooks, asymmetric: ``webhook-signature`` holds space-separated
    ``v1a,<base64 Ed25519 signature>`` entries over "<webhook-id>.<webhook-timestamp>.<raw body>";
    any published key may have signed. Pass the raw body exactly as received.

    A webhook carrying a Web Bot Auth signature (Signature-Input) must also verify as one, with the
    same published keys, for ``authority`` (default: its Host header) and, when given, a
    Signature-Agent naming ``signer_origin`` (the service's BASE_URL); ``require_web_bot_auth``
    refuses a webhook without one."""
    webhook_id = _header(headers, "webhook-id")
    timestamp = _header(headers, "webhook-timestamp")
    signature = _header(headers, "webhook-signature")
    if not webhook_id or not timestamp or not signature or not timestamp.isdigit():
        return WebhookVerdict(False, "format", None, "webhook-id, webhook-timestamp (Unix seconds) and webhook-signature are required", None)
    current = time.time() if now is None else now
    if abs(current - int(timestamp)) > tolerance_seconds:
        return WebhookVerdict(False, "timestamp", None, f"webhook-timestamp is {abs(current - int(timestamp)):.0f} s from now (tolerance {tolerance_seconds:.0f} s)", None)
    raw = _bytes(body)
    signed = webhook_id.encode() + b"." + timestamp.encode() + b"." + raw
    candidates = []
    for part in signature.split(" "):
        if part.startswith("v1a,"):
            try:
                sig = base64.b64decode(part[4:], validate=True)
            except (ValueError, binascii.Error):
                continue
            if len(sig) == 64:
                candidates.append(sig)
    if not candidates:
        return WebhookVerdict(False, "signature", None, "no v1a (Ed25519) signature in webhook-signature", None)
    for jwk in jwks.get("keys", []):
        key = _public_key(jwk)
        if key is None:
            continue
        for sig in candidates:
            try:
                key.verify(sig, signed)
            except InvalidSignature:
                continue
            try:
                event = json.loads(raw)
            except ValueError:
                return WebhookVerdict(False, "format", None, "the signed body is not JSON", None)
            valid = WebhookVerdict(True, None, jwk.get("kid"), f"signed by key {jwk.get('kid')}", event)
            return _with_web_bot_auth(valid, headers, jwks, current, authority, signer_origin, require_web_bot_auth)
    return WebhookVerdict(False, "signature", None, "no published key verifies any v1a signature", None)


def _with_web_bot_auth(
    valid: WebhookVerdict, headers: Mapping[str, str], jwks: Mapping[str, Any], now: float, authority: str | None, signer_origin: str | None, required: bool
) -> WebhookVerdict:
    """A Standard-Webhooks-valid verdict after its Web Bot Auth signature is checked (docs/verified-agents.md, Outbound)."""
    if _header(headers, "signature-input") is None:
        if not required:
            return valid
        return WebhookVerdict(False, "web_bot_auth", valid.kid, "the webhook carries no Web Bot Auth signature", None)
    target = authority or _header(headers, "host")
    if target is None:
        return WebhookVerdict(False, "web_bot_auth", valid.kid, "no authority (Host) to check the Web Bot Auth signature against", None, True)
    wba = verify_web_bot_auth(headers, jwks, target, now=now, signer_origin=signer_origin)
    if not wba.valid:
        return WebhookVerdict(False, "web_bot_auth", valid.kid, wba.detail, None, True)
    return WebhookVerdict(True, None, valid.kid, f"{valid.detail}; {wba.detail}", valid.event, True)
