"""models.py is what scripts/gen_models.py makes of the running service's OpenAPI document."""

from __future__ import annotations

import importlib.util
import shutil
import sys
import tempfile
from pathlib import Path

import httpx
from conftest import Service

PACKAGE = Path(__file__).resolve().parents[1]


def test_models_match_the_openapi_document(service: Service) -> None:
    document = httpx.get(f"{service.url}/openapi.json", timeout=30).text
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "python"
        shutil.copytree(PACKAGE / "scripts", copy / "scripts")
        (copy / "human_task_client").mkdir()
        (Path(tmp) / "openapi.json").write_text(document, encoding="utf-8")
        spec = importlib.util.spec_from_file_location("gen_models", copy / "scripts" / "gen_models.py")
        assert spec and spec.loader
        generator = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(generator)
        argv = sys.argv
        sys.argv = ["gen_models.py", str(Path(tmp) / "openapi.json")]
        try:
            assert generator.main() == 0
        finally:
            sys.argv = argv
        generated = (copy / "human_task_client" / "models.py").read_text(encoding="utf-8")
    committed = (PACKAGE / "human_task_client" / "models.py").read_text(encoding="utf-8")
    assert generated == committed, "human_task_client/models.py is stale: run python3 clients/python/scripts/gen_models.py"
