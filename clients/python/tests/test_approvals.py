"""The clients on a version-3 receipt's passkey approvals: offline with the operator keys given,
online fetching /.well-known/operator-keys.json (from a stand-in serving the vectors' key documents,
the approvals server being another part), and offline without them (attested approvals fail)."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from conftest import VECTORS

from human_task_client import AsyncHumanTaskClient, HumanTaskClient

VECTORS_DATA: dict[str, Any] = json.loads(VECTORS.read_text(encoding="utf-8"))
ISSUER = VECTORS_DATA["issuer"]


def _receipt(name: str) -> str:
    return next(v["receipt"] for v in VECTORS_DATA["receipts"] if v["name"] == name)


class _KeyDocuments(BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        body = {"/.well-known/jwks.json": VECTORS_DATA["jwks"], "/.well-known/operator-keys.json": VECTORS_DATA["operator_keys"]}.get(self.path)
        data = json.dumps(body if body is not None else {"error": "not_found"}).encode()
        self.send_response(200 if body is not None else 404)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        pass


@pytest.fixture(scope="module")
def key_server() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _KeyDocuments)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def test_online_the_client_fetches_the_operator_keys(key_server: str) -> None:
    client = HumanTaskClient(key_server, issuer=ISSUER)
    verdict = client.verify_receipt(_receipt("v3-valid-approvals"))
    assert verdict.valid, verdict.checks
    assert [a.status for a in verdict.approvals] == ["signed", "signed", "signed", "unsigned"]
    assert [a.user_verified for a in verdict.approvals] == [True, False, True, False]
    wrong = client.verify_receipt(_receipt("v3-wrong-challenge"))
    assert (wrong.failure, wrong.approvals[0].problem) == ("approvals", "challenge")


def test_the_async_client_too(key_server: str) -> None:
    async def check() -> None:
        async with AsyncHumanTaskClient(key_server, issuer=ISSUER) as client:
            verdict = await client.verify_receipt(_receipt("v3-flipped-client-data"))
            assert (verdict.failure, verdict.approvals[0].problem) == ("approvals", "signature")

    asyncio.run(check())


def test_offline_with_and_without_the_operator_keys() -> None:
    client = HumanTaskClient("http://127.0.0.1:9", issuer=ISSUER, jwks=VECTORS_DATA["jwks"])
    assert client.verify_receipt(_receipt("v3-valid-approvals"), operator_keys=VECTORS_DATA["operator_keys"]).valid
    without = client.verify_receipt(_receipt("v3-valid-approvals"))
    assert without.failure == "approvals"
    assert "no operator keys given" in without.approvals[0].detail
