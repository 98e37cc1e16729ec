"""Web Bot Auth (RFC 9421 HTTP Message Signatures as draft-meunier-web-bot-auth-architecture and
draft-meunier-webbotauth-httpsig-protocol use them), on ``cryptography``'s Ed25519. It signs and
checks exactly one shape, the one the service verifies and sends (docs/verified-agents.md)::

    Signature-Agent: "<directory>"
    Signature-Input: sig1=("@authority" "signature-agent");created=…;expires=…;keyid="<RFC 7638 thumbprint>";alg="ed25519";nonce="…";tag="web-bot-auth"
    Signature: sig1=:<base64 Ed25519 signature>:

With the shape fixed, the structured-field serialisation is a string template; the checker refuses
any other shape rather than parse structured fields in general.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import os
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

TAG = "web-bot-auth"
#: The window each signature holds (the service takes at most 300 s).
WINDOW_SECONDS = 60
_COMPONENTS = '("@authority" "signature-agent")'
_CLOCK_SKEW = 30
_INPUT = re.compile(r'^([a-z*][a-z0-9_*.-]*)=(\("@authority" "signature-agent"\)((?:;[a-z*][a-z0-9_*.-]*=(?:"[\x20\x21\x23-\x5b\x5d-\x7e]*"|-?\d{1,15}))*))$')
_PARAM = re.compile(r';([a-z*][a-z0-9_*.-]*)=("[^"]*"|-?\d+)')
_AGENT = re.compile(r'^"([\x21\x23-\x5b\x5d-\x7e]*)"$')


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _b64url_decode(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def jwk_thumbprint(jwk: Mapping[str, Any]) -> str:
    """RFC 7638 thumbprint of an Ed25519 JWK (base64url SHA-256 of its required members): Web Bot Auth's keyid."""
    canonical = json.dumps({"crv": jwk.get("crv"), "kty": jwk.get("kty"), "x": jwk.get("x")}, separators=(",", ":"), sort_keys=True)
    return _b64url(hashlib.sha256(canonical.encode()).digest())


def authority_of(url: str) -> str:
    """``host[:port]`` of a URL as RFC 9421 §2.2.3 covers it (the default port left out, host lower-cased)."""
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    if ":" in host:
        host = f"[{host}]"
    default = {"http": 80, "https": 443}.get(parts.scheme)
    return host if parts.port is None or parts.port == default else f"{host}:{parts.port}"


def _signature_base(authority: str, signature_agent: str, params: str) -> bytes:
    return f'"@authority": {authority}\n"signature-agent": {signature_agent.strip()}\n"@signature-params": {params}'.encode()


@dataclass(frozen=True)
class AgentKey:
    """An agent's signing identity: its Ed25519 private key, and what Signature-Agent names (its origin,
    whose /.well-known/http-message-signatures-directory publishes the public key, or that URL)."""

    private_key: Ed25519PrivateKey
    directory: str

    def __post_init__(self) -> None:
        if not re.match(r"^https?://[\x21-\x7e]+$", self.directory) or '"' in self.directory or "\\" in self.directory:
            raise ValueError("directory must be an http(s) URL (the agent origin or its key directory)")

    @classmethod
    def generate(cls, directory: str) -> AgentKey:
        return cls(Ed25519PrivateKey.generate(), directory)

    @classmethod
    def from_jwk(cls, jwk: Mapping[str, Any], directory: str) -> AgentKey:
        """From an Ed25519 private JWK (kty OKP, crv Ed25519, d)."""
        if jwk.get("kty") != "OKP" or jwk.get("crv") != "Ed25519" or not isinstance(jwk.get("d"), str):
            raise ValueError("the key must be an Ed25519 private JWK (kty OKP, crv Ed25519, d)")
        return cls(Ed25519PrivateKey.from_private_bytes(_b64url_decode(jwk["d"])), directory)

    def public_jwk(self) -> dict[str, str]:
        """The public key as the agent's directory publishes it (a member of its JWKS ``keys``)."""
        raw = self.private_key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
        return {"kty": "OKP", "crv": "Ed25519", "x": _b64url(raw)}

    @property
    def key_id(self) -> str:
        return jwk_thumbprint(self.public_jwk())

    def sign(self, authority: str, now: float | None = None) -> dict[str, str]:
        """Signature-Agent, Signature-Input and Signature for a request to ``authority``; call it per
        request (each signature carries a fresh single-use nonce)."""
        created = int(time.time() if now is None else now)
        nonce = base64.b64encode(os.urandom(32)).decode()
        params = f'{_COMPONENTS};created={created};expires={created + WINDOW_SECONDS};keyid="{self.key_id}";alg="ed25519";nonce="{nonce}";tag="{TAG}"'
        agent = f'"{self.directory}"'
        signature = self.private_key.sign(_signature_base(authority, agent, params))
        return {"signature-agent": agent, "signature-input": f"sig1={params}", "signature": f"sig1=:{base64.b64encode(signature).decode()}:"}


