"""Answers the real service never gives but a proxy or a newer service might: errors stay typed."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from human_task_client import AsyncHumanTaskClient, HumanTaskClient, HumanTaskError, ServiceUnavailableError

ID = "task-2030-0123456789abcdef0123456789abcdef"


def client_for(response: httpx.Response, max_retries: int = 3) -> tuple[HumanTaskClient, list[httpx.Request]]:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return response

    return HumanTaskClient("http://service.test", http_client=httpx.Client(transport=httpx.MockTransport(handler)), max_retries=max_retries), seen


def test_unknown_code_is_a_human_task_error_carrying_it() -> None:
    client, _ = client_for(httpx.Response(418, json={"error": "brand_new_code", "message": "Something new."}))
    with pytest.raises(HumanTaskError) as error:
        client.get_task(ID)
    assert (error.value.code, error.value.status, error.value.message) == ("brand_new_code", 418, "Something new.")


def test_proxy_502_is_retried_then_unexpected_response() -> None:
    client, seen = client_for(httpx.Response(502, text="<html>Bad gateway</html>"), max_retries=2)
    with pytest.raises(HumanTaskError) as error:
        client.get_task(ID)
    assert (error.value.code, error.value.status) == ("unexpected_response", 502)
    assert len(seen) == 3


def test_503_with_retry_after_is_typed() -> None:
    client, seen = client_for(httpx.Response(503, json={"error": "service_unavailable", "message": "Store down."}, headers={"retry-after": "0"}), max_retries=1)
    with pytest.raises(ServiceUnavailableError) as error:
        client.get_task(ID)
    assert error.value.retry_after == 0
    assert len(seen) == 2


def test_a_message_is_not_resent_after_a_failure_that_may_have_reached_the_service() -> None:
    client, seen = client_for(httpx.Response(502, text="Bad gateway"))
    with pytest.raises(HumanTaskError):
        client.send_message({"message": "Hello there, operator.", "reply_to": "agent@mail.example-agent.dev"})
    assert len(seen) == 1


def test_async_client_maps_errors_the_same_way() -> None:
    async def scenario() -> None:
        transport = httpx.MockTransport(lambda _: httpx.Response(429, json={"error": "rate_limited", "message": "Slow down.", "limit": "reads_per_minute"}, headers={"retry-after": "3600"}))
        async with AsyncHumanTaskClient("http://service.test", http_client=httpx.AsyncClient(transport=transport)) as client:
            with pytest.raises(HumanTaskError) as error:
                await client.get_task(ID)
            assert (error.value.code, error.value.retry_after) == ("rate_limited", 3600)

    asyncio.run(scenario())
