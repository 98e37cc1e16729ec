"""Structured answers through the Python client: result as a dict, or validated into a model."""

from __future__ import annotations

import secrets
from typing import Any

import pytest
from conftest import Service

from human_task_client import HumanTaskClient, parse_result

SCHEMA = {
    "type": "object",
    "properties": {
        "open_on_sundays": {"type": "boolean"},
        "hours": {"type": "array", "items": {"type": "object", "properties": {"day": {"type": "string"}, "opens": {"type": "string"}}, "required": ["day", "opens"]}},
    },
    "required": ["open_on_sundays", "hours"],
}
try:
    import pydantic
except ImportError:  # optional: the client never imports it
    pydantic = None

if pydantic is not None:

    class Opening(pydantic.BaseModel):
        day: str
        opens: str

    class Shop(pydantic.BaseModel):
        open_on_sundays: bool
        hours: list[Opening]

    class Wrong(pydantic.BaseModel):
        closes: str


RESULT = {"open_on_sundays": True, "hours": [{"day": "sunday", "opens": "08:00"}]}


def _delivered(service: Service, client: HumanTaskClient) -> str:
    submitted = client.submit_task(
        {"task_type": "real_world_verification", "description": f"Is the bakery at 12 Main Street open on Sundays, and when? ({secrets.token_hex(4)})", "delivery": "status_poll", "response_schema": SCHEMA}
    )
    before = client.get_task(submitted.task_id)
    assert before.result is None and before.response_schema == SCHEMA
    assert parse_result(before) is None
    service.admin("PATCH", f"/api/v1/admin/tasks/{submitted.task_id}", {"status": "accepted"})
    service.admin("PATCH", f"/api/v1/admin/tasks/{submitted.task_id}", {"status": "delivered", "result": RESULT})
    return submitted.task_id


def test_result_is_a_dict_and_the_receipt_binds_it(service: Service) -> None:
    with HumanTaskClient(service.url) as client:
        task = client.wait_for_result(_delivered(service, client), timeout=30)
        assert task.result == RESULT
        assert parse_result(task) == RESULT
        assert client.verify_receipt(task).valid


def test_result_validates_into_a_model_given_by_the_caller(service: Service) -> None:
    class Duck:
        """Anything with model_validate, as pydantic models have."""

        def __init__(self, data: dict[str, Any]) -> None:
            self.data = data

        @classmethod
        def model_validate(cls, obj: Any) -> Duck:
            return cls(obj)

    with HumanTaskClient(service.url) as client:
        task = client.wait_for_result(_delivered(service, client), timeout=30)
        assert parse_result(task, Duck).data == RESULT
        if pydantic is None:
            pytest.skip("pydantic is optional for the client; the duck-typed model above covers the protocol")
        shop = parse_result(task, Shop)
        assert shop is not None and shop.hours[0].opens == "08:00"

        with pytest.raises(pydantic.ValidationError):
            parse_result(task, Wrong)
