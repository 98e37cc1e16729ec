"""Webhooks the real service sends to a receiver on loopback verify with verify_webhook."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest
from conftest import Service
from test_client import task_input

from human_task_client import HumanTaskClient

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
