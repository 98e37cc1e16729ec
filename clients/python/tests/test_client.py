"""The sync and async clients against the real service started by conftest.py."""

from __future__ import annotations

import asyncio
import base64
import json
import secrets
import threading
import time

import pytest
from conftest import Service

from human_task_client import (
    AsyncHumanTaskClient,
    DuplicateTaskError,
    HumanTaskClient,
    HumanTaskError,
    MalformedRequestError,
    RateLimitedError,
    Task,
    TaskNotFoundError,
    ValidationFailedError,
    WaitProgress,
    WaitTimeoutError,
)

MISSING = "task-2030-00000000000000000000000000000000"


def task_input() -> dict[str, object]:
    return {
        "task_type": "real_world_verification",
        "description": f"Check whether the bakery at 12 Main Street is open on Sunday mornings ({secrets.token_hex(6)}).",
        "location_required": True,
        "location_detail": "Springfield",
        "delivery": "status_poll",
    }


def test_submit_replays_with_the_same_idempotency_key(service: Service) -> None:
    with HumanTaskClient(service.url) as client:
        body = task_input()
        first = client.submit_task(body)
        assert first.status == "submitted"
        assert first.response.status_url.endswith(first.task_id)
        again = client.submit_task(body, idempotency_key=first.idempotency_key)
        assert again.task_id == first.task_id
        other = client.submit_task(task_input())
        assert other.idempotency_key != first.idempotency_key


def test_wait_for_result_while_the_operator_delivers_then_verify(service: Service) -> None:
    with HumanTaskClient(service.url) as client:
        task_id = client.submit_task(task_input()).task_id
        assert isinstance(client.get_task(task_id), Task)
        progress: list[WaitProgress] = []

        def operator() -> None:
            time.sleep(0.5)
            service.admin("PATCH", f"/api/v1/admin/tasks/{task_id}", {"status": "accepted", "eta": "2030-03-11T12:00:00.000Z"})
            time.sleep(0.8)
            service.admin("PATCH", f"/api/v1/admin/tasks/{task_id}", {"status": "delivered", "operator_notes": "Open Sundays 8:00-12:00."})

        worker = threading.Thread(target=operator)
        worker.start()
        done = client.wait_for_result(task_id, timeout=60, poll_interval=0.2, on_progress=progress.append)
        worker.join()
        assert done.status == "delivered"
        assert done.operator_notes == "Open Sundays 8:00-12:00."
        assert progress[0].status == "submitted"
        assert any(p.status == "accepted" and p.eta == "2030-03-11T12:00:00.000Z" for p in progress)

        verdict = client.verify_receipt(task_id)
        assert (verdict.valid, verdict.failure) == (True, None)
        assert [c.name for c in verdict.checks] == ["format", "kid", "signature", "payload", "issuer", "task_id", "deliverable"]
        assert client.verify_receipt(done).valid
        assert client.verify_receipt(done.receipt or "").valid


def test_verify_refuses_tampered_and_mismatched_receipts(service: Service) -> None:
    with HumanTaskClient(service.url) as client:
        task_id = client.submit_task(task_input()).task_id
        service.deliver(task_id)
        task = client.get_task(task_id)
        head, payload, signature = (task.receipt or "").split(".")
        claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
        forged = base64.urlsafe_b64encode(json.dumps({**claims, "task_type": "data_collection"}).encode()).decode().rstrip("=")
        assert client.verify_receipt(f"{head}.{forged}.{signature}").failure == "signature"
        assert client.verify_receipt(task, operator_notes="Closed.").failure == "deliverable"
        assert client.verify_receipt(task, task_id=MISSING).failure == "task_id"
    with HumanTaskClient(service.url, issuer="https://impostor.example.com") as elsewhere:
        assert elsewhere.verify_receipt(task).failure == "issuer"


def test_list_services_follows_cursors(service: Service) -> None:
    with HumanTaskClient(service.url) as client:
        paged = [s.service_id for s in client.list_services(page_size=3)]
        whole = [s.service_id for s in client.list_services()]
        assert paged == whole
        assert len(paged) > 3


