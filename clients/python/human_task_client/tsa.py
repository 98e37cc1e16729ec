"""An RFC 3161 TimeStampResp checked in full (docs/receipt-log.md, "Verifying"): its status, that its
message imprint is SHA-256 of the data, that the CMS SignedData's signed attributes carry the hash
of the TSTInfo (messageDigest) and name the signer's certificate (ESSCertID or ESSCertIDv2), that
the signature over those attributes verifies with that certificate's key (RSA PKCS#1 v1.5 or PSS,
ECDSA), that the certificate may time-stamp (extendedKeyUsage timeStamping, critical, alone, as RFC
3161 section 2.3 says) and, given trusted certificates, that it chains to one of them, every
certificate valid at the token's time.

``cryptography`` (already this package's dependency) parses the certificates and checks every
signature; it has no CMS reader, so the few CMS structures are read here with a strict DER reader
(definite lengths, every element bounded by its parent). The same checks, in the same words, as
the TypeScript client's ``tsa.ts``; both pass docs/tsa-test-vectors.json.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from datetime import datetime, timezone

from cryptography import x509
from cryptography.exceptions import InvalidSignature, UnsupportedAlgorithm
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa
from cryptography.hazmat.primitives.serialization import Encoding
from cryptography.x509.oid import ExtendedKeyUsageOID, ExtensionOID, NameOID

_El = tuple[int, int, int, int]  # tag, header start, contents start, contents end

_SIGNED_DATA = "1.2.840.113549.1.7.2"
_TST_INFO = "1.2.840.113549.1.9.16.1.4"
_CONTENT_TYPE = "1.2.840.113549.1.9.3"
_MESSAGE_DIGEST = "1.2.840.113549.1.9.4"
_SIGNING_CERTIFICATE = "1.2.840.113549.1.9.16.2.12"
_SIGNING_CERTIFICATE_V2 = "1.2.840.113549.1.9.16.2.47"
_RSA = "1.2.840.113549.1.1.1"
_RSA_PSS = "1.2.840.113549.1.1.10"
_MGF1 = "1.2.840.113549.1.1.8"
_EC_PUBLIC_KEY = "1.2.840.10045.2.1"

_HASHES: dict[str, type[hashes.HashAlgorithm]] = {
    "1.3.14.3.2.26": hashes.SHA1,
    "2.16.840.1.101.3.4.2.1": hashes.SHA256,
    "2.16.840.1.101.3.4.2.2": hashes.SHA384,
    "2.16.840.1.101.3.4.2.3": hashes.SHA512,
}
#: Signature algorithms that name their hash (RSA PKCS#1 v1.5, ECDSA); SHA-1 signatures are refused.
_SIGNATURES: dict[str, tuple[str, type[hashes.HashAlgorithm]]] = {
    "1.2.840.113549.1.1.11": ("rsa", hashes.SHA256),
    "1.2.840.113549.1.1.12": ("rsa", hashes.SHA384),
    "1.2.840.113549.1.1.13": ("rsa", hashes.SHA512),
    "1.2.840.10045.4.3.2": ("ecdsa", hashes.SHA256),
    "1.2.840.10045.4.3.3": ("ecdsa", hashes.SHA384),
    "1.2.840.10045.4.3.4": ("ecdsa", hashes.SHA512),
}
_PEM = re.compile(rb"-----BEGIN CERTIFICATE-----.+?-----END CERTIFICATE-----", re.S)


class TimestampError(ValueError):
    """What is wrong with a token, in words a verdict can show."""


@dataclass(frozen=True)
class TimestampVerdict:
    #: The TSA's time (genTime), as written in the token.
    gen_time: str
    #: The signer certificate's subject common name (or "the TSA").
    signer: str
    #: Whether the signer chains to a certificate the caller trusts.
    chained: bool


def _read(buf: bytes, at: int, limit: int | None = None) -> _El:
    """One DER element at ``at``, which must end by ``limit``."""
    limit = len(buf) if limit is None else limit
    if at + 2 > limit:
        raise ValueError("truncated DER")
    tag, length, start = buf[at], buf[at + 1], at + 2
    if tag & 0x1F == 0x1F:
        raise ValueError("unsupported DER tag")
    if length & 0x80:
        count = length & 0x7F
        if count == 0 or count > 4 or start + count > limit:
            raise ValueError("bad DER length")
        length = int.from_bytes(buf[start : start + count], "big")
        start += count
    if start + length > limit:
        raise ValueError("truncated DER")
    return tag, at, start, start + length


def _children(buf: bytes, el: _El) -> list[_El]:
    out, at = [], el[2]
    while at < el[3]:
        child = _read(buf, at, el[3])
        out.append(child)
        at = child[3]
    return out


def _pick(items: list[_El], i: int, tag: int, what: str) -> _El:
    if len(items) <= i or items[i][0] != tag:
        raise TimestampError(f"the token's {what} is malformed")
    return items[i]


def _contents(buf: bytes, el: _El) -> bytes:
    return buf[el[2] : el[3]]


def _whole(buf: bytes, el: _El) -> bytes:
    return buf[el[1] : el[3]]


def _oid(buf: bytes, el: _El) -> str:
    if el[0] != 0x06 or el[3] == el[2]:
        raise ValueError("not an OBJECT IDENTIFIER")
    parts, value = [], 0
    for byte in buf[el[2] : el[3]]:
        value = value * 128 + (byte & 0x7F)
        if not byte & 0x80:
            parts.append(value)
            value = 0
    first = parts.pop(0)
    head = [first // 40, first % 40] if first < 80 else [2, first - 80]
    return ".".join(str(p) for p in head + parts)


def _hash_of(buf: bytes, algorithm: _El) -> type[hashes.HashAlgorithm]:
    name = _oid(buf, _pick(_children(buf, algorithm), 0, 0x06, "hash algorithm"))
    if name not in _HASHES:
        raise TimestampError("the token uses an unknown hash algorithm")
    return _HASHES[name]


def _digest(algorithm: type[hashes.HashAlgorithm], data: bytes) -> bytes:
    return hashlib.new(algorithm.name, data).digest()


def _pss_params(buf: bytes, params: _El | None) -> tuple[type[hashes.HashAlgorithm], int]:
    """RSASSA-PSS-params (RFC 4055): the hash, MGF1 with that same hash, the salt length."""
    hash_, mgf_hash, salt = hashes.SHA1, hashes.SHA1, 20
    for field in _children(buf, params) if params else []:
        inner = _children(buf, field)
        if not inner:
            continue
        if field[0] == 0xA0:
            hash_ = _hash_of(buf, inner[0])
        elif field[0] == 0xA1:
            mgf = _children(buf, inner[0])
            if len(mgf) < 2 or _oid(buf, mgf[0]) != _MGF1:
                raise TimestampError("unsupported RSA-PSS mask generation")
            mgf_hash = _hash_of(buf, mgf[1])
        elif field[0] == 0xA2 and inner[0][0] == 0x02:
            salt = int.from_bytes(_contents(buf, inner[0]), "big")
    if hash_ is not mgf_hash or hash_ is hashes.SHA1:
        raise TimestampError("unsupported RSA-PSS parameters")
    return hash_, salt


def _verify_signer(key: object, buf: bytes, algorithm: _El, signature: bytes, data: bytes, digest: type[hashes.HashAlgorithm]) -> bool:
    """Whether the SignerInfo's ``signature`` over ``data`` verifies with ``key`` under ``algorithm``."""
    fields = _children(buf, algorithm)
    name = _oid(buf, fields[0]) if fields else ""
    if name == _RSA_PSS:
        hash_, salt = _pss_params(buf, fields[1] if len(fields) > 1 else None)
        kind, pad = "rsa", padding.PSS(mgf=padding.MGF1(hash_()), salt_length=salt)
    elif name in _SIGNATURES:
        kind, hash_ = _SIGNATURES[name]
        pad = padding.PKCS1v15()
    elif name in (_RSA, _EC_PUBLIC_KEY) and digest is not hashes.SHA1:
        kind, hash_, pad = ("rsa" if name == _RSA else "ecdsa"), digest, padding.PKCS1v15()
    else:
        raise TimestampError(f"the token's signature cannot be checked: unsupported signature algorithm {name}")
    try:
        if kind == "rsa" and isinstance(key, rsa.RSAPublicKey):
            key.verify(signature, data, pad, hash_())
        elif kind == "ecdsa" and isinstance(key, ec.EllipticCurvePublicKey):
            key.verify(signature, data, ec.ECDSA(hash_()))
        else:
            raise TimestampError("the token's signature cannot be checked: the certificate's key does not fit its algorithm")
    except InvalidSignature:
        return False
    return True


