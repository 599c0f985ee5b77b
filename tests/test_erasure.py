"""Erasure leaves no bytes: after ``forget`` returns, the forgotten memory's text,
its words and their Porter stems are in none of the database's files.

The tests read the raw files (SQLite: the main file, its write-ahead log and
its free pages; PostgreSQL: the heap and index files of the tables that held the
memory), beside a kept memory whose words must still be there (a positive
control), and show that without kenning's measures the same scan finds the
forgotten words (so the scan can fail).
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterable
from pathlib import Path

import psycopg
import pytest

from kenning import Memory
from kenning.embeddings.cache import content_hash
from kenning.stores.sqlite.driver import sqlite3
from kenning.stores.sqlite.migrations import MIGRATIONS
from kenning.stores.sqlite.store import SQLiteStore

#: The memory that is forgotten: words found nowhere else. The keyword index
#: stores a term after the one before it minus their common prefix, so each
#: distinctive word starts with a letter no other word in the test starts with
#: and is stored whole (a byte scan finds it).
GONE = "Zorbifax yarbled the quuxingtons over Blorvania harbour at dawn"
#: A neighbour that stays, with its own unique words (and initials).
KEPT = "Marshal Frimbleton jibbled the emberstones near Kvellovia harbour at dusk"
#: Filler: many memories so the keyword index spans several pages and segments.
FILLER = [
    f"Note {i}: the {w} shipment of crate {i * 7 % 101} left dock {i % 13} on time"
    for i, w in enumerate(
        ["copper", "linen", "walnut", "saffron", "granite", "cobalt", "amber", "willow"] * 20
    )
]
#: A long passage, so the row spills to overflow pages that the delete frees.
LONG_TAIL = " ".join(f"Zorbifax quuxingtons volume {i}." for i in range(150))


def _stems(text: str) -> set[str]:
    """The index's own tokens of ``text`` (Porter stems, lower case)."""
    conn = sqlite3.connect(":memory:")
    try:
        conn.execute(
            "CREATE VIRTUAL TABLE t USING fts5(x, "
            "tokenize = 'porter unicode61 remove_diacritics 2')"
        )
        conn.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, row)")
        conn.execute("INSERT INTO t (x) VALUES (?)", (text,))
        return {r[0] for r in conn.execute("SELECT term FROM v")}
    finally:
        conn.close()


def _needles(text: str, others: Iterable[str]) -> set[str]:
    """Lower-case byte patterns unique to ``text``: its words and their stems, not
    shared with ``others`` (numbers and short words are too common to mean anything)."""
    other_words = {w.strip(".:,").lower() for o in others for w in o.split()}
    other_stems = set().union(*(_stems(o) for o in others))
    words = {w.strip(".:,").lower() for w in text.split()}
    found = (words | _stems(text)) - other_words - other_stems
    return {w for w in found if len(w) >= 5 and not w.isdigit()}


GONE_NEEDLES = _needles(GONE, [KEPT, *FILLER])
KEPT_NEEDLES = _needles(KEPT, [GONE, *FILLER])


def _hits(data: bytes, needles: Iterable[str]) -> set[str]:
    low = data.lower()
    return {n for n in needles if n.encode() in low}


def _sqlite_files(mem: Memory) -> dict[str, bytes]:
    main = Path(mem.store.path)  # type: ignore[attr-defined]
    return {p.name: p.read_bytes() for p in main.parent.glob(main.name + "*") if p.is_file()}


def _free_pages(data: bytes) -> tuple[list[bytes], list[bytes]]:
    """(trunk pages, leaf pages) of the free list of a SQLite main file."""
    (size,) = struct.unpack(">H", data[16:18])
    size = 65536 if size == 1 else size
    trunk, total = struct.unpack(">II", data[32:40])
    trunks: list[bytes] = []
    leaves: list[bytes] = []
    while trunk:
        page = data[(trunk - 1) * size : trunk * size]
        trunks.append(page)
        nxt, n = struct.unpack(">II", page[:8])
        for i in range(n):
            (leaf,) = struct.unpack(">I", page[8 + 4 * i : 12 + 4 * i])
            leaves.append(data[(leaf - 1) * size : leaf * size])
        trunk = nxt
    assert len(trunks) + len(leaves) == total
    return trunks, leaves


