"""Row counts per kind (:meth:`~kenning.stores.base.Store.footprint`) for the SQLite store."""

from __future__ import annotations

from ..base import Footprint
from .driver import sqlite3

__all__ = ["footprint"]

#: Whole-store counts: every row, also one no organization owns (a keyword
#: entry or vector left behind would show here).
_ALL = {
    "memories": "SELECT COUNT(*) FROM memories",
    "vectors": "SELECT COUNT(*) FROM vectors",
    "keyword": "SELECT COUNT(*) FROM memories_fts_docsize",
    "history": "SELECT COUNT(*) FROM history",
    "scopes": "SELECT COUNT(*) FROM scopes",
    "mentions": "SELECT COUNT(*) FROM mentions",
    "entities": "SELECT COUNT(*) FROM entities",
    "aliases": "SELECT COUNT(*) FROM entity_aliases",
    "links": "SELECT COUNT(*) FROM links",
    "accesses": "SELECT COUNT(*) FROM access_log",
}
#: One organization's rows (``?`` is the org id).
_ORG = {
    "memories": "SELECT COUNT(*) FROM memories WHERE org_id = ?",
    "vectors": "SELECT COUNT(*) FROM vectors v JOIN memories m ON m.pk = v.pk WHERE m.org_id = ?",
    "keyword": "SELECT COUNT(*) FROM memories_fts_docsize d JOIN memories m ON m.pk = d.id "
    "WHERE m.org_id = ?",
    "history": "SELECT COUNT(*) FROM history WHERE org_id = ?",
    "scopes": "SELECT COUNT(*) FROM scopes WHERE org_id = ?",
    "mentions": "SELECT COUNT(*) FROM mentions x JOIN scopes s ON s.pk = x.scope_pk "
    "WHERE s.org_id = ?",
    "entities": "SELECT COUNT(*) FROM entities WHERE org_id = ?",
    "aliases": "SELECT COUNT(*) FROM entity_aliases WHERE org_id = ?",
    "links": "SELECT COUNT(*) FROM links WHERE org_id = ?",
    "accesses": "SELECT COUNT(*) FROM access_log WHERE org_id = ?",
}


def footprint(conn: sqlite3.Connection, org_id: str | None) -> Footprint:
    """Rows per kind, of ``org_id`` or of the whole database, in one read snapshot."""
    queries, params = (_ALL, ()) if org_id is None else (_ORG, (org_id,))
    return Footprint(**{k: int(conn.execute(q, params).fetchone()[0]) for k, q in queries.items()})
