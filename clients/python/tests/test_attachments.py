"""A delivery with files: the client checks the downloaded files against the version-2 receipt."""

from __future__ import annotations

from urllib.parse import urlsplit

import httpx
from conftest import Service
from test_client import task_input

from human_task_client import HumanTaskClient


def test_verify_receipt_with_downloaded_files(service: Service) -> None:
    with HumanTaskClient(service.url) as client:
        task_id = client.submit_task({**task_input(), "location_required": False}).task_id
        service.admin("PATCH", f"/api/v1/admin/tasks/{task_id}", {"status": "accepted"})
        for name, content in (("door-sign.txt", b"Sun 8:00-12:00"), ("notes.txt", b"measurements: 12 cm")):
            response = httpx.post(
                f"{service.url}/api/v1/admin/tasks/{task_id}/attachments",
                content=content,
                headers={"authorization": f"Bearer {service.admin_key}", "content-type": "text/plain", "content-disposition": f'attachment; filename="{name}"'},
                timeout=30,
            )
            assert response.status_code == 201, response.text
        service.admin("PATCH", f"/api/v1/admin/tasks/{task_id}", {"status": "delivered", "operator_notes": "See the files."})

        task = client.get_task(task_id)
        attachments = task.attachments or []
        assert [a.name for a in attachments] == ["door-sign.txt", "notes.txt"]
        files = {a.name: httpx.get(f"{service.url}{urlsplit(a.url).path}", timeout=30).content for a in attachments}

        verdict = client.verify_receipt(task, files=files)
        assert (verdict.valid, verdict.failure) == (True, None)
        assert verdict.payload is not None and verdict.payload["receipt_version"] == 2
        assert client.verify_receipt(task, files={**files, "notes.txt": b"measurements: 13 cm"}).failure == "attachments"
        assert client.verify_receipt(task, files={"door-sign.txt": files["door-sign.txt"]}).failure == "attachments"
