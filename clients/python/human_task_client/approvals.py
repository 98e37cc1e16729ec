"""Offline check of the passkey-signed approvals of a receipt_version 3, against the service's
/.well-known/operator-keys.json: the same rules, in the same order, as the server's
src/receipts/approval-verify.ts and the TypeScript client, pinned by the ``approvals`` vectors of
docs/receipt-test-vectors.json.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

_B64URL = re.compile(r"^[A-Za-z0-9_-]+$")
_FLAG_UP = 0x01
_FLAG_UV = 0x04
_MIN_AUTHENTICATOR_DATA = 37
_CURVES = {"P-256": (ec.SECP256R1, hashes.SHA256, 32), "P-384": (ec.SECP384R1, hashes.SHA384, 48), "P-521": (ec.SECP521R1, hashes.SHA512, 66)}
_HASHES = {"256": hashes.SHA256, "384": hashes.SHA384, "512": hashes.SHA512}


@dataclass(frozen=True)
class ApprovalVerdict:
    index: int
    key_id: str | None
    at: str | None
    #: signed: the attestation verifies; unsigned: approved with a key sign-in (attestation null), not a failure; invalid.
    status: str
    #: The first rule broken: format, key, type, challenge, user_present or signature; None unless invalid.
    problem: str | None
    user_verified: bool
    detail: str


class _ApprovalError(Exception):
    def __init__(self, problem: str, message: str) -> None:
        super().__init__(message)
        self.problem = problem


def _b64url(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _b64url_encode(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def approval_challenge(subject: Mapping[str, Any]) -> str:
    """The approval challenge as clientDataJSON carries it: base64url of the SHA-256 of the RFC 8785
    JSON of {task_id, request_sha256, deliverable_sha256} (three strings: members in code-point order,
    no whitespace, non-ASCII kept as UTF-8)."""
    canonical = json.dumps(
        {name: subject[name] for name in ("deliverable_sha256", "request_sha256", "task_id")}, separators=(",", ":"), ensure_ascii=False, sort_keys=True
    )
    return _b64url_encode(hashlib.sha256(canonical.encode("utf-8")).digest())


def passkey_key_id(jwk: Mapping[str, Any]) -> str:
    """The RFC 7638 thumbprint (SHA-256, base64url) of a public JWK (EC, OKP or RSA): a passkey's key_id."""
    members = {"EC": ("crv", "kty", "x", "y"), "OKP": ("crv", "kty", "x"), "RSA": ("e", "kty", "n")}.get(str(jwk.get("kty")))
    if members is None:
        raise ValueError(f"unsupported key type {jwk.get('kty')}")
    required = {}
    for name in members:
        value = jwk.get(name)
        if not isinstance(value, str) or not value:
            raise ValueError(f"the jwk has no {name}")
        required[name] = value
    return _b64url_encode(hashlib.sha256(json.dumps(required, separators=(",", ":"), sort_keys=True).encode("utf-8")).digest())


def verify_approvals(payload: Mapping[str, Any], operator_keys: Mapping[str, Any] | None) -> tuple[bool, str, list[ApprovalVerdict]]:
    """Checks every approval of a version-3 receipt payload. Without ``operator_keys``, attested
    approvals fail (key); an approval without a passkey (attestation null) never needs them."""
    approvals = payload.get("approvals")
    if not isinstance(approvals, list):
        return False, "approvals is not a list", []
    challenge = approval_challenge(payload)
    verdicts = [_verify_one(index, entry, challenge, operator_keys) for index, entry in enumerate(approvals)]
    failed = [v for v in verdicts if v.status == "invalid"]
    if failed:
        return False, "; ".join(v.detail for v in failed), verdicts
    signed = sum(1 for v in verdicts if v.status == "signed")
    parts = [f"{signed} signed by a published passkey"]
    if len(verdicts) > signed:
        parts.append(f"{len(verdicts) - signed} unsigned (key sign-in)")
    return True, f"{len(verdicts)} approval(s): {', '.join(parts)}", verdicts


