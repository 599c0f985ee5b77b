"""The keyword suites' ground truth: FTS5's own bm25() with one reader's statistics."""

from __future__ import annotations

from kenning.access import ScopeFilter
from kenning.stores.sqlite.driver import sqlite3
from kenning.stores.sqlite.sql import scope_subquery


def reader_bm25(
    path: str, match: str, view: ScopeFilter, statuses: tuple[str, ...] = ("active",)
) -> list[tuple[str, float]]:
    """FTS5's own bm25() for ``match`` over a fresh index of just the rows the
    reader may read (any status: the reader's statistics), then the statuses."""
    conn = sqlite3.connect(path)
    try:
        sub, params = scope_subquery(view)
        conn.execute("CREATE TEMP TABLE mine (pk INTEGER PRIMARY KEY, id TEXT, status TEXT)")
        conn.execute(
            f"INSERT INTO mine SELECT pk, id, status FROM memories WHERE scope_pk IN ({sub})",
            params,
        )
        conn.execute(
            "CREATE VIRTUAL TABLE temp.mine_fts USING fts5(content, key, tags,"
            " tokenize = 'porter unicode61 remove_diacritics 2')"
        )
        conn.execute(
            "INSERT INTO temp.mine_fts (rowid, content, key, tags) SELECT f.rowid, f.content,"
            " f.key, f.tags FROM memories_fts f JOIN temp.mine ON temp.mine.pk = f.rowid"
        )
        marks = ",".join("?" * len(statuses))
        rows = conn.execute(
            "SELECT x.id, -bm25(mine_fts) FROM temp.mine_fts JOIN temp.mine x "
            f"ON x.pk = mine_fts.rowid WHERE mine_fts MATCH ? AND x.status IN ({marks}) "
            "ORDER BY bm25(mine_fts), x.pk",
            (match, *statuses),
        ).fetchall()
        return [(r[0], float(r[1])) for r in rows]
    finally:
        conn.close()
