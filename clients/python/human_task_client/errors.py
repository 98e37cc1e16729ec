"""Typed errors named by the service's error codes (the contract's closed table).

Every refusal is a HumanTaskError whose ``code`` is the body's ``error``; the client adds
``network_error``, ``unexpected_response`` and ``wait_timeout`` for what happens on its side.
"""

from __future__ import annotations

from typing import Any

from .models import Error, Task


class HumanTaskError(Exception):
    """A refusal of the service, or a failure reaching it."""

    def __init__(self, code: str, message: str, *, status: int = 0, body: Error | None = None, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.status = status
        self.body = body
        #: Seconds to wait before trying again, when the service said (Retry-After, retry_after_seconds).
        self.retry_after = retry_after


class RateLimitedError(HumanTaskError):
    """429 rate_limited: a per-client limit; ``limit`` names which."""

    @property
    def limit(self) -> str | None:
        return self.body.limit if self.body else None


class CapacityReachedError(HumanTaskError):
    """429 capacity_reached: the daily capacity is used up."""


class DuplicateTaskError(HumanTaskError):
    """409 duplicate_task: the same task within 24 h; ``existing_task_id`` is it."""

    @property
    def existing_task_id(self) -> str | None:
        return self.body.existing_task_id if self.body else None


class ValidationFailedError(HumanTaskError):
    """422 validation_failed: ``details`` names every field at fault."""

    @property
    def details(self) -> list[str]:
        return list(self.body.details or []) if self.body else []


class TaskNotFoundError(HumanTaskError):
    """404 task_not_found."""


class ClientBlockedError(HumanTaskError):
    """403 client_blocked."""


class InvalidCursorError(HumanTaskError):
    """400 invalid_cursor: list again without a cursor."""


class InvalidJsonError(HumanTaskError):
    """400 invalid_json: the body was not JSON."""


class MalformedRequestError(HumanTaskError):
    """400 malformed_request: JSON but not an object, or a malformed query parameter."""


class UnauthorizedError(HumanTaskError):
    """401 unauthorized (admin endpoints only)."""


class NotFoundError(HumanTaskError):
    """404 not_found: no such path."""


class MethodNotAllowedError(HumanTaskError):
    """405 method_not_allowed."""


class InvalidTransitionError(HumanTaskError):
    """409 invalid_transition (admin endpoints only)."""


class PayloadTooLargeError(HumanTaskError):
    """413 payload_too_large."""


class UnsupportedMediaTypeError(HumanTaskError):
    """415 unsupported_media_type."""


class InternalError(HumanTaskError):
    """500 internal_error: the service failed; the message names the request id."""


class ServiceUnavailableError(HumanTaskError):
    """503 service_unavailable: the service's store does not answer."""


class ForbiddenError(HumanTaskError):
    """403 forbidden: the operator's role does not allow the action."""


class QuestionNotFoundError(HumanTaskError):
    """404 question_not_found: the task has no question with that id."""


class AlreadyAnsweredError(HumanTaskError):
    """409 already_answered: the question has its answer (each question takes one)."""


class ApprovalNotAllowedError(HumanTaskError):
    """409 approval_not_allowed: an operator approving twice (the proposer included), or nothing proposed."""


class InvalidSignatureError(HumanTaskError):
    """400 invalid_signature: the request's Web Bot Auth signature did not verify; ``details`` says why."""


class SignatureRequiredError(HumanTaskError):
    """400 signature_required: listing your own tasks needs a signed request (the client's ``agent``)."""


class WaitTimeoutError(HumanTaskError):
    """wait_for_result's deadline passed; ``task`` is the last state seen."""

    def __init__(self, message: str, task: Task | None) -> None:
        super().__init__("wait_timeout", message)
        self.task = task


# Every code of the contract's closed set; a code this client does not know yet (a newer service)
# is still a HumanTaskError carrying that code.
_BY_CODE: dict[str, type[HumanTaskError]] = {
    "invalid_json": InvalidJsonError,
    "malformed_request": MalformedRequestError,
    "invalid_cursor": InvalidCursorError,
    "invalid_signature": InvalidSignatureError,
    "signature_required": SignatureRequiredError,
    "unauthorized": UnauthorizedError,
    "client_blocked": ClientBlockedError,
    "task_not_found": TaskNotFoundError,
    "not_found": NotFoundError,
    "method_not_allowed": MethodNotAllowedError,
    "duplicate_task": DuplicateTaskError,
    "invalid_transition": InvalidTransitionError,
    "payload_too_large": PayloadTooLargeError,
    "unsupported_media_type": UnsupportedMediaTypeError,
    "validation_failed": ValidationFailedError,
    "rate_limited": RateLimitedError,
    "capacity_reached": CapacityReachedError,
    "internal_error": InternalError,
    "service_unavailable": ServiceUnavailableError,
    "forbidden": ForbiddenError,
    "question_not_found": QuestionNotFoundError,
    "already_answered": AlreadyAnsweredError,
    "approval_not_allowed": ApprovalNotAllowedError,
}


def error_from_response(status: int, body: Any, retry_after: float | None) -> HumanTaskError:
    if isinstance(body, dict) and isinstance(body.get("error"), str) and isinstance(body.get("message"), str):
        parsed = Error.from_dict(body)
        retry = retry_after if retry_after is not None else parsed.retry_after_seconds
        cls = _BY_CODE.get(parsed.error, HumanTaskError)
        return cls(parsed.error, parsed.message, status=status, body=parsed, retry_after=retry)
    return HumanTaskError("unexpected_response", f"The service answered {status} without an error body.", status=status, retry_after=retry_after)
