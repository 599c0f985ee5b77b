"""The SQLite store's read path: read-connection pool, term statistics, grouped vectors.

These mechanisms exist for speed; the tests check they change no answer:
reads on other threads see exactly the committed state, the keyword search
still returns BM25's true best matches inside the reader's scopes, the reader's
term counts follow writes, and the vector scan over scope-grouped rows equals a
plain scan.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import timedelta

import numpy as np
import pytest
from bm25kit import reader_bm25

from kenning import FixedClock, Memory, MemoryFilter, MemoryRecord, Principal, Scope, TeamRole
from kenning.access import ScopeFilter
from kenning.stores.sqlite.driver import sqlite3
from kenning.stores.sqlite.store import SQLiteStore
from kenning.stores.sqlite.terms import TermStats
from kenning.stores.sqlite.vectors import _GAP, _dot, _dot_rows

pytestmark = pytest.mark.stores("sqlite")


def _sqlite(mem: Memory) -> SQLiteStore:
    assert isinstance(mem.store, SQLiteStore)
    return mem.store


def _in_thread(fn: Callable[[], object]) -> object:
    """Run ``fn`` on another thread and return its result (fails if it hangs)."""
    out: list[object] = []
    worker = threading.Thread(target=lambda: out.append(fn()))
    worker.start()
    worker.join(timeout=30)
    assert not worker.is_alive(), "the read waited on the writer"
    return out[0]


def test_reads_on_other_threads_see_committed_writes(make_memory: Callable[..., Memory]) -> None:
    mem = make_memory()
    store = _sqlite(mem)
    view = mem.policy.readable(mem.principal)
    first = mem.remember("The boiler was serviced in March")
    assert _in_thread(lambda: [r.id for r in store.get([first.id], view)]) == [first.id]
    second = mem.remember("The boiler needs a new pressure valve")
    found = _in_thread(lambda: store.keyword_search("boiler", view, MemoryFilter(), 10))
    assert {i for i, _ in found} == {first.id, second.id}  # type: ignore[attr-defined]


def test_an_open_write_transaction_is_private_and_blocks_no_reader(
    make_memory: Callable[..., Memory],
) -> None:
    mem = make_memory()
    store = _sqlite(mem)
    view = mem.policy.readable(mem.principal)
    kept = mem.remember("The garage door code is 4711")
    pending = mem.writes.build(
        mem.principal, {"content": "The shed key is under the pot"}, kept.created_at
    )
    vector = mem.embedder.embed(pending.content)
    with store.atomic():
        store.insert([(pending, vector)], mem.principal.user_id)
        # the writing thread reads its own uncommitted row ...
        assert [r.id for r in store.get([pending.id], view)] == [pending.id]
        # ... another thread reads the last committed state, without waiting
        seen = _in_thread(lambda: [r.id for r in store.get([kept.id, pending.id], view)])
        assert seen == [kept.id]
    assert _in_thread(lambda: len(store.get([pending.id], view))) == 1


def test_parallel_recalls_on_a_file_database_agree_with_serial_ones(
    make_memory: Callable[..., Memory], make_sentences: Callable[..., list[str]]
) -> None:
    mem = make_memory()
    mem.remember_many([{"content": s} for s in make_sentences(200)])
    queries = ["Who likes jazz music?", "mountain hiking", "chess openings", "tax law"]
    serial = [[h.memory.id for h in mem.recall(q, 5)] for q in queries]
    results: dict[int, list[str]] = {}

    def run(i: int) -> None:
        results[i] = [h.memory.id for h in mem.recall(queries[i], 5)]

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(queries))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert [results[i] for i in range(len(queries))] == serial


def test_keyword_search_returns_the_true_bm25_top_inside_the_scopes(
    make_memory: Callable[..., Memory],
) -> None:
    """Rare words among thousands of common-word matches, spread over many scopes;
    the statistics are the reader's (FTS5 over an index of the reader's rows)."""
    mem = make_memory()
    rng = np.random.default_rng(1)
    words = ["budget", "meeting", "harbour", "lantern", "quartz", "meadow"]
    items = []
    for i in range(2500):
        picked = rng.choice(words, size=3, p=[0.4, 0.4, 0.08, 0.06, 0.04, 0.02])
        items.append({"content": "note " + " ".join(picked), "scope": f"user:u{i % 25}"})
    mem.remember_many(items)
    store = _sqlite(mem)
    reader = Principal.member("u3")
    view = mem.policy.readable(reader)
    conn = sqlite3.connect(store.path)
    allowed = {
        r[0] for r in conn.execute("SELECT pk FROM scopes WHERE key = ?", (Scope.user("u3").key,))
    }
    pk_of = dict(conn.execute("SELECT id, pk FROM memories").fetchall())
    scope_of = dict(conn.execute("SELECT id, scope_pk FROM memories").fetchall())
    conn.close()
    for query in ("harbour quartz meeting", "lantern meadow budget note", "quartz"):
        found = store.keyword_search(query, view, MemoryFilter(), 20)
        match = " OR ".join(
            f'"{w}"'
            for w in query.split()
            if w in ("harbour", "quartz", "meeting", "lantern", "meadow", "budget", "note")
        )
        truth = reader_bm25(store.path, match, view)[:20]
        assert [round(s, 9) for _, s in found] == [round(s, 9) for _, s in truth]
        assert {scope_of[i] for i, _ in found} <= allowed
        best = {pk_of[i] for i, s in truth if s > truth[-1][1]}
        assert best <= {pk_of[i] for i, _ in found}


def test_cached_term_counts_follow_writes(make_memory: Callable[..., Memory]) -> None:
    mem = make_memory()
    who = Principal.member("caroline")
    mem.remember_many(
        [{"content": f"Caroline went to pottery class number {i}"} for i in range(30)]
        + [{"content": f"A note about the weather on day {i}"} for i in range(10)],
        principal=who,
    )
    store = _sqlite(mem)
    view = mem.policy.readable(who)
    assert store.common_terms(["caroline", "weather"], view, 0.3, 20, 20_000) == {"caroline"}
    # 100 more memories without the name: now it is in 30 of 140 (< 30%), no longer common
    mem.remember_many(
        [{"content": f"The garden needed water on day {i}"} for i in range(100)], principal=who
    )
    assert store.common_terms(["caroline", "weather"], view, 0.3, 20, 20_000) == set()
    with store._read() as conn:
        scope_pks = store._scope_pks(conn, view)
    assert store.postings.reader(scope_pks).active_rows == 140
    mem.remember("One more", principal=who)
    store.common_terms(["caroline"], view, 0.3, 20, 20_000)  # (catches the mirror up)
    assert store.postings.reader(scope_pks).active_rows == 141
    # an archived memory leaves the count of active ones (not the reader's rows)
    mem.archive(mem.list(principal=who, limit=1).items[0].id)
    assert store.common_terms(["caroline"], view, 0.3, 20, 20_000) == set()
    assert store.postings.reader(scope_pks).active_rows == 140
    assert store.postings.reader(scope_pks).rows == 141
    conn = SQLiteStore._connect(store.path)
    try:
        assert TermStats().phrases(conn, ["running", "classes", "x·y"]) == [
            ("run",),
            ("class",),
            ("x", "y"),
        ]
    finally:
        conn.close()


def test_dot_rows_over_runs_equals_a_gather() -> None:
    rng = np.random.default_rng(0)
    vecs = rng.standard_normal((1000, 16)).astype(np.float32)
    q = rng.standard_normal(16).astype(np.float32)
    for idx in (
        np.arange(100, 400),
        np.concatenate([np.arange(0, 10), np.arange(50, 51), np.arange(990, 1000)]),
        np.sort(rng.choice(1000, size=600, replace=False)),  # many runs: gather path
        np.zeros(0, dtype=np.int64),
        np.array([7]),
        # blocks with holes (superseded rows inside a scope's block): the runs
        # span the small gaps, and a gap wider than _GAP splits them
        np.setdiff1d(np.arange(0, 900), [3, 4, 5, 200, 201, 640]),
        np.concatenate([np.arange(0, 50), np.arange(50 + _GAP, 200), np.arange(201 + _GAP, 300)]),
        np.concatenate([np.arange(0, 50), np.arange(51 + _GAP, 200), [999]]),
    ):
        got = _dot_rows(vecs, idx, q)
        assert got.shape == (len(idx),)
        np.testing.assert_allclose(got, vecs[idx] @ q, rtol=1e-5, atol=1e-5)
        # the very products of one scan over the gathered rows: rankings cannot move
        np.testing.assert_array_equal(got, _dot(vecs[idx], q))


@pytest.fixture
def dot_calls(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The rows of each ``_dot`` call an exact scan makes, in order."""
    from kenning.stores.sqlite import vectors

    calls: list[int] = []

    def counting(rows: np.ndarray, query: np.ndarray) -> np.ndarray:
        calls.append(len(rows))
        return _dot(rows, query)

    monkeypatch.setattr(vectors, "_dot", counting)
    return calls