def _write(mem: Memory, tail: str = LONG_TAIL) -> tuple[str, str]:
    mem.remember_many([{"content": c} for c in FILLER[:80]])
    gone = mem.remember(f"{GONE} {tail}".strip()).id
    kept = mem.remember(KEPT).id
    mem.remember_many([{"content": c} for c in FILLER[80:]])
    mem.update(gone, content=f"{GONE} (revised) {tail}".strip())  # a second version in history
    return gone, kept


def test_needles_are_distinctive() -> None:
    assert GONE_NEEDLES == {
        "zorbifax",
        "yarbled",
        "yarbl",
        "quuxingtons",
        "quuxington",
        "blorvania",
    }
    assert KEPT_NEEDLES == {
        "marshal",
        "frimbleton",
        "jibbled",
        "jibbl",
        "emberstones",
        "emberston",
        "kvellovia",
    }


# -- SQLite ----------------------------------------------------------------------------


@pytest.mark.stores("sqlite")
def test_connections_delete_securely(mem: Memory) -> None:
    """kenning sets secure deletion itself: this driver's default is off."""
    probe = sqlite3.connect(":memory:")
    assert probe.execute("PRAGMA secure_delete").fetchone() == (0,)
    probe.close()
    store = mem.store
    assert isinstance(store, SQLiteStore)
    mem.recall("shipment")  # opens a read connection
    assert store._readers is not None
    with store._readers.snapshot(store._begin) as reader:
        conns = [store._conn, reader]
        for conn in conns:
            assert conn.execute("PRAGMA secure_delete").fetchone() == (1,)
            assert conn.execute("PRAGMA temp_store").fetchone() == (2,)  # memory
    config = dict(store._conn.execute("SELECT k, v FROM memories_fts_config").fetchall())
    assert config["secure-delete"] == 1


@pytest.mark.stores("sqlite")
def test_forget_leaves_no_bytes_on_sqlite(mem: Memory, db_rows: Callable[..., list]) -> None:
    gone, kept = _write(mem)
    before = _sqlite_files(mem)
    assert _hits(b"".join(before.values()), GONE_NEEDLES) == GONE_NEEDLES

    mem.forget(gone)

    files = _sqlite_files(mem)
    assert set(files) >= {"kenning.db"}
    for name, data in files.items():
        assert _hits(data, GONE_NEEDLES) == set(), name
        assert GONE.lower().encode() not in data.lower()
    assert _hits(files["kenning.db"], KEPT_NEEDLES) == KEPT_NEEDLES  # positive control
    # the WAL was checkpointed and truncated: only what came after (the audit line)
    assert len(files.get("kenning.db-wal", b"")) < len(before.get("kenning.db-wal", b"")) or (
        len(files.get("kenning.db-wal", b"")) == 0
    )
    trunks, leaves = _free_pages(files["kenning.db"])
    assert leaves, "the long memory's overflow pages should be free now"
    assert all(page == bytes(len(page)) for page in leaves)
    for page in trunks:
        (n,) = struct.unpack(">I", page[4:8])
        assert page[8 + 4 * n :] == bytes(len(page) - 8 - 4 * n)
    history = db_rows(
        mem, {"sqlite": "SELECT op, content, changes FROM history WHERE memory_id = ?"}, (gone,)
    )
    assert [op for op, _, _ in history] == ["create", "update", "delete"]
    assert all(content is None and changes == "{}" for _, content, changes in history)
    assert mem.get(kept).content == KEPT
    # the edit re-inserted the row under its rowid; FTS5 must still be consistent
    db_rows(mem, {"sqlite": "INSERT INTO memories_fts (memories_fts) VALUES ('integrity-check')"})
    assert mem.recall("Trellovia glimmerstones").hits[0].memory.id == kept


