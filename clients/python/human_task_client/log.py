"""Offline verification of a receipt's place in the service's public, append-only log
(docs/receipt-log.md): the C2SP tlog-proof (GET /api/v1/tasks/{task_id}/receipt-proof), the
checkpoint's Ed25519 signed-note signature by the log's verifier key (/log/vkey), the RFC 9162
inclusion path from the receipt to the signed root, the RFC 3161 token when the proof carries one
(its imprint, CMS signature and certificate, and with ``tsa_ca`` its chain: ``tsa.py``), and, given
a checkpoint kept earlier and a consistency proof (GET /log/consistency?from=N), that the log only
grew since. Every check is named, so a changed byte is named by the part it is in.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import re
from dataclasses import dataclass, field

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from .tsa import TimestampError, check_timestamp_token
from .verify import Check

_HASH = 32
_SIGNATURE = re.compile(r"^\u2014 (\S+) ([A-Za-z0-9+/]+=*)$")


@dataclass(frozen=True)
class LogVerdict:
    valid: bool
    #: The first check that failed: log_proof, log_checkpoint, log_inclusion, log_timestamp, log_consistency.
    failure: str | None
    index: int | None
    tree_size: int | None
    #: The time-stamp authority's time (genTime), when the proof carries a token.
    timestamp: str | None
    checks: list[Check] = field(default_factory=list)


@dataclass(frozen=True)
class _Checkpoint:
    origin: str
    size: int
    root: bytes
    body: str
    signatures: list[tuple[str, bytes]]


def _b64(text: str) -> bytes:
    try:
        raw = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError) as error:
        raise ValueError("not base64") from error
    if base64.b64encode(raw).decode() != text:
        raise ValueError("not canonical base64")
    return raw


def _sha(*parts: bytes) -> bytes:
    h = hashlib.sha256()
    for p in parts:
        h.update(p)
    return h.digest()


def _node(left: bytes, right: bytes) -> bytes:
    return _sha(b"\x01", left, right)


def _parse_checkpoint(note: str) -> _Checkpoint:
    split = note.find("\n\n")
    if split < 0:
        raise ValueError("no blank line between the checkpoint and its signatures")
    body = note[: split + 1]
    lines = body.split("\n")
    origin, size, root = (lines + ["", "", ""])[:3]
    if not origin:
        raise ValueError("the checkpoint names no origin")
    if not re.fullmatch(r"0|[1-9][0-9]*", size):
        raise ValueError("the tree size is not a decimal number")
    root_bytes = _b64(root)
    if len(root_bytes) != _HASH:
        raise ValueError("the root hash is not 32 bytes of base64")
    signatures = []
    for line in note[split + 2 :].split("\n"):
        if not line:
            continue
        match = _SIGNATURE.fullmatch(line)
        if not match:
            raise ValueError("a signature line is malformed")
        signatures.append((match.group(1), _b64(match.group(2))))
    return _Checkpoint(origin, int(size), root_bytes, body, signatures)


def _hashes_then_note(lines: list[str], at: int) -> tuple[list[bytes], str]:
    hashes = []
    while at < len(lines) and lines[at] != "":
        h = _b64(lines[at])
        if len(h) != _HASH:
            raise ValueError(f"line {at + 1} is not a base64 SHA-256 hash")
        hashes.append(h)
        at += 1
    if at >= len(lines):
        raise ValueError("no blank line before the checkpoint")
    return hashes, "\n".join(lines[at + 1 :])


def _parse_proof(text: str) -> tuple[str | None, int, list[bytes], str]:
    lines = text.split("\n")
    if lines[0] != "c2sp.org/tlog-proof@v1":
        raise ValueError("the first line is not c2sp.org/tlog-proof@v1")
    at = 1
    extra = None
    if len(lines) > at and lines[at].startswith("extra "):
        extra = lines[at][6:]
        at += 1
    match = re.fullmatch(r"index (0|[1-9][0-9]*)", lines[at] if len(lines) > at else "")
    if not match:
        raise ValueError(f'line {at + 1} is not "index <n>"')
    hashes, note = _hashes_then_note(lines, at + 1)
    return extra, int(match.group(1)), hashes, note


def _parse_consistency(text: str) -> tuple[int, list[bytes], str]:
    lines = text.split("\n")
    if lines[0] != "tlog-consistency@v1":
        raise ValueError("the first line is not tlog-consistency@v1")
    match = re.fullmatch(r"old (0|[1-9][0-9]*)", lines[1] if len(lines) > 1 else "")
    if not match:
        raise ValueError('line 2 is not "old <size>"')
    hashes, note = _hashes_then_note(lines, 2)
    return int(match.group(1)), hashes, note


def _signed_by(checkpoint: _Checkpoint, vkey: str) -> tuple[bool, str]:
    name, _, rest = vkey.strip().partition("+")
    hash_hex, _, key_b64 = rest.partition("+")
    try:
        key = _b64(key_b64)
    except ValueError:
        key = b""
    if len(key) != 33 or key[0] != 1:
        return False, "the verifier key is not an Ed25519 signed-note key"
    key_hash = _sha(f"{name}\n".encode(), key)[:4]
    if key_hash.hex() != hash_hex:
        return False, "the verifier key's hash does not match its name and key"
    if checkpoint.origin != name:
        return False, f"the checkpoint is of log {checkpoint.origin}, the key of {name}"
    raw = next((r for n, r in checkpoint.signatures if n == name and r[:4] == key_hash), None)
    if raw is None:
        return False, f"no signature by {name} (key hash {hash_hex})"
    try:
        if len(raw) != 68:
            raise InvalidSignature
        Ed25519PublicKey.from_public_bytes(key[1:]).verify(raw[4:], checkpoint.body.encode())
    except InvalidSignature:
        return False, f"the signature by {name} does not verify: the checkpoint was changed"
    return True, f"signed by {name} (key {hash_hex}), tree size {checkpoint.size}"


def _root_from_inclusion(index: int, size: int, leaf: bytes, proof: list[bytes]) -> bytes | None:
    """RFC 9162 section 2.1.3.2."""
    if index >= size:
        return None
    fn, sn, r = index, size - 1, leaf
    for p in proof:
        if sn == 0:
            return None
        if fn % 2 == 1 or fn == sn:
            r = _node(p, r)
            while fn % 2 == 0 and fn != 0:
                fn, sn = fn >> 1, sn >> 1
        else:
            r = _node(r, p)
        fn, sn = fn >> 1, sn >> 1
    return r if sn == 0 else None


def verify_consistency_proof(m: int, old_root: bytes, n: int, new_root: bytes, proof: list[bytes]) -> bool:
    """RFC 9162 section 2.1.4.2: whether the tree (m, old_root) is a prefix of (n, new_root)."""
    if m > n:
        return False
    if m == n:
        return not proof and old_root == new_root
    if m == 0:
        return not proof
    if not proof:
        return False
    path = [old_root, *proof] if m & (m - 1) == 0 else list(proof)
    fn, sn = m - 1, n - 1
    while fn % 2 == 1:
        fn, sn = fn >> 1, sn >> 1
    fr = sr = path[0]
    for c in path[1:]:
        if sn == 0:
            return False
        if fn % 2 == 1 or fn == sn:
            fr, sr = _node(c, fr), _node(c, sr)
            while fn % 2 == 0 and fn != 0:
                fn, sn = fn >> 1, sn >> 1
        else:
            sr = _node(sr, c)
        fn, sn = fn >> 1, sn >> 1
    return sn == 0 and fr == old_root and sr == new_root


def verify_receipt_log(
    receipt: str, proof: str, vkey: str, *, older_checkpoint: str | None = None, consistency: str | None = None, tsa_ca: str | bytes | None = None
) -> LogVerdict:
    """Every check of a receipt's place in the public log; see the module's docstring. ``tsa_ca``:
    trusted TSA certificate(s), PEM (the TSA's CA, or its own), to which a token's chain must lead."""
    checks: list[Check] = []

    def verdict(index: int | None, size: int | None, timestamp: str | None) -> LogVerdict:
        failed = next((c for c in checks if not c.ok), None)
        return LogVerdict(failed is None, failed.name if failed else None, index, size, timestamp, checks)

    try:
        extra, index, hashes, note = _parse_proof(proof)
        checkpoint = _parse_checkpoint(note)
    except (ValueError, IndexError) as error:
        checks.append(Check("log_proof", False, f"not a C2SP tlog-proof: {error}"))
        return verdict(None, None, None)
    checks.append(Check("log_proof", True, f"tlog-proof for leaf {index}, {len(hashes)} hashes"))
    ok, detail = _signed_by(checkpoint, vkey)
    checks.append(Check("log_checkpoint", ok, detail))
    root = _root_from_inclusion(index, checkpoint.size, _sha(b"\x00", receipt.strip().encode()), hashes)
    included = root is not None and root == checkpoint.root
    checks.append(
        Check(
            "log_inclusion",
            included,
            f"logged at position {index} of the public log (tree size {checkpoint.size})"
            if included
            else f"the receipt at index {index} does not lead to the checkpoint's root: the receipt or a proof hash was changed",
        )
    )
    timestamp = None
    if extra is not None:
        try:
            t = check_timestamp_token(_b64(extra), note.encode(), tsa_ca)
            timestamp = t.gen_time
            chain = ", chain to a trusted TSA certificate" if t.chained else " (chain not checked: pass tsa_ca)"
            checks.append(Check("log_timestamp", True, f"RFC 3161 token over the checkpoint, time {t.gen_time}, signed by {t.signer}: signature verifies{chain}"))
        except TimestampError as error:
            checks.append(Check("log_timestamp", False, str(error)))
        except ValueError as error:
            checks.append(Check("log_timestamp", False, f"the token is malformed: {error}"))
    if older_checkpoint is not None:
        checks.append(_consistency_check(older_checkpoint, consistency, vkey))
    return verdict(index, checkpoint.size, timestamp)


def _consistency_check(old_note: str, text: str | None, vkey: str) -> Check:
    def fail(detail: str) -> Check:
        return Check("log_consistency", False, detail)

    try:
        old = _parse_checkpoint(old_note)
    except ValueError as error:
        return fail(f"the older checkpoint is not a checkpoint: {error}")
    ok, detail = _signed_by(old, vkey)
    if not ok:
        return fail(f"the older checkpoint: {detail}")
    if text is None:
        return fail("no consistency proof given for the older checkpoint")
    try:
        old_size, hashes, note = _parse_consistency(text)
        current = _parse_checkpoint(note)
    except (ValueError, IndexError) as error:
        return fail(f"not a consistency proof: {error}")
    ok, detail = _signed_by(current, vkey)
    if not ok:
        return fail(f"the consistency proof's checkpoint: {detail}")
    if old_size != old.size:
        return fail(f"the consistency proof starts at size {old_size}, the older checkpoint has {old.size}")
    if old.size > current.size:
        return fail(f"the log shrank from {old.size} to {current.size} leaves: it was rolled back or forked")
    if not verify_consistency_proof(old.size, old.root, current.size, current.root, hashes):
        return fail(
            f"the tree of {current.size} leaves does not extend the older checkpoint of {old.size}: the log was forked or rewritten (or a proof hash changed)"
        )
    return Check("log_consistency", True, f"the log only grew: {old.size} → {current.size} leaves")


def checkpoint_size(note: str) -> int | None:
    """The tree size of a checkpoint note, or None when it is not one."""
    try:
        return _parse_checkpoint(note).size
    except ValueError:
        return None


def receipt_subject(receipt: str) -> str | None:
    """The ``sub`` (task id) a receipt claims, unverified: only to know which proof to fetch."""
    try:
        part = receipt.strip().split(".")[1]
        sub = json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))).get("sub")
    except (IndexError, ValueError, AttributeError):
        return None
    return sub if isinstance(sub, str) else None


def rolled_back(verdict: LogVerdict) -> LogVerdict:
    """The verdict when the service said its log is smaller than the older checkpoint (404)."""
    checks = [
        Check(c.name, c.ok, "the log is now smaller than the older checkpoint: it was rolled back or forked")
        if c.name == "log_consistency" and not c.ok and c.detail.startswith("no consistency proof")
        else c
        for c in verdict.checks
    ]
    return LogVerdict(verdict.valid, verdict.failure, verdict.index, verdict.tree_size, verdict.timestamp, checks)