def test_dot_rows_bridges_small_holes_but_never_scans_much_more_than_asked(
    dot_calls: list[int],
) -> None:
    """A few holes inside a block are multiplied through (one call); rows
    interleaved with other scopes' rows are not (a run per row block, or a gather)."""
    from kenning.stores.sqlite import vectors

    rng = np.random.default_rng(1)
    vecs = rng.standard_normal((3000, 8)).astype(np.float32)
    q = rng.standard_normal(8).astype(np.float32)
    holes = np.setdiff1d(np.arange(0, 2000), np.arange(5, 2000, 40))  # 50 holes, one block
    np.testing.assert_array_equal(vectors._dot_rows(vecs, holes, q), _dot(vecs[holes], q))
    assert dot_calls == [2000]
    dot_calls.clear()
    strided = np.arange(0, 3000, 3)  # every third row: bridging would triple the work
    np.testing.assert_array_equal(vectors._dot_rows(vecs, strided, q), _dot(vecs[strided], q))
    assert sum(dot_calls) == len(strided)  # gathered, not spanned
    dot_calls.clear()
    pairs = np.sort(np.concatenate([np.arange(0, 3000, 20), np.arange(1, 3000, 20)]))
    np.testing.assert_array_equal(vectors._dot_rows(vecs, pairs, q), _dot(vecs[pairs], q))
    assert sum(dot_calls) == len(pairs)