def test_refusals_are_typed(service: Service) -> None:
    with HumanTaskClient(service.url) as client:
        with pytest.raises(ValidationFailedError) as invalid:
            client.submit_task({"task_type": "nonsense", "description": "short"})
        assert invalid.value.status == 422
        assert any("task_type" in d for d in invalid.value.details)

        body = task_input()
        first = client.submit_task(body)
        with pytest.raises(DuplicateTaskError) as duplicate:
            client.submit_task(body)
        assert duplicate.value.existing_task_id == first.task_id

        with pytest.raises(TaskNotFoundError):
            client.get_task(MISSING)
        with pytest.raises(TaskNotFoundError):
            client.wait_for_result(MISSING, timeout=30)
        with pytest.raises(MalformedRequestError) as malformed:
            list(client.list_services(page_size=0))
        assert (malformed.value.code, malformed.value.status) == ("malformed_request", 400)


def wait_out_the_hours_last_minute() -> None:
    """Quota windows are UTC clock hours: three sends straddling the hour would start a new one."""
    left = 3600 - time.time() % 3600
    if left < 60:
        time.sleep(left + 1)


def test_rate_limited_message_says_when_to_retry(service: Service) -> None:
    # MESSAGE_LIMIT_PER_HOUR is 2 for this service.
    wait_out_the_hours_last_minute()
    with HumanTaskClient(service.url) as client:
        with pytest.raises(RateLimitedError) as limited:
            for _ in range(3):
                client.send_message({"message": "Do you also cover Shelbyville, please?", "reply_to": "agent@mail.example-agent.dev"})
        assert limited.value.status == 429
        assert limited.value.limit
        assert limited.value.retry_after is not None and limited.value.retry_after > 30


def test_wait_times_out_with_the_last_state(service: Service) -> None:
    with HumanTaskClient(service.url) as client:
        task_id = client.submit_task(task_input()).task_id
        started = time.monotonic()
        with pytest.raises(WaitTimeoutError) as timeout:
            client.wait_for_result(task_id, timeout=1.5, poll_interval=0.2)
        assert timeout.value.task is not None and timeout.value.task.status == "submitted"
        assert 1.4 <= time.monotonic() - started < 10


def test_wait_can_be_cancelled(service: Service) -> None:
    with HumanTaskClient(service.url) as client:
        task_id = client.submit_task(task_input()).task_id
        cancel = threading.Event()
        threading.Timer(0.5, cancel.set).start()
        started = time.monotonic()
        with pytest.raises(HumanTaskError) as cancelled:
            client.wait_for_result(task_id, timeout=60, cancel=cancel)
        assert cancelled.value.code == "cancelled"
        # Even while the service holds a long-poll, a cancel takes effect within seconds.
        assert time.monotonic() - started < 10


def test_unreachable_service_is_a_network_error() -> None:
    with HumanTaskClient("http://127.0.0.1:9", max_retries=1) as client:
        with pytest.raises(HumanTaskError) as error:
            client.get_task(MISSING)
        assert error.value.code == "network_error"


def test_async_client_end_to_end(service: Service) -> None:
    async def scenario() -> None:
        async with AsyncHumanTaskClient(service.url) as client:
            task_id = (await client.submit_task(task_input())).task_id
            waiting = asyncio.create_task(client.wait_for_result(task_id, timeout=60, poll_interval=0.2))
            await asyncio.sleep(0.5)
            await asyncio.to_thread(service.deliver, task_id)
            done = await waiting
            assert done.status == "delivered"
            assert (await client.verify_receipt(task_id)).valid
            names = [s.service_id async for s in client.list_services(page_size=4)]
            assert len(names) > 4
            with pytest.raises(TaskNotFoundError):
                await client.get_task(MISSING)
            # Cancelling the waiting task stops the wait.
            other = (await client.submit_task(task_input())).task_id
            pending = asyncio.create_task(client.wait_for_result(other, timeout=60))
            await asyncio.sleep(0.3)
            pending.cancel()
            with pytest.raises(asyncio.CancelledError):
                await pending

    asyncio.run(scenario())
