"""One statement, one hit: a fact ingest drew from a turn and that turn take one
top-k slot between them (retrieval/collapse.py)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

from kenning import Memory, Settings
from kenning.config import Lifecycle, Retrieval
from kenning.models import Hit, MemoryRecord, Scope
from kenning.retrieval.collapse import collapse_restatements, restated_turn

AT = datetime(2024, 5, 1, tzinfo=UTC)


def _hit(mid: str, *, evidence: list[str] | None = None, source: str = "extraction") -> Hit:
    meta = {"evidence": evidence} if evidence is not None else {}
    record = MemoryRecord(
        id=mid, org_id="o", scope=Scope.user("u"), content=mid, metadata=meta, source=source
    )
    return Hit(record, 0.5)


def _ids(hits: list[Hit]) -> list[str]:
    return [h.memory.id for h in hits]


def test_a_turn_and_the_fact_drawn_from_it_count_once_the_better_ranked_stays() -> None:
    turn_first = [_hit("t1"), _hit("x"), _hit("f1", evidence=["t1"])]
    kept, left_out = collapse_restatements(turn_first)
    assert (_ids(kept), left_out) == (["t1", "x"], 1)
    fact_first = [_hit("f1", evidence=["t1"]), _hit("x"), _hit("t1")]
    kept, left_out = collapse_restatements(fact_first)
    assert (_ids(kept), left_out) == (["f1", "x"], 1)


def test_what_says_more_than_one_turn_is_never_collapsed() -> None:
    hits = [
        _hit("t1"),
        _hit("both", evidence=["t1", "t2"]),  # combines two turns: says more than t1
        _hit("t2"),
    ]
    assert collapse_restatements(hits) == (hits, 0)
    # two facts drawn from one turn say two things; with the turn above, both go
    facts = [_hit("f1", evidence=["t1"]), _hit("f2", evidence=["t1"])]
    assert collapse_restatements(facts) == (facts, 0)
    assert _ids(collapse_restatements([_hit("t1"), *facts])[0]) == ["t1"]
    # a fact whose turn was not found stays
    assert _ids(collapse_restatements([_hit("f9", evidence=["t9"]), _hit("x")])[0]) == ["f9", "x"]


def test_only_facts_drawn_by_ingest_restate_a_turn() -> None:
    assert restated_turn(_hit("f", evidence=["t"]).memory) == "t"
    # a memory written with an "evidence" list of its own is not an extracted fact
    assert restated_turn(_hit("w", evidence=["t"], source="api").memory) is None
    assert restated_turn(_hit("odd", evidence="t").memory) is None  # type: ignore[arg-type]
    assert restated_turn(_hit("none").memory) is None


def _settings(collapse: bool) -> Settings:
    return Settings(
        lifecycle=Lifecycle(reconcile="off", reinforce_on_recall=False),
        retrieval=Retrieval(collapse_restatements=collapse),
    )


def _ingested(make_memory: Callable[..., Memory], collapse: bool) -> tuple[Memory, str, str]:
    mem = make_memory(settings=_settings(collapse))
    said = [
        "I have a dog named Rex.",
        "Rex loves the park by the river.",
        "My sister has a cat named Tom.",
        "The vet visit is on Friday.",
    ]
    done = mem.ingest(
        [{"role": "user", "name": "Bruno", "content": s, "at": AT} for s in said], "s1"
    )
    turn = done.turns[0].id
    facts = [f.record.id for f in done.facts if f.record.metadata["evidence"] == [turn]]
    assert facts, "the rule extractor draws a fact from the first turn"
    return mem, turn, facts[0]


def test_recall_returns_the_turn_or_its_fact_and_fills_the_slot(
    make_memory: Callable[..., Memory],
) -> None:
    query = "What is my dog called?"
    mem, turn, fact = _ingested(make_memory, collapse=False)
    both = _ids(mem.recall(query, 3).hits)
    assert turn in both and fact in both  # the turn and its fact, two of three slots

    mem, turn, fact = _ingested(make_memory, collapse=True)
    result = mem.recall(query, 3, explain=True)
    got = _ids(result.hits)
    assert len(got) == 3
    assert (turn in got) != (fact in got)  # one of the two, never both
    assert result.candidates["collapsed"] >= 1
    # every hit kept is a different statement: no fact beside its own turn
    drawn = {h.memory.id: restated_turn(h.memory) for h in result.hits}
    assert not {t for t in drawn.values() if t} & set(got)
