"""What the sync and async clients share beyond _common: configuration, retry decisions, the JWKS cache."""

from __future__ import annotations

import base64
import binascii
import json
import time
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

import httpx

from ._common import TaskCache, retry_after_seconds
from .errors import HumanTaskError
from .log import LogVerdict, checkpoint_size, receipt_subject, rolled_back, verify_receipt_log
from .models import Task
from .verify import ReceiptVerdict, verify_receipt
from .web_bot_auth import AgentKey, authority_of

DEFAULT_BASE_URL = "http://localhost:8080"
_RETRYABLE_REFUSALS = (429, 503)


class _Base:
    def __init__(
        self, base_url: str, issuer: str | None, jwks: Mapping[str, Any] | None, max_retries: int, max_retry_delay: float, jwks_ttl: float, agent: AgentKey | None = None
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.issuer = (issuer or self.base_url).rstrip("/")
        self.max_retries = max_retries
        self.max_retry_delay = max_retry_delay
        self._fixed_jwks = jwks
        self._jwks_ttl = jwks_ttl
        self._jwks: tuple[Mapping[str, Any], float] | None = None
        self._tasks = TaskCache()
        self._agent = agent

    def _signed(self, headers: Mapping[str, str] | None) -> dict[str, str]:
        """The request's headers, signed as the agent when there is one (Web Bot Auth over the issuer's
        authority, the service's BASE_URL); signed anew on every attempt, each nonce being single-use."""
        signed = dict(headers or {})
        if self._agent is not None:
            signed.update(self._agent.sign(authority_of(self.issuer)))
        return signed

    def _cached_jwks(self, refresh: bool) -> Mapping[str, Any] | None:
        if self._fixed_jwks is not None:
            return self._fixed_jwks
        if not refresh and self._jwks and time.monotonic() - self._jwks[1] < self._jwks_ttl:
            return self._jwks[0]
        return None

    def _retry_pause(self, attempt: int, response: httpx.Response | None, idempotent: bool) -> float | None:
        """Seconds to wait before retrying this attempt, or None to give up."""
        if attempt >= self.max_retries:
            return None
        if response is None:
            return min(self.max_retry_delay, 0.5 * 2.0**attempt) if idempotent else None
        if response.status_code in _RETRYABLE_REFUSALS:
            retry = retry_after_seconds(response.headers)
            return retry if retry is not None and retry <= self.max_retry_delay else None
        if idempotent and response.status_code in (502, 504):
            return min(self.max_retry_delay, 0.5 * 2.0**attempt)
        return None

    def _receipt_inputs(self, subject: str | Task, operator_notes: str | None, task_id: str | None) -> tuple[str, str | None, str | None]:
        if isinstance(subject, str):
            return subject, operator_notes, task_id
        if subject.receipt is None:
            raise HumanTaskError("unexpected_response", f"Task {subject.task_id} is {subject.status}: it has no receipt (receipts are issued on delivery).")
        notes = operator_notes if operator_notes is not None else subject.operator_notes
        return subject.receipt, notes, task_id or subject.task_id

    def _log_subject(self, subject: str | Task) -> tuple[str, str | None]:
        """The receipt and the task whose proof to fetch, for verify_receipt_log."""
        if isinstance(subject, str):
            return subject, receipt_subject(subject)
        receipt, _, task_id = self._receipt_inputs(subject, None, None)
        return receipt, task_id

    def _log_requests(self, task_id: str | None, proof: str | None, vkey: str | None, older_checkpoint: str | None, consistency: str | None) -> dict[str, str]:
        """What verify_receipt_log must fetch, by name: the proof, the verifier key, the consistency proof."""
        paths: dict[str, str] = {}
        if proof is None:
            if task_id is None:
                raise HumanTaskError("unexpected_response", "The receipt names no task: pass the proof.")
            paths["proof"] = f"/api/v1/tasks/{quote(task_id, safe='')}/receipt-proof"
        if vkey is None:
            paths["vkey"] = "/log/vkey"
        size = checkpoint_size(older_checkpoint) if older_checkpoint is not None and consistency is None else None
        if size is not None:
            paths["consistency"] = f"/log/consistency?from={size}"
        return paths

    @staticmethod
    def _log_refused(name: str, error: HumanTaskError) -> None:
        """A consistency proof the service refused with 404 (its log is smaller than the kept
        checkpoint) is a rollback the verdict names (None); any other failure is raised."""
        if name != "consistency" or error.status != 404:
            raise error
        return None

    @staticmethod
    def _log_verdict(
        receipt: str,
        fetched: Mapping[str, str | None],
        proof: str | None,
        vkey: str | None,
        older_checkpoint: str | None,
        consistency: str | None,
        tsa_ca: str | bytes | None = None,
    ) -> LogVerdict:
        """The verdict from what was given and fetched; a consistency proof the service refused (404: its log is smaller) is a rollback."""
        verdict = verify_receipt_log(
            receipt,
            proof if proof is not None else fetched.get("proof") or "",
            vkey if vkey is not None else fetched.get("vkey") or "",
            older_checkpoint=older_checkpoint,
            consistency=consistency if consistency is not None else fetched.get("consistency"),
            tsa_ca=tsa_ca,
        )
        return rolled_back(verdict) if "consistency" in fetched and fetched["consistency"] is None else verdict

    def _webhook_options(self, now: float | None, tolerance_seconds: float, authority: str | None, require_web_bot_auth: bool) -> dict[str, Any]:
        """verify_webhook's keyword arguments: the issuer's origin is the one a Web Bot Auth signature must name."""
        return {"now": now, "tolerance_seconds": tolerance_seconds, "authority": authority, "signer_origin": self.issuer, "require_web_bot_auth": require_web_bot_auth}

    def _verify(
        self,
        receipt: str,
        jwks: Mapping[str, Any],
        operator_notes: str | None,
        task_id: str | None,
        files: Mapping[str, bytes] | None,
        operator_keys: Mapping[str, Any] | None = None,
    ) -> ReceiptVerdict:
        return verify_receipt(receipt, jwks, issuer=self.issuer, task_id=task_id, operator_notes=operator_notes, files=files, operator_keys=operator_keys)

    def _needs_operator_keys(self, receipt: str, given: Mapping[str, Any] | None) -> bool:
        """Whether to fetch /.well-known/operator-keys.json: a version-3 receipt (read before verifying),
        none given, and not offline (a JWKS given to the constructor means nothing is fetched)."""
        if given is not None or self._fixed_jwks is not None:
            return False
        try:
            body = receipt.split(".")[1]
            return json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4))).get("receipt_version") == 3
        except (IndexError, ValueError, AttributeError, binascii.Error):
            return False
