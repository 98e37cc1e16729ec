"""What the sync and async clients share: building requests, reading answers, pacing decisions."""

from __future__ import annotations

import email.utils
import json
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import httpx

from .errors import HumanTaskError, error_from_response
from .models import SubmissionResponse, Task

FINAL = ("delivered", "rejected")
MAX_POLL = 60.0
MAX_CACHED_TASKS = 1000


@dataclass(frozen=True)
class Submission:
    """The answer to a submission, with the Idempotency-Key sent (reuse it to retry safely)."""

    response: SubmissionResponse
    idempotency_key: str
    #: True when the service answered with an earlier submission of this Idempotency-Key
    #: (header Idempotent-Replayed): no new task was created.
    replayed: bool = False

    @property
    def task_id(self) -> str:
        return self.response.task_id

    @property
    def status(self) -> str:
        return self.response.status


@dataclass(frozen=True)
class WaitProgress:
    task: Task
    status: str
    eta: str | None
    elapsed: float


def new_idempotency_key() -> str:
    return str(uuid.uuid4())


def retry_after_seconds(headers: httpx.Headers) -> float | None:
    value = headers.get("retry-after")
    if value is None:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        at = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, at.timestamp() - time.time())


def quota_reset_seconds(headers: httpx.Headers) -> float | None:
    """Seconds until the read quota resets when none is left (RateLimit-Remaining: 0)."""
    remaining = headers.get("ratelimit-remaining")
    reset = headers.get("ratelimit-reset")
    if remaining is None or reset is None or not reset.strip().isdigit():
        return None
    try:
        if float(remaining) > 0:
            return None
    except ValueError:
        return None
    return float(reset.strip())


def parse_body(response: httpx.Response) -> Any:
    if not response.content:
        return None
    try:
        return json.loads(response.content)
    except ValueError:
        return None


def refusal(response: httpx.Response) -> HumanTaskError:
    return error_from_response(response.status_code, parse_body(response), retry_after_seconds(response.headers))


def deadline_of(timeout: float | None, deadline: float | None) -> float:
    """A monotonic deadline from a timeout (seconds) and/or an absolute deadline (Unix seconds)."""
    now = time.monotonic()
    candidates = [now + timeout] if timeout is not None else []
    if deadline is not None:
        candidates.append(now + (deadline - time.time()))
    return min(candidates) if candidates else float("inf")


class TaskCache:
    """Last ETag and task seen per id: conditional reads answer a 304 from here."""

    def __init__(self) -> None:
        self._tasks: dict[str, tuple[str, Task]] = {}

    def headers(self, task_id: str, wait: int | None) -> dict[str, str]:
        cached = self._tasks.get(task_id)
        if cached is None:
            return {}
        headers = {"if-none-match": cached[0]}
        if wait is not None:
            headers["prefer"] = f"wait={wait}"
        return headers

    def last(self, task_id: str) -> Task | None:
        cached = self._tasks.get(task_id)
        return cached[1] if cached else None

    def read(self, task_id: str, response: httpx.Response) -> Task:
        cached = self._tasks.get(task_id)
        if response.status_code == 304 and cached is not None:
            return cached[1]
        if response.status_code != 200:
            raise refusal(response)
        body = parse_body(response)
        if not isinstance(body, dict):
            raise HumanTaskError("unexpected_response", "The service answered 200 without a task.", status=200)
        task = Task.from_dict(body)
        etag = response.headers.get("etag")
        if etag:
            # Bounded: a long-lived client that reads many tasks keeps the most recent ones.
            self._tasks.pop(task_id, None)
            self._tasks[task_id] = (etag, task)
            if len(self._tasks) > MAX_CACHED_TASKS:
                del self._tasks[next(iter(self._tasks))]
        return task


@dataclass
class Pacer:
    """How long to pause between reads in wait_for_result (see the TypeScript client: same rules)."""

    first_delay: float
    delay: float = 0.0

    def __post_init__(self) -> None:
        self.delay = self.first_delay

    def after_answer(self, response: httpx.Response, asked_to_hold: bool, took: float, hold: int | None) -> float:
        held = asked_to_hold and response.headers.get("preference-applied", "").startswith("wait")
        if held:
            # Held by the service: ask again at once (a second's pause if it answered at once).
            self.delay = self.first_delay
            pause = 1.0 if took < 1.0 else 0.0
        elif not asked_to_hold and response.headers.get("etag") and hold is not None:
            pause = 0.0  # the first ETag: the next read can be a long-poll
        else:
            pause = self.delay
            self.delay = min(MAX_POLL, self.delay * 1.5)
        reset = quota_reset_seconds(response.headers)
        return max(pause, reset) if reset is not None else pause

    def after_failure(self) -> float:
        pause = self.delay
        self.delay = min(MAX_POLL, self.delay * 1.5)
        return pause


def jwks_or_error(response: httpx.Response, document: str = "/.well-known/jwks.json") -> Mapping[str, Any]:
    """A key set ({keys: [...]}: the JWKS, or the operator keys) from the service, or the refusal."""
    if response.status_code != 200:
        raise refusal(response)
    body = parse_body(response)
    if not isinstance(body, dict) or not isinstance(body.get("keys"), list):
        raise HumanTaskError("unexpected_response", f"The service published no key set at {document}.", status=response.status_code)
    return body