def _issued_by(cert: x509.Certificate, issuer: x509.Certificate) -> bool:
    """Whether ``issuer``'s key signed ``cert`` (RSA PKCS#1 v1.5 or PSS, ECDSA)."""
    key = issuer.public_key()
    algorithm = cert.signature_hash_algorithm
    if algorithm is None or isinstance(algorithm, hashes.SHA1):
        return False
    try:
        if isinstance(key, rsa.RSAPublicKey):
            params = getattr(cert, "signature_algorithm_parameters", None)
            key.verify(cert.signature, cert.tbs_certificate_bytes, params if isinstance(params, padding.PSS) else padding.PKCS1v15(), algorithm)
        elif isinstance(key, ec.EllipticCurvePublicKey):
            key.verify(cert.signature, cert.tbs_certificate_bytes, ec.ECDSA(algorithm))
        else:
            return False
    except (InvalidSignature, UnsupportedAlgorithm, ValueError):
        return False
    return True


def _validity(cert: x509.Certificate) -> tuple[datetime, datetime]:
    before = getattr(cert, "not_valid_before_utc", None) or cert.not_valid_before.replace(tzinfo=timezone.utc)
    after = getattr(cert, "not_valid_after_utc", None) or cert.not_valid_after.replace(tzinfo=timezone.utc)
    return before, after