@pytest.mark.stores("sqlite")
def test_without_the_measures_the_scan_finds_the_words(
    mem: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The negative control: with secure deletion off (SQLite's and FTS5's) and no
    checkpoint, the same forget leaves the words in the files."""
    store = mem.store
    assert isinstance(store, SQLiteStore)
    gone, _ = _write(mem)
    store._conn.execute("PRAGMA secure_delete=OFF")
    store._conn.execute("INSERT INTO memories_fts (memories_fts, rank) VALUES ('secure-delete', 0)")
    monkeypatch.setattr(store, "_scrub_wal", lambda wait: True)
    mem.forget(gone)
    assert _hits(b"".join(_sqlite_files(mem).values()), GONE_NEEDLES)


@pytest.mark.stores("sqlite")
def test_a_reader_holds_the_wal_scrub_until_the_next_write(mem: Memory) -> None:
    """A snapshot held elsewhere stops the checkpoint; the next write block finishes it."""
    store = mem.store
    assert isinstance(store, SQLiteStore)
    gone, _ = _write(mem)
    other = sqlite3.connect(store.path, isolation_level=None)
    other.execute("BEGIN")
    other.execute("SELECT COUNT(*) FROM memories").fetchone()  # holds a snapshot
    mem.forget(gone)
    assert store._scrub_pending
    other.execute("COMMIT")
    other.close()
    mem.remember("An unrelated later note about walnut crates")
    assert not store._scrub_pending
    for name, data in _sqlite_files(mem).items():
        assert _hits(data, GONE_NEEDLES) == set(), name


@pytest.mark.stores("sqlite")
def test_close_finishes_a_held_scrub(mem: Memory) -> None:
    store = mem.store
    assert isinstance(store, SQLiteStore)
    gone, _ = _write(mem)
    other = sqlite3.connect(store.path, isolation_level=None)
    other.execute("BEGIN")
    other.execute("SELECT COUNT(*) FROM memories").fetchone()
    mem.forget(gone)
    assert store._scrub_pending
    other.execute("COMMIT")
    try:
        mem.close()
        assert not store._scrub_pending
        for name, data in _sqlite_files(mem).items():
            assert _hits(data, GONE_NEEDLES) == set(), name
    finally:
        other.close()


def _fts_blocks(conn: sqlite3.Connection) -> bytes:
    return b"".join(r[0] for r in conn.execute("SELECT block FROM memories_fts_data"))


def test_upgrade_turns_secure_delete_on_and_merges_old_leftovers(tmp_path: Path) -> None:
    """A database from before secure deletion: its keyword index still holds the
    words of rows deleted earlier; opening it with this version merges them away.
    Free space that SQLite did not zero then goes with one ``VACUUM`` (documented)."""
    path = tmp_path / "old.db"
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("CREATE TABLE _migrations (name TEXT PRIMARY KEY, applied_at REAL NOT NULL)")
    for name, migration in MIGRATIONS:
        if name.startswith("007"):
            break
        migration(conn)
        conn.execute("INSERT INTO _migrations VALUES (?, 0)", (name,))
    for i, text in enumerate([*FILLER, GONE, KEPT], start=1):
        conn.execute(
            "INSERT INTO memories_fts (rowid, content, key, tags) VALUES (?, ?, '', '')", (i, text)
        )
    conn.execute("DELETE FROM memories_fts WHERE rowid = ?", (len(FILLER) + 1,))
    assert _hits(_fts_blocks(conn), GONE_NEEDLES)  # the old index keeps them
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()

    store = SQLiteStore(path, model_id="m", dim=4)
    try:
        config = dict(store._conn.execute("SELECT k, v FROM memories_fts_config").fetchall())
        assert config["secure-delete"] == 1
        assert _hits(_fts_blocks(store._conn), GONE_NEEDLES) == set()
        kept_stems = KEPT_NEEDLES & _stems(KEPT)
        assert kept_stems == {"marshal", "frimbleton", "jibbl", "emberston", "kvellovia"}
        assert _hits(_fts_blocks(store._conn), kept_stems) == kept_stems
        store._conn.execute("VACUUM")
        store._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        store.close()
    data = path.read_bytes()
    assert _hits(data, GONE_NEEDLES) == set()
    assert _hits(data, KEPT_NEEDLES) == KEPT_NEEDLES


# -- PostgreSQL ------------------------------------------------------------------------

#: The tables that hold a memory's text, words or names.
PG_TABLES = (
    "memories, postings, history, mentions, entities, entity_aliases, links, access_log, "
    "embedding_cache"
)


def _pg_files(su: psycopg.Connection) -> dict[str, bytes]:
    """The main-fork files (every segment) of every relation of the database,
    tables, indexes and TOAST alike, catalogs included; the WAL is not read."""
    (root,) = su.execute("SHOW data_directory").fetchone() or ("",)
    out: dict[str, bytes] = {}
    for name, rel in su.execute(
        "SELECT relname, pg_relation_filepath(oid) FROM pg_class "
        "WHERE pg_relation_filepath(oid) IS NOT NULL"
    ):
        base = Path(root) / rel
        parts = [base, *sorted(base.parent.glob(base.name + ".[0-9]*"))]
        out[name] = b"".join(p.read_bytes() for p in parts if p.exists())
    return out


@pytest.mark.stores("postgresql")
def test_forget_on_postgresql_and_what_vacuum_full_clears(mem: Memory) -> None:
    """``forget`` removes the rows; PostgreSQL keeps their bytes in the table and
    index files until the space is reused (VACUUM frees it, it does not zero it).
    The documented ``VACUUM (FULL, ANALYZE)`` rewrites the files without them."""
    url = mem.store.url.replace("postgresql://kenning@", "postgresql://postgres@")  # type: ignore[attr-defined]
    with psycopg.connect(url, autocommit=True) as su:
        for table in PG_TABLES.split(", "):  # no vacuum or analyze behind the test's back
            su.execute(f"ALTER TABLE {table} SET (autovacuum_enabled = false)")
        gone, kept = _write(mem, tail="")  # short: stored as is, not compressed
        su.execute("CHECKPOINT")
        assert _hits(b"".join(_pg_files(su).values()), GONE_NEEDLES) == GONE_NEEDLES
        mem.forget(gone)
        assert mem.get(kept).content == KEPT
        su.execute("CHECKPOINT")
        assert _hits(b"".join(_pg_files(su).values()), GONE_NEEDLES)  # dead rows remain

        su.execute(f"VACUUM (FULL, ANALYZE) {PG_TABLES}")
        su.execute("CHECKPOINT")
        files = _pg_files(su)
        for name, data in files.items():
            assert _hits(data, GONE_NEEDLES) == set(), name
        assert _hits(b"".join(files.values()), KEPT_NEEDLES) == KEPT_NEEDLES  # positive control
        history = su.execute(
            "SELECT op, content, changes::text FROM history WHERE memory_id = %s ORDER BY seq",
            (gone,),
        ).fetchall()
        assert [op for op, _, _ in history] == ["create", "update", "delete"]
        assert all(content is None and changes == "{}" for _, content, changes in history)
        # the vectors cached for its texts (both versions) went with it; the kept one stays
        left = {h for (h,) in su.execute("SELECT content_hash FROM embedding_cache")}
        assert content_hash(KEPT) in left
        assert not {content_hash(f"{GONE} (revised)"), content_hash(GONE)} & left
