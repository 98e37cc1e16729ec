"""The client signs its requests as a verified agent when given a key (Web Bot Auth,
docs/verified-agents.md): the real service fetches the agent's key directory (served here on
loopback; the suite's service runs with WEBHOOK_ALLOW_PRIVATE=true) and gives it the verified tier."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer

import httpx
import pytest
from conftest import Service
from test_client import task_input

from human_task_client import AgentKey, AsyncHumanTaskClient, HumanTaskClient, HumanTaskError, jwk_thumbprint


class Directory:
    def __init__(self, url: str) -> None:
        self.url = url
        self.keys: list[dict[str, str]] = []
        self.requests: list[str] = []


@pytest.fixture()
def directory() -> Iterator[Directory]:
    server = HTTPServer(("127.0.0.1", 0), BaseHTTPRequestHandler)
    served = Directory(f"http://127.0.0.1:{server.server_address[1]}")

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
            served.requests.append(self.path)
            body = json.dumps({"keys": served.keys}).encode()
            self.send_response(200)
            self.send_header("content-type", "application/http-message-signatures-directory+json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *_: object) -> None:
            pass

    server.RequestHandlerClass = Handler
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield served
    finally:
        server.shutdown()
        server.server_close()


def _recording() -> tuple[list[httpx.Request], list[httpx.Response], dict[str, list]]:
    requests: list[httpx.Request] = []
    responses: list[httpx.Response] = []
    return requests, responses, {"request": [requests.append], "response": [responses.append]}


def test_a_signing_client_gets_the_verified_tier(service: Service, directory: Directory) -> None:
    agent = AgentKey.generate(directory.url)
    directory.keys.append(agent.public_jwk())
    assert agent.key_id == jwk_thumbprint(agent.public_jwk())
    requests, responses, hooks = _recording()
    http = httpx.Client(timeout=30, headers={"accept": "application/json"}, event_hooks=hooks)
    with HumanTaskClient(service.url, agent=agent, http_client=http) as client:
        submission = client.submit_task(task_input())
        assert responses[-1].headers["ratelimit-policy"] == '20;w=3600;comment="verified", 100;w=86400;comment="verified"'
        client.get_task(submission.task_id)
        assert responses[-1].headers["ratelimit-policy"].endswith(';w=60;comment="verified"')
    assert requests[0].headers["signature-agent"] == f'"{directory.url}"'
    assert f'keyid="{agent.key_id}"' in requests[0].headers["signature-input"]
    assert 'tag="web-bot-auth"' in requests[0].headers["signature-input"]
    # Each request signed anew (a fresh nonce).
    assert requests[0].headers["signature-input"] != requests[1].headers["signature-input"]
    assert directory.requests == ["/.well-known/http-message-signatures-directory"]

    # Unsigned, from the same address: the address tier.
    with HumanTaskClient(service.url) as plain:
        plain.submit_task(task_input())
    assert httpx.get(f"{service.url}/api/v1/services").headers["ratelimit-policy"].endswith('comment="address"')


def test_an_async_signing_client_is_verified_and_an_unpublished_key_is_refused(service: Service, directory: Directory) -> None:
    import asyncio

    agent = AgentKey.generate(directory.url)
    directory.keys.append(agent.public_jwk())
    stranger = AgentKey.generate(directory.url)

    async def run() -> None:
        responses: list[httpx.Response] = []

        async def keep(response: httpx.Response) -> None:
            responses.append(response)

        http = httpx.AsyncClient(timeout=30, headers={"accept": "application/json"}, event_hooks={"response": [keep]})
        async with AsyncHumanTaskClient(service.url, agent=agent, http_client=http) as client:
            await client.submit_task(task_input())
            assert responses[-1].headers["ratelimit-policy"].endswith('comment="verified"')
        async with AsyncHumanTaskClient(service.url, agent=stranger) as client:
            with pytest.raises(HumanTaskError) as refused:
                await client.submit_task(task_input())
            assert refused.value.code == "invalid_signature"

    asyncio.run(run())


def test_agent_key_from_a_private_jwk() -> None:
    agent = AgentKey.generate("https://agent.example")
    from cryptography.hazmat.primitives import serialization

    raw = agent.private_key.private_bytes(serialization.Encoding.Raw, serialization.PrivateFormat.Raw, serialization.NoEncryption())
    import base64

    jwk = {**agent.public_jwk(), "d": base64.urlsafe_b64encode(raw).rstrip(b"=").decode()}
    assert AgentKey.from_jwk(jwk, "https://agent.example").key_id == agent.key_id
    with pytest.raises(ValueError):
        AgentKey.generate("not a url")