def _valid_at(cert: x509.Certificate, time: datetime) -> bool:
    before, after = _validity(cert)
    return before <= time <= after


def _is_ca(cert: x509.Certificate) -> bool:
    try:
        return bool(cert.extensions.get_extension_for_oid(ExtensionOID.BASIC_CONSTRAINTS).value.ca)
    except x509.ExtensionNotFound:
        return False


def _may_timestamp(cert: x509.Certificate) -> bool:
    """RFC 3161 section 2.3: extendedKeyUsage timeStamping only, critical."""
    try:
        ext = cert.extensions.get_extension_for_oid(ExtensionOID.EXTENDED_KEY_USAGE)
    except x509.ExtensionNotFound:
        return False
    return ext.critical and list(ext.value) == [ExtendedKeyUsageOID.TIME_STAMPING]


def _chains_to(cert: x509.Certificate, anchors: list[tuple[bytes, x509.Certificate]], pool: list[tuple[bytes, x509.Certificate]], time: datetime, depth: int = 0) -> bool:
    """Whether ``cert`` chains, through the token's certificates, to an anchor, each link signed and valid at ``time``."""
    if any(a == cert for _, a in anchors):
        return True
    if depth > 5:
        return False
    for _, issuer in anchors + pool:
        if issuer.subject != cert.issuer or issuer == cert or not _valid_at(issuer, time):
            continue
        anchor = any(a == issuer for _, a in anchors)
        if not anchor and not _is_ca(issuer):
            continue
        if _issued_by(cert, issuer) and (anchor or _chains_to(issuer, anchors, pool, time, depth + 1)):
            return True
    return False


def _common_name(cert: x509.Certificate) -> str:
    names = cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)
    return str(names[0].value) if names else "the TSA"


def _gen_time(text: str) -> datetime:
    match = re.fullmatch(r"(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})(?:\.\d+)?Z", text)
    if not match:
        raise TimestampError(f'the token\'s genTime "{text[:20]}" is not a UTC time')
    return datetime(*(int(g) for g in match.groups()), tzinfo=timezone.utc)  # type: ignore[misc]


