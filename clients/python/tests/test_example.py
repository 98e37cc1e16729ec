"""The LangGraph example imports without LangGraph installed (it is documentation that must not rot)."""

from __future__ import annotations

import importlib.util
import inspect
from pathlib import Path


def test_langgraph_example_imports_and_exposes_the_tool() -> None:
    path = Path(__file__).resolve().parents[1] / "examples" / "langgraph_tool.py"
    spec = importlib.util.spec_from_file_location("langgraph_tool", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert inspect.iscoroutinefunction(module.ask_a_human)
    assert "human" in (module.ask_a_human.__doc__ or "")
