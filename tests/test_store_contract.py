"""The Store contract (``kenning.stores.base``), through Memory and on the store directly.

Every test takes ``store_kind`` (via ``make_memory``), so a new backend runs the
same suite by adding a parameter in ``conftest.py``. Rows are counted through
the protocol (``Store.footprint``), never with SQL, so a store without SQL runs
it too; what only raw database access can show (bytes in a table past the
seam) is checked in ``test_store_raw.py``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import threading
import uuid
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from storekit import insert_failing_batch

from kenning import (
    Conflict,
    InvalidInput,
    Memory,
    MemoryFilter,
    MemoryRecord,
    NotFound,
    Principal,
    Scope,
    Settings,
    Status,
)
from kenning.config import StoreOptions
from kenning.embeddings import content_hash
from kenning.graph.model import EntityMention, MemoryLink, Projection, Relation
from kenning.stores import Replacement

#: What the suite counts (a subset of the store's :class:`~kenning.stores.Footprint`).
_COUNTED = ("memories", "vectors", "keyword", "history", "scopes")


def counts(mem: Memory) -> dict[str, int]:
    """Rows per kind, read through the store protocol (no SQL: any store can run this)."""
    whole = mem.store.footprint().as_dict()
    return {k: whole[k] for k in _COUNTED}


def _plan(store: Any) -> str:
    """Which vector search method the store used last ("exact" or "hnsw"; SQLite's
    search of one big scope through that scope's own graph counts as "hnsw")."""
    return str(store.last_plan.method).removesuffix("-scope")


def _ids(hits: Any) -> list[str]:
    return [h.memory.id for h in hits]


def _all_records(mem: Memory, principal: Principal | None = None, **kw: Any) -> list[MemoryRecord]:
    out: list[MemoryRecord] = []
    cursor = None
    while True:
        page = mem.list(limit=1000, cursor=cursor, principal=principal, **kw)
        out.extend(page.items)
        cursor = page.next_cursor
        if cursor is None:
            return out


def _brute_top(mem: Memory, query: str, records: list[MemoryRecord], k: int) -> list[str]:
    """Ground truth: exact cosine top-k over ``records`` with the model's own vectors."""
    q = mem.embedder.embed(query)
    mat = mem.embedder.embed_many([r.content for r in records])
    sims = mat @ q
    order = np.argsort(-sims, kind="stable")[:k]
    return [records[int(i)].id for i in order]


# ---------------------------------------------------------------------------- atomic writes


def test_batch_writes_record_vector_keyword_row_and_history_together(
    mem: Memory, make_sentences: Callable[..., list[str]]
) -> None:
    texts = make_sentences(12)
    records = mem.remember_many([{"content": t, "tags": ["hobby"]} for t in texts])
    assert len(records) == 12
    assert counts(mem) == {
        "memories": 12,
        "vectors": 12,
        "keyword": 12,
        "history": 12,
        "scopes": 1,
    }
    view = mem.policy.readable(mem.principal)
    vectors = mem.store.memory_vectors([r.id for r in records], view)
    assert {i: len(v) for i, v in vectors.items()} == {r.id: mem.embedder.dim for r in records}
    for rec in records:
        (entry,) = mem.store.history(rec.id, view)
        assert entry.op == "create" and entry.content == rec.content and rec.content in texts
        # its keyword row holds its text: the whole sentence finds it first
        found = mem.store.keyword_search(rec.content, view, MemoryFilter(), 1)
        assert [i for i, _ in found] == [rec.id]


def test_invalid_item_in_a_batch_stores_nothing(
    mem: Memory, make_sentences: Callable[..., list[str]]
) -> None:
    mem.remember("Existing memory about the garden shed")
    before = counts(mem)
    items: list[dict[str, Any]] = [{"content": t} for t in make_sentences(5, offset=40)]
    items[3]["importance"] = 9
    with pytest.raises(InvalidInput, match=r"items\[3\].*importance"):
        mem.remember_many(items)
    assert counts(mem) == before


def test_key_conflict_inside_a_batch_stores_nothing(mem: Memory) -> None:
    mem.remember("Bob drinks oat milk", key="bob milk")
    before = counts(mem)
    with pytest.raises(Conflict):
        mem.remember_many(
            [
                {"content": "Carol drinks soy milk"},
                {"content": "Bob drinks whole milk", "key": "bob milk"},
            ]
        )
    assert counts(mem) == before
    with pytest.raises(InvalidInput, match="share a scope and key"):
        mem.remember_many([{"content": "a b", "key": "k1"}, {"content": "c d", "key": "k1"}])
    assert counts(mem) == before


def test_store_insert_is_one_transaction(mem: Memory) -> None:
    """A failing row in the middle of ``Store.insert`` rolls back the rows before it."""
    first = mem.remember("The boiler was serviced in March")
    before = counts(mem)
    records = insert_failing_batch(mem, first.id)
    assert counts(mem) == before  # the team scope row was rolled back too
    assert mem.store.get([r.id for r in records[:2]], mem.policy.readable(mem.principal)) == []


# ---------------------------------------------------------------------------- keys and versions


def test_key_is_unique_per_scope(mem: Memory) -> None:
    a = mem.remember("Dana's coffee order is a flat white", key="coffee order")
    before = counts(mem)
    with pytest.raises(Conflict, match="coffee order"):
        mem.remember("Dana's coffee order is an espresso", key="coffee order")
    with pytest.raises(Conflict):
        mem.remember(
            "Dana's coffee order is a latte", key="  coffee   order "
        )  # same key, normalised
    assert counts(mem) == before
    b = mem.remember(
        "The team coffee order is twelve cappuccinos", key="coffee order", scope="team:ops"
    )
    assert b.key == a.key and b.scope != a.scope
    assert mem.store.find_by_key("default", Scope.user("default"), "coffee order").id == a.id  # type: ignore[union-attr]
    assert mem.store.find_by_key("default", Scope.team("ops"), "coffee order").id == b.id  # type: ignore[union-attr]


def test_update_to_a_taken_key_conflicts_and_changes_nothing(mem: Memory) -> None:
    a = mem.remember("Parking spot is B12", key="parking")
    b = mem.remember("Locker number is 7", key="locker")
    with pytest.raises(Conflict):
        mem.update(b.id, key="parking")
    assert mem.get(b.id).key == "locker" and mem.get(b.id).version == 1
    assert mem.get(a.id).key == "parking"


def test_replace_with_stale_expected_version_conflicts(make_memory: Callable[..., Memory]) -> None:
    m1 = make_memory("shared")
    m2 = make_memory("shared")  # a second client on the same database
    rec = m1.remember("The wifi password is on the fridge")
    m2.update(rec.id, content="The wifi password is taped under the router")
    with pytest.raises(Conflict, match="version 2"):
        m1.update(rec.id, content="The wifi password is in the drawer", expected_version=1)
    got = m1.get(rec.id)
    assert got.content == "The wifi password is taped under the router" and got.version == 2
    ok = m1.update(rec.id, content="The wifi password is in the drawer", expected_version=2)
    assert ok.version == 3 and m2.get(rec.id).content == "The wifi password is in the drawer"


def test_stale_expected_version_conflicts_even_when_nothing_changes(mem: Memory) -> None:
    rec = mem.remember("Standup is at 9:30")
    mem.update(rec.id, importance=4)  # now version 2
    with pytest.raises(Conflict):
        mem.update(rec.id, importance=4, expected_version=1)


def test_every_replace_bumps_version(mem: Memory) -> None:
    rec = mem.remember("Quarterly review in April")
    assert rec.version == 1
    assert mem.update(rec.id, importance=5).version == 2
    assert mem.archive(rec.id).version == 3
    assert mem.restore(rec.id).version == 4
    assert mem.feedback(rec.id, "upvote").version == 5
    assert [h.version for h in mem.history(rec.id)] == [1, 2, 3, 4, 5]


# ---------------------------------------------------------------------------- delete


def test_forget_removes_every_index_and_scrubs_history(mem: Memory) -> None:
    keep = mem.remember("The spare key is under the blue flowerpot")
    rec = mem.remember("Eve's bank PIN hint is her cat's birthday", key="pin hint")
    mem.update(rec.id, content="Eve's bank PIN hint is her dog's birthday")
    before = counts(mem)
    mem.forget(rec.id)
    after = counts(mem)
    for kind in ("memories", "vectors", "keyword"):
        assert after[kind] == before[kind] - 1
    assert after["history"] == before["history"] + 1
    view = mem.policy.readable(mem.principal)
    every_status = MemoryFilter(statuses=frozenset(Status))
    assert mem.store.keyword_search("birthday", view, every_status, 10) == []
    assert mem.store.memory_vectors([rec.id], view) == {}
    entries = mem.history(rec.id)
    assert [e.op for e in entries] == ["create", "update", "delete"]
    assert all(e.actor == "default" and e.at for e in entries)  # who and when are kept
    assert all(e.content is None and e.changes == {} for e in entries)  # what it said is gone
    with pytest.raises(NotFound):
        mem.get(rec.id)
    with pytest.raises(NotFound):
        mem.forget(rec.id)
    assert rec.id not in _ids(mem.recall("bank PIN hint birthday", k=10))
    assert keep.id in _ids(mem.recall("spare key flowerpot", k=10))
    # the key is free again
    assert mem.remember("New PIN hint", key="pin hint").key == "pin hint"


def test_forget_records_the_time_of_the_injected_clock(mem: Memory) -> None:
    rec = mem.remember("Temporary note about the printer")
    mem.clock.advance(days=3)  # type: ignore[attr-defined]
    mem.forget(rec.id)
    entries = mem.history(rec.id)
    assert entries[-1].op == "delete"
    assert entries[-1].at == mem.clock.now()
    assert [e.at for e in entries] == sorted(e.at for e in entries)


def test_store_delete_of_a_missing_memory_is_false(mem: Memory) -> None:
    assert mem.store.delete("default", "0" * 32, "default", mem.clock.now()) is False


# ---------------------------------------------------------------------------- keyword search


def test_keyword_search_stems(mem: Memory) -> None:
    runner = mem.remember("Maria runs five kilometres every morning")
    mem.remember("The office closes at six on Fridays")
    view = mem.policy.readable(mem.principal)
    found = mem.store.keyword_search("running", view, MemoryFilter(), 10)
    assert [i for i, _ in found] == [runner.id]
    assert found[0][1] > 0
    hits = mem.recall("running", explain=True)
    assert hits[0].memory.id == runner.id
    assert hits[0].explain is not None and hits[0].explain.keyword is not None


def test_keyword_search_respects_scope_filter_and_status(mem: Memory) -> None:
    mine = mem.remember("Gardening tips for tomatoes")
    other = mem.remember("Gardening tips for roses", scope="user:zoe")
    archived = mem.remember("Gardening tips for cucumbers")
    mem.archive(archived.id)
    zoe = Principal.member("zoe")
    ids = [
        i
        for i, _ in mem.store.keyword_search(
            "gardening", mem.policy.readable(zoe), MemoryFilter(), 10
        )
    ]
    assert ids == [other.id]
    admin_ids = {
        i
        for i, _ in mem.store.keyword_search(
            "gardening", mem.policy.readable(mem.principal), MemoryFilter(), 10
        )
    }
    assert admin_ids == {mine.id, other.id}
    archived_ids = {
        i
        for i, _ in mem.store.keyword_search(
            "gardening",
            mem.policy.readable(mem.principal),
            MemoryFilter(statuses=frozenset({Status.ARCHIVED})),
            10,
        )
    }
    assert archived_ids == {archived.id}


# ---------------------------------------------------------------------------- vector search


def test_vector_search_finds_a_tiny_readable_set_among_thousands(
    mem: Memory, make_sentences: Callable[..., list[str]]
) -> None:
    """2 memories of ann among 3000 of others: the filter is inside the search, not after it."""
    pool = make_sentences(300)
    mem.remember_many([{"content": pool[i % 300], "scope": f"user:u{i % 30}"} for i in range(3000)])
    ann = Principal.member("ann")
    a1 = mem.remember("Ann studies jazz piano on weekends", principal=ann)
    a2 = mem.remember("Ann likes hiking in the Alps", principal=ann)
    for query in (
        "Alice likes jazz music",
        "Who likes mountain hiking?",
        "Chen teaches chess openings",
    ):
        hits = mem.recall(query, k=5, principal=ann)
        assert set(_ids(hits)) == {a1.id, a2.id}
        assert set(_ids(mem.recall(query, k=5, principal=ann, scopes="all"))) == {a1.id, a2.id}
        found = mem.store.vector_search(
            mem.embedder.embed(query), mem.policy.readable(ann), MemoryFilter(), 5
        )
        assert {i for i, _ in found} == {a1.id, a2.id}
    # the admin's "all" view sees the crowd, and its top hit is the exact sentence
    top = mem.recall("Alice likes jazz music", k=5, scopes="all")
    assert top[0].memory.content == "Alice likes jazz music"


def test_vector_search_with_structured_filter_is_filtered_inside(mem: Memory) -> None:
    plain = mem.remember("Invoice 1 was paid late by the client")
    tagged = mem.remember("The client prefers invoices by email", tags=["billing"])
    view = mem.policy.readable(mem.principal)
    q = mem.embedder.embed("Invoice 1 was paid late by the client")
    found = mem.store.vector_search(q, view, MemoryFilter(tags_all=frozenset({"billing"})), 5)
    assert [i for i, _ in found] == [tagged.id]
    assert {i for i, _ in mem.store.vector_search(q, view, MemoryFilter(), 5)} == {
        plain.id,
        tagged.id,
    }


def test_second_client_sees_writes_of_the_first(make_memory: Callable[..., Memory]) -> None:
    """The in-process vector index follows changes made through another connection."""
    m1 = make_memory("two")
    m2 = make_memory("two")
    base = m1.remember("The cafeteria serves soup on Mondays")
    assert _ids(m2.recall("cafeteria soup")) == [base.id]  # m2's index is now loaded
    view = m2.policy.readable(m2.principal)

    def dense(query: str) -> dict[str, float]:
        return dict(m2.store.vector_search(m2.embedder.embed(query), view, MemoryFilter(), 10))

    new = m1.remember("A zebra crossing was painted outside the school")
    assert new.id in dense("zebra crossing near the school")
    m1.update(new.id, content="The school car park was resurfaced")
    sims = dense("school car park resurfaced")
    assert sims[new.id] > 0.9
    m1.archive(base.id)
    assert base.id not in dense("cafeteria soup")
    m1.forget(new.id)
    assert new.id not in dense("school car park resurfaced")
    assert m2.recall("cafeteria soup").hits == []


def test_a_batch_of_neighbour_searches_in_a_large_scope_matches_one_search_each(
    make_memory: Callable[..., Memory], make_sentences: Callable[..., list[str]]
) -> None:
    """Reconcile asks for a whole batch's nearest memories per scope; for a scope
    past the exact-scan size the answers are those of one search per vector (the
    graph path on SQLite) and the true top of that scope."""
    settings = Settings(
        store=StoreOptions(exact_search_max=50, ann_min_rows=100, pg_exact_search_max=50)
    )
    mem = make_memory("batch-ann", settings=settings)
    mem.remember_many([{"content": t, "scope": "team:big"} for t in make_sentences(300)])
    mem.remember_many([{"content": t, "scope": "team:small"} for t in make_sentences(20, 300)])
    big = _all_records(mem, scopes=["team:big"])
    assert len(big) == 300
    queries = [
        "Who likes jazz music?",
        "beekeeping and honey",
        "fishing on the river",
        "chess openings teacher",
        "Sven avoids tax law",
    ]
    vectors = [mem.embedder.embed(q) for q in queries]
    team = Scope.team("big")
    asked = [(team, v) for v in vectors] + [(Scope.team("small"), vectors[0])]
    batch = mem.store.scope_neighbours(mem.principal.org_id, asked, 5)
    for query, vector, got in zip(queries, vectors, batch, strict=False):
        (alone,) = mem.store.scope_neighbours(mem.principal.org_id, [(team, vector)], 5)
        assert got == alone
        assert [i for i, _ in got] == _brute_top(mem, query, big, 5)
    assert len(batch[-1]) == 5 and all(
        i in {r.id for r in _all_records(mem, scopes=["team:small"])} for i, _ in batch[-1]
    )
    # memories of another status, asked for by status, on both paths (index and exact)
    org = mem.principal.org_id
    for scope in (team, Scope.team("small")):
        near = [i for i, _ in mem.store.scope_neighbours(org, [(scope, vectors[0])], 3)[0]]
        for mid in near:
            mem.archive(mid)
        (active,) = mem.store.scope_neighbours(org, [(scope, vectors[0])], 3)
        (archived,) = mem.store.scope_neighbours(org, [(scope, vectors[0])], 5, {Status.ARCHIVED})
        assert not set(near) & {i for i, _ in active}
        assert [i for i, _ in archived] == near


def test_hnsw_path_matches_exact_search(
    make_memory: Callable[..., Memory], make_sentences: Callable[..., list[str]]
) -> None:
    """With a small ANN threshold the HNSW branch runs; top-5 must equal exact search."""
    settings = Settings(
        store=StoreOptions(exact_search_max=50, ann_min_rows=100, pg_exact_search_max=50)
    )
    ann_mem = make_memory("ann", settings=settings)
    big_texts = make_sentences(400)
    mid_texts = make_sentences(80, offset=400)
    ann_mem.remember_many([{"content": t, "scope": "team:big"} for t in big_texts])
    ann_mem.remember_many([{"content": t, "scope": "team:mid"} for t in mid_texts])
    tiny = Principal.member("tiny")
    t1 = ann_mem.remember("Tiny keeps a pet iguana called Rex", principal=tiny)
    t2 = ann_mem.remember("Tiny plays the bassoon in an orchestra", principal=tiny)
    exact_mem = make_memory("ann")  # same database, default (exact) settings
    big = Principal.member("big", teams={"big": "reader"})
    mid = Principal.member("mid", teams={"mid": "member"})
    big_records = _all_records(ann_mem, principal=big, scopes="all")
    mid_records = _all_records(ann_mem, principal=mid, scopes="all")
    assert len(big_records) == 400 and len(mid_records) == 80
    queries = [
        "Who likes jazz music?",
        "Alice studies marathon running",
        "chess openings teacher",
        "beekeeping and honey",
        "Sven avoids tax law",
        "fishing on the river",
    ]
    for who, records in ((big, big_records), (mid, mid_records)):
        view = ann_mem.policy.readable(who)
        for query in queries:
            got = ann_mem.store.vector_search(
                ann_mem.embedder.embed(query), view, MemoryFilter(), 5
            )
            assert _plan(ann_mem.store) == "hnsw"
            assert [i for i, _ in got] == _brute_top(ann_mem, query, records, 5)
            a = ann_mem.recall(query, k=5, principal=who, scopes="all")
            b = exact_mem.recall(query, k=5, principal=who, scopes="all")
            assert _ids(a) == _ids(b)
            # the candidate tail may differ slightly (ANN), which moves what depends on the
            # whole pool a little: min-max normalisation, graph support, episode lift
            assert [h.score for h in a] == pytest.approx([h.score for h in b], rel=5e-3)
    for query in ("What pet does Tiny have?", "orchestra instrument", "Alice likes jazz music"):
        assert set(_ids(ann_mem.recall(query, k=5, principal=tiny))) == {t1.id, t2.id}
    # the HNSW index follows updates, archives and deletes
    target = big_records[17]
    ann_mem.update(target.id, content="The lighthouse keeper collects antique maps")
    view = ann_mem.policy.readable(big)
    top = ann_mem.store.vector_search(
        ann_mem.embedder.embed("lighthouse keeper antique maps"), view, MemoryFilter(), 5
    )
    assert _plan(ann_mem.store) == "hnsw"
    assert top[0][0] == target.id and top[0][1] > 0.9
    ann_mem.archive(target.id)
    gone = ann_mem.store.vector_search(
        ann_mem.embedder.embed("lighthouse keeper antique maps"), view, MemoryFilter(), 5
    )
    assert target.id not in [i for i, _ in gone]
    victim = big_records[3]
    hits = ann_mem.store.vector_search(
        ann_mem.embedder.embed(victim.content), view, MemoryFilter(), 5
    )
    assert hits[0][0] == victim.id
    ann_mem.forget(victim.id)
    hits = ann_mem.store.vector_search(
        ann_mem.embedder.embed(victim.content), view, MemoryFilter(), 5
    )
    assert victim.id not in [i for i, _ in hits] and len(hits) == 5


# ---------------------------------------------------------------------------- reads


def test_store_get_keeps_order_and_hides_other_scopes(mem: Memory) -> None:
    a = mem.remember("alpha note")
    b = mem.remember("beta note", scope="user:zoe")
    c = mem.remember("gamma note")
    got = mem.store.get([c.id, b.id, "missing", a.id], mem.policy.readable(mem.principal))
    assert [r.id for r in got] == [c.id, b.id, a.id]
    zoe_view = mem.policy.readable(Principal.member("zoe"))
    assert [r.id for r in mem.store.get([a.id, b.id, c.id], zoe_view)] == [b.id]


def test_history_of_a_scope_not_readable_is_empty(mem: Memory) -> None:
    rec = mem.remember("Zoe's private diary note", scope="user:zoe")
    assert mem.store.history(rec.id, mem.policy.readable(Principal.member("ann"))) == []
    assert [
        h.op for h in mem.store.history(rec.id, mem.policy.readable(Principal.member("zoe")))
    ] == ["create"]


def test_deleted_memories_trails_export_and_import_within_scope(
    make_memory: Callable[..., Memory],
) -> None:
    """iter_tombstones yields who deleted what when (no content), only inside the filter."""
    mem = make_memory("src")
    kept = mem.remember("The boiler is serviced in October")
    gone = mem.remember("The old alarm code was 1234", scope="team:ops")
    mem.update(gone.id, content="The old alarm code was 5678")
    mem.forget(gone.id)
    admin_view = mem.policy.readable(mem.principal)
    trails = list(mem.store.iter_tombstones(admin_view))
    assert [(t["memory_id"], t["org_id"], t["scope"]) for t in trails] == [
        (gone.id, "default", "team:ops")
    ]
    assert [h["op"] for h in trails[0]["history"]] == ["create", "update", "delete"]
    assert all(h["content"] is None for h in trails[0]["history"])
    assert kept.id not in {t["memory_id"] for t in trails}
    outsider = mem.policy.readable(Principal.member("eve"))
    assert list(mem.store.iter_tombstones(outsider)) == []
    dest = make_memory("dst")
    assert dest.store.import_tombstones(trails) == 1
    assert [h.op for h in dest.history(gone.id)] == ["create", "update", "delete"]

    def no_seq(rows: Any) -> list[dict[str, Any]]:
        return [
            {**r, "history": [{k: v for k, v in h.items() if k != "seq"} for h in r["history"]]}
            for r in rows
        ]

    assert no_seq(dest.store.iter_tombstones(admin_view)) == no_seq(trails)


# ---------------------------------------------------------------------------- atomic()


class _Boom(Exception):
    """Raised inside a block to roll it back."""


def _items(mem: Memory, texts: list[str], scope: str = "user:default") -> list[Any]:
    """New (record, vector) pairs for ``Store.insert``."""
    now = mem.clock.now()
    vecs = mem.embedder.embed_many(texts)
    return [
        (
            MemoryRecord(
                id=uuid.uuid4().hex,
                org_id="default",
                scope=Scope.parse(scope),
                content=t,
                created_at=now,
                updated_at=now,
                content_hash=content_hash(t),
            ),
            v,
        )
        for t, v in zip(texts, vecs, strict=True)
    ]


def _dense(mem: Memory, text: str, k: int = 5) -> list[str]:
    view = mem.policy.readable(mem.principal)
    return [
        i for i, _ in mem.store.vector_search(mem.embedder.embed(text), view, MemoryFilter(), k)
    ]


def _keyword(mem: Memory, text: str) -> list[str]:
    view = mem.policy.readable(mem.principal)
    return [i for i, _ in mem.store.keyword_search(text, view, MemoryFilter(), 10)]


def test_atomic_block_rolls_back_insert_replace_and_graph_write(mem: Memory) -> None:
    """The engine's shape: insert (with its graph), replace_many and graph_write in one
    block; an exception after them leaves no row, vector, keyword hit, history or link,
    and searches behave as before (the SQLite mirrors were read inside the block)."""
    boiler = mem.remember("The boiler was serviced in March")
    garage = mem.remember("The garage door sticks in winter")
    view = mem.policy.readable(mem.principal)
    before = mem.store.footprint()
    graph_before = mem.store.graph_counts(view)
    dense_before = _dense(mem, "zebra crossing outside the school")
    items = _items(mem, ["A zebra crossing was painted outside the school", "Quokka photos"])
    zebra, quokka = (r for r, _ in items)
    projection = Projection(
        mentions={zebra.id: [EntityMention("Rottnest", "rottnest")]},
        links=[MemoryLink(zebra.id, quokka.id, Relation.RELATED)],
    )
    changed = mem.store.get([boiler.id], view)[0]
    changed.content = "The boiler was replaced in May"
    vector = mem.embedder.embed(changed.content)
    with pytest.raises(_Boom):
        with mem.store.atomic():
            mem.store.insert(items, "default", graph=projection)
            mem.store.replace_many(
                [Replacement(changed, vector, "update", {"content": changed.content})], "default"
            )
            mem.store.graph_write(
                "default",
                Projection(links=[MemoryLink(quokka.id, garage.id, Relation.RELATED)]),
                mem.clock.now(),
            )
            # reads inside the block see its writes
            assert _dense(mem, "zebra crossing outside the school")[0] == zebra.id
            assert _keyword(mem, "quokka") == [quokka.id]
            assert mem.store.graph_counts(view)[1] == graph_before[1] + 2
            raise _Boom
    assert mem.store.footprint() == before
    assert mem.store.get([zebra.id, quokka.id], view) == []
    assert mem.store.history(zebra.id, view) == [] and mem.store.history(quokka.id, view) == []
    assert _dense(mem, "zebra crossing outside the school") == dense_before
    assert _keyword(mem, "quokka") == [] and _keyword(mem, "replaced") == []
    assert _keyword(mem, "serviced") == [boiler.id]
    got = mem.get(boiler.id)
    assert got.content == "The boiler was serviced in March" and got.version == 1
    assert mem.store.graph_edges([zebra.id, quokka.id], view) == []
    assert mem.store.graph_counts(view) == graph_before
    # the same block committed: everything lands, and the searches follow
    items = _items(mem, ["A zebra crossing was painted outside the school", "Quokka photos"])
    zebra, quokka = (r for r, _ in items)
    with mem.store.atomic():
        mem.store.insert(items, "default")
        mem.store.graph_write(
            "default",
            Projection(links=[MemoryLink(zebra.id, quokka.id, Relation.RELATED)]),
            mem.clock.now(),
        )
    assert _dense(mem, "zebra crossing outside the school")[0] == zebra.id
    assert _keyword(mem, "quokka") == [quokka.id]
    assert [e.op for e in mem.store.history(zebra.id, view)] == ["create"]
    assert len(mem.store.graph_edges([zebra.id], view)) == 1
    assert counts(mem)["memories"] == before.memories + 2


def test_links_to_a_retired_memory_are_read_when_its_status_is_asked_for(mem: Memory) -> None:
    """A link whose far end is retired is left out unless ``far`` names that status;
    the end among the ids asked about must be active unless ``near`` names its
    status."""
    view = mem.policy.readable(mem.principal)
    turn = mem.remember("I work at Nokia.")
    fact = mem.remember("The user works at Nokia.")
    mem.graph.link(fact.id, turn.id, "reference")
    both = {Status.ACTIVE, Status.SUPERSEDED}
    assert [e.src for e in mem.store.graph_edges([turn.id], view, {"reference"})] == [fact.id]
    retired = dataclasses.replace(fact, status=Status.SUPERSEDED, superseded_by=turn.id)
    mem.store.replace(retired, None, op="supersede", actor=None, changes={})
    assert mem.store.graph_edges([turn.id], view, {"reference"}) == []
    (edge,) = mem.store.graph_edges([turn.id], view, {"reference"}, far=both)
    assert (edge.src, edge.dst) == (fact.id, turn.id)
    # asked from the retired end itself: it is no active end
    assert mem.store.graph_edges([fact.id], view, {"reference"}, far=both) == []
    # unless ``near`` names its status (a question about before searches it)
    (edge,) = mem.store.graph_edges([fact.id], view, {"reference"}, near=both)
    assert (edge.src, edge.dst) == (fact.id, turn.id)
    # between candidates: both ends among the ids, each active or of ``near``'s
    assert mem.store.graph_edges([turn.id, fact.id], view, within=True) == []
    (edge,) = mem.store.graph_edges([turn.id, fact.id], view, within=True, near=both)
    assert (edge.src, edge.dst) == (fact.id, turn.id)


def test_atomic_blocks_nest_as_savepoints(mem: Memory) -> None:
    view = mem.policy.readable(mem.principal)
    items = _items(mem, ["Apricot jam", "Bagel shop", "Cider press"])
    a, b, c = (r for r, _ in items)
    with mem.store.atomic():
        mem.store.insert(items[:1], "default")
        with pytest.raises(_Boom):
            with mem.store.atomic():
                mem.store.insert(items[1:2], "default")
                assert _keyword(mem, "bagel") == [b.id]  # (the mirrors read it here)
                raise _Boom
        with pytest.raises(Conflict):  # a failed write inside a block fails alone
            mem.store.insert(items[:1], "default")
        mem.store.insert(items[2:], "default")
        assert _keyword(mem, "bagel") == []
    assert [r.id for r in mem.store.get([a.id, b.id, c.id], view)] == [a.id, c.id]
    assert _keyword(mem, "bagel") == [] and _keyword(mem, "cider") == [c.id]
    assert b.id not in _dense(mem, "Bagel shop")
    assert counts(mem)["history"] == 2


def test_other_threads_never_see_a_block_before_it_commits(mem: Memory) -> None:
    mem.remember("The fridge hums at night")
    items = _items(mem, ["Walrus tusks are long teeth"])
    walrus = items[0][0]
    seen: dict[str, list[str]] = {}

    def reader() -> None:
        seen["dense"] = _dense(mem, "walrus tusks")
        seen["keyword"] = _keyword(mem, "walrus")

    for outcome in ("rollback", "commit"):
        thread = threading.Thread(target=reader)
        with contextlib.suppress(_Boom), mem.store.atomic():
            mem.store.insert(items, "default")
            assert _dense(mem, "walrus tusks")[0] == walrus.id  # this thread sees it
            thread.start()
            thread.join(0.5)  # SQLite: the reader waits for the block; PostgreSQL: it need not
            done_inside = not thread.is_alive()
            if outcome == "rollback":
                raise _Boom
        thread.join(30)
        if outcome == "rollback" or done_inside:  # (after a commit it may see the rows)
            assert walrus.id not in seen["dense"] and seen["keyword"] == []
    assert _dense(mem, "walrus tusks")[0] == walrus.id and _keyword(mem, "walrus") == [walrus.id]
