"""human-task-client: typed sync and async clients for the human-in-the-loop task service.

    from human_task_client import HumanTaskClient
    with HumanTaskClient("https://tasks.example.org") as client:
        submitted = client.submit_task({"task_type": "real_world_verification", "description": "...", "delivery": "status_poll"})
        task = client.wait_for_result(submitted.task_id, timeout=3600)
        assert client.verify_receipt(task).valid
"""

from ._common import Submission, WaitProgress
from .async_client import AsyncHumanTaskClient
from .client import HumanTaskClient
from .errors import (
    AlreadyAnsweredError,
    ApprovalNotAllowedError,
    CapacityReachedError,
    ClientBlockedError,
    DuplicateTaskError,
    ForbiddenError,
    HumanTaskError,
    InternalError,
    InvalidCursorError,
    InvalidSignatureError,
    SignatureRequiredError,
    InvalidJsonError,
    InvalidTransitionError,
    MalformedRequestError,
    MethodNotAllowedError,
    NotFoundError,
    PayloadTooLargeError,
    QuestionNotFoundError,
    RateLimitedError,
    ServiceUnavailableError,
    TaskNotFoundError,
    UnauthorizedError,
    UnsupportedMediaTypeError,
    ValidationFailedError,
    WaitTimeoutError,
)
from .approvals import ApprovalVerdict, approval_challenge, passkey_key_id, verify_approvals
from .log import LogVerdict, verify_consistency_proof, verify_receipt_log
from .models import CatalogEntry, MessageInput, MessageResponse, MessageThread, Question, SubmissionResponse, Task, TaskInput
from .results import parse_result
from .verify import Check, ReceiptVerdict, WebhookVerdict, same_issuer, verify_receipt, verify_webhook
from .web_bot_auth import AgentKey, WebBotAuthVerdict, jwk_thumbprint, verify_web_bot_auth

__all__ = [
    "AlreadyAnsweredError",
    "AsyncHumanTaskClient",
    "ForbiddenError",
    "MessageThread",
    "Question",
    "QuestionNotFoundError",
    "CapacityReachedError",
    "CatalogEntry",
    "Check",
    "ClientBlockedError",
    "DuplicateTaskError",
    "HumanTaskClient",
    "LogVerdict",
    "verify_consistency_proof",
    "verify_receipt_log",
    "HumanTaskError",
    "InternalError",
    "InvalidCursorError",
    "ApprovalNotAllowedError",
    "InvalidSignatureError",
    "SignatureRequiredError",
    "InvalidJsonError",
    "InvalidTransitionError",
    "MalformedRequestError",
    "MethodNotAllowedError",
    "NotFoundError",
    "PayloadTooLargeError",
    "MessageInput",
    "MessageResponse",
    "RateLimitedError",
    "ReceiptVerdict",
    "Submission",
    "SubmissionResponse",
    "Task",
    "TaskInput",
    "ServiceUnavailableError",
    "TaskNotFoundError",
    "UnauthorizedError",
    "UnsupportedMediaTypeError",
    "ValidationFailedError",
    "WaitProgress",
    "WaitTimeoutError",
    "parse_result",
    "WebhookVerdict",
    "same_issuer",
    "verify_receipt",
    "verify_webhook",
    "AgentKey",
    "WebBotAuthVerdict",
    "jwk_thumbprint",
    "verify_web_bot_auth",
    "ApprovalVerdict",
    "approval_challenge",
    "passkey_key_id",
    "verify_approvals",
]
__version__ = "1.0.0"
