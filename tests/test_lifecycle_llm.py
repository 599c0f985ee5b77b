"""The lifecycle with an LLM (a scripted local model, injected like a real one):
its decisions are used when valid, and any bad answer falls back to the rules
without losing a memory."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

import pytest

from kenning import Memory, Settings
from kenning.config import Lifecycle
from kenning.errors import LLMError
from kenning.lifecycle.facts import SYSTEM_PROMPT as FACTS_PROMPT
from kenning.lifecycle.reconcile import RECONCILE_PROMPT
from kenning.llm import ChatModel, Completion, Message
from kenning.models import MemoryType, Status

Answer = Callable[[list[Message]], str]


class Scripted(ChatModel):
    """Answers each kind of request (by its system prompt) with a scripted function."""

    model_id = "scripted"

    def __init__(self, reconcile: Answer, facts: Answer, summary: Answer) -> None:
        self.answers = {"reconcile": reconcile, "facts": facts, "summary": summary}
        self.asked: list[str] = []

    def complete(
        self, messages: Sequence[Message], *, json: bool = False, max_tokens: int | None = None
    ) -> Completion:
        system = messages[0].content
        kind = (
            "reconcile"
            if system == RECONCILE_PROMPT
            else "facts"
            if system == FACTS_PROMPT
            else "summary"
        )
        self.asked.append(kind)
        return Completion(text=self.answers[kind](list(messages)), model="scripted")


def _existing_ids(messages: list[Message]) -> list[str]:
    return [e["id"] for e in json.loads(messages[1].content)["existing"]]


def _fail(_: list[Message]) -> str:
    raise LLMError("endpoint down")


def _mem(make_memory: Callable[..., Memory], chat: ChatModel, name: str = "db") -> Memory:
    lc = Lifecycle(reconcile="llm", reinforce_on_recall=False)
    return make_memory(name, settings=Settings(lifecycle=lc, graph_extractor="rules"), chat=chat)


def test_a_valid_llm_decision_is_used(make_memory: Callable[..., Memory]) -> None:
    def supersede(m: list[Message]) -> str:
        return json.dumps(
            {"action": "supersede", "target": _existing_ids(m)[0], "reason": "switched teams"}
        )

    mem = _mem(make_memory, Scripted(supersede, _fail, _fail))
    old = mem.remember("Marco is on the payments team")
    # the rules would add this (a different sentence); the model knows it is a move
    (result,) = mem.write([{"content": "Marco now works with the search people"}])
    assert result.action.value == "supersede" and result.target == old.id
    assert mem.get(old.id).status is Status.SUPERSEDED
    (entry,) = [e for e in mem.history(old.id) if e.op == "supersede"]
    assert entry.changes["reconcile"]["by"] == "llm"


@pytest.mark.parametrize(
    "answer",
    [
        lambda m: "not json at all",
        lambda m: json.dumps({"action": "merge", "target": None}),
        lambda m: json.dumps({"action": "noop", "target": "someone-elses-id"}),
        _fail,
    ],
)
def test_bad_llm_answers_fall_back_to_rules(
    make_memory: Callable[..., Memory], answer: Answer
) -> None:
    mem = _mem(make_memory, Scripted(answer, _fail, _fail))
    mem.remember("The wifi password is on the fridge")
    (dup,) = mem.write([{"content": "The wifi password is on the fridge."}])
    assert dup.action.value == "noop"  # the rules' decision
    (new,) = mem.write([{"content": "The printer is on the second floor"}])
    assert new.action.value == "add" and mem.get(new.record.id).content.startswith("The printer")
    entry = [e for e in mem.history(dup.record.id) if e.op == "confirm"][0]
    assert entry.changes["reconcile"]["by"].startswith("rules (llm fallback")


def test_llm_facts_are_validated_and_linked(make_memory: Callable[..., Memory]) -> None:
    def facts(m: list[Message]) -> str:
        return json.dumps(
            {
                "facts": [
                    {
                        "content": "Ines keeps bees on her roof",
                        "kind": "habit",
                        "subject": "Ines",
                        "importance": 3,
                        "evidence": [0],
                        "event_at": None,
                        "tags": ["bees"],
                        "confidence": 0.9,
                    },
                    {
                        "content": "",
                        "kind": "statement",
                        "subject": "Ines",
                        "importance": 3,
                        "evidence": [0],
                        "event_at": None,
                        "tags": [],
                        "confidence": 0.5,
                    },  # invalid
                ]
            }
        )

    chat = Scripted(_fail, facts, _fail)
    mem = _mem(make_memory, chat)
    result = mem.ingest(
        [{"content": "Honestly my rooftop hives are my happy place.", "name": "Ines"}], "s"
    )
    assert [f.record.content for f in result.facts] == ["Ines keeps bees on her roof"]
    assert result.facts[0].record.memory_type is MemoryType.PROCEDURAL
    assert result.facts[0].record.metadata["evidence"] == [result.turns[0].id]
    assert "facts" in chat.asked


def test_llm_facts_failing_fall_back_to_rules(make_memory: Callable[..., Memory]) -> None:
    mem = _mem(make_memory, Scripted(_fail, _fail, _fail))
    result = mem.ingest([{"content": "I love climbing in the Dolomites.", "name": "Ines"}], "s")
    assert len(result.turns) == 1
    assert any("Ines loves climbing" in f.record.content for f in result.facts)


def test_consolidation_summary_uses_the_llm_or_a_representative(
    make_memory: Callable[..., Memory],
) -> None:
    said = [
        "Sam ordered an oat milk latte",
        "Sam ordered an oat milk latte again",
        "Sam ordered an oat milk latte today",
    ]
    summary: Any = lambda m: "Sam drinks oat milk lattes."  # noqa: E731
    for n, (answer, expected) in enumerate(
        ((summary, "Sam drinks oat milk lattes."), (_fail, said[0]))
    ):
        mem = _mem(make_memory, Scripted(_fail, _fail, answer), f"db{n}")
        for text in said:
            mem.remember(text, memory_type="episodic")
        mem.consolidate()
        (semantic,) = mem.list(filters={"types": ["semantic"]}).items
        assert semantic.content == expected


def test_the_llm_path_keeps_memory_current_and_is_validated(
    make_memory: Callable[..., Memory], caplog: pytest.LogCaptureFixture
) -> None:
    from datetime import UTC, datetime

    def by_content(m: list[Message]) -> str:
        """Supersede the memory the payload marks as the speaker's home, whatever its rank;
        the answer for the sister's move targets the speaker's home (invalid)."""
        payload = json.loads(m[1].content)
        home = [e["id"] for e in payload["existing"] if "Berlin" in e["content"]]
        return json.dumps({"action": "supersede", "target": home[0], "reason": "moved"})

    chat = Scripted(by_content, _fail, _fail)
    mem = _mem(make_memory, chat)
    at = datetime(2022, 1, 5, tzinfo=UTC)
    (berlin,) = mem.write([{"content": "I live in Berlin.", "event_at": at}])
    # the model says the sister's move retires the speaker's home: refused, the rules add
    (sister,) = mem.write([{"content": "My sister just moved to Rome.", "event_at": at}])
    assert sister.action.value == "add" and mem.get(berlin.record.id).status is Status.ACTIVE
    assert "the two are about different people" in caplog.text
    later = datetime(2024, 2, 1, tzinfo=UTC)
    (moved,) = mem.write([{"content": "Our new flat in Lisbon is lovely.", "event_at": later}])
    assert moved.action.value == "supersede" and moved.target == berlin.record.id
    assert mem.get(berlin.record.id).status is Status.SUPERSEDED
    assert "Lisbon" in mem.recall("Where do I live now?", 3).hits[0].memory.content
    before = mem.recall("Where did I live before I moved?", 3).hits
    assert before[0].memory.id == berlin.record.id
    assert "reconcile" in chat.asked


def test_a_model_reads_a_drawn_fact_once(make_memory: Callable[..., Memory]) -> None:
    # the rules judge two drawn facts again as their speaker said them (the name
    # lifts the likeness of any two of Kim's facts); a model reads the name as Kim
    # already, so its answer stands and it is asked once per drawn fact
    def add(_: list[Message]) -> str:
        return json.dumps({"action": "add", "target": None, "reason": "another doctor"})

    chat = Scripted(add, _fail, _fail)
    mem = _mem(make_memory, chat)
    first = mem.ingest([{"content": "My doctor is Dr. Smith.", "name": "Kim"}], "s1")
    asked = chat.asked.count("reconcile")
    second = mem.ingest([{"content": "I switched to Dr. Jones.", "name": "Kim"}], "s2")
    assert [f.action.value for f in second.facts] == ["add"]
    assert chat.asked.count("reconcile") - asked == len(second.facts)
    assert mem.get(first.facts[0].record.id).status is Status.ACTIVE