def _parse_time(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    return parsed if parsed.tzinfo is not None else None


def _verify_one(index: int, entry: Any, challenge: str, operator_keys: Mapping[str, Any] | None) -> ApprovalVerdict:
    record = entry if isinstance(entry, dict) else {}
    key_id = record.get("key_id") if isinstance(record.get("key_id"), str) else None
    at = record.get("at") if isinstance(record.get("at"), str) else None
    label = f"approvals[{index}]" + ("" if key_id is None else f" (key {key_id})")

    def verdict(status: str, problem: str | None, detail: str, user_verified: bool = False) -> ApprovalVerdict:
        return ApprovalVerdict(index, key_id, at, status, problem, user_verified, f"{label}: {detail}")

    try:
        at_time = _parse_time(at)
        if (key_id is None and record.get("key_id") is not None) or at_time is None or "attestation" not in record:
            raise _ApprovalError("format", "not an approval {key_id, at (a date-time), attestation}")
        if record["attestation"] is None:
            return verdict("unsigned", None, "unsigned (key sign-in)")
        if key_id is None:
            raise _ApprovalError("format", "an attestation without a key_id")
        authenticator_data, client_data_json, client_data, signature = _decode_attestation(record["attestation"])
        key = _published_key(key_id, at_time, str(at), operator_keys)
        if client_data.get("type") != "webauthn.get":
            raise _ApprovalError("type", f'client_data_json type is {json.dumps(client_data.get("type"))}, not "webauthn.get"')
        if client_data.get("challenge") != challenge:
            raise _ApprovalError(
                "challenge",
                f"client_data_json challenge is {json.dumps(client_data.get('challenge'))}, not {challenge} "
                "(the approval challenge of this task_id, request_sha256 and deliverable_sha256)",
            )
        flags = authenticator_data[32]
        if not flags & _FLAG_UP:
            raise _ApprovalError("user_present", "authenticator_data does not set the user-present (UP) flag")
        if not _signature_valid(key, authenticator_data + hashlib.sha256(client_data_json).digest(), signature):
            raise _ApprovalError("signature", "signature does not verify over authenticator_data and SHA-256(client_data_json) with this key")
        user_verified = bool(flags & _FLAG_UV)
        return verdict("signed", None, f"signed, user present{' and verified' if user_verified else ' (not verified)'}", user_verified)
    except _ApprovalError as error:
        return verdict("invalid", error.problem, str(error))


def _decode_attestation(value: Any) -> tuple[bytes, bytes, dict[str, Any], bytes]:
    if not isinstance(value, dict):
        raise _ApprovalError("format", "attestation is neither null nor an object")

    def field(name: str) -> bytes:
        text = value.get(name)
        try:
            if not isinstance(text, str) or not _B64URL.match(text):
                raise ValueError
            return _b64url(text)
        except (ValueError, binascii.Error):
            raise _ApprovalError("format", f"attestation.{name} is not base64url") from None

    authenticator_data, client_data_json, signature = field("authenticator_data"), field("client_data_json"), field("signature")
    if len(authenticator_data) < _MIN_AUTHENTICATOR_DATA:
        raise _ApprovalError("format", f"attestation.authenticator_data is {len(authenticator_data)} bytes, fewer than {_MIN_AUTHENTICATOR_DATA}")
    try:
        client_data = json.loads(client_data_json.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        client_data = None
    if not isinstance(client_data, dict):
        raise _ApprovalError("format", "attestation.client_data_json is not a JSON object")
    return authenticator_data, client_data_json, client_data, signature


def _published_key(key_id: str, at_time: datetime, at: str, operator_keys: Mapping[str, Any] | None) -> tuple[Any, str]:
    if operator_keys is None:
        raise _ApprovalError("key", "no operator keys given to check the attestation against (/.well-known/operator-keys.json)")
    keys = operator_keys.get("keys")
    entry = next((k for k in keys if isinstance(k, dict) and k.get("key_id") == key_id), None) if isinstance(keys, list) else None
    if entry is None:
        raise _ApprovalError("key", "key_id is not in the operator keys")
    since = _parse_time(entry.get("since"))
    until = None if entry.get("until") is None else _parse_time(entry.get("until"))
    if since is None or (entry.get("until") is not None and until is None):
        raise _ApprovalError("key", "the published key has no valid since/until")
    if at_time < since or (until is not None and at_time >= until):
        period = "on" if until is None else f"until {entry.get('until')}"
        raise _ApprovalError("key", f"approved at {at}, but the key was valid from {entry.get('since')} {period}")
    jwk = entry.get("jwk") if isinstance(entry.get("jwk"), dict) else {}
    try:
        thumbprint = passkey_key_id(jwk)
        key = _import_key(jwk)
    except (ValueError, binascii.Error, TypeError) as error:
        raise _ApprovalError("key", f"the published jwk is not a usable public key ({error})") from None
    if thumbprint != key_id:
        raise _ApprovalError("key", f"the published jwk's thumbprint is {thumbprint}, not the key_id")
    return key


def _import_key(jwk: Mapping[str, Any]) -> tuple[Any, str]:
    alg = jwk.get("alg") if isinstance(jwk.get("alg"), str) else None
    if jwk["kty"] == "EC":
        curve = _CURVES.get(str(jwk.get("crv")))
        if curve is None:
            raise ValueError(f"unsupported curve {jwk.get('crv')}")
        numbers = ec.EllipticCurvePublicNumbers(int.from_bytes(_b64url(jwk["x"]), "big"), int.from_bytes(_b64url(jwk["y"]), "big"), curve[0]())
        return numbers.public_key(), alg or f"ES{curve[1].digest_size * 8}"
    if jwk["kty"] == "OKP":
        if jwk.get("crv") != "Ed25519":
            raise ValueError(f"unsupported curve {jwk.get('crv')}")
        return Ed25519PublicKey.from_public_bytes(_b64url(jwk["x"])), "EdDSA"
    numbers = rsa.RSAPublicNumbers(int.from_bytes(_b64url(jwk["e"]), "big"), int.from_bytes(_b64url(jwk["n"]), "big"))
    return numbers.public_key(), alg or "RS256"


def _signature_valid(key: tuple[Any, str], data: bytes, signature: bytes) -> bool:
    """WebAuthn signatures: ECDSA as ASN.1 DER (as cryptography takes it), Ed25519 raw, RSA PKCS#1 v1.5 or PSS."""
    public_key, alg = key
    digest = _HASHES.get(alg[2:])
    try:
        if alg == "EdDSA":
            public_key.verify(signature, data)
        elif alg.startswith("ES") and digest is not None:
            public_key.verify(signature, data, ec.ECDSA(digest()))
        elif alg.startswith("PS") and digest is not None:
            public_key.verify(signature, data, padding.PSS(mgf=padding.MGF1(digest()), salt_length=digest.digest_size), digest())
        elif alg.startswith("RS") and digest is not None:
            public_key.verify(signature, data, padding.PKCS1v15(), digest())
        else:
            return False
    except (InvalidSignature, ValueError, TypeError):
        return False
    return True
