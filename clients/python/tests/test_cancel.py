"""cancel_task: a task nobody accepted is withdrawn at once; an accepted one gets a withdrawal request and keeps its status."""

from __future__ import annotations

import asyncio
import secrets

import pytest
from conftest import Service

from human_task_client import AsyncHumanTaskClient, HumanTaskClient, InvalidTransitionError


def _task() -> dict[str, object]:
    return {
        "task_type": "real_world_verification",
        "description": f"Check whether the library on Oak Street is open on Saturdays ({secrets.token_hex(6)}).",
        "delivery": "status_poll",
    }


def test_cancel_task_withdraws_a_submitted_task_at_once(service: Service) -> None:
    with HumanTaskClient(service.url) as client:
        task_id = client.submit_task(_task()).task_id
        withdrawn = client.cancel_task(task_id)
        assert withdrawn["task_id"] == task_id and withdrawn["status"] == "rejected"
        assert client.get_task(task_id).status == "rejected"
        with pytest.raises(InvalidTransitionError):
            client.cancel_task(task_id)


def test_cancel_task_records_a_request_for_an_accepted_task_and_keeps_the_status(service: Service) -> None:
    with HumanTaskClient(service.url) as client:
        task_id = client.submit_task(_task()).task_id
        service.admin("PATCH", f"/api/v1/admin/tasks/{task_id}", {"status": "accepted"})
        asked = client.cancel_task(task_id)
        assert asked["task_id"] == task_id and asked["status"] == "accepted"
        assert client.get_task(task_id).status == "accepted"


def test_async_cancel_task(service: Service) -> None:
    async def run() -> dict[str, object]:
        async with AsyncHumanTaskClient(service.url) as client:
            task_id = (await client.submit_task(_task())).task_id
            return await client.cancel_task(task_id)

    assert asyncio.run(run())["status"] == "rejected"


def test_a_replayed_submission_says_so(service: Service) -> None:
    """Idempotent-Replayed (issue 30, item 7): the same key again answers the first task, marked replayed."""
    with HumanTaskClient(service.url) as client:
        task = _task()
        first = client.submit_task(task)
        assert first.replayed is False
        again = client.submit_task(task, idempotency_key=first.idempotency_key)
        assert again.task_id == first.task_id and again.replayed is True
