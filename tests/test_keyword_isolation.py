"""Property: what others write never changes what a reader gets back.

A reader of organization ``o1`` (a member of team ``t1``) records everything a
recall shows: hits, order, every score with its breakdown (keyword and dense
inputs, calibration, signals), the candidate counts, the dropped common words,
the graph statistics and relation paths, the raw keyword search's scores, and
the stats/list totals. Then memories sharing the query's words are written
where the reader cannot read: in another organization (scopes with the same
names there), and, separately, in the reader's own organization under another
user's personal scope and a team the reader is not in. Every recorded number
must come back identical (to the float): keyword statistics (N, document
frequencies, average length), common-word suppression, candidate caps,
normalisation and the graph stage are all the reader's own.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from conftest import _superuser_conn
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from kenning import Memory, MemoryFilter, Principal, Role, Scope, TeamRole
from kenning.config import GraphRead, Lifecycle, Retrieval, Settings, StoreOptions

VOCAB = (
    "harbour lantern quartz meadow budget violin river garden pottery festival "
    "meeting sunrise camping painting"
).split()
QUERIES = ("harbour lantern", "quartz budget meeting", "violin", "garden painting festival")

READER = Principal(
    org_id="o1", user_id="alice", roles=frozenset({Role.MEMBER}), teams={"t1": TeamRole.MEMBER}
)
READER_SCOPES = (Scope.user("alice"), Scope.team("t1"), Scope.org("o1"))
#: Writes the reader's organization scope (members may not).
ADMIN = Principal(org_id="o1", user_id="root", roles=frozenset({Role.ADMIN}))
#: Same organization, scopes the reader cannot read (bob's own, a team she is not in).
NEIGHBOUR = Principal(
    org_id="o1", user_id="bob", roles=frozenset({Role.MEMBER}), teams={"t2": TeamRole.MEMBER}
)
NEIGHBOUR_SCOPES = (Scope.user("bob"), Scope.team("t2"))
#: Another organization, with scopes of the same names as the reader's.
STRANGER = Principal(
    org_id="o2", user_id="alice", roles=frozenset({Role.ADMIN}), teams={"t1": TeamRole.MEMBER}
)
STRANGER_SCOPES = (Scope.user("alice"), Scope.team("t1"), Scope.org("o2"))

#: Small stores: common-word suppression on from 2 visible memories, every graph
#: read on, no reinforcement (a recall writes nothing).
SETTINGS = Settings(
    retrieval=Retrieval(common_term_min_docs=2),
    graph_semantic_min=0.3,
    graph=GraphRead(relax_gamma=0.3, mention_support=0.2, seed_floor=0.0),
    lifecycle=Lifecycle(reinforce_on_recall=False),
)


def texts() -> st.SearchStrategy[str]:
    return st.lists(st.sampled_from(VOCAB), min_size=2, max_size=7).map(
        lambda words: "Notes: " + " ".join(words)
    )


@dataclass(frozen=True)
class World:
    own: list[tuple[int, str]]  # (reader scope index, text)
    others: list[tuple[int, str]]  # (scope index of the outsider, text)


@st.composite
def worlds(draw: st.DrawFn) -> World:
    own = draw(st.lists(st.tuples(st.integers(0, 2), texts()), min_size=3, max_size=9))
    others = draw(st.lists(st.tuples(st.integers(0, 2), texts()), min_size=1, max_size=14))
    return World(own, others)


def _write(
    mem: Memory, who: Principal, scopes: Sequence[Scope], items: list[tuple[int, str]]
) -> None:
    for writer in {ADMIN if s.kind.value == "org" and who is READER else who for s in scopes}:
        mine = [
            {"content": text, "scope": scopes[i % len(scopes)].key}
            for i, text in items
            if (ADMIN if scopes[i % len(scopes)].kind.value == "org" and who is READER else who)
            is writer
        ]
        if mine:
            mem.remember_many(mine, principal=writer)


def _hit(hit: Any) -> tuple[Any, ...]:
    return (
        hit.memory.id,
        hit.score,
        hit.explain.to_dict() if hit.explain is not None else None,
        [(r.memory.id, r.score) for r in hit.related],
    )


def observe(mem: Memory) -> list[Any]:
    """Everything the reader sees of their recalls and totals (timings left out)."""
    seen: list[Any] = []
    for query in QUERIES:
        for scopes in (None, "all"):
            result = mem.recall(query, 6, scopes=scopes, explain=True, principal=READER)
            seen.append(
                (
                    query,
                    scopes,
                    [_hit(h) for h in result.hits],
                    result.candidates,
                    result.dropped_terms,
                    result.graph,
                    [repr(p) for p in result.paths],
                )
            )
        view = mem.policy.readable(READER)
        seen.append(mem.store.keyword_search(query, view, MemoryFilter(), 50))
        seen.append(mem.store.common_terms(query.split(), view, 0.3, 2, 20_000))
    seen.append([s.to_dict() for s in mem.stats(principal=READER)])
    seen.append([r.id for r in mem.list(principal=READER, limit=200).items])
    return seen


def _same_after(
    open_memory: Callable[..., Memory],
    world: World,
    who: Principal,
    scopes: Sequence[Scope],
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        mem = open_memory(Path(tmp), settings=SETTINGS)
        try:
            _write(mem, READER, READER_SCOPES, world.own)
            before = observe(mem)
            assert observe(mem) == before  # (recall itself changes nothing)
            _write(mem, who, scopes, world.others)
            assert observe(mem) == before
        finally:
            mem.close()


_EXAMPLES = settings(
    max_examples=4,
    deadline=None,
    derandomize=True,
    database=None,
    phases=[Phase.explicit, Phase.generate],  # no shrinking: each example opens a store
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@_EXAMPLES
@given(world=worlds())
def test_another_organization_writing_changes_nothing_a_reader_sees(
    open_memory: Callable[..., Memory], world: World
) -> None:
    _same_after(open_memory, world, STRANGER, STRANGER_SCOPES)


@_EXAMPLES
@given(world=worlds())
def test_unreadable_scopes_of_the_same_organization_change_nothing_a_reader_sees(
    open_memory: Callable[..., Memory], world: World
) -> None:
    _same_after(open_memory, world, NEIGHBOUR, NEIGHBOUR_SCOPES)


def _keyword_score(mem: Memory, query: str, memory_id: str) -> float | None:
    result = mem.recall(query, 5, explain=True, principal=READER)
    for hit in result.hits:
        if hit.memory.id == memory_id:
            assert hit.explain is not None
            return hit.explain.keyword
    raise AssertionError(f"{memory_id} not recalled for {query!r}")


@pytest.mark.parametrize("outsider", ["organization", "scope"])
def test_the_reported_measurement_no_longer_moves(
    make_memory: Callable[..., Memory], outsider: str
) -> None:
    """The issue's measurement: one, then twenty memories holding the query's word
    written elsewhere moved the reader's explain keyword score (by 0.55, then to
    zero). Now the reader's keyword score, and the raw BM25, stay put."""
    mem = make_memory(settings=SETTINGS)
    who, scope = (
        (STRANGER, Scope.org("o2"))
        if outsider == "organization"
        else (NEIGHBOUR, Scope.user("bob"))
    )
    mine = mem.remember_many(
        [{"content": "The quartz lamp sits in the hall", "scope": "team:t1"}]
        + [{"content": f"Weekly note number {i} about the garden"} for i in range(6)],
        principal=READER,
    )
    view = mem.policy.readable(READER)
    raw = mem.store.keyword_search("quartz", view, MemoryFilter(), 5)
    score = _keyword_score(mem, "quartz", mine[0].id)
    assert score is not None and score > 0
    mem.remember("Quartz crystals on the shelf", scope=scope, principal=who)
    assert _keyword_score(mem, "quartz", mine[0].id) == score
    mem.remember_many(
        [{"content": f"quartz sample {i} quartz", "scope": scope.key} for i in range(20)],
        principal=who,
    )
    assert _keyword_score(mem, "quartz", mine[0].id) == score
    assert mem.store.keyword_search("quartz", view, MemoryFilter(), 5) == raw
    # the writer's own view does see the word: the counts are per reader, not frozen
    theirs = mem.store.keyword_search("quartz", mem.policy.readable(who), MemoryFilter(), 50)
    assert len(theirs) == 21 and mine[0].id not in {i for i, _ in theirs}


