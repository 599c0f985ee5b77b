"""How many memories each organization holds, kept by triggers (for the quota).

``org_memory_counts`` has a row per organization; a trigger on ``memories``
adds one per inserted row and takes one per deleted row, in the writing
transaction, whatever path writes (the engine, an import, an erasure, another
process). Reading a count is then one primary-key lookup instead of a scan
of the organization's rows (:meth:`SQLiteStore.count_memories`).

:func:`ensure` runs when a store opens: it creates the table and the triggers
when any of them is missing (a database from before them, or a migration that
rebuilt ``memories`` and with it dropped its triggers) and then counts every
organization's rows once, in the same transaction.
"""

from __future__ import annotations

from .driver import sqlite3

__all__ = ["TABLE", "ensure", "count"]

TABLE = "org_memory_counts"
_INSERT = "org_memory_counts_insert"
_DELETE = "org_memory_counts_delete"

_DDL = (
    f"CREATE TABLE IF NOT EXISTS {TABLE} "
    "(org_id TEXT PRIMARY KEY, n INTEGER NOT NULL) WITHOUT ROWID",
    f"CREATE TRIGGER IF NOT EXISTS {_INSERT} AFTER INSERT ON memories BEGIN "
    f"INSERT INTO {TABLE} (org_id, n) VALUES (NEW.org_id, 1) "
    "ON CONFLICT (org_id) DO UPDATE SET n = n + 1; END",
    f"CREATE TRIGGER IF NOT EXISTS {_DELETE} AFTER DELETE ON memories BEGIN "
    f"UPDATE {TABLE} SET n = n - 1 WHERE org_id = OLD.org_id; END",
)


def _complete(conn: sqlite3.Connection) -> bool:
    names = {
        row[0]
        for row in conn.execute(
            "SELECT name FROM sqlite_master WHERE name IN (?, ?, ?)", (TABLE, _INSERT, _DELETE)
        )
    }
    return len(names) == 3


def ensure(conn: sqlite3.Connection) -> None:
    """Create the counts and their triggers if any is missing, and recount (one
    transaction). A read-only database is left as it is (counts then scan)."""
    if _complete(conn):
        return
    try:
        conn.execute("BEGIN IMMEDIATE")
    except sqlite3.OperationalError as exc:
        if "readonly" in str(exc).replace(" ", "").lower():
            return
        raise
    try:
        if not _complete(conn):  # another process may have done it meanwhile
            for statement in _DDL:
                conn.execute(statement)
            conn.execute(f"DELETE FROM {TABLE}")
            conn.execute(
                f"INSERT INTO {TABLE} (org_id, n) SELECT org_id, count(*) FROM memories "
                "GROUP BY org_id"
            )
        conn.execute("COMMIT")
    except sqlite3.OperationalError as exc:
        conn.execute("ROLLBACK")
        if "readonly" in str(exc).replace(" ", "").lower():
            return
        raise
    except BaseException:
        conn.execute("ROLLBACK")
        raise


def count(conn: sqlite3.Connection, org_id: str, cap: int) -> int:
    """The memories of ``org_id``: the kept count, or (without one) a scan up to ``cap``."""
    try:
        row = conn.execute(f"SELECT n FROM {TABLE} WHERE org_id = ?", (org_id,)).fetchone()
    except sqlite3.OperationalError:  # no counts table (a read-only, older database)
        row = conn.execute(
            "SELECT count(*) FROM (SELECT 1 FROM memories WHERE org_id = ? LIMIT ?)",
            (org_id, max(0, cap)),
        ).fetchone()
    return int(row[0]) if row else 0
