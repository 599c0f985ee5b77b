"""The built-in stores' tables read directly, past the seam (raw SQL per backend).

``test_store_contract.py`` checks the same writes through the protocol
(``Store.footprint`` and the store's reads), which any store can run; these
tests look at what only the database itself shows: that the keyword index,
vector and history rows of one memory join up, and that a deleted memory's
text is gone from the history table and the keyword index's own matching.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from storekit import insert_failing_batch

from kenning import Memory

Counts = Callable[[Memory], dict[str, int]]
Rows = Callable[..., list[Any]]


def test_batch_rows_join_up_in_the_tables(
    mem: Memory, db_counts: Counts, db_rows: Rows, make_sentences: Callable[..., list[str]]
) -> None:
    texts = make_sentences(12)
    records = mem.remember_many([{"content": t, "tags": ["hobby"]} for t in texts])
    assert db_counts(mem) == {
        "memories": 12,
        "vectors": 12,
        "memories_fts": 12,
        "history": 12,
        "scopes": 1,
    }
    joined = db_rows(
        mem,
        {
            "sqlite": "SELECT m.id, length(v.vector) / 4, f.content, h.op, h.content "
            "FROM memories m JOIN vectors v ON v.pk = m.pk JOIN memories_fts f ON f.rowid = m.pk "
            "JOIN history h ON h.memory_id = m.id",
            "postgresql": "SELECT m.id, vector_dims(m.embedding), m.content, h.op, h.content "
            "FROM memories m JOIN history h ON h.memory_id = m.id WHERE EXISTS (SELECT 1 "
            "FROM postings p WHERE p.pk = m.pk AND p.lexeme = (SELECT min(lexeme) FROM "
            "unnest(to_tsvector('english', split_part(m.content, ' ', 1)))))",
        },
    )
    assert {r[0] for r in joined} == {r.id for r in records}
    for _, dims, fts_content, op, hist_content in joined:
        assert dims == mem.embedder.dim
        assert op == "create"
        assert fts_content == hist_content and fts_content in texts


def test_store_insert_rollback_leaves_no_table_row(mem: Memory, db_counts: Counts) -> None:
    """The raw tables (the SQLite scope row included) after a failed ``Store.insert``."""
    first = mem.remember("The boiler was serviced in March")
    before = db_counts(mem)
    insert_failing_batch(mem, first.id)
    assert db_counts(mem) == before  # the team scope row was rolled back too


def test_forget_scrubs_the_history_table_and_the_keyword_index(
    mem: Memory, db_counts: Counts, db_rows: Rows
) -> None:
    rec = mem.remember("Eve's bank PIN hint is her cat's birthday", key="pin hint")
    mem.update(rec.id, content="Eve's bank PIN hint is her dog's birthday")
    before = db_counts(mem)
    mem.forget(rec.id)
    after = db_counts(mem)
    for table in ("memories", "vectors", "memories_fts"):
        assert after[table] == before[table] - 1
    assert after["history"] == before["history"] + 1
    rows = db_rows(
        mem,
        {
            "sqlite": "SELECT op, actor, at, content, changes FROM history "
            "WHERE memory_id = ? ORDER BY seq",
            "postgresql": "SELECT op, actor, at, content, changes::text FROM history "
            "WHERE memory_id = %s ORDER BY seq",
        },
        (rec.id,),
    )
    (fts_hits,) = db_rows(
        mem,
        {
            "sqlite": "SELECT COUNT(*) FROM memories_fts WHERE memories_fts MATCH 'birthday'",
            "postgresql": "SELECT COUNT(*) FROM postings WHERE lexeme = 'birthday'",
        },
    )[0]
    assert [r[0] for r in rows] == ["create", "update", "delete"]
    assert all(r[1] == "default" and r[2] for r in rows)  # who and when are kept
    assert all(r[3] is None and r[4] == "{}" for r in rows)  # what it said is gone
    assert fts_hits == 0


def test_footprint_agrees_with_the_tables(
    mem: Memory, db_counts: Counts, make_sentences: Callable[..., list[str]]
) -> None:
    """What ``Store.footprint`` reports is what the tables hold."""
    mem.remember_many([{"content": t} for t in make_sentences(7)])
    gone = mem.remember("A memory that is forgotten again", scope="team:ops")
    mem.forget(gone.id)
    raw = db_counts(mem)
    for org in (None, "default"):
        seen = mem.store.footprint(org)
        assert (seen.memories, seen.vectors, seen.keyword, seen.history) == (
            raw["memories"],
            raw["vectors"],
            raw["memories_fts"],
            raw["history"],
        )
        assert seen.scopes == 2  # the team scope stays recorded after its memory is gone
    assert mem.store.footprint("nobody").as_dict() == dict.fromkeys(seen.as_dict(), 0)
