"""Bytes per memory on disk: the whole database and each table and index.

    python bench/footprint.py --store sqlite:///PATH
    python bench/footprint.py --store postgresql://postgres@127.0.0.1:PORT/DB

Read-only. SQLite: the file's pages per table and index (``dbstat``); PostgreSQL:
``pg_database_size`` and ``pg_relation_size`` of every table and index in the
schema (TOAST counted with its table), as a role that bypasses row-level
security (the server's superuser), so the count is every organization's.
Prints JSON: memories, total bytes, bytes per memory, and the relations from
the largest down with their bytes per memory, plus the average content length.
"""

from __future__ import annotations

import argparse
import json
from typing import Any


def _sqlite(path: str) -> tuple[int, int, list[tuple[str, int]], float]:
    from kenning.stores.sqlite.driver import sqlite3

    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as conn:
        n, chars = conn.execute("SELECT count(*), avg(length(content)) FROM memories").fetchone()
        rows = conn.execute(
            "SELECT name, sum(pgsize) FROM dbstat GROUP BY name ORDER BY 2 DESC"
        ).fetchall()
        page_size = conn.execute("PRAGMA page_size").fetchone()[0]
        pages = conn.execute("PRAGMA page_count").fetchone()[0]
    return int(n), int(page_size * pages), [(r[0], int(r[1])) for r in rows], float(chars or 0)


def _postgres(url: str) -> tuple[int, int, list[tuple[str, int]], float]:
    import psycopg

    with psycopg.connect(url) as conn:
        n, chars = conn.execute("SELECT count(*), avg(length(content)) FROM memories").fetchone()
        total = conn.execute("SELECT pg_database_size(current_database())").fetchone()[0]
        rows = conn.execute(
            "SELECT c.relname, pg_relation_size(c.oid)"
            " + COALESCE(pg_relation_size(c.reltoastrelid), 0) "
            "FROM pg_class c JOIN pg_namespace s ON s.oid = c.relnamespace "
            "WHERE s.nspname = current_schema() AND c.relkind IN ('r', 'i') ORDER BY 2 DESC"
        ).fetchall()
    return int(n), int(total), [(r[0], int(r[1])) for r in rows], float(chars or 0)


def run(store: str) -> dict[str, Any]:
    """The footprint of the database ``store`` names."""
    if store.startswith("sqlite:///"):
        n, total, rows, chars = _sqlite(store.removeprefix("sqlite:///"))
    elif store.startswith("postgresql://"):
        n, total, rows, chars = _postgres(store)
    else:
        raise SystemExit(f"--store must be sqlite:///PATH or postgresql://…, got {store!r}")
    per = max(n, 1)
    return {
        "memories": n,
        "avg_content_chars": round(chars, 1),
        "total_bytes": total,
        "bytes_per_memory": round(total / per, 1),
        "relations": [
            {"name": name, "bytes": size, "per_memory": round(size / per, 1)}
            for name, size in rows
            if size
        ],
    }


def main() -> None:
    """Parse the flags and print the JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", required=True, help="sqlite:///PATH or postgresql://…")
    print(json.dumps(run(parser.parse_args().store), indent=2))


if __name__ == "__main__":
    main()
