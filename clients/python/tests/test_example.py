"""The LangGraph example imports without LangGraph installed (it is documentation that must not rot),
and its tool runs end to end against the development profile's stand-in operator."""

from __future__ import annotations

import asyncio
import importlib.util
import inspect
from pathlib import Path
from types import ModuleType

from conftest import Service


def _example() -> ModuleType:
    path = Path(__file__).resolve().parents[1] / "examples" / "langgraph_tool.py"
    spec = importlib.util.spec_from_file_location("langgraph_tool", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_langgraph_example_imports_and_exposes_the_tool() -> None:
    module = _example()
    assert inspect.iscoroutinefunction(module.ask_a_human)
    assert "human" in (module.ask_a_human.__doc__ or "")


def test_the_example_tool_gets_a_verified_answer_from_the_dev_profile(dev_service: Service) -> None:
    """What an agent's own CI can run: the tool submits, waits by long-poll (no loop of polls) and
    returns the deliverable with its receipt verified, the stand-in operator playing the human."""
    module = _example()
    module.BASE_URL = dev_service.url
    answer = asyncio.run(module.ask_a_human("Check whether the bakery at 12 Main Street is open on Sunday mornings.", location="Springfield"))
    assert "development stand-in operator" in answer
    assert "signed receipt verified" in answer