def test_dot_rows_gathers_short_runs_and_multiplies_long_ones_in_place(
    dot_calls: list[int],
) -> None:
    """Rows of many users written at once come in short runs: one gathered call,
    not a call per run (fewer than the run limit, so only their length decides)."""
    from kenning.stores.sqlite import vectors

    rng = np.random.default_rng(2)
    vecs = rng.standard_normal((20_000, 8)).astype(np.float32)
    q = rng.standard_normal(8).astype(np.float32)
    step = 8 + _GAP + 1  # runs of 8 rows, each gap too wide to bridge
    short = np.concatenate([np.arange(s, s + 8) for s in range(0, 40 * step, step)])
    np.testing.assert_array_equal(vectors._dot_rows(vecs, short, q), _dot(vecs[short], q))
    assert dot_calls == [len(short)]  # 40 runs, one call
    dot_calls.clear()
    long = np.concatenate([np.arange(s, s + 500) for s in (0, 2_000, 9_000)])
    np.testing.assert_array_equal(vectors._dot_rows(vecs, long, q), _dot(vecs[long], q))
    assert dot_calls == [500, 500, 500]


def test_exact_search_after_reload_over_several_scopes_is_exact(
    make_memory: Callable[..., Memory], make_sentences: Callable[..., list[str]]
) -> None:
    """Rows interleaved over scopes, reloaded grouped by scope: same top-k as brute force."""
    mem = make_memory("grouped")
    pool = make_sentences(300)
    scopes = ["user:u1", "team:t1", "org:default", "user:u2", "team:t2"]
    mem.remember_many([{"content": pool[i], "scope": scopes[i % len(scopes)]} for i in range(300)])
    mem.close()
    again = make_memory("grouped")  # loads the vector mirror afresh, grouped by scope
    reader = Principal.member("u1", teams={"t1": TeamRole.MEMBER})
    view: ScopeFilter = again.policy.readable(reader)
    q = again.embedder.embed("Who likes jazz music?")
    found = [i for i, _ in again.store.vector_search(q, view, MemoryFilter(), 10)]
    visible = _every(again, reader)
    assert {r.scope.key for r in visible} == {"user:u1", "team:t1", "org:default"}
    sims = again.embedder.embed_many([r.content for r in visible]) @ q
    truth = [visible[int(i)].id for i in np.argsort(-sims, kind="stable")[:10]]
    assert found == truth


def _every(mem: Memory, who: Principal) -> list[MemoryRecord]:
    out: list[MemoryRecord] = []
    cursor = None
    while True:
        page = mem.list(limit=1000, cursor=cursor, principal=who)
        out.extend(page.items)
        cursor = page.next_cursor
        if cursor is None:
            return out


