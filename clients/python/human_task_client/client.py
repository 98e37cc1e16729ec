"""The synchronous client, on httpx."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any
from urllib.parse import quote

import httpx

from ._base import DEFAULT_BASE_URL, _Base
from ._common import FINAL, Pacer, Submission, WaitProgress, deadline_of, jwks_or_error, new_idempotency_key, parse_body, refusal
from .errors import HumanTaskError, TaskNotFoundError, WaitTimeoutError
from .models import CatalogEntry, MessageInput, MessageResponse, MessageThread, ServicesPage, SubmissionResponse, Task, TaskInput
from .log import LogVerdict
from .web_bot_auth import AgentKey
from .verify import ReceiptVerdict, WebhookVerdict, verify_webhook


CANCEL_HOLD_MAX = 5


class HumanTaskClient(_Base):
    """Synchronous client. ``HumanTaskClient(base_url)``; use as a context manager or call close()."""

    def __init__(
        self,
        base_url: str = DEFAULT_BASE_URL,
        *,
        issuer: str | None = None,
        jwks: Mapping[str, Any] | None = None,
        timeout: float = 30.0,
        max_retries: int = 3,
        max_retry_delay: float = 30.0,
        jwks_ttl: float = 600.0,
        agent: AgentKey | None = None,
        http_client: httpx.Client | None = None,
    ) -> None:
        super().__init__(base_url, issuer, jwks, max_retries, max_retry_delay, jwks_ttl, agent)
        self._http = http_client or httpx.Client(timeout=timeout, headers={"accept": "application/json"})

    def __enter__(self) -> HumanTaskClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    def _request(self, method: str, path: str, *, json: Any = None, headers: Mapping[str, str] | None = None, idempotent: bool, retry: bool = True, timeout: float | None = None) -> httpx.Response:
        attempt = 0
        while True:
            try:
                kwargs: dict[str, Any] = {"json": json, "headers": self._signed(headers)}
                if timeout is not None:
                    kwargs["timeout"] = timeout
                response = self._http.request(method, f"{self.base_url}{path}", **kwargs)
            except httpx.TransportError as error:
                pause = self._retry_pause(attempt, None, idempotent) if retry else None
                if pause is None:
                    raise HumanTaskError("network_error", f"Could not reach {self.base_url}: {error}") from error
                time.sleep(pause)
                attempt += 1
                continue
            if response.is_success or response.status_code == 304:
                return response
            pause = self._retry_pause(attempt, response, idempotent) if retry else None
            if pause is None:
                raise refusal(response)
            time.sleep(pause)
            attempt += 1

    def submit_task(self, task: TaskInput | Mapping[str, Any], *, idempotency_key: str | None = None) -> Submission:
        """Submits a task; one Idempotency-Key per logical submission, reused on every retry."""
        key = idempotency_key or new_idempotency_key()
        response = self._request("POST", "/api/v1/tasks", json=dict(task), headers={"idempotency-key": key}, idempotent=True)
        return Submission(SubmissionResponse.from_dict(parse_body(response)), key, response.headers.get("idempotent-replayed") == "true")

    def get_task(self, task_id: str) -> Task:
        """The task's public state; conditional (a 304 answers from the last copy seen)."""
        response = self._request("GET", f"/api/v1/tasks/{quote(task_id, safe='')}", headers=self._tasks.headers(task_id, None), idempotent=True)
        return self._tasks.read(task_id, response)

    def send_message(self, message: MessageInput | Mapping[str, Any]) -> MessageResponse:
        response = self._request("POST", "/api/v1/messages", json=dict(message), idempotent=False)
        return MessageResponse.from_dict(parse_body(response))

    def answer_question(self, task_id: str, question_id: str, answer: str) -> Task:
        """Answers the operator's question (the one in ``task.questions`` whose answer is None while
        ``task.awaiting_answer``). Each question takes one answer: AlreadyAnsweredError after."""
        path = f"/api/v1/tasks/{quote(task_id, safe='')}/questions/{quote(question_id, safe='')}/answer"
        return Task.from_dict(parse_body(self._request("POST", path, json={"answer": answer}, idempotent=False)))

    def cancel_task(self, task_id: str) -> dict[str, Any]:
        """Withdraws a task (POST /api/v1/tasks/{task_id}/cancel), with the message quota: a task nobody
        accepted yet is withdrawn at once (status "rejected", the reason as message); for an accepted
        one the operator gets a withdrawal request and the status does not change: the operator
        decides. A final task raises InvalidTransitionError."""
        body = parse_body(self._request("POST", f"/api/v1/tasks/{quote(task_id, safe='')}/cancel", idempotent=True))
        return dict(body)

    def read_thread(self, message_id: str, thread_token: str) -> MessageThread:
        """The operator's replies to a message, read with the thread_token send_message returned."""
        headers = {"authorization": f"Bearer {thread_token}"}
        return MessageThread.from_dict(parse_body(self._request("GET", f"/api/v1/messages/{quote(message_id, safe='')}", headers=headers, idempotent=True)))

    def list_services(self, *, page_size: int | None = None) -> Iterator[CatalogEntry]:
        """Every catalog entry, following next_cursor."""
        cursor: str | None = None
        while True:
            params = {k: v for k, v in (("limit", page_size), ("cursor", cursor)) if v is not None}
            suffix = f"?{httpx.QueryParams(params)}" if params else ""
            page = ServicesPage.from_dict(parse_body(self._request("GET", f"/api/v1/services{suffix}", idempotent=True)))
            yield from page.services
            if page.next_cursor is None:
                return
            cursor = page.next_cursor

    def wait_for_result(
        self,
        task_id: str,
        *,
        timeout: float | None = None,
        deadline: float | None = None,
        wait_seconds: int = 50,
        poll_interval: float = 2.0,
        on_progress: Callable[[WaitProgress], None] | None = None,
        cancel: threading.Event | None = None,
    ) -> Task:
        """Waits until delivered or rejected, or until the operator asks a question (``awaiting_answer``:
        answer it with answer_question, then wait again). Long-polls (Prefer: wait + If-None-Match); against a
        service that does not hold requests, polls with a growing delay; always honours Retry-After
        and an exhausted read quota. ``timeout`` in seconds, ``deadline`` as Unix seconds; raises
        WaitTimeoutError then. Setting ``cancel`` stops the wait within a few seconds (raises
        HumanTaskError 'cancelled'); with it, each long-poll is held at most 5 s."""
        started = time.monotonic()
        until = deadline_of(timeout, deadline)
        pacer = Pacer(poll_interval)
        hold_max = min(60, max(1, int(wait_seconds)))
        if cancel is not None:
            # A held request cannot be interrupted from another thread: hold briefly so a cancel
            # takes effect within seconds.
            hold_max = min(hold_max, CANCEL_HOLD_MAX)
        last = self._tasks.last(task_id)
        if last is not None:
            # Known already: report it at once (a long-poll's first answer only comes with a change).
            if on_progress:
                on_progress(WaitProgress(last, last.status, last.eta, 0.0))
            if last.status in FINAL or last.awaiting_answer:
                return last
        while True:
            remaining = until - time.monotonic()
            if remaining <= 0:
                raise WaitTimeoutError(f"Task {task_id} is still {last.status if last else 'unknown'} after {time.monotonic() - started:.0f} s.", last)
            hold = int(min(remaining, hold_max)) if remaining >= 1 else None
            headers = self._tasks.headers(task_id, hold)
            try:
                sent = time.monotonic()
                response = self._request("GET", f"/api/v1/tasks/{quote(task_id, safe='')}", headers=headers, idempotent=True, retry=False, timeout=(hold or 0) + 30.0)
                last = self._tasks.read(task_id, response)
                if on_progress:
                    on_progress(WaitProgress(last, last.status, last.eta, time.monotonic() - started))
                if last.status in FINAL or last.awaiting_answer:
                    return last
                pause = pacer.after_answer(response, "prefer" in headers, time.monotonic() - sent, hold)
            except HumanTaskError as error:
                if isinstance(error, TaskNotFoundError):
                    raise
                if error.retry_after is not None:
                    if time.monotonic() + error.retry_after > until:
                        raise
                    pause = error.retry_after
                elif error.code == "network_error" or error.status >= 500:
                    pause = pacer.after_failure()
                else:
                    raise
            pause = min(pause, max(0.0, until - time.monotonic()))
            if cancel is not None:
                if cancel.wait(pause):
                    raise HumanTaskError("cancelled", f"Waiting for {task_id} was cancelled.")
            else:
                time.sleep(pause)

    def operator_keys(self) -> Mapping[str, Any]:
        """The service's /.well-known/operator-keys.json: the passkeys approvals are signed with, by key_id, with since/until."""
        return jwks_or_error(self._request("GET", "/.well-known/operator-keys.json", idempotent=True), "/.well-known/operator-keys.json")

    def jwks(self, *, refresh: bool = False) -> Mapping[str, Any]:
        cached = self._cached_jwks(refresh)
        if cached is not None:
            return cached
        jwks = jwks_or_error(self._request("GET", "/.well-known/jwks.json", idempotent=True))
        self._jwks = (jwks, time.monotonic())
        return jwks

    def verify_receipt(
        self,
        subject: str | Task,
        *,
        files: Mapping[str, bytes] | None = None,
        operator_notes: str | None = None,
        task_id: str | None = None,
        operator_keys: Mapping[str, Any] | None = None,
    ) -> ReceiptVerdict:
        """Verifies a receipt given as a compact JWS, a Task, or a task id (then fetched): signature
        against the service's JWKS (cached), iss, sub, the deliverable hash and, with files, the attachments.
        A version-3 receipt's passkey approvals are checked against ``operator_keys``, else the service's
        /.well-known/operator-keys.json (fetched unless the client was given a JWKS: offline)."""
        if isinstance(subject, str) and "." not in subject:
            subject = self.get_task(subject)
        receipt, notes, expected = self._receipt_inputs(subject, operator_notes, task_id)
        if self._needs_operator_keys(receipt, operator_keys):
            operator_keys = self.operator_keys()
        verdict = self._verify(receipt, self.jwks(), notes, expected, files, operator_keys)
        if verdict.failure == "kid" and self._fixed_jwks is None:
            verdict = self._verify(receipt, self.jwks(refresh=True), notes, expected, files, operator_keys)
        return verdict

    def verify_receipt_log(
        self,
        subject: str | Task,
        *,
        proof: str | None = None,
        vkey: str | None = None,
        older_checkpoint: str | None = None,
        consistency: str | None = None,
        tsa_ca: str | bytes | None = None,
    ) -> LogVerdict:
        """Verifies that a receipt (a compact JWS, a Task, or a task id, then fetched) is in the
        service's public log: the tlog-proof, the checkpoint's signature by the log's verifier key,
        the inclusion path, the RFC 3161 token when present (with tsa_ca, PEM of trusted TSA
        certificates, its chain too) and, with older_checkpoint (a checkpoint kept earlier), that
        the log only grew. Anything not given is fetched; with a receipt, proof and vkey nothing
        is. docs/receipt-log.md."""
        if isinstance(subject, str) and "." not in subject:
            subject = self.get_task(subject)
        receipt, task_id = self._log_subject(subject)
        fetched: dict[str, str | None] = {}
        for name, path in self._log_requests(task_id, proof, vkey, older_checkpoint, consistency).items():
            try:
                fetched[name] = (self._request("GET", path, idempotent=True)).text
            except HumanTaskError as error:
                fetched[name] = self._log_refused(name, error)
        return self._log_verdict(receipt, fetched, proof, vkey, older_checkpoint, consistency, tsa_ca)

    def verify_webhook(
        self,
        headers: Mapping[str, str],
        body: bytes | str,
        *,
        now: float | None = None,
        tolerance_seconds: float = 300,
        authority: str | None = None,
        require_web_bot_auth: bool = False,
    ) -> WebhookVerdict:
        """Verifies a webhook request (Standard Webhooks v1a, and its Web Bot Auth signature when it carries
        one, naming the issuer's origin) against the service's JWKS. Pass the raw body."""
        extra = self._webhook_options(now, tolerance_seconds, authority, require_web_bot_auth)
        verdict = verify_webhook(headers, body, self.jwks(), **extra)
        if verdict.failure == "signature" and self._fixed_jwks is None:
            verdict = verify_webhook(headers, body, self.jwks(refresh=True), **extra)
        return verdict
