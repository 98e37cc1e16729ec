"""Webhooks the real service sends to a receiver on loopback verify with verify_webhook."""

from __future__ import annotations

import base64
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer

import httpx
import pytest
from conftest import Service
from test_client import task_input

from human_task_client import HumanTaskClient, WebhookVerdict, verify_webhook

Received = tuple[dict[str, str], bytes]


@pytest.fixture()
def receiver() -> Iterator[tuple[str, list[Received]]]:
    received: list[Received] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
            body = self.rfile.read(int(self.headers.get("content-length", "0")))
            received.append(({k.lower(): v for k, v in self.headers.items()}, body))
            self.send_response(204)
            self.end_headers()

        def log_message(self, *_: object) -> None:
            pass

    server = HTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/hook", received
    finally:
        server.shutdown()
        server.server_close()


def test_delivered_webhook_verifies(service: Service, receiver: tuple[str, list[Received]]) -> None:
    url, received = receiver
    with HumanTaskClient(service.url) as client:
        task_id = client.submit_task({**task_input(), "callback_url": url}).task_id
        service.deliver(task_id, "Open Sundays 8:00-12:00.")
        deadline = time.monotonic() + 30
        while len(received) < 2 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert len(received) >= 2, "the service did not post both events"
        events = {}
        for headers, body in received:
            verdict = client.verify_webhook(headers, body)
            assert (verdict.valid, verdict.failure) == (True, None), verdict.detail
            assert verdict.event is not None
            events[verdict.event["type"]] = verdict.event
        assert events["task.delivered"]["data"]["task_id"] == task_id
        assert "task.accepted" in events

        headers, body = next((h, b) for h, b in received if b"task.delivered" in b)
        assert client.verify_webhook(headers, body.replace(b"8:00-12:00", b"9:00-12:00")).failure == "signature"
        assert client.verify_webhook(headers, body, now=time.time() + 3600).failure == "timestamp"


def test_webhook_web_bot_auth_signature_verifies(service: Service, receiver: tuple[str, list[Received]]) -> None:
    """The service signs its webhooks per Web Bot Auth too; the verifier checks that signature against
    the published directory (the JWKS's keys), for the receiver's authority and the service's origin."""
    url, received = receiver
    with HumanTaskClient(service.url) as client:
        task_id = client.submit_task({**task_input(), "callback_url": url}).task_id
        service.admin("PATCH", f"/api/v1/admin/tasks/{task_id}", {"status": "accepted"})
        deadline = time.monotonic() + 30
        while not received and time.monotonic() < deadline:
            time.sleep(0.1)
        assert received, "the service did not post the event"
        headers, body = received[0]
        assert 'tag="web-bot-auth"' in headers["signature-input"]
        verdict = client.verify_webhook(headers, body)
        assert (verdict.valid, verdict.failure, verdict.web_bot_auth) == (True, None, True), verdict.detail
        assert "Web Bot Auth signature by key" in verdict.detail

        directory = httpx.get(f"{service.url}/.well-known/http-message-signatures-directory").json()
        assert verify_webhook(headers, body, directory).web_bot_auth

        def refused(verdict: WebhookVerdict) -> tuple[bool, str | None]:
            return verdict.valid, verdict.failure

        assert refused(client.verify_webhook(headers, body, authority="attacker.example")) == (False, "web_bot_auth")
        with HumanTaskClient(service.url, issuer="https://other.example") as other:
            assert refused(other.verify_webhook(headers, body)) == (False, "web_bot_auth")
        forged = {**headers, "signature": "sig1=:" + base64.b64encode(bytes(64)).decode() + ":"}
        assert refused(client.verify_webhook(forged, body)) == (False, "web_bot_auth")
        later = client.verify_webhook(headers, body, now=time.time() + 600, tolerance_seconds=3600)
        assert (later.valid, later.detail) == (False, "the signature has expired")
        unsigned = {k: v for k, v in headers.items() if k not in ("signature", "signature-input", "signature-agent")}
        assert (client.verify_webhook(unsigned, body).valid, client.verify_webhook(unsigned, body).web_bot_auth) == (True, False)
        assert refused(client.verify_webhook(unsigned, body, require_web_bot_auth=True)) == (False, "web_bot_auth")
