"""Structured answers: the ``result`` of a task submitted with a ``response_schema``."""

from __future__ import annotations

from typing import Any, TypeVar, overload

from .models import Task

M = TypeVar("M")


@overload
def parse_result(task: Task) -> dict[str, Any] | None: ...
@overload
def parse_result(task: Task, model: type[M]) -> M | None: ...
def parse_result(task: Task, model: type[Any] | None = None) -> Any:
    """The task's structured answer: None until delivered (and for a task without a schema), else
    the dict the service validated against the task's response_schema, or, given a pydantic model,
    that model (pydantic 2 or 1) validated from it (its ValidationError propagates: the answer is not what you expect).

        class Shop(BaseModel):
            open_on_sundays: bool
            hours: list[Opening]

        task = client.wait_for_result(submitted.task_id)
        shop = parse_result(task, Shop)
    """
    if task.result is None:
        return None
    if model is None:
        return dict(task.result)
    # pydantic 2 (model_validate) or 1 (parse_obj); pydantic itself is the caller's, not a dependency.
    validate = getattr(model, "model_validate", None) or getattr(model, "parse_obj", None)
    if validate is None:
        raise TypeError(f"{model!r} is not a pydantic model (it has neither model_validate nor parse_obj)")
    return validate(task.result)
