"""A LangGraph (LangChain) tool that hands work to a human and waits for the result.

No `interrupt`: the tool itself submits the task, waits (long-polling, politely) and returns the
verified deliverable, so any agent that can call tools can use a human. Needs `langgraph` and
`langchain-core` (not needed by the client or its tests); run with a service at HTASK_BASE_URL:

    pip install ./clients/python langgraph langchain-openai
    HTASK_BASE_URL=https://tasks.example.org python examples/langgraph_tool.py

Try it without a person first: `DEV_AUTO_OPERATOR=deliver npm run dev` starts the service with a
stand-in operator that delivers every task two seconds after it arrives (docs/development.md); the
tool then returns its canned answer with the receipt verified. tests/test_example.py runs it so.
"""

from __future__ import annotations

import os
from typing import Any

from human_task_client import AsyncHumanTaskClient, HumanTaskError, WaitTimeoutError

BASE_URL = os.environ.get("HTASK_BASE_URL", "http://localhost:8080")


async def ask_a_human(description: str, task_type: str = "real_world_verification", location: str | None = None, hours: float = 24) -> str:
    """Ask a human to do something an AI cannot (go somewhere, look, judge). Returns their signed answer."""
    task: dict[str, object] = {"task_type": task_type, "description": description, "delivery": "status_poll", "requester": "langgraph-example"}
    if location:
        task.update(location_required=True, location_detail=location)
    async with AsyncHumanTaskClient(BASE_URL) as client:
        try:
            submitted = await client.submit_task(task)
            result = await client.wait_for_result(submitted.task_id, timeout=hours * 3600)
        except WaitTimeoutError as error:
            return f"No answer yet ({error.message}). Check again later with the task id."
        except HumanTaskError as error:
            return f"The service refused: {error.code}: {error.message}" + (f" (retry in {error.retry_after:.0f} s)" if error.retry_after else "")
        if result.status == "rejected":
            return f"The operator declined: {result.operator_notes}"
        verdict = await client.verify_receipt(result)
        proof = "signed receipt verified" if verdict.valid else f"RECEIPT DID NOT VERIFY ({verdict.failure})"
        return f"{result.operator_notes}\n\n[{proof}; task {result.task_id}]"


def build_agent() -> Any:
    """A ReAct agent with the tool; imported lazily so this module loads without LangGraph."""
    from langchain_core.tools import StructuredTool
    from langchain_openai import ChatOpenAI
    from langgraph.prebuilt import create_react_agent

    tool = StructuredTool.from_function(coroutine=ask_a_human, name="ask_a_human", description=ask_a_human.__doc__ or "")
    return create_react_agent(ChatOpenAI(model="gpt-4o-mini"), [tool])


if __name__ == "__main__":
    import asyncio

    agent = build_agent()
    question = "Is the bakery at 12 Main Street, Springfield open on Sunday mornings? Ask a human to check."
    print(asyncio.run(agent.ainvoke({"messages": [("user", question)]}))["messages"][-1].content)
