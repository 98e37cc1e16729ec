"""Questions from the operator and message threads through the Python client (issue 25)."""

from __future__ import annotations

import secrets
import threading
import time

import pytest
from conftest import Service

from human_task_client import AlreadyAnsweredError, AsyncHumanTaskClient, HumanTaskClient, QuestionNotFoundError


def _task() -> dict[str, object]:
    return {
        "task_type": "real_world_verification",
        "description": f"Check whether the pharmacy on Elm Street is open late ({secrets.token_hex(6)}).",
        "delivery": "status_poll",
    }


def test_wait_returns_early_with_the_question_and_answer_question_answers_it(service: Service) -> None:
    with HumanTaskClient(service.url) as client:
        task_id = client.submit_task(_task()).task_id
        asked: dict[str, str] = {}

        def ask() -> None:
            time.sleep(0.5)
            asked.update(service.admin("POST", f"/api/v1/admin/tasks/{task_id}/questions", {"question": "Which entrance do you mean?"}).json())

        threading.Thread(target=ask).start()
        task = client.wait_for_result(task_id, timeout=30, wait_seconds=20)
        assert task.awaiting_answer is True
        question = next(q for q in task.questions if q.answer is None)
        assert question.question == "Which entrance do you mean?"
        answered = client.answer_question(task_id, question.question_id, "The north entrance.")
        assert answered.awaiting_answer is False
        assert answered.questions[0].answer == "The north entrance."
        with pytest.raises(AlreadyAnsweredError):
            client.answer_question(task_id, question.question_id, "Again")
        with pytest.raises(QuestionNotFoundError):
            client.answer_question(task_id, "q-2030-0123456789abcdef0123456789abcdef", "x")


def test_async_answer(service: Service) -> None:
    import asyncio

    async def run() -> None:
        async with AsyncHumanTaskClient(service.url) as client:
            task_id = (await client.submit_task(_task())).task_id
            question_id = service.admin("POST", f"/api/v1/admin/tasks/{task_id}/questions", {"question": "Morning or evening?"}).json()["question_id"]
            answered = await client.answer_question(task_id, question_id, "Evening.")
            assert answered.awaiting_answer is False

    asyncio.run(run())