def test_keyword_search_with_filters_or_unmirrored_rows_agrees_with_sql(
    make_memory: Callable[..., Memory],
) -> None:
    """The mirror path and the SQL path of the keyword search give one answer."""
    mem = make_memory()
    store = _sqlite(mem)
    tagged = mem.remember("Lantern festival by the harbour", tags=["trip"])
    plain = mem.remember("The harbour lantern was repaired")
    archived = mem.remember("An old harbour map")
    mem.archive(archived.id)
    view = mem.policy.readable(mem.principal)
    mirrored = store.keyword_search("harbour lantern", view, MemoryFilter(), 10)
    with store._read() as conn:
        scope_pks = store._scope_pks(conn, view)
        phrases = [("harbour",), ("lantern",)]
        pks, scores = store.postings.scores(conn, phrases, scope_pks)
        joined = store._keyword_joined(conn, pks, scores, view, MemoryFilter(), 10)
        assert store._keyword_mirrored(conn, pks, scores, view, MemoryFilter(), 10) == mirrored
    assert mirrored == joined
    assert {i for i, _ in mirrored} == {tagged.id, plain.id}
    only_tagged = store.keyword_search(
        "harbour", view, MemoryFilter(tags_all=frozenset({"trip"})), 10
    )
    assert [i for i, _ in only_tagged] == [tagged.id]
    # a pk the mirror does not hold makes it step aside (the SQL path answers)
    assert store.vectors.visible_ids("default", [10**6], [1], ["active"]) is None


def test_a_time_window_checked_in_the_mirror_agrees_with_sql(
    make_memory: Callable[..., Memory], clock: FixedClock
) -> None:
    """A recall's time window (and nothing else) is checked in the in-process
    mirror by both searches; every window gives what the SQL filter gives,
    edges included (start inclusive, end exclusive), after an event-time
    change too."""
    mem = make_memory()
    store = _sqlite(mem)
    t0 = clock.now()
    made = [
        mem.remember(f"Harbour log {i}: the lantern boat came in", event_at=t0 - timedelta(days=i))
        for i in range(12)
    ]
    made.append(mem.remember("Harbour lantern story without a date"))  # created_at = t0
    mem.update(made[3].id, event_at=t0 - timedelta(days=30))
    view = mem.policy.readable(mem.principal)
    query = mem.embedder.embed("lantern boat in the harbour")
    windows = [
        (t0 - timedelta(days=5), t0 - timedelta(days=1)),
        (t0 - timedelta(days=2), None),
        (None, t0 - timedelta(days=7)),
        (t0, t0 + timedelta(days=1)),
        (t0 - timedelta(days=31), t0 - timedelta(days=29)),
    ]
    for start, end in windows:
        timed = MemoryFilter(event_after=start, event_before=end)
        assert timed.is_timed_only and not timed.is_plain
        # min_importance=1 holds for every memory but sends both searches to SQL
        by_sql = MemoryFilter(event_after=start, event_before=end, min_importance=1)
        assert not by_sql.is_timed_only
        dense = store.vector_search(query, view, timed, 20)
        assert dense == store.vector_search(query, view, by_sql, 20)
        words = store.keyword_search("harbour lantern", view, timed, 20)
        assert words == store.keyword_search("harbour lantern", view, by_sql, 20)
        expected = {
            r.id
            for r in made
            if (start is None or mem.get(r.id).said_at >= start)
            and (end is None or mem.get(r.id).said_at < end)
        }
        assert {i for i, _ in dense} == expected == {i for i, _ in words}
    assert store.vectors.last_plan.method == "exact"


def test_scope_neighbours_of_a_batch_equal_one_search_per_item(
    make_memory: Callable[..., Memory], make_sentences: Callable[..., list[str]]
) -> None:
    """The write path's batched neighbour search gives each item what a search of its
    own scope would: the exact top, in order, active memories only."""
    mem = make_memory("neighbours")
    pool = make_sentences(240)
    scopes = ["user:u1", "team:t1", "org:default", "user:u2"]
    written = mem.write(
        [{"content": pool[i], "scope": scopes[i % 4]} for i in range(200)], reconcile=False
    )
    stored = [w.record for w in written]
    mem.archive(stored[0].id)  # user:u1's first memory: no longer a neighbour
    store = _sqlite(mem)
    vectors = mem.embedder.embed_many(pool[200:])
    asked = [(Scope.parse(scopes[i % 4]), vectors[i]) for i in range(40)]
    asked.append((Scope.user("nobody"), vectors[0]))  # a scope with no rows yet
    batched = store.scope_neighbours("default", asked, 5)
    assert batched[-1] == []
    for (scope, vec), got in zip(asked[:-1], batched[:-1], strict=True):
        mine = [r for r in stored[1:] if r.scope == scope]
        sims = mem.embedder.embed_many([r.content for r in mine]) @ vec
        truth = [mine[int(i)].id for i in np.argsort(-sims, kind="stable")[:5]]
        assert [i for i, _ in got] == truth
        assert stored[0].id not in {i for i, _ in got}
        np.testing.assert_allclose([s for _, s in got], np.sort(sims)[::-1][:5], atol=1e-5)


