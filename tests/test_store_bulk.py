"""SQLite's batch insert writes a table at a time without a savepoint: a batch that
fails after it wrote rows must still leave nothing (records, vectors, keyword
rows, history, graph), through the write pipeline and inside a caller's block."""

from __future__ import annotations

from typing import Any

import pytest

from kenning import Memory, MemoryFilter, StoreError
from kenning.graph.model import Projection
from kenning.stores.sqlite.store import SQLiteStore

pytestmark = pytest.mark.stores("sqlite")

_COUNTED = ("memories", "vectors", "keyword", "history", "scopes", "mentions", "links")


def _counts(mem: Memory) -> dict[str, int]:
    whole = mem.store.footprint().as_dict()
    return {k: whole[k] for k in _COUNTED}


def _keyword(mem: Memory, text: str) -> list[str]:
    view = mem.policy.readable(mem.principal)
    return [i for i, _ in mem.store.keyword_search(text, view, MemoryFilter(), 10)]


class _Boom(Exception):
    pass


def _fail_graph_write(monkeypatch: pytest.MonkeyPatch, seen: dict[str, int]) -> None:
    """Make the graph write (the last step of ``insert``) fail, after noting how many
    memories the open transaction already holds."""

    def boom(self: SQLiteStore, conn: Any, *args: Any, **kw: Any) -> int:
        seen["memories"] = int(conn.execute("SELECT COUNT(*) FROM memories").fetchone()[0])
        raise _Boom

    monkeypatch.setattr(SQLiteStore, "_graph_write", boom)


_BATCH = [
    {"content": "Otters hold hands while they sleep", "scope": "team:zoo"},
    {"content": "Quokkas live on Rottnest Island", "scope": "team:zoo"},
    {"content": "Axolotls regrow their limbs", "scope": "user:default"},
]


def test_a_batch_failing_after_its_rows_were_written_leaves_nothing(
    mem: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    mem.remember("The penguin enclosure opens at nine")
    before = _counts(mem)
    seen: dict[str, int] = {}
    _fail_graph_write(monkeypatch, seen)
    with pytest.raises(_Boom):
        mem.remember_many(_BATCH)
    assert seen["memories"] == before["memories"] + 3  # the rows were written, then undone
    assert _counts(mem) == before
    assert _keyword(mem, "quokkas") == [] and _keyword(mem, "otters") == []
    assert [r.content for r in mem.list(limit=10).items] == ["The penguin enclosure opens at nine"]
    monkeypatch.undo()
    written = mem.remember_many(_BATCH)  # the same batch goes in afterwards, whole
    assert _keyword(mem, "quokkas") == [written[1].id]
    assert _counts(mem)["memories"] == before["memories"] + 3


def test_a_caught_failure_part_way_rolls_the_enclosing_block_back(
    mem: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without a savepoint the batch cannot be undone alone: the caller's block, which
    caught the error and went on writing, rolls back whole and says so."""
    before = _counts(mem)
    records = mem.writes.build_many(mem.principal, _BATCH, mem.clock.now())
    items = list(zip(records, mem.embedder.embed_many([r.content for r in records]), strict=True))
    _fail_graph_write(monkeypatch, {})
    with pytest.raises(StoreError, match="rolled back"), mem.store.atomic():
        mem.store.insert(items[:1], "default", graph=None)  # no graph: this one succeeds
        with pytest.raises(_Boom):
            mem.store.insert(items[1:], "default", graph=Projection())
    assert _counts(mem) == before
    assert _keyword(mem, "otters") == [] and _keyword(mem, "quokkas") == []
    monkeypatch.undo()
    mem.store.insert(items, "default")  # the store writes again afterwards
    assert _counts(mem)["memories"] == before["memories"] + 3


def test_a_batch_refused_before_writing_fails_alone_inside_a_block(mem: Memory) -> None:
    """A taken id or key is found before any row is written: the caller's block goes on."""
    first = mem.remember("Flamingos are pink from their food", key="flamingo")
    records = mem.writes.build_many(mem.principal, _BATCH, mem.clock.now())
    vectors = mem.embedder.embed_many([r.content for r in records])
    items = list(zip(records, vectors, strict=True))
    records[2].key = "flamingo"
    records[2].scope = first.scope
    with mem.store.atomic():
        with pytest.raises(Exception, match="flamingo"):
            mem.store.insert(items, "default")
        records[2].key = None
        mem.store.insert(items, "default")
    assert _counts(mem)["memories"] == 4
    assert _keyword(mem, "axolotls") == [records[2].id]