@pytest.mark.stores("postgresql")
def test_a_large_reader_on_postgresql_is_counted_in_full_not_by_the_tables_estimate(
    make_memory: Callable[..., Memory],
) -> None:
    """Past ``pg_count_cap`` a reader's memories are counted in full: the table's
    row estimate (every organization's rows, refreshed by ANALYZE) must not stand
    in for the reader's N. A second engine on the same database (no cached counts)
    sees the reader's keyword score unchanged after another organization wrote."""
    settings = SETTINGS.model_copy(update={"store": StoreOptions(pg_count_cap=2)})
    mem = make_memory(settings=settings)
    mine = mem.remember_many(
        [{"content": "The quartz lamp sits in the hall", "scope": "team:t1"}]
        + [{"content": f"Weekly note number {i} about the garden"} for i in range(6)],
        principal=READER,
    )
    score = _keyword_score(mem, "quartz", mine[0].id)
    assert score is not None and score > 0
    mem.remember_many(
        [{"content": f"Shelf inventory line {i}", "scope": "org:o2"} for i in range(40)],
        principal=STRANGER,
    )
    with _superuser_conn(mem) as conn:
        conn.execute("ANALYZE memories")
        (estimate,) = conn.execute(
            "SELECT reltuples FROM pg_class WHERE oid = 'memories'::regclass"
        ).fetchone()
    assert estimate >= 47  # the table's estimate now counts the other organization
    fresh = Memory(settings=mem.settings, embedder=mem.embedder)
    try:
        assert _keyword_score(fresh, "quartz", mine[0].id) == score
    finally:
        fresh.close()
