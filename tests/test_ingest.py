"""Conversations through ``ingest`` on every store: working memory with a context
window, episodes, extracted facts linked to their evidence, review policies."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from conftest import T0

from kenning import FixedClock, Memory, Settings
from kenning.config import Lifecycle
from kenning.lifecycle.facts import Fact, RuleFactExtractor
from kenning.models import MemoryType, Status


@pytest.fixture
def mem(make_memory: Callable[..., Memory]) -> Memory:
    lc = Lifecycle(reconcile="rules", reinforce_on_recall=True, context_window=4)
    return make_memory(settings=Settings(lifecycle=lc, graph_extractor="rules"))


def _chat(n: int, start: datetime) -> list[dict[str, object]]:
    lines = [
        ("Caroline", "I went to a LGBTQ support group yesterday and it was so powerful."),
        ("Melanie", "That's great! How did it feel?"),
        ("Caroline", "I love painting sunsets with watercolours."),
        ("Melanie", "My daughter is starting school next week."),
        ("Caroline", "I'm planning to apply for a counselling course."),
        ("Melanie", "We're going camping in June."),
    ]
    return [
        {
            "content": text,
            "name": who,
            "role": "user",
            "at": (start + timedelta(minutes=i)).isoformat(),
        }
        for i, (who, text) in enumerate((lines * 5)[:n])
    ]


def test_messages_become_turns_and_facts_with_evidence(mem: Memory) -> None:
    result = mem.ingest(_chat(6, T0), "s-1")
    assert [t.memory_type for t in result.turns][-4:] == [MemoryType.WORKING] * 4
    assert [t.memory_type for t in result.turns][:2] == [MemoryType.EPISODIC] * 2
    assert result.aged == 2 and result.episode_id == "s-1"
    assert [t.metadata["speaker"] for t in result.turns[:2]] == ["Caroline", "Melanie"]
    assert all(t.session_id == "s-1" and t.source == "conversation" for t in result.turns)
    contents = [f.record.content for f in result.facts]
    assert any("Caroline" in c and "support group" in c for c in contents)
    assert any("Caroline loves painting" in c for c in contents)
    dated = next(f.record for f in result.facts if "support group" in f.record.content)
    assert dated.event_at is not None and dated.event_at.date() == (T0 - timedelta(days=1)).date()
    turn_ids = {t.id for t in result.turns}
    for fact in result.facts:
        record = mem.get(fact.record.id)
        assert record.source == "extraction" and record.session_id == "s-1"
        assert set(record.metadata["evidence"]) <= turn_ids and record.metadata["evidence"]
        linked = {n.memory.id for n in mem.graph.neighbours(record.id)}
        assert set(record.metadata["evidence"]) <= linked
    # the facts are extra keys: a question reaches the turn and the fact
    hits = mem.recall("What does Caroline like to paint?", 5).hits
    assert any("sunsets" in h.memory.content for h in hits[:2])


def test_the_context_window_slides_across_calls(mem: Memory) -> None:
    chat = _chat(7, T0)
    mem.ingest(chat[:3], "s-2", extract=False)
    assert [m.content for m in mem.context("s-2")] == [c["content"] for c in chat[:3]]
    second = mem.ingest(chat[3:], "s-2", extract=False)
    window = mem.context("s-2")
    assert [m.content for m in window] == [c["content"] for c in chat[3:]]
    assert [m.metadata["turn"] for m in window] == [3, 4, 5, 6]
    assert second.aged == 3
    episodic = mem.list(filters={"session_id": "s-2", "types": ["episodic"]}).items
    assert sorted(m.metadata["turn"] for m in episodic) == [0, 1, 2]
    assert [e.op for e in mem.history(episodic[0].id)] == ["create", "consolidate"]


def test_a_repeated_fact_confirms_instead_of_piling_up(mem: Memory) -> None:
    first = mem.ingest([{"content": "I love painting sunsets.", "name": "Caroline"}], "a")
    again = mem.ingest([{"content": "I love painting sunsets.", "name": "Caroline"}], "b")
    assert [f.action.value for f in first.facts] == ["add"]
    assert [f.action.value for f in again.facts] == ["noop"]
    assert again.facts[0].record.id == first.facts[0].record.id


@pytest.mark.parametrize("name", [None, "Caroline"])
def test_facts_about_the_speakers_family_never_retire_the_speakers_own(
    mem: Memory, name: str | None
) -> None:
    """Drawn facts name the speaker in the third person ("The user is allergic to
    peanuts", "Caroline lives in Berlin"): the son's allergy and the sister's move
    are theirs, and the speaker's own facts stay current beside them."""
    lines = [
        "I'm allergic to peanuts.",
        "My son is allergic to peanuts too.",
        "I live in Berlin, near Tempelhof.",
        "My sister just moved to Berlin as well.",
    ]
    messages = [
        {"content": text, "role": "user", **({"name": name} if name else {})} for text in lines
    ]
    result = mem.ingest(messages, "family")
    assert len(result.facts) == 4
    assert [f.action.value for f in result.facts] == ["add"] * 4
    assert all(mem.get(f.record.id).status is Status.ACTIVE for f in result.facts)
    asker = "I" if name is None else name
    where = "do I" if name is None else f"does {name}"
    top = mem.recall(f"Where {where} live now?", 3).hits[0].memory.content
    assert "Tempelhof" in top, top
    allergy = mem.recall(f"Is {asker} allergic to anything?".replace("Is I", "Am I"), 3).hits
    assert "son" not in allergy[0].memory.content


def test_a_change_told_later_retires_the_speakers_earlier_fact(mem: Memory) -> None:
    """Drawn facts name the speaker where the speaker said "I" ("A cappuccino in
    the morning is all Kim needs"); a later change in Kim's words retires it, as
    the first-person words would. Another speaker's words about the same drink
    change nothing of Kim's."""

    def said(name: str, text: str, day: int) -> list[Any]:
        message = {"content": text, "name": name, "at": T0 + timedelta(days=day)}
        return list(mem.ingest([message], f"{name}-{day}").facts)

    (kept,) = said("Kim", "A cappuccino in the morning is all I need.", 0)
    other = said("Anna", "I've moved on from cappuccino to mocha.", 100)
    assert [f.action.value for f in other] == ["add"]
    assert mem.get(kept.record.id).status is Status.ACTIVE
    (change,) = said("Kim", "I've moved on from cappuccino to mocha.", 200)
    assert (change.action.value, change.target) == ("supersede", kept.record.id)
    assert mem.get(kept.record.id).status is Status.SUPERSEDED


def test_review_policy_makes_extracted_facts_pending(mem: Memory) -> None:
    mem.set_policy("layer:personal", review=True)
    result = mem.ingest(_chat(3, T0), "s-3")
    assert result.facts and all(f.record.status is Status.PENDING_REVIEW for f in result.facts)
    assert all(t.status is Status.ACTIVE for t in result.turns)  # the raw turns are not held


def test_ingest_from_the_cli(tmp_path: Path) -> None:
    messages = tmp_path / "chat.json"
    messages.write_text(json.dumps(_chat(3, T0)), encoding="utf-8")
    env = {
        **os.environ,
        "KENNING_HOME": str(tmp_path / "home"),
        "KENNING_LIFECYCLE_RECONCILE": "rules",
        "KENNING_GRAPH_EXTRACTOR": "rules",
    }
    run = subprocess.run(
        [sys.executable, "-m", "kenning.cli", "ingest", "s-cli", str(messages), "--json"],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    out = json.loads(run.stdout)
    assert len(out["turns"]) == 3 and out["facts"]
    run = subprocess.run(
        [sys.executable, "-m", "kenning.cli", "consolidate", "--dry-run", "--json"],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["dry_run"] is True
    turn = out["turns"][0]["id"]
    run = subprocess.run(
        [sys.executable, "-m", "kenning.cli", "reinforce", turn, "--json"],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["reinforcement_count"] == 1
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "kenning.cli",
            "hint",
            "--query",
            "support group",
            "--max-chars",
            "400",
            "--json",
        ],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    block = json.loads(run.stdout)["hint"]
    assert "<memories>" in block and "support group" in block and len(block) <= 400


def test_an_injected_clock_dates_turns_without_times(make_memory: Callable[..., Memory]) -> None:
    clock = FixedClock(T0)
    mem = make_memory(clock=clock, settings=Settings(lifecycle=Lifecycle(reconcile="rules")))
    result = mem.ingest(["I adopted a cat last week."], "s-4")
    assert result.turns[0].event_at == T0
    (fact,) = [f.record for f in result.facts if "cat" in f.record.content]
    assert fact.event_at is not None and fact.event_at < T0


def test_a_backfilled_conversation_keeps_its_facts_in_the_order_they_were_said(
    mem: Memory,
) -> None:
    """Facts with no time of their own are said when their turn was: a 2022 fact
    ingested today is older than a 2024 one, so the newer value answers "now"."""
    old, new = T0 - timedelta(days=800), T0 - timedelta(days=30)
    result = mem.ingest(
        [
            {"content": "I live in Berlin.", "name": "Eva", "at": old.isoformat()},
            {"content": "We moved; I live in Lisbon now.", "name": "Eva", "at": new.isoformat()},
        ],
        "backfill",
    )
    said = {f.record.content: f.record.said_at for f in result.facts}
    assert said and all(at in (old, new) for at in said.values()), said
    berlin = next(at for text, at in said.items() if "Berlin" in text)
    lisbon = next(at for text, at in said.items() if "Lisbon" in text)
    assert (berlin, lisbon) == (old, new)
    top = mem.recall("Where do I live now?", 3).hits[0].memory
    assert "Lisbon" in top.content and "Berlin" not in top.content


def test_cli_ingest_rejects_bad_input_and_writes_nothing(tmp_path: Path) -> None:
    env = {**os.environ, "KENNING_HOME": str(tmp_path / "home")}
    bad = tmp_path / "bad.json"
    for text in (
        "{not json",
        json.dumps({"content": "an object, not a list"}),
        json.dumps([{"content": "ok"}, {"content": 3}]),
    ):
        bad.write_text(text, encoding="utf-8")
        run = subprocess.run(
            [sys.executable, "-m", "kenning.cli", "ingest", "s", str(bad), "--json"],
            capture_output=True,
            text=True,
            env=env,
            check=False,
        )
        assert run.returncode == 2, run.stderr
        assert "error" in run.stderr or "error" in run.stdout
    run = subprocess.run(
        [sys.executable, "-m", "kenning.cli", "list", "--json"],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert run.returncode == 0 and json.loads(run.stdout)["items"] == []


def test_a_failing_extractor_never_loses_the_turns(mem: Memory) -> None:
    class Broken(RuleFactExtractor):
        def extract(self, turns: object) -> list[Fact]:
            raise RuntimeError("extractor bug")

    mem.ingestor._extractor = Broken()  # the seam a plugin extractor would use
    result = mem.ingest(["I love painting sunsets."], "s-5")
    assert len(result.turns) == 1 and result.facts == []
    assert result.errors == ["fact extraction failed: extractor bug"]
    assert mem.get(result.turns[0].id).content == "I love painting sunsets."


def test_a_retired_facts_links_count_for_a_question_about_before(mem: Memory) -> None:
    """The fact drawn from "Dinner for me means vegan food only", retired by a later
    change, still links to its turn: a question about 2022 searches retired memories,
    so the link lends the old turn graph support as it did before the change."""

    def said(text: str, day: int) -> None:
        message = {"content": text, "name": "Noor", "at": T0 + timedelta(days=day)}
        mem.ingest([message], f"s{day}")

    said("Dinner for me means vegan food only.", 0)
    for day, chatter in enumerate(
        ("The train to work was late again.", "I finally fixed the squeaky door."), 1
    ):
        said(chatter, day * 40)
    said("I'm not vegan anymore; I eat pescatarian now.", 800)
    hits = mem.recall("What did I eat in 2022?", 5, explain=True).hits
    (turn,) = [h for h in hits if h.memory.content.startswith("Dinner")]
    assert turn.explain is not None and turn.explain.signals["graph"] > 0.05