def pem_certificates(pem: str | bytes) -> list[tuple[bytes, x509.Certificate]]:
    """The certificates of PEM text, each with its DER."""
    out = []
    for block in _PEM.findall(pem.encode() if isinstance(pem, str) else pem):
        cert = x509.load_pem_x509_certificate(block)
        out.append((cert.public_bytes(Encoding.DER), cert))
    return out


def _signed_attributes(buf: bytes, el: _El) -> dict[str, object]:
    out: dict[str, object] = {}
    for attr in _children(buf, el):
        parts = _children(buf, attr)
        if len(parts) < 2 or parts[1][0] != 0x31:
            raise TimestampError("the token's signed attributes are malformed")
        values = _children(buf, parts[1])
        if not values:
            continue
        name, value = _oid(buf, parts[0]), values[0]
        if name == _CONTENT_TYPE:
            out["content_type"] = _oid(buf, value)
        elif name == _MESSAGE_DIGEST and value[0] == 0x04:
            out["message_digest"] = _contents(buf, value)
        elif name in (_SIGNING_CERTIFICATE, _SIGNING_CERTIFICATE_V2):
            ids = _children(buf, _pick(_children(buf, value), 0, 0x30, "signing certificate"))
            if not ids:
                raise TimestampError("the token's signing certificate attribute is empty")
            fields = _children(buf, ids[0])
            i, hash_ = 0, hashes.SHA1
            if name == _SIGNING_CERTIFICATE_V2:
                hash_ = hashes.SHA256
                if fields and fields[0][0] == 0x30:
                    hash_ = _hash_of(buf, fields[0])
                    i = 1
            cert_hash = _contents(buf, _pick(fields, i, 0x04, "signing certificate hash"))
            serial = None
            if len(fields) > i + 1 and fields[i + 1][0] == 0x30:
                issuer_serial = _children(buf, fields[i + 1])
                if len(issuer_serial) > 1 and issuer_serial[1][0] == 0x02:
                    serial = int.from_bytes(_contents(buf, issuer_serial[1]), "big", signed=True)
            out["cert_id"] = (hash_, cert_hash, serial)
    return out


def check_timestamp_token(token: bytes, data: bytes, trusted_pem: str | bytes | None = None) -> TimestampVerdict:
    """Checks a TimeStampResp (DER) over ``data``; ``trusted_pem`` holds the certificates the
    caller trusts (a CA's or the TSA's own). Raises TimestampError saying what is wrong."""
    try:
        return _check(token, data, trusted_pem)
    except TimestampError:
        raise
    except (ValueError, IndexError) as error:
        raise TimestampError(f"the token is malformed: {error}") from error


