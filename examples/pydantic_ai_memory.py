"""A pydantic-ai agent with kenning memory tools and the memory hint.

Run: python examples/pydantic_ai_memory.py   (needs: pip install 'kenning[pydantic-ai]')

Offline by default: the agent runs on pydantic-ai's ``FunctionModel`` with the
``scripted`` function below (it calls ``save_memory`` for "remember ...",
``recall_memories`` for a question, then answers from the tool's result). With
OPENAI_API_KEY set in the environment it runs on a real OpenAI model instead
(``KENNING_EXAMPLE_MODEL``, default openai:gpt-4o-mini; needs
``pip install 'pydantic-ai-slim[openai]'``). Nothing else goes over the network.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

from pydantic_ai import Agent
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models import Model
from pydantic_ai.models.function import AgentInfo, FunctionModel

from kenning import Memory, Principal, Role
from kenning.integrations.pydantic_ai import memory_toolset


def scripted(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """A stand-in for an LLM, deciding from the latest request part."""
    request = messages[-1]
    assert isinstance(request, ModelRequest)
    part = request.parts[-1]
    if isinstance(part, ToolReturnPart):
        result: Any = part.content
        found = result.get("memories")
        if found is not None:
            return ModelResponse(parts=[TextPart(found[0]["content"] if found else "No idea.")])
        return ModelResponse(parts=[TextPart("Saved.")])
    text = str(getattr(part, "content", ""))
    if text.lower().startswith("remember "):
        return ModelResponse(parts=[ToolCallPart("save_memory", {"content": text[9:]})])
    return ModelResponse(parts=[ToolCallPart("recall_memories", {"query": text})])


def main() -> None:
    real = bool(os.environ.get("OPENAI_API_KEY"))
    model: Model | str = (
        os.environ.get("KENNING_EXAMPLE_MODEL", "openai:gpt-4o-mini")
        if real
        else FunctionModel(scripted)
    )
    with tempfile.TemporaryDirectory() as tmp, Memory(Path(tmp) / "kenning.db") as mem:
        dana = Principal(org_id="acme", user_id="dana", roles={Role.MEMBER})
        agent = Agent(
            model,
            instructions="Save facts the user tells you; answer questions from memory.",
            # the tools act for dana; hint=True also puts her relevant memories in the
            # instructions of each run
            toolsets=[memory_toolset(mem, principal=dana, agent_id="planner", hint=True)],
        )
        for prompt in [
            "remember my daughter Mia is allergic to peanuts",
            "remember the team offsite is in Ghent on 14 May",
            "What is Mia allergic to?",
        ]:
            print(f"> {prompt}\n{agent.run_sync(prompt).output}")
        print("dana's memories:", [m.content for m in mem.list(principal=dana).items])


if __name__ == "__main__":
    main()
