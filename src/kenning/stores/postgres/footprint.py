"""Row counts per kind (:meth:`~kenning.stores.base.Store.footprint`) for PostgreSQL."""

from __future__ import annotations

import psycopg

from ..base import Footprint

__all__ = ["footprint"]

#: One organization's rows, counted under its organization-wide context.
_COUNTS = """
SELECT (SELECT COUNT(*) FROM memories WHERE org_id = %(org)s),
       (SELECT COUNT(embedding) FROM memories WHERE org_id = %(org)s),
       (SELECT COUNT(DISTINCT pk) FROM postings WHERE org_id = %(org)s),
       (SELECT COUNT(*) FROM history WHERE org_id = %(org)s),
       (SELECT COUNT(*) FROM (SELECT scope_kind, scope_key FROM memories WHERE org_id = %(org)s
                              UNION SELECT scope_kind, scope_key FROM history
                              WHERE org_id = %(org)s
                              UNION SELECT scope_kind, scope_key FROM sectors
                              WHERE org_id = %(org)s) s),
       (SELECT COUNT(*) FROM mentions WHERE org_id = %(org)s),
       (SELECT COUNT(*) FROM entities WHERE org_id = %(org)s),
       (SELECT COUNT(*) FROM entity_aliases WHERE org_id = %(org)s),
       (SELECT COUNT(*) FROM links WHERE org_id = %(org)s),
       (SELECT COUNT(*) FROM access_log WHERE org_id = %(org)s)
"""


def footprint(conn: psycopg.Connection, org_id: str) -> Footprint:
    """Rows per kind of ``org_id`` (the caller set that organization's context)."""
    row = conn.execute(_COUNTS, {"org": org_id}).fetchone()
    assert row is not None
    return Footprint(*(int(n) for n in row))
