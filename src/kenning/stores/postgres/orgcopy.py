"""One organization's rows between two kenning PostgreSQL databases, verbatim.

Used by :mod:`kenning.stores.postgres.orgmove`. Every table that holds an
organization's memory data is copied with its rows exactly as they are
(ids, times, strengths, vectors, history in order); only the numbering
columns each database assigns itself (``memories.pk``, ``history.seq``,
``access_log.seq``) are renumbered, and the keyword postings are derived anew
from the copied memories. Reads and writes run under the organization's own
row-level-security context, as the store's do.

:func:`table_digests` gives, per table, the row count and an md5 over the
md5 of each row's canonical text (without the renumbered columns, in a
deterministic order), so two databases holding the same organization agree
on it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import psycopg

from .txn import org_context, set_context

__all__ = ["ORG_TABLES", "copy_org", "table_digests", "delete_org", "holds_org"]


@dataclass(frozen=True, slots=True)
class OrgTable:
    """One table of organization rows: its name, how to order its rows, and the
    columns its database numbers itself (left out of copies and checksums)."""

    name: str
    order: str
    renumbered: tuple[str, ...] = ()


#: In copy order (parents before children); deleted in the reverse order.
ORG_TABLES = (
    OrgTable("organizations", "org_id"),
    OrgTable("memories", "id", ("pk",)),
    OrgTable("history", "seq", ("seq",)),
    OrgTable("sectors", "created_at, id"),
    OrgTable("policies", "target, memory_type"),
    OrgTable("entities", "id"),
    OrgTable("entity_aliases", "alias_norm, entity_id"),
    OrgTable("mentions", "memory_id, entity_id"),
    OrgTable("links", "src, dst, relation"),
    OrgTable("access_log", "seq", ("seq",)),
)

#: Rows per copied chunk (one INSERT each).
CHUNK = 500

#: The keyword postings of an organization's memories, derived from their tsvector.
_POSTINGS = (
    "INSERT INTO postings (pk, lexeme, org_id, scope_kind, scope_key, status, tf, doc_len) "
    "SELECT m.pk, u.lexeme, m.org_id, m.scope_kind, m.scope_key, m.status, "
    "COALESCE(array_length(u.positions, 1), 1), m.doc_len "
    "FROM memories m CROSS JOIN LATERAL unnest(m.tsv) AS u WHERE m.org_id = %s"
)


def _columns(conn: psycopg.Connection[Any], table: OrgTable) -> list[str]:
    """The stored (not generated, not renumbered) columns of ``table``, in order."""
    rows = conn.execute(
        "SELECT attname FROM pg_attribute WHERE attrelid = %s::regclass AND attnum > 0 "
        "AND NOT attisdropped AND attgenerated = '' ORDER BY attnum",
        (table.name,),
    ).fetchall()
    return [r[0] for r in rows if r[0] not in table.renumbered]


def _tx(conn: psycopg.Connection[Any], org_id: str) -> None:
    set_context(conn, org_context(org_id))


def copy_org(
    source: psycopg.Connection[Any],
    dest: psycopg.Connection[Any],
    org_id: str,
    on_table: Callable[[str, int], None] | None = None,
) -> dict[str, int]:
    """Copy ``org_id``'s rows of every :data:`ORG_TABLES` table, then derive its
    postings; returns rows copied per table.

    Both connections must be inside a transaction (the caller commits ``dest``
    only after it is satisfied); ``on_table(name, rows)`` is called after each
    table.
    """
    _tx(source, org_id)
    _tx(dest, org_id)
    copied: dict[str, int] = {}
    for table in ORG_TABLES:
        cols = ", ".join(_columns(source, table))
        n = 0
        with source.cursor(name=f"kenning_copy_{table.name}") as rows:
            rows.itersize = CHUNK
            rows.execute(
                f"SELECT row_to_json(x)::text FROM (SELECT {cols} FROM {table.name} "
                f"WHERE org_id = %s ORDER BY {table.order}) x",
                (org_id,),
            )
            while chunk := rows.fetchmany(CHUNK):
                dest.execute(
                    f"INSERT INTO {table.name} ({cols}) SELECT {cols} "
                    f"FROM json_populate_recordset(NULL::{table.name}, %s::json)",
                    ("[" + ",".join(r[0] for r in chunk) + "]",),
                )
                n += len(chunk)
        copied[table.name] = n
        if table.name == "memories":
            cur = dest.execute(_POSTINGS, (org_id,))
            copied["postings"] = cur.rowcount
        if on_table is not None:
            on_table(table.name, n)
    return copied


def table_digests(conn: psycopg.Connection[Any], org_id: str) -> dict[str, tuple[int, str]]:
    """``table -> (rows, md5)`` of ``org_id``'s rows (postings by their memory's id)."""
    _tx(conn, org_id)
    out: dict[str, tuple[int, str]] = {}
    for table in ORG_TABLES:
        cols = ", ".join(_columns(conn, table))
        row = conn.execute(
            f"SELECT count(*), coalesce(md5(string_agg(t, '' ORDER BY n)), '') FROM "
            f"(SELECT row_number() OVER (ORDER BY {table.order}) AS n, "
            f"md5(row({cols})::text) AS t FROM {table.name} WHERE org_id = %s) x",
            (org_id,),
        ).fetchone()
        assert row is not None
        out[table.name] = (int(row[0]), str(row[1]))
    row = conn.execute(
        "SELECT count(*), coalesce(md5(string_agg(t, '' ORDER BY t)), '') FROM "
        "(SELECT md5(row(m.id, p.lexeme, p.scope_kind, p.scope_key, p.status, p.tf, "
        "p.doc_len)::text) AS t FROM postings p JOIN memories m ON m.pk = p.pk "
        "WHERE p.org_id = %s) x",
        (org_id,),
    ).fetchone()
    assert row is not None
    out["postings"] = (int(row[0]), str(row[1]))
    return out


def holds_org(conn: psycopg.Connection[Any], org_id: str) -> dict[str, int]:
    """Rows of ``org_id`` per table, only the tables that hold any."""
    return {t: n for t, (n, _) in table_digests(conn, org_id).items() if n}


def delete_org(conn: psycopg.Connection[Any], org_id: str) -> int:
    """Delete every row of ``org_id`` (postings included) inside the caller's
    transaction; returns the rows deleted."""
    _tx(conn, org_id)
    total = conn.execute("DELETE FROM postings WHERE org_id = %s", (org_id,)).rowcount
    for table in reversed(ORG_TABLES):
        total += conn.execute(f"DELETE FROM {table.name} WHERE org_id = %s", (org_id,)).rowcount
    return total
