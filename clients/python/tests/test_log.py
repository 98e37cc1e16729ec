"""The public receipt log (docs/receipt-log.md) checked by the Python clients: the tlog-proof, the
checkpoint's signature, the inclusion path, an RFC 3161 token's imprint (a real token from openssl)
and consistency with a checkpoint kept earlier; online and offline; each changed byte named."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import subprocess
import time
from pathlib import Path

import httpx
import pytest
from conftest import Service
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from test_client import task_input

from human_task_client import AsyncHumanTaskClient, HumanTaskClient, verify_receipt_log


def _flip(line: str) -> str:
    return ("B" if line[0] == "A" else "A") + line[1:]


def _proof_of(service: Service, task_id: str) -> str:
    deadline = time.monotonic() + 10
    while True:
        response = httpx.get(f"{service.url}/api/v1/tasks/{task_id}/receipt-proof", timeout=10)
        if response.status_code == 200:
            return response.text
        assert time.monotonic() < deadline, "the receipt was not logged within 10 s"
        time.sleep(0.3)


def _tsa_token(note: bytes, tmp: Path) -> bytes:
    """A real RFC 3161 TimeStampResp over SHA-256(note), from openssl with a throwaway TSA certificate."""

    def openssl(*args: str) -> None:
        subprocess.run(["openssl", *args], check=True, capture_output=True, cwd=tmp)

    (tmp / "note").write_bytes(note)
    openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", "tsa.key", "-out", "tsa.crt",
            "-subj", "/CN=Test TSA", "-days", "1", "-addext", "extendedKeyUsage=critical,timeStamping")
    (tmp / "serial").write_text("01\n")
    (tmp / "tsa.cnf").write_text(
        "[ tsa ]\ndefault_tsa = t\n[ t ]\nserial = serial\nsigner_cert = tsa.crt\nsigner_key = tsa.key\n"
        "signer_digest = sha256\ndefault_policy = 1.2.3.4.1\ndigests = sha256\ness_cert_id_alg = sha256\n"
    )
    openssl("ts", "-query", "-data", "note", "-sha256", "-cert", "-out", "q.tsq")
    openssl("ts", "-reply", "-config", "tsa.cnf", "-queryfile", "q.tsq", "-out", "r.tsr")
    return (tmp / "r.tsr").read_bytes()


def test_verifies_the_log_and_names_each_changed_part(service: Service, tmp_path: Path) -> None:
    with HumanTaskClient(service.url) as client:
        task_id = client.submit_task(task_input()).task_id
        service.deliver(task_id)
        proof = _proof_of(service, task_id)
        receipt = client.get_task(task_id).receipt or ""
        kept = httpx.get(f"{service.url}/log/checkpoint", timeout=10).text

        online = client.verify_receipt_log(task_id)
        assert online.valid, online.checks
        assert [c.name for c in online.checks] == ["log_proof", "log_checkpoint", "log_inclusion"]

        # Another delivery grows the log: the kept checkpoint is a prefix of the new tree.
        other = client.submit_task(task_input()).task_id
        service.deliver(other)
        _proof_of(service, other)
        grown = client.verify_receipt_log(task_id, older_checkpoint=kept)
        assert grown.valid, grown.checks
        assert grown.checks[-1].name == "log_consistency" and "the log only grew" in grown.checks[-1].detail

    # Offline: proof, key and consistency proof held as text; nothing listens at the base URL.
    vkey = httpx.get(f"{service.url}/log/vkey", timeout=10).text
    size = int(kept.split("\n")[1])
    consistency = httpx.get(f"{service.url}/log/consistency?from={size}", timeout=10).text
    assert verify_receipt_log(receipt, proof, vkey, older_checkpoint=kept, consistency=consistency).valid

    lines = proof.split("\n")
    blank = lines.index("")
    root_line = blank + 3

    def changed(i: int, value: str) -> str:
        return "\n".join(value if j == i else line for j, line in enumerate(lines))

    assert verify_receipt_log(receipt, changed(root_line, _flip(lines[root_line])), vkey).failure == "log_checkpoint"
    head, payload, signature = receipt.split(".")
    assert verify_receipt_log(f"{head}.{payload}.{_flip(signature)}", proof, vkey).failure == "log_inclusion"
    assert verify_receipt_log(receipt, "hello\n", vkey).failure == "log_proof"
    c_lines = consistency.split("\n")
    bad_consistency = "\n".join(_flip(line) if i == 2 else line for i, line in enumerate(c_lines))
    if c_lines[2] != "":
        bad = verify_receipt_log(receipt, proof, vkey, older_checkpoint=kept, consistency=bad_consistency)
        assert bad.failure == "log_consistency" and "forked or rewritten" in bad.checks[-1].detail
    k_lines = kept.split("\n")
    bad_kept = "\n".join(_flip(line) if i == 2 else line for i, line in enumerate(k_lines))
    bad_old = verify_receipt_log(receipt, proof, vkey, older_checkpoint=bad_kept, consistency=consistency)
    assert bad_old.failure == "log_consistency" and "the older checkpoint: the signature" in bad_old.checks[-1].detail

    # A real RFC 3161 token over the checkpoint as served, on the extra line; then one byte of its imprint.
    note = "\n".join(lines[blank + 1 :]).encode()
    token = _tsa_token(note, tmp_path)
    stamped = "\n".join([lines[0], f"extra {base64.b64encode(token).decode()}", *lines[1:]])
    ok = verify_receipt_log(receipt, stamped, vkey)
    assert ok.valid and ok.timestamp is not None, ok.checks
    assert "signed by Test TSA: signature verifies (chain not checked" in ok.checks[-1].detail
    # Its chain, to the TSA's own certificate as the trusted one; a flipped signature byte.
    chained = verify_receipt_log(receipt, stamped, vkey, tsa_ca=(tmp_path / "tsa.crt").read_text())
    assert chained.valid and "chain to a trusted TSA certificate" in chained.checks[-1].detail, chained.checks
    flipped = token[:-1] + bytes([token[-1] ^ 1])
    bad_signature = verify_receipt_log(receipt, "\n".join([lines[0], f"extra {base64.b64encode(flipped).decode()}", *lines[1:]]), vkey)
    assert bad_signature.failure == "log_timestamp" and "signature does not verify" in bad_signature.checks[-1].detail
    at = token.index(hashlib.sha256(note).digest())
    tampered = token[:at] + bytes([token[at] ^ 1]) + token[at + 1 :]
    bad_token = verify_receipt_log(receipt, "\n".join([lines[0], f"extra {base64.b64encode(tampered).decode()}", *lines[1:]]), vkey)
    assert bad_token.failure == "log_timestamp" and "another hash" in bad_token.checks[-1].detail

    async def from_async() -> None:
        async with AsyncHumanTaskClient(service.url) as client:
            assert (await client.verify_receipt_log(task_id, older_checkpoint=kept)).valid
            held = await client.verify_receipt_log(receipt, proof=stamped, vkey=vkey, tsa_ca=(tmp_path / "tsa.crt").read_bytes())
            assert held.valid and "chain to a trusted TSA certificate" in held.checks[-1].detail, held.checks

    asyncio.run(from_async())


# A log of our own (RFC 9162 by definition) for what the service cannot be made to do: sign a fork.
def _h(*parts: bytes) -> bytes:
    return hashlib.sha256(b"".join(parts)).digest()


def _mth(leaves: list[bytes]) -> bytes:
    if len(leaves) == 1:
        return _h(b"\x00", leaves[0])
    k = 1
    while k * 2 < len(leaves):
        k *= 2
    return _h(b"\x01", _mth(leaves[:k]), _mth(leaves[k:]))


def _subproof(m: int, leaves: list[bytes], whole: bool) -> list[bytes]:
    n = len(leaves)
    if m == n:
        return [] if whole else [_mth(leaves)]
    k = 1
    while k * 2 < n:
        k *= 2
    if m <= k:
        return _subproof(m, leaves[:k], whole) + [_mth(leaves[k:])]
    return _subproof(m - k, leaves[k:], False) + [_mth(leaves[:k])]


@pytest.mark.parametrize("old", [1, 3, 4, 6])
def test_names_a_forked_checkpoint(old: int) -> None:
    key = Ed25519PrivateKey.generate()
    raw = key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    name = "example.org/log"
    key_hash = hashlib.sha256(f"{name}\n".encode() + b"\x01" + raw).digest()[:4]
    encoded = base64.b64encode(b"\x01" + raw).decode()
    vkey = f"{name}+{key_hash.hex()}+{encoded}"

    def checkpoint(leaves: list[bytes]) -> str:
        body = f"{name}\n{len(leaves)}\n{base64.b64encode(_mth(leaves)).decode()}\n"
        return f"{body}\n\u2014 {name} {base64.b64encode(key_hash + key.sign(body.encode())).decode()}\n"

    leaves = [f"leaf {i}".encode() for i in range(7)]
    receipt = leaves[0].decode()
    current = checkpoint(leaves)
    inclusion = _subproof(1, leaves, True)  # PATH(0) is PROOF(1) for leaf 0
    proof = "\n".join(["c2sp.org/tlog-proof@v1", "index 0", *(base64.b64encode(h).decode() for h in inclusion), "", current])
    consistency = "\n".join(["tlog-consistency@v1", f"old {old}", *(base64.b64encode(h).decode() for h in _subproof(old, leaves, True)), "", current])
    assert verify_receipt_log(receipt, proof, vkey, older_checkpoint=checkpoint(leaves[:old]), consistency=consistency).valid
    forked = checkpoint([b"rewritten", *leaves[1:old]])
    verdict = verify_receipt_log(receipt, proof, vkey, older_checkpoint=forked, consistency=consistency)
    assert verdict.failure == "log_consistency"
    assert f"does not extend the older checkpoint of {old}: the log was forked or rewritten" in verdict.checks[-1].detail
    larger = verify_receipt_log(receipt, proof, vkey, older_checkpoint=checkpoint(leaves + [b"x"]), consistency=consistency)
    assert larger.failure == "log_consistency"
