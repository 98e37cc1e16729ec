"""wait_for_result's pacing against a scripted transport: the long-poll protocol (ETag,
If-None-Match, Prefer: wait, Preference-Applied), Retry-After and RateLimit-Reset."""

from __future__ import annotations

import time
from collections.abc import Callable

import httpx

from human_task_client import HumanTaskClient

ID = "task-2030-0123456789abcdef0123456789abcdef"


def task(status: str) -> dict[str, object]:
    return {
        "task_id": ID, "status": status, "task_type": "data_collection", "description": "d" * 20, "location_required": False,
        "location_detail": None, "deadline": None, "output_format": "text_report", "budget_usd": None, "requester": "",
        "source": "api", "created_at": "2030-01-01T00:00:00.000Z", "updated_at": "2030-01-01T00:00:00.000Z",
        "status_history": [{"status": status, "at": "2030-01-01T00:00:00.000Z"}], "operator_notes": None,
        "seen_by_operator_at": None, "eta": None, "response_schema": None, "result": None, "questions": [], "awaiting_answer": False,
        "future_field": 1,
    }


def scripted(script: Callable[[int, httpx.Request], httpx.Response]) -> tuple[HumanTaskClient, list[tuple[float, httpx.Request]]]:
    seen: list[tuple[float, httpx.Request]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append((time.monotonic(), request))
        return script(len(seen), request)

    return HumanTaskClient("http://service.test", http_client=httpx.Client(transport=httpx.MockTransport(handler)), max_retries=0), seen


def test_long_poll_headers_and_unknown_fields() -> None:
    def script(n: int, _: httpx.Request) -> httpx.Response:
        if n == 1:
            return httpx.Response(200, json=task("submitted"), headers={"etag": '"v1"'})
        if n == 2:
            return httpx.Response(304, headers={"etag": '"v1"', "preference-applied": "wait=50"})
        return httpx.Response(200, json=task("delivered"), headers={"etag": '"v2"', "preference-applied": "wait=50"})

    client, seen = scripted(script)
    done = client.wait_for_result(ID, timeout=60)
    assert done.status == "delivered"
    assert done.extra == {"future_field": 1}
    assert "prefer" not in seen[0][1].headers
    assert seen[1][1].headers["prefer"] == "wait=50" and seen[1][1].headers["if-none-match"] == '"v1"'
    assert seen[1][0] - seen[0][0] < 0.9  # the first ETag starts the long-poll at once


def test_fallback_polling_honours_retry_after_and_quota_reset() -> None:
    def script(n: int, _: httpx.Request) -> httpx.Response:
        if n == 1:
            return httpx.Response(429, json={"error": "rate_limited", "message": "Slow down.", "retry_after_seconds": 1}, headers={"retry-after": "1"})
        if n == 2:
            return httpx.Response(200, json=task("accepted"), headers={"ratelimit-remaining": "0", "ratelimit-reset": "1"})
        return httpx.Response(200, json=task("delivered"))

    client, seen = scripted(script)
    assert client.wait_for_result(ID, timeout=60, poll_interval=0.1).status == "delivered"
    assert seen[1][0] - seen[0][0] >= 0.95
    assert seen[2][0] - seen[1][0] >= 0.95


def test_waits_without_any_deadline() -> None:
    client, seen = scripted(lambda n, _: httpx.Response(200, json=task("submitted" if n < 2 else "delivered"), headers={"etag": f'"v{n}"'}))
    assert client.wait_for_result(ID, poll_interval=0.1).status == "delivered"
    assert seen[1][1].headers["prefer"] == "wait=50"
