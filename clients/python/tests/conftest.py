"""Starts the real service for the session: `tsx src/server.ts` from the repository root, on a
free port, a temporary DATA_DIR (SQLite) and a known ADMIN_KEY; stops it at the end."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

REPO = Path(__file__).resolve().parents[3]
ADMIN_KEY = "python-client-admin-key-0123456789"
VECTORS = REPO / "docs" / "receipt-test-vectors.json"


@dataclass(frozen=True)
class Service:
    url: str
    admin_key: str

    def admin(self, method: str, path: str, body: dict[str, object] | None = None) -> httpx.Response:
        response = httpx.request(method, f"{self.url}{path}", json=body, headers={"authorization": f"Bearer {self.admin_key}"}, timeout=30)
        assert response.status_code < 300, response.text
        return response

    def deliver(self, task_id: str, notes: str = "Open on Sundays 8:00-12:00.") -> None:
        self.admin("PATCH", f"/api/v1/admin/tasks/{task_id}", {"status": "accepted"})
        self.admin("PATCH", f"/api/v1/admin/tasks/{task_id}", {"status": "delivered", "operator_notes": notes})


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _start(extra_env: dict[str, str]) -> Iterator[Service]:
    """Runs `tsx src/server.ts` on a free port with a temporary SQLite DATA_DIR until the caller is done."""
    port = _free_port()
    data_dir = tempfile.mkdtemp(prefix="htc-python-")
    url = f"http://127.0.0.1:{port}"
    env = {
        **os.environ,
        "PORT": str(port),
        "HOST": "127.0.0.1",
        "BASE_URL": url,
        "DATA_DIR": data_dir,
        "DATABASE_URL": f"sqlite:{data_dir}/service.db",
        "ADMIN_KEY": ADMIN_KEY,
        "LOG_LEVEL": "warn",
        # No network here: a resolver that does not answer, quickly (submissions use status_poll).
        "DNS_SERVERS": "127.0.0.1:9",
        "DNS_TIMEOUT_MS": "200",
        **extra_env,
    }
    tsx = REPO / "node_modules" / ".bin" / "tsx"
    log = open(Path(data_dir) / "server.log", "wb")  # noqa: SIM115 (closed below)
    process = subprocess.Popen([str(tsx), "src/server.ts"], cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + 90
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"the service exited with {process.returncode}: {Path(data_dir, 'server.log').read_text()}")
            try:
                if httpx.get(f"{url}/api/v1/health", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("the service did not come up within 90 s")
            time.sleep(0.2)
        yield Service(url, ADMIN_KEY)
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()
        shutil.rmtree(data_dir, ignore_errors=True)


@pytest.fixture(scope="session")
def service() -> Iterator[Service]:
    yield from _start(
        {
            # Room for the suite; messages keep a small limit so a 429 can be provoked.
            "TASK_LIMIT_PER_HOUR": "100000",
            "TASK_LIMIT_PER_DAY": "100000",
            "STATUS_POLL_LIMIT_PER_DAY": "100000",
            "READ_LIMIT_PER_MINUTE": "1000000",
            "DAILY_TASK_CAP": "1000000",
            "DAILY_EMAIL_CAP": "1000000",
            "AUTO_BLOCK_REFUSALS": "1000000",
            "MESSAGE_LIMIT_PER_HOUR": "2",
            # Webhooks to a receiver on loopback (tests/test_webhooks.py).
            "WEBHOOK_ALLOW_PRIVATE": "true",
        }
    )


@pytest.fixture(scope="session")
def dev_service() -> Iterator[Service]:
    """The development profile with its stand-in operator: every task accepted, then delivered."""
    yield from _start({"DEV_MODE": "true", "DEV_AUTO_OPERATOR": "deliver", "DEV_AUTO_OPERATOR_DELAY_MS": "300"})
