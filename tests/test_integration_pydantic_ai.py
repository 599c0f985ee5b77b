"""The pydantic-ai integration on the real engine and SQLite, offline.

Agents run with pydantic-ai's own test doubles: ``TestModel`` (calls the tools
with arguments it generates from their schemas) and ``FunctionModel`` (here a
rule that saves on "remember ...", recalls on a question and answers from the
tool's result), so pydantic-ai itself validates and executes the kenning tools.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import pytest
from pydantic_ai import Agent
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.models.test import TestModel

from kenning import Memory, Principal, Role
from kenning.integrations import MissingExtra
from kenning.integrations.pydantic_ai import memory_tools, memory_toolset

pytestmark = pytest.mark.stores("sqlite")


def rule(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """A scripted model: decide from the latest request part."""
    last = messages[-1]
    assert isinstance(last, ModelRequest)
    part = last.parts[-1]
    if isinstance(part, ToolReturnPart):
        result: Any = part.content
        if "error" in result:
            return ModelResponse(parts=[TextPart(f"error: {result['error']}")])
        if "memories" in result:
            found = result["memories"]
            return ModelResponse(parts=[TextPart(found[0]["content"] if found else "no idea")])
        if "forgotten" in result:
            return ModelResponse(parts=[TextPart(f"forgot {result['forgotten']}")])
        return ModelResponse(parts=[TextPart(f"saved {result['id']}")])
    assert isinstance(part, UserPromptPart) and isinstance(part.content, str)
    text = part.content
    if text.startswith("remember "):
        args = {"content": text[len("remember ") :], "tags": ["pai"]}
        return ModelResponse(parts=[ToolCallPart("save_memory", args)])
    if text.startswith("forget "):
        return ModelResponse(parts=[ToolCallPart("forget_memory", {"memory_id": text[7:]})])
    return ModelResponse(parts=[ToolCallPart("recall_memories", {"query": text, "k": 3})])


def test_function_model_saves_recalls_and_forgets(mem: Memory) -> None:
    agent = Agent(FunctionModel(rule), toolsets=[memory_toolset(mem, agent_id="pai")])
    saved = agent.run_sync("remember Dana's flight to Oslo leaves at 07:40")
    assert saved.output.startswith("saved ")
    (record,) = mem.list(filters={"tags": ["pai"]}).items
    assert record.content == "Dana's flight to Oslo leaves at 07:40"
    assert (record.source, record.agent_id) == ("agent_tool", "pai")
    mem.remember("Dana's hotel in Oslo is near the harbour")
    answer = agent.run_sync("When does Dana's flight leave?")
    assert answer.output == "Dana's flight to Oslo leaves at 07:40"
    gone = agent.run_sync(f"forget {record.id}")
    assert gone.output == f"forgot {record.id}"
    again = agent.run_sync(f"forget {record.id}")
    assert again.output == f"error: memory {record.id!r} not found"


def test_test_model_calls_every_tool(mem: Memory) -> None:
    agent = Agent(TestModel(), tools=memory_tools(mem))
    result = agent.run_sync("store and look things up")
    called = [
        p.tool_name
        for m in result.all_messages()
        for p in getattr(m, "parts", [])
        if isinstance(p, ToolCallPart)
    ]
    assert sorted(called) == ["forget_memory", "recall_memories", "save_memory"]
    returns = {
        p.tool_name: p.content
        for m in result.all_messages()
        for p in getattr(m, "parts", [])
        if isinstance(p, ToolReturnPart)
    }
    saved = returns["save_memory"]
    assert mem.get(saved["id"]).content == saved["content"]  # a real memory
    assert "error" in returns["forget_memory"]  # TestModel's made-up id: not found
    output = json.loads(result.output)
    assert set(output) == {"save_memory", "recall_memories", "forget_memory"}


def test_tools_are_bound_to_their_principal(mem: Memory) -> None:
    alice = Principal(org_id="acme", user_id="alice", roles={Role.MEMBER})
    bob = Principal(org_id="acme", user_id="bob", roles={Role.MEMBER})
    alice_agent = Agent(FunctionModel(rule), toolsets=[memory_toolset(mem, principal=alice)])
    bob_agent = Agent(FunctionModel(rule), toolsets=[memory_toolset(mem, principal=bob)])
    alice_agent.run_sync("remember my bike lock code is 9051")
    assert bob_agent.run_sync("What is my bike lock code?").output == "no idea"
    assert alice_agent.run_sync("What is my bike lock code?").output == "my bike lock code is 9051"
    (memory,) = mem.list(principal=alice).items
    assert str(memory.scope) == "user:alice"
    refused = bob_agent.run_sync(f"forget {memory.id}")
    assert refused.output == f"error: memory {memory.id!r} not found"
    assert mem.get(memory.id, principal=alice).content == "my bike lock code is 9051"


def test_hint_puts_relevant_memories_in_the_instructions(mem: Memory) -> None:
    mem.remember("Priya is vegetarian and allergic to cashews")
    mem.remember("The quarterly review is on 12 June")
    seen: list[str] = []

    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append(info.instructions or "")
        return ModelResponse(parts=[TextPart("ok")])

    agent = Agent(
        FunctionModel(answer),
        instructions="You plan dinners.",
        toolsets=[memory_toolset(mem, hint=True)],
    )
    agent.run_sync("What should I cook for Priya?")
    assert "You plan dinners." in seen[0]
    assert "Priya is vegetarian and allergic to cashews" in seen[0]
    no_hint = Agent(FunctionModel(answer), toolsets=[memory_toolset(mem)])
    no_hint.run_sync("What should I cook for Priya?")
    assert "cashews" not in seen[1]


def test_without_pydantic_ai_the_error_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pydantic_ai", None)
    monkeypatch.delitem(sys.modules, "kenning.integrations.pydantic_ai")
    with pytest.raises(ImportError, match=r"pip install 'kenning\[pydantic-ai\]'") as info:
        import kenning.integrations.pydantic_ai  # noqa: F401
    assert isinstance(info.value, MissingExtra)
