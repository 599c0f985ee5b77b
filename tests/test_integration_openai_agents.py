"""The OpenAI Agents SDK integration on the real engine and SQLite, with no network.

An ``Agent`` runs with :class:`RuleModel`, a ``Model`` written here that
answers from its input the way a real model would (call ``save_memory`` on
"remember ...", ``recall_memories`` on a question, answer from the tool's
output), so the SDK's own runner executes the kenning tools and stores the
conversation in :class:`KenningSession`.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from agents import Agent, Model, ModelResponse, RunConfig, Runner, Usage
from agents.testing import assistant_message, function_call

from kenning import Memory, NotFound, Principal, Role
from kenning.integrations import MissingExtra
from kenning.integrations.openai_agents import KenningSession, memory_tools

pytestmark = pytest.mark.stores("sqlite")

OFFLINE = RunConfig(tracing_disabled=True)


class RuleModel(Model):
    """A scripted model: each response is decided by the latest input item."""

    def __init__(self) -> None:
        self.inputs: list[list[dict[str, Any]]] = []
        self.calls = 0

    async def get_response(
        self,
        system_instructions: str | None,
        input: str | list[Any],
        model_settings: Any,
        tools: list[Any],
        output_schema: Any,
        handoffs: list[Any],
        tracing: Any,
        *,
        previous_response_id: str | None,
        conversation_id: str | None,
        prompt: Any,
    ) -> ModelResponse:
        items = [{"role": "user", "content": input}] if isinstance(input, str) else list(input)
        self.inputs.append([dict(i) for i in items])
        self.calls += 1
        last = dict(items[-1])
        if last.get("type") == "function_call_output":
            result = last["output"]
            text = result if result.startswith("error:") else _answer(json.loads(result))
            output = [assistant_message(text, item_id="msg")]
        else:
            text = str(last.get("content", ""))
            call_id = f"call-{self.calls}"
            if text.lower().startswith("remember "):
                args = {"content": text[len("remember ") :], "key": None, "tags": ["chat"]}
                output = [function_call("save_memory", args, call_id=call_id)]
            elif text.lower().startswith("forget "):
                args = {"memory_id": text[len("forget ") :]}
                output = [function_call("forget_memory", args, call_id=call_id)]
            elif text.endswith("?"):
                output = [
                    function_call("recall_memories", {"query": text, "k": 3}, call_id=call_id)
                ]
            else:
                output = [assistant_message("Noted.", item_id="msg")]
        return ModelResponse(output=output, usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        raise NotImplementedError("RuleModel does not stream")


def _answer(result: Any) -> str:
    if isinstance(result, list):
        return result[0]["content"] if result else "I don't know."
    if "forgotten" in result:
        return f"Forgot: {result['content']}"
    return f"Saved {result['id']}: {result['content']}"


def _run(agent: Agent[Any], text: str, session: KenningSession | None = None) -> Any:
    return asyncio.run(Runner.run(agent, text, session=session, run_config=OFFLINE))


def _agent(mem: Memory, principal: Principal | None = None) -> tuple[Agent[Any], RuleModel]:
    model = RuleModel()
    agent = Agent(
        name="assistant",
        instructions="You remember things for the user.",
        model=model,
        tools=memory_tools(mem, principal=principal, agent_id="assistant"),
    )
    return agent, model


# -- tools ------------------------------------------------------------------------------


def test_an_agent_saves_recalls_and_forgets_through_the_tools(mem: Memory) -> None:
    agent, _ = _agent(mem)
    saved = _run(agent, "remember Alice's favourite colour is teal")
    assert saved.final_output.startswith("Saved ")
    (record,) = mem.list(filters={"tags": ["chat"]}).items
    assert record.content == "Alice's favourite colour is teal"
    assert (record.source, record.agent_id, str(record.scope)) == (
        "agent_tool",
        "assistant",
        "user:default",
    )
    mem.remember("The office closes at 6pm on Fridays")

    answer = _run(agent, "What is Alice's favourite colour?")
    assert answer.final_output == "Alice's favourite colour is teal"

    gone = _run(agent, f"forget {record.id}")
    assert gone.final_output == "Forgot: Alice's favourite colour is teal"
    with pytest.raises(NotFound):
        mem.get(record.id)


def test_tools_are_bound_to_their_principal(mem: Memory) -> None:
    alice = Principal(org_id="acme", user_id="alice", roles={Role.MEMBER})
    bob = Principal(org_id="acme", user_id="bob", roles={Role.MEMBER})
    alice_agent, _ = _agent(mem, alice)
    bob_agent, _ = _agent(mem, bob)
    _run(alice_agent, "remember my locker code is 4711")
    assert _run(bob_agent, "What is my locker code?").final_output == "I don't know."
    assert _run(alice_agent, "What is my locker code?").final_output == "my locker code is 4711"
    (alice_memory,) = mem.list(principal=alice).items
    assert str(alice_memory.scope) == "user:alice"
    # bob's agent cannot delete alice's memory: the tool's error goes back to the model
    failed = _run(bob_agent, f"forget {alice_memory.id}")
    assert failed.final_output == f"error: memory {alice_memory.id!r} not found"
    assert mem.get(alice_memory.id, principal=alice).content == "my locker code is 4711"


def test_tool_schemas_are_strict_and_documented(mem: Memory) -> None:
    tools = {t.name: t for t in memory_tools(mem)}
    assert set(tools) == {"save_memory", "recall_memories", "forget_memory"}
    save = tools["save_memory"]
    assert "long-term memory" in save.description
    assert save.params_json_schema["required"] == ["content", "key", "tags"]
    assert "self-contained sentence" in json.dumps(save.params_json_schema)


# -- the session ------------------------------------------------------------------------


def test_session_keeps_the_conversation_across_runs(mem: Memory) -> None:
    agent, model = _agent(mem)
    session = KenningSession("chat-1", mem, user_name="Caroline")
    _run(agent, "I moved to Lisbon last year and I love surfing.", session)
    _run(agent, "remember Caroline's sister is called Ana", session)
    # the second run's model saw the first exchange, from kenning
    second_input = model.inputs[1]
    assert second_input[0] == {
        "role": "user",
        "content": "I moved to Lisbon last year and I love surfing.",
    }
    assert second_input[1]["role"] == "assistant" and second_input[1]["type"] == "message"

    items = asyncio.run(session.get_items())
    kinds = [i.get("type", "message") for i in items]
    assert kinds == [
        "message",
        "message",
        "message",
        "function_call",
        "function_call_output",
        "message",
    ]
    assert items[3]["name"] == "save_memory"
    assert items[4]["call_id"] == items[3]["call_id"]
    # turns are kenning conversation memories; facts were extracted from what was said
    turns = session.turns()
    assert [t.metadata["turn"] for t in turns] == list(range(6))
    assert {t.session_id for t in turns} == {"chat-1"}
    context = mem.context("chat-1")
    assert [c.id for c in context] == [t.id for t in turns]
    facts = mem.list(filters={"source": "extraction", "session_id": "chat-1"}).items
    assert any("Lisbon" in f.content for f in facts)
    hits = mem.recall("Where did Caroline move to?", k=5)
    # the fact, or the turn it was drawn from (a recall returns one of the two)
    said = {facts[0].id, *facts[0].metadata["evidence"]}
    assert any(h.memory.id in said for h in hits)


def test_session_protocol_round_trip(mem: Memory) -> None:
    session = KenningSession("s-proto", mem)
    items: list[Any] = [
        {"role": "user", "content": "hello"},
        {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": "hi there", "annotations": []}],
        },
        {"type": "function_call", "call_id": "c1", "name": "lookup", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c1", "output": "42"},
        {"role": "developer", "content": "be brief"},
        {"role": "user", "content": [{"type": "input_text", "text": "and now?"}]},
    ]

    async def scenario() -> None:
        assert await session.get_items() == []
        assert await session.pop_item() is None
        await session.add_items(items[:3])
        await session.add_items(items[3:])
        assert await session.get_items() == items
        assert await session.get_items(limit=2) == items[-2:]
        assert await session.pop_item() == items[-1]
        assert await session.get_items() == items[:-1]
        await session.add_items([items[-1]])
        assert await session.get_items() == items
        await session.clear_session()
        assert await session.get_items() == []

    asyncio.run(scenario())
    assert mem.context("s-proto") == []


def test_session_settings_limit_and_isolation(make_memory: Callable[..., Memory]) -> None:
    from agents.memory import SessionSettings

    mem = make_memory()
    alice = Principal(org_id="acme", user_id="alice", roles={Role.MEMBER})
    bob = Principal(org_id="acme", user_id="bob", roles={Role.MEMBER})
    limited = KenningSession(
        "shared-id", mem, principal=alice, session_settings=SessionSettings(limit=1)
    )
    theirs = KenningSession("shared-id", mem, principal=bob)

    async def scenario() -> None:
        await limited.add_items([{"role": "user", "content": "alice one"}])
        await limited.add_items([{"role": "user", "content": "alice two"}])
        await theirs.add_items([{"role": "user", "content": "bob one"}])
        assert await limited.get_items() == [{"role": "user", "content": "alice two"}]
        assert len(await limited.get_items(limit=10)) == 2
        assert await theirs.get_items() == [{"role": "user", "content": "bob one"}]
        await theirs.clear_session()
        assert len(await limited.get_items(limit=10)) == 2

    asyncio.run(scenario())
    assert str(limited.scope) == "user:alice" and str(theirs.scope) == "user:bob"


def test_without_the_sdk_the_error_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "agents", None)
    monkeypatch.delitem(sys.modules, "kenning.integrations.openai_agents")
    with pytest.raises(ImportError, match=r"pip install 'kenning\[openai-agents\]'") as info:
        import kenning.integrations.openai_agents  # noqa: F401
    assert isinstance(info.value, MissingExtra)
