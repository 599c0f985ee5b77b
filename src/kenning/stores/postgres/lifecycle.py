"""The memory lifecycle on PostgreSQL: access log, sectors, policies (migration ``005``).

Mixed into :class:`~kenning.stores.postgres.store.PostgresStore`; see
:mod:`kenning.stores.base` for the contract. The access log and sectors carry
their scope and sit behind the same row-level security as memories.
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from datetime import datetime

import numpy as np

from ...access import ScopeFilter
from ...lifecycle.model import Access, AccessEntry, Policy, Sector
from ..rows import finish_sector
from .parts import StoreParts
from .sql import scope_clause, write_context

__all__ = ["PostgresLifecycle"]


class PostgresLifecycle(StoreParts):
    """Lifecycle methods of the PostgreSQL store (see :mod:`kenning.stores.base`)."""

    # -- access ------------------------------------------------------------------------

    def record_access(self, org_id: str, accesses: Sequence[Access]) -> None:
        """Update strength state and append to the access log (one transaction)."""
        if not accesses:
            return
        # not pinned for read-your-writes: bookkeeping, not something the caller wrote
        with self._org_write(org_id, track=False) as conn, conn.cursor() as cur:
            cur.executemany(
                "UPDATE memories SET strength = %s, last_accessed = %s, "
                "access_count = access_count + 1, "
                "reinforcement_count = reinforcement_count + %s "
                "WHERE id = %s AND org_id = %s",
                [(a.strength_after, a.at, int(a.explicit), a.memory_id, org_id) for a in accesses],
            )
            cur.executemany(
                "INSERT INTO access_log (memory_id, org_id, scope_kind, scope_key, "
                "access_type, query_context, strength_before, strength_after, at) "
                "SELECT id, org_id, scope_kind, scope_key, %s, %s, %s, %s, %s FROM memories "
                "WHERE id = %s AND org_id = %s",
                [
                    (
                        a.access_type,
                        a.query,
                        a.strength_before,
                        a.strength_after,
                        a.at,
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
        where, params = scope_clause(scopes, "a")
        with self._read(scopes) as conn:
            rows = conn.execute(
                "SELECT seq, memory_id, access_type, query_context, strength_before, "
                f"strength_after, at FROM access_log a WHERE memory_id = %s AND {where} "
                "ORDER BY seq DESC LIMIT %s",
                [memory_id, *params, limit],
            ).fetchall()
        return [AccessEntry(*row) for row in reversed(rows)]

    def access_counts(
        self, scopes: ScopeFilter, since: datetime
    ) -> builtins.list[tuple[str, str, int]]:
        """(UTC day, access type, count) of the visible memories' accesses since ``since``."""
        where, params = scope_clause(scopes, "a")
        with self._read(scopes) as conn:
            rows = conn.execute(
                "SELECT to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, access_type, "
                f"COUNT(*) FROM access_log a WHERE at >= %s AND {where} "
                "GROUP BY day, access_type ORDER BY day",
                [since, *params],
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
        scope = sector.scope
        with self._tx(write_context([(sector.org_id, scope)])) as conn:
            conn.execute(
                "INSERT INTO sectors (id, org_id, scope_kind, scope_key, owner_id, user_id, "
                "name, parent_id, decay_multiplier, topics, centroid, max_size, created_at, "
                "updated_at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s) "
                "ON CONFLICT (id) DO UPDATE SET name = excluded.name, "
                "parent_id = excluded.parent_id, decay_multiplier = excluded.decay_multiplier, "
                "topics = excluded.topics, centroid = excluded.centroid, "
                "max_size = excluded.max_size, updated_at = excluded.updated_at",
                (
                    sector.id,
                    sector.org_id,
                    scope.kind.value,
                    scope.key,
                    scope.owner_id,
                    scope.user_id,
                    sector.name,
                    sector.parent_id,
                    sector.decay_multiplier,
                    list(sector.topics),
                    centroid,
                    sector.max_size,
                    sector.created_at,
                    sector.updated_at,
                ),
            )

    def sectors(self, scopes: ScopeFilter) -> builtins.list[Sector]:
        """Every sector of the visible scopes, with its size."""
        where, params = scope_clause(scopes, "x")
        with self._read(scopes) as conn:
            rows = conn.execute(
                "SELECT x.id, x.org_id, x.scope_kind, x.owner_id, x.user_id, x.name, "
                "x.parent_id, x.decay_multiplier, x.topics, x.centroid, x.max_size, "
                "x.created_at, x.updated_at, (SELECT COUNT(*) FROM memories m "
                "WHERE m.sector_id = x.id AND m.status = 'active') "
                f"FROM sectors x WHERE {where} ORDER BY x.created_at, x.id",
                params,
            ).fetchall()
        return [finish_sector(r, r[8], r[11], r[12]) for r in rows]

    # -- policies ----------------------------------------------------------------------

    def put_policy(self, policy: Policy) -> None:
        """Create or replace the policy for (org, target, memory type)."""
        with self._org_write(policy.org_id) as conn:
            conn.execute(
                "INSERT INTO policies (org_id, target, memory_type, retention_days, capacity, "
                "review, updated_at) VALUES (%s, %s, %s, %s, %s, %s, %s) "
                "ON CONFLICT (org_id, target, memory_type) DO UPDATE SET "
                "retention_days = excluded.retention_days, capacity = excluded.capacity, "
                "review = excluded.review, updated_at = excluded.updated_at",
                (
                    policy.org_id,
                    policy.target,
                    policy.memory_type,
                    policy.retention_days,
                    policy.capacity,
                    policy.review,
                    policy.updated_at,
                ),
            )

    def delete_policy(self, org_id: str, target: str, memory_type: str) -> bool:
        """Remove one policy."""
        with self._org_write(org_id) as conn:
            cur = conn.execute(
                "DELETE FROM policies WHERE org_id = %s AND target = %s AND memory_type = %s",
                (org_id, target, memory_type),
            )
            return bool(cur.rowcount > 0)

    def policies(self, org_id: str) -> builtins.list[Policy]:
        """Every policy of the organization."""
        with self._org_write(org_id) as conn:
            rows = conn.execute(
                "SELECT org_id, target, memory_type, retention_days, capacity, review, "
                "updated_at FROM policies WHERE org_id = %s ORDER BY target, memory_type",
                (org_id,),
            ).fetchall()
        return [Policy(*row) for row in rows]