def _check(token: bytes, data: bytes, trusted_pem: str | bytes | None) -> TimestampVerdict:
    resp = _read(token, 0)
    if resp[0] != 0x30 or resp[3] != len(token):
        raise TimestampError("the token is not a TimeStampResp")
    parts = _children(token, resp)
    status_fields = _children(token, parts[0]) if parts and parts[0][0] == 0x30 else []
    if not status_fields or status_fields[0][0] != 0x02:
        raise TimestampError("the token is not a TimeStampResp")
    status = int.from_bytes(_contents(token, status_fields[0]), "big")
    if status not in (0, 1):
        raise TimestampError(f"the TSA refused (PKIStatus {status})")
    if len(parts) < 2:
        raise TimestampError("the response holds no token")
    info = _children(token, parts[1])
    if _oid(token, _pick(info, 0, 0x06, "content type")) != _SIGNED_DATA:
        raise TimestampError("the token is not CMS SignedData")
    signed_data = _children(token, _pick(_children(token, _pick(info, 1, 0xA0, "content")), 0, 0x30, "SignedData"))
    encap = _children(token, _pick(signed_data, 2, 0x30, "encapsulated content"))
    if _oid(token, _pick(encap, 0, 0x06, "content type")) != _TST_INFO:
        raise TimestampError("the token does not carry a TSTInfo")
    tst_info = _contents(token, _pick(_children(token, _pick(encap, 1, 0xA0, "TSTInfo")), 0, 0x04, "TSTInfo"))
    fields = _children(tst_info, _pick([_read(tst_info, 0)], 0, 0x30, "TSTInfo"))
    imprint = _children(tst_info, _pick(fields, 2, 0x30, "message imprint"))
    hashed = _pick(imprint, 1, 0x04, "message imprint")
    if _hash_of(tst_info, _pick(imprint, 0, 0x30, "message imprint")) is not hashes.SHA256 or _contents(tst_info, hashed) != hashlib.sha256(data).digest():
        raise TimestampError("the token signs another hash than the checkpoint")
    gen_time = _contents(tst_info, _pick(fields, 4, 0x18, "genTime")).decode("ascii")
    time = _gen_time(gen_time)

    at, carried = 3, []
    if len(signed_data) > at and signed_data[at][0] == 0xA0:
        for c in _children(token, signed_data[at]):
            if c[0] == 0x30:
                der = _whole(token, c)
                carried.append((der, x509.load_der_x509_certificate(der)))
        at += 1
    if len(signed_data) > at and signed_data[at][0] == 0xA1:
        at += 1
    signer_infos = _children(token, _pick(signed_data, at, 0x31, "signer infos"))
    if len(signer_infos) != 1:
        raise TimestampError(f"the token has {len(signer_infos)} signers, not one")
    signer = _children(token, signer_infos[0])
    digest = _hash_of(token, _pick(signer, 2, 0x30, "digest algorithm"))
    attrs_el = _pick(signer, 3, 0xA0, "signed attributes")
    signature_algorithm = _pick(signer, 4, 0x30, "signature algorithm")
    signature = _contents(token, _pick(signer, 5, 0x04, "signature"))

    attrs = _signed_attributes(token, attrs_el)
    if attrs.get("content_type") != _TST_INFO:
        raise TimestampError("the token's signed content type is not TSTInfo")
    if attrs.get("message_digest") != _digest(digest, tst_info):
        raise TimestampError("the token's messageDigest is not the hash of its TSTInfo: the TSTInfo was changed")
    if "cert_id" not in attrs:
        raise TimestampError("the token names no signing certificate (ESSCertID)")
    id_hash, cert_hash, id_serial = attrs["cert_id"]  # type: ignore[misc]

    trusted = pem_certificates(trusted_pem) if trusted_pem is not None else []
    cert = next(
        (c for der, c in carried + trusted if _digest(id_hash, der) == cert_hash and (id_serial is None or id_serial == c.serial_number)),
        None,
    )
    if cert is None:
        raise TimestampError("the token's signing certificate (ESSCertID) is not among its certificates: the certificate was changed")
    sid = signer[1] if len(signer) > 1 else None
    if sid is not None and sid[0] == 0x30:
        issuer_serial = _children(token, sid)
        if (
            len(issuer_serial) < 2
            or _whole(token, issuer_serial[0]) != cert.issuer.public_bytes()
            or int.from_bytes(_contents(token, issuer_serial[1]), "big", signed=True) != cert.serial_number
        ):
            raise TimestampError("the token's signer is not the certificate its ESSCertID names")

    signed_set = b"\x31" + _whole(token, attrs_el)[1:]  # signed as a SET OF, not the [0] IMPLICIT it is stored as (RFC 5652 section 5.4)
    try:
        verified = _verify_signer(cert.public_key(), token, signature_algorithm, signature, signed_set, digest)
    except (UnsupportedAlgorithm, ValueError) as error:
        if isinstance(error, TimestampError):
            raise
        raise TimestampError(f"the token's signature cannot be checked: {error}") from error
    if not verified:
        raise TimestampError("the token's signature does not verify with its certificate: the token was changed")
    if not _may_timestamp(cert):
        raise TimestampError("the token's certificate is not a time-stamping certificate (extendedKeyUsage timeStamping, critical)")
    if not _valid_at(cert, time):
        raise TimestampError(f"the token's certificate was not valid at {gen_time}")
    chained = bool(trusted)
    if chained and not _chains_to(cert, trusted, carried, time):
        raise TimestampError("the token's certificate does not chain to a trusted TSA certificate")
    return TimestampVerdict(gen_time, _common_name(cert), chained)