def test_scope_neighbours_of_a_scope_past_the_exact_limit_go_through_the_graph(
    make_memory: Callable[..., Memory], make_sentences: Callable[..., list[str]]
) -> None:
    mem = make_memory("neighbours-ann")
    pool = make_sentences(120)
    mem.write([{"content": t} for t in pool[:100]], reconcile=False)
    store = _sqlite(mem)
    store.vectors.exact_max, store.vectors.ann_min_rows = 10, 10
    q = mem.embedder.embed(pool[110])
    got = store.scope_neighbours("default", [(Scope.user("default"), q)], 5)[0]
    assert store.vectors.last_plan.method == "hnsw-scope"  # one scope: its own graph
    one = ScopeFilter("default", frozenset({Scope.user("default")}))
    assert got == store.vector_search(q, one, MemoryFilter(), 5)
    assert len(got) == 5


def test_a_row_round_trips_every_field_in_column_order() -> None:
    """record_from_row unpacks by position: a record whose fields all differ comes
    back equal from its own INSERT values, so a moved or added column fails here."""
    from datetime import UTC, datetime, timedelta

    from kenning.models import MemoryType, Status
    from kenning.stores.sqlite.sql import record_from_row, record_params

    t = datetime(2026, 1, 1, tzinfo=UTC)
    record = MemoryRecord(
        id="m1",
        org_id="o1",
        scope=Scope.team("t1"),
        content="c",
        key="k",
        memory_type=MemoryType.PROCEDURAL,
        importance=4,
        confidence=0.61,
        status=Status.ARCHIVED,
        tags=("a", "b"),
        metadata={"x": 1},
        source="mcp",
        source_channel_id="ch",
        agent_id="ag",
        session_id="se",
        episode_id="ep",
        created_by="cb",
        created_at=t,
        updated_at=t + timedelta(1),
        event_at=t + timedelta(2),
        valid_from=t + timedelta(3),
        valid_to=t + timedelta(4),
        strength=0.42,
        decay_rate=0.93,
        access_count=5,
        reinforcement_count=6,
        last_accessed=t + timedelta(5),
        sector_id="sec",
        supersedes="s1",
        superseded_by="s2",
        version=7,
        content_hash="h",
    )
    row = (*record_params(record), "team", "t1", None)
    assert record_from_row(row) == record


def test_episode_tails_search_the_session_index_not_the_whole_scope(
    make_memory: Callable[..., Memory], clock: FixedClock
) -> None:
    # the temporal spine asks, per batch, for each session's latest memory; with
    # the scope searched first, every memory of an organization was read and
    # sorted for each lookup (the largest cost of a big import at 250k)
    from kenning.stores.sqlite.graph import tail_sql

    mem = make_memory()
    items = [
        {"content": f"note {i} of session {i % 5}", "session_id": f"s{i % 5}"} for i in range(40)
    ]
    for item in items:
        clock.advance(seconds=1)
        mem.remember_many([item])
    store = _sqlite(mem)
    with store._read() as conn:
        for column, index in (
            ("session_id", "memories_session"),
            ("episode_id", "memories_episode"),
        ):
            plan = " ".join(
                str(r[-1])
                for r in conn.execute(
                    "EXPLAIN QUERY PLAN " + tail_sql(column), ("x", "o", "k", 0.0)
                )
            )
            assert f"SEARCH m USING INDEX {index}" in plan, plan
            assert "memories_scope" not in plan, plan
    (scope,) = {r.scope for r in mem.list(limit=100).items}
    tails = store.episode_tails(
        "default",
        [(scope, "session_id", "s3", clock.now()), (scope, "session_id", "s9", clock.now())],
    )
    newest = max(
        (r for r in mem.list(limit=100).items if r.session_id == "s3"), key=lambda r: r.said_at
    )
    assert tails == [newest.id, None]