@dataclass(frozen=True)
class WebBotAuthVerdict:
    valid: bool
    detail: str
    #: The keyid (RFC 7638 thumbprint) whose signature verified.
    key_id: str | None = None


def _origin(url: str) -> str | None:
    parts = urlsplit(url)
    return f"{parts.scheme}://{authority_of(url)}" if parts.scheme in ("http", "https") and parts.hostname else None


def verify_web_bot_auth(
    headers: Mapping[str, str],
    jwks: Mapping[str, Any],
    authority: str,
    *,
    now: float | None = None,
    signer_origin: str | None = None,
) -> WebBotAuthVerdict:
    """Checks a request's Web Bot Auth signature (the shape above) against published Ed25519 keys
    (the service's /.well-known/http-message-signatures-directory, the keys of its JWKS), offline:
    tag web-bot-auth, alg ed25519 when named, created/expires holding ``now`` (±30 s) at most 300 s
    apart, keyid the thumbprint of a published key, and the Ed25519 signature over the base for
    ``authority`` (the receiver's host[:port])."""
    lower = {k.lower(): v for k, v in headers.items()}
    signature, signature_input, signature_agent = lower.get("signature"), lower.get("signature-input"), lower.get("signature-agent")
    if not signature or not signature_input or not signature_agent:
        return WebBotAuthVerdict(False, "Signature, Signature-Input and Signature-Agent are all required")
    match = _INPUT.match(signature_input.strip())
    if match is None:
        return WebBotAuthVerdict(False, 'Signature-Input is not one signature over ("@authority" "signature-agent")')
    label, params, param_list = match.group(1), match.group(2), match.group(3)
    values: dict[str, str | int] = {}
    for name, raw in _PARAM.findall(param_list):
        if name in values:
            return WebBotAuthVerdict(False, f"the parameter {name} appears twice")
        values[name] = raw[1:-1] if raw.startswith('"') else int(raw)
    tag, created, expires, keyid, alg = (values.get(k) for k in ("tag", "created", "expires", "keyid", "alg"))
    if tag != TAG:
        return WebBotAuthVerdict(False, f'the tag is not "{TAG}"')
    if alg is not None and alg != "ed25519":
        return WebBotAuthVerdict(False, f"alg is {alg}, expected ed25519")
    if not isinstance(created, int) or not isinstance(expires, int) or not isinstance(keyid, str):
        return WebBotAuthVerdict(False, "created, expires and keyid are required")
    current = time.time() if now is None else now
    if expires <= created or expires - created > 300:
        return WebBotAuthVerdict(False, "the window from created to expires is not 1 to 300 s")
    if created > current + _CLOCK_SKEW:
        return WebBotAuthVerdict(False, "created is in the future")
    if expires < current - _CLOCK_SKEW:
        return WebBotAuthVerdict(False, "the signature has expired")
    agent = _AGENT.match(signature_agent.strip())
    if agent is None:
        return WebBotAuthVerdict(False, "Signature-Agent is not a quoted URL")
    if signer_origin is not None and _origin(agent.group(1)) != _origin(signer_origin):
        return WebBotAuthVerdict(False, f"Signature-Agent names {agent.group(1)}, not {signer_origin}")
    member = re.search(rf"(?:^|,)\s*{re.escape(label)}=:([A-Za-z0-9+/=]*):\s*(?:,|$)", signature)
    try:
        sig = base64.b64decode(member.group(1), validate=True) if member else b""
    except (ValueError, binascii.Error):
        sig = b""
    if len(sig) != 64:
        return WebBotAuthVerdict(False, f"Signature has no Ed25519 signature labelled {label}")
    base = _signature_base(authority.lower(), signature_agent, params)
    for jwk in jwks.get("keys", []):
        if jwk.get("kty") != "OKP" or jwk.get("crv") != "Ed25519" or not isinstance(jwk.get("x"), str) or jwk_thumbprint(jwk) != keyid:
            continue
        try:
            Ed25519PublicKey.from_public_bytes(_b64url_decode(jwk["x"])).verify(sig, base)
        except (ValueError, binascii.Error):
            continue
        except InvalidSignature:
            return WebBotAuthVerdict(False, f"the Web Bot Auth signature does not verify with key {keyid} (for authority {authority})")
        return WebBotAuthVerdict(True, f"Web Bot Auth signature by key {keyid}", keyid)
    return WebBotAuthVerdict(False, f"keyid {keyid} is not a published key")
