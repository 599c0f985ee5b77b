"""The memory lifecycle on SQLite: access log, sectors, policies (migration ``005``).

Mixed into :class:`~kenning.stores.sqlite.store.SQLiteStore`; see
:mod:`kenning.stores.base` for the contract. Strength state lives on the
memory row; an access updates it in place (no version, no history: using a
memory is not changing it) and appends to ``access_log``.
"""

from __future__ import annotations

import builtins
import json
from collections.abc import Sequence
from datetime import datetime

import numpy as np

from ...access import ScopeFilter
from ...lifecycle.model import Access, AccessEntry, Policy, Sector
from ..rows import finish_sector
from .parts import StoreParts
from .sql import dt, joined_scope_clause, ts

__all__ = ["SQLiteLifecycle"]


class SQLiteLifecycle(StoreParts):
    """Lifecycle methods of the SQLite store (see :mod:`kenning.stores.base`)."""

    # -- access ------------------------------------------------------------------------

    def record_access(self, org_id: str, accesses: Sequence[Access]) -> None:
        """Update strength state and append to the access log (one transaction)."""
        if not accesses:
            return
        with self.atomic() as conn:
            conn.executemany(
                "UPDATE memories SET strength = ?, last_accessed = ?, "
                "access_count = access_count + 1, "
                "reinforcement_count = reinforcement_count + ? WHERE id = ? AND org_id = ?",
                [
                    (a.strength_after, ts(a.at), int(a.explicit), a.memory_id, org_id)
                    for a in accesses
                ],
            )
            conn.executemany(
                "INSERT INTO access_log (memory_id, org_id, scope_pk, access_type, "
                "query_context, strength_before, strength_after, at) "
                "SELECT id, org_id, scope_pk, ?, ?, ?, ?, ? FROM memories "
                "WHERE id = ? AND org_id = ?",
                [
                    (
                        a.access_type,
                        a.query,
                        a.strength_before,
                        a.strength_after,
                        ts(a.at),
                        a.memory_id,
                        org_id,
                    )
                    for a in accesses
                ],
            )

    def access_log(
        self, memory_id: str, scopes: ScopeFilter, limit: int = 100
    ) -> builtins.list[AccessEntry]:
        """The latest ``limit`` accesses of one visible memory, oldest first."""
        where, params = joined_scope_clause(scopes)
        with self._read() as conn:
            rows = conn.execute(
                "SELECT a.seq, a.memory_id, a.access_type, a.query_context, a.strength_before, "
                "a.strength_after, a.at FROM access_log a JOIN scopes s ON s.pk = a.scope_pk "
                f"WHERE a.memory_id = ? AND {where} ORDER BY a.seq DESC LIMIT ?",
                [memory_id, *params, limit],
            ).fetchall()
        return [
            AccessEntry(seq, mid, kind, query, before, after, dt(at) or datetime.min)
            for seq, mid, kind, query, before, after, at in reversed(rows)
        ]

    def access_counts(
        self, scopes: ScopeFilter, since: datetime
    ) -> builtins.list[tuple[str, str, int]]:
        """(UTC day, access type, count) of the visible memories' accesses since ``since``."""
        where, params = joined_scope_clause(scopes)
        with self._read() as conn:
            rows = conn.execute(
                "SELECT date(a.at, 'unixepoch') AS day, a.access_type, COUNT(*) "
                "FROM access_log a JOIN scopes s ON s.pk = a.scope_pk "
                f"WHERE a.at >= ? AND {where} GROUP BY day, a.access_type ORDER BY day",
                [since.timestamp(), *params],
            ).fetchall()
        return [(str(day), str(kind), int(n)) for day, kind, n in rows]

    # -- sectors -----------------------------------------------------------------------

    def put_sector(self, sector: Sector) -> None:
        """Create or update a sector (by id)."""
        centroid = (
            None
            if sector.centroid is None
            else np.asarray(sector.centroid, dtype=np.float32).tobytes()
        )
        with self.atomic() as conn:
            scope_pk = self._scope_pk(conn, sector.org_id, sector.scope)
            conn.execute(
                "INSERT INTO sectors (id, org_id, scope_pk, name, parent_id, decay_multiplier, "
                "topics, centroid, max_size, created_at, updated_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET "
                "name = excluded.name, parent_id = excluded.parent_id, "
                "decay_multiplier = excluded.decay_multiplier, topics = excluded.topics, "
                "centroid = excluded.centroid, max_size = excluded.max_size, "
                "updated_at = excluded.updated_at",
                (
                    sector.id,
                    sector.org_id,
                    scope_pk,
                    sector.name,
                    sector.parent_id,
                    sector.decay_multiplier,
                    json.dumps(list(sector.topics)),
                    centroid,
                    sector.max_size,
                    ts(sector.created_at),
                    ts(sector.updated_at),
                ),
            )

    def sectors(self, scopes: ScopeFilter) -> builtins.list[Sector]:
        """Every sector of the visible scopes, with its size."""
        where, params = joined_scope_clause(scopes)
        with self._read() as conn:
            rows = conn.execute(
                "SELECT x.id, x.org_id, s.kind, s.owner_id, s.user_id, x.name, x.parent_id, "
                "x.decay_multiplier, x.topics, x.centroid, x.max_size, x.created_at, "
                "x.updated_at, (SELECT COUNT(*) FROM memories m WHERE m.sector_id = x.id "
                "AND m.status = 'active') FROM sectors x JOIN scopes s ON s.pk = x.scope_pk "
                f"WHERE {where} ORDER BY x.created_at, x.id",
                params,
            ).fetchall()
        return [finish_sector(r, json.loads(r[8]), dt(r[11]), dt(r[12])) for r in rows]

    # -- policies ----------------------------------------------------------------------

    def put_policy(self, policy: Policy) -> None:
        """Create or replace the policy for (org, target, memory type)."""
        with self.atomic() as conn:
            conn.execute(
                "INSERT OR REPLACE INTO policies (org_id, target, memory_type, retention_days, "
                "capacity, review, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    policy.org_id,
                    policy.target,
                    policy.memory_type,
                    policy.retention_days,
                    policy.capacity,
                    int(policy.review),
                    ts(policy.updated_at) or 0.0,
                ),
            )

    def delete_policy(self, org_id: str, target: str, memory_type: str) -> bool:
        """Remove one policy."""
        with self.atomic() as conn:
            cur = conn.execute(
                "DELETE FROM policies WHERE org_id = ? AND target = ? AND memory_type = ?",
                (org_id, target, memory_type),
            )
            return cur.rowcount > 0

    def policies(self, org_id: str) -> builtins.list[Policy]:
        """Every policy of the organization."""
        with self._read() as conn:
            rows = conn.execute(
                "SELECT org_id, target, memory_type, retention_days, capacity, review, "
                "updated_at FROM policies WHERE org_id = ? ORDER BY target, memory_type",
                (org_id,),
            ).fetchall()
        return [
            Policy(org, target, mtype, days, cap, bool(review), dt(at))
            for org, target, mtype, days, cap, review, at in rows
        ]
