"""The memory graph on PostgreSQL: writes inside the store's transactions, scoped reads.

Mixed into :class:`~kenning.stores.postgres.store.PostgresStore`; tables and
policies in :func:`kenning.stores.postgres.schema.m003_graph`. As everywhere
in this store, each read carries the scope filter in its SQL *and* runs under
the principal's row-level-security context: a link comes back only when both
endpoints are visible (and, by the query, active); an entity only through a
visible mention, with label, type and count taken from those mentions alone.
"""

from __future__ import annotations

import builtins
from collections.abc import Collection, Sequence
from datetime import UTC, datetime
from typing import Any

import numpy as np
import psycopg
from pgvector import Vector

from ...access import ScopeFilter
from ...graph.links import canonical, entity_id, origin_of
from ...graph.model import (
    Entity,
    GraphEdge,
    MemoryLink,
    NodeKind,
    Projection,
    unique_by_norm,
)
from ...graph.resolve import normalise_name
from ...models import MemoryFilter, Scope, Status
from .parts import StoreParts
from .replicas import replica_read
from .sql import scope_clause

__all__ = ["PostgresGraph"]

_MemoryRow = tuple[str, str, str, str, datetime]  # org, scope kind, scope key, status, created


class PostgresGraph(StoreParts):
    """Graph methods of the PostgreSQL store (see :mod:`kenning.stores.base`)."""

    exact_search_max: int  # provided by the store

    def _visible(self, conn: psycopg.Connection, scopes: ScopeFilter) -> tuple[int, float]:
        raise NotImplementedError  # provided by the store

    def vector_search(
        self, vector: np.ndarray, scopes: ScopeFilter, filters: MemoryFilter, limit: int
    ) -> builtins.list[tuple[str, float]]:
        raise NotImplementedError  # provided by the store

    # -- writes (inside the caller's transaction) ------------------------------------

    @staticmethod
    def _memory_rows(conn: psycopg.Connection, ids: Collection[str]) -> dict[str, _MemoryRow]:
        rows = conn.execute(
            "SELECT id, org_id, scope_kind, scope_key, status, created_at FROM memories "
            "WHERE id = ANY(%s)",
            (sorted(ids),),
        ).fetchall()
        return {r[0]: (r[1], r[2], r[3], r[4], r[5]) for r in rows}

    def _graph_write(
        self,
        conn: psycopg.Connection,
        projection: Projection,
        at: datetime,
        *,
        api: bool = False,
        org_id: str | None = None,
    ) -> int:
        """Write mentions (creating entities) and links; returns the links written.

        Links whose endpoints are missing, invisible to the transaction, equal
        or in different scopes are skipped: edges only join memories of one scope.
        """
        if projection.empty:
            return 0
        ids = set(projection.mentions)
        for link in projection.links:
            ids.update((link.src, link.dst))
        rows = self._memory_rows(conn, ids)
        if org_id is not None:
            rows = {k: v for k, v in rows.items() if v[0] == org_id}
        ent: list[list[Any]] = [[] for _ in range(7)]
        men: list[list[Any]] = [[] for _ in range(9)]
        for mid, found in projection.mentions.items():
            row = rows.get(mid)
            if row is None:
                continue
            org, kind_, key, status, created = row
            for m in unique_by_norm(found):
                kind = NodeKind(m.kind).value
                eid = entity_id(org, kind, m.norm)
                for col, v in zip(
                    ent, (eid, org, kind, m.norm, m.label, m.entity_type, created), strict=True
                ):
                    col.append(v)
                for col, v in zip(
                    men,
                    (mid, eid, org, kind_, key, status, created, m.label, m.entity_type),
                    strict=True,
                ):
                    col.append(v)
        if ent[0]:
            conn.execute(
                "INSERT INTO entities (id, org_id, kind, norm, label, entity_type, created_at) "
                "SELECT * FROM unnest(%s::text[], %s::text[], %s::text[], %s::text[], %s::text[], "
                "%s::text[], %s::timestamptz[]) ORDER BY 1 ON CONFLICT DO NOTHING",
                ent,
            )
            conn.execute(
                "INSERT INTO mentions (memory_id, entity_id, org_id, scope_kind, scope_key, "
                "status, created_at, label, entity_type) SELECT * FROM unnest(%s::text[], "
                "%s::text[], %s::text[], %s::text[], %s::text[], %s::text[], %s::timestamptz[], "
                "%s::text[], %s::text[]) ON CONFLICT DO NOTHING",
                men,
            )
        lnk: list[list[Any]] = [[] for _ in range(9)]
        seen: set[tuple[str, str, str]] = set()
        for link in projection.links:
            c = canonical(link)
            a, b = rows.get(c.src), rows.get(c.dst)
            if a is None or b is None or c.src == c.dst or a[:3] != b[:3]:
                continue
            if (c.src, c.dst, c.relation.value) in seen:
                continue
            seen.add((c.src, c.dst, c.relation.value))
            origin = "api" if api else origin_of(c.relation.value)
            values: tuple[Any, ...] = (
                c.src,
                c.dst,
                c.relation.value,
                float(c.weight),
                *a[:3],
                origin,
                at,
            )
            for col, v in zip(lnk, values, strict=True):
                col.append(v)
        if not lnk[0]:
            return 0
        conflict = "DO UPDATE SET weight = excluded.weight, origin = 'api'" if api else "DO NOTHING"
        cur = conn.execute(
            "INSERT INTO links (src, dst, relation, weight, org_id, scope_kind, scope_key, "
            "origin, created_at) SELECT * FROM unnest(%s::text[], %s::text[], %s::text[], "
            "%s::float8[], %s::text[], %s::text[], %s::text[], %s::text[], %s::timestamptz[]) "
            f"ON CONFLICT (src, dst, relation) {conflict}",
            lnk,
        )
        return max(cur.rowcount, 0)

    @staticmethod
    def _drop_orphans(conn: psycopg.Connection, entity_ids: Collection[str]) -> None:
        """Delete the entities among ``entity_ids`` left without a mention (aliases cascade)."""
        if entity_ids:
            conn.execute(
                "DELETE FROM entities e WHERE e.id = ANY(%s) AND NOT EXISTS "
                "(SELECT 1 FROM mentions x WHERE x.entity_id = e.id)",
                (sorted(entity_ids),),
            )

    def _graph_forget(
        self, conn: psycopg.Connection, memory_id: str, *, content_only: bool
    ) -> None:
        """Remove a memory's mentions and links (only content-derived links if asked)."""
        gone = conn.execute(
            "DELETE FROM mentions WHERE memory_id = %s RETURNING entity_id", (memory_id,)
        )
        touched = [r[0] for r in gone]
        only = " AND origin = 'content'" if content_only else ""
        conn.execute(f"DELETE FROM links WHERE src = %s{only}", (memory_id,))
        conn.execute(f"DELETE FROM links WHERE dst = %s{only}", (memory_id,))
        self._drop_orphans(conn, touched)

    @staticmethod
    def _graph_status(conn: psycopg.Connection, memory_id: str, status: str) -> None:
        conn.execute(
            "UPDATE mentions SET status = %s WHERE memory_id = %s AND status <> %s",
            (status, memory_id, status),
        )

    # -- writes (own transaction) ------------------------------------------------------

    def graph_write(self, org_id: str, projection: Projection, at: datetime) -> int:
        """Add mentions and links of existing memories (rebuild); returns links written."""
        with self._org_write(org_id) as conn:
            return self._graph_write(conn, projection, at, org_id=org_id)

    def graph_link(self, org_id: str, link: MemoryLink, at: datetime) -> bool:
        """Add or re-weight one API link; False when its endpoints do not share a scope."""
        with self._org_write(org_id) as conn:
            written = self._graph_write(conn, Projection(links=[link]), at, api=True, org_id=org_id)
            return written > 0

    def graph_alias(self, org_id: str, entity: str, alias_norm: str) -> None:
        """Make ``alias_norm`` resolve to ``entity`` in ``org_id``."""
        with self._org_write(org_id) as conn:
            conn.execute(
                "INSERT INTO entity_aliases (org_id, alias_norm, entity_id) "
                "SELECT org_id, %s, id FROM entities WHERE id = %s AND org_id = %s "
                "ON CONFLICT DO NOTHING",
                (alias_norm, entity, org_id),
            )

    def graph_clear(self, scopes: ScopeFilter) -> tuple[int, int]:
        """Delete every mention and link inside ``scopes`` (and orphaned entities)."""
        if scopes.is_empty:
            return 0, 0
        lwhere, lparams = scope_clause(scopes, alias="l")
        xwhere, xparams = scope_clause(scopes, alias="x")
        with self._org_write(scopes.org_id) as conn:
            links = conn.execute(f"DELETE FROM links l WHERE {lwhere}", lparams).rowcount
            touched = [
                r[0]
                for r in conn.execute(
                    f"DELETE FROM mentions x WHERE {xwhere} RETURNING entity_id", xparams
                )
            ]
            self._drop_orphans(conn, set(touched))
        return len(touched), max(links, 0)

    # -- reads -----------------------------------------------------------------------

    @replica_read
    def graph_edges(
        self,
        ids: Sequence[str],
        scopes: ScopeFilter,
        relations: Collection[str] | None = None,
        limit: int | None = None,
        within: bool = False,
        far: Collection[Status] | None = None,
        near: Collection[Status] | None = None,
    ) -> builtins.list[GraphEdge]:
        """Links touching ``ids`` whose two endpoints are visible and active (the one
        not among ``ids``: of ``far``'s statuses; one among them: active or of ``near``'s)."""
        if not ids or scopes.is_empty or (relations is not None and not relations):
            return []
        lwhere, lparams = scope_clause(scopes, alias="l")
        awhere, aparams = scope_clause(scopes, alias="a")
        rel, rparams = "", []
        if relations is not None:
            rel, rparams = " AND l.relation = ANY(%s)", [sorted(relations)]
        wanted = list(dict.fromkeys(ids))
        # Two index lookups instead of a join: under row-level security the planner
        # cannot see how few memories pass the policy and hash-joins whole tables.
        with self._read(scopes) as conn:
            rows = conn.execute(
                "SELECT l.src, l.dst, l.relation, l.weight FROM links l "
                f"WHERE (l.src = ANY(%s) {'AND' if within else 'OR'} l.dst = ANY(%s)) "
                f"AND {lwhere}{rel}",
                [wanted, wanted, *lparams, *rparams],
            ).fetchall()
            ends = sorted({x for r in rows for x in (r[0], r[1])})
            status = dict(
                conn.execute(
                    f"SELECT a.id, a.status FROM memories a WHERE a.id = ANY(%s) AND {awhere}",
                    [ends, *aparams],
                ).fetchall()
            )
        others = {s.value for s in far} if far and not within else {Status.ACTIVE.value}
        mine = {Status.ACTIVE.value, *(s.value for s in near or ())}
        asked = set(wanted)

        def kept(mid: str) -> bool:
            return status.get(mid) in (mine if mid in asked else others)

        rows = [r for r in rows if kept(r[0]) and kept(r[1])]
        rows.sort(key=lambda r: (-r[3], r[0], r[1], r[2]))
        if limit is not None:
            rows = rows[:limit]
        return [GraphEdge(r[0], r[1], r[2], float(r[3])) for r in rows]

    @replica_read
    def graph_mentions(
        self, ids: Sequence[str], scopes: ScopeFilter
    ) -> dict[str, builtins.list[str]]:
        """Memory id -> entity ids, for the visible memories among ``ids``."""
        out: dict[str, builtins.list[str]] = {}
        if not ids or scopes.is_empty:
            return out
        where, params = scope_clause(scopes, alias="x")
        with self._read(scopes) as conn:
            for mid, eid in conn.execute(
                f"SELECT x.memory_id, x.entity_id FROM mentions x WHERE x.memory_id = ANY(%s) "
                f"AND {where} ORDER BY 1, 2",
                [list(ids), *params],
            ):
                out.setdefault(mid, []).append(eid)
        return out

    @replica_read
    def entity_memories(
        self, entity_ids: Sequence[str], scopes: ScopeFilter, limit_per_entity: int
    ) -> dict[str, builtins.list[str]]:
        """Entity id -> the visible active memories mentioning it, newest first."""
        out: dict[str, builtins.list[str]] = {}
        if not entity_ids or scopes.is_empty or limit_per_entity <= 0:
            return out
        where, params = scope_clause(scopes, alias="x")
        with self._read(scopes) as conn:
            for eid, mid in conn.execute(
                "SELECT w.e, y.memory_id FROM unnest(%s::text[]) WITH ORDINALITY AS w(e, n) "
                "CROSS JOIN LATERAL (SELECT x.memory_id, x.created_at FROM mentions x "
                f"WHERE x.entity_id = w.e AND x.status = 'active' AND {where} "
                "ORDER BY x.created_at DESC, x.memory_id DESC LIMIT %s) y "
                "ORDER BY w.n, y.created_at DESC, y.memory_id DESC",
                [list(dict.fromkeys(entity_ids)), *params, limit_per_entity],
            ):
                out.setdefault(eid, []).append(mid)
        return out

    @staticmethod
    def _entities(
        conn: psycopg.Connection,
        where: str,
        params: Sequence[Any],
        scopes: ScopeFilter,
        active: bool = True,
    ) -> builtins.list[Entity]:
        xwhere, xparams = scope_clause(scopes, alias="x")
        count = "count(*) FILTER (WHERE x.status = 'active')"
        having = " HAVING count(*) FILTER (WHERE x.status = 'active') > 0" if active else ""
        rows = conn.execute(
            f"SELECT e.id, min(x.label), e.norm, e.kind, max(x.entity_type), {count} "
            f"FROM entities e JOIN mentions x ON x.entity_id = e.id WHERE {where} AND {xwhere} "
            f"GROUP BY e.id{having} ORDER BY 6 DESC, e.id",
            [*params, *xparams],
        ).fetchall()
        return [Entity(r[0], r[1], r[2], NodeKind(r[3]), r[4], int(r[5])) for r in rows]

    @replica_read
    def find_entities(
        self, org_id: str, names: Sequence[str], scopes: ScopeFilter
    ) -> builtins.list[Entity]:
        """Entities named (or aliased) ``names`` with at least one visible active mention."""
        norms = sorted({n for n in (normalise_name(x) for x in names) if n})
        if not norms or scopes.is_empty or scopes.org_id != org_id:
            return []
        where = (
            "e.org_id = %s AND (e.norm = ANY(%s) OR e.id IN (SELECT a.entity_id FROM "
            "entity_aliases a WHERE a.org_id = %s AND a.alias_norm = ANY(%s)))"
        )
        with self._read(scopes) as conn:
            return self._entities(conn, where, [org_id, norms, org_id, norms], scopes)

    @replica_read
    def entities_of(
        self, memory_ids: Sequence[str], scopes: ScopeFilter
    ) -> dict[str, builtins.list[Entity]]:
        """Memory id -> its entities (visible memories only); counts over visible active ones."""
        mentioned = self.graph_mentions(memory_ids, scopes)
        wanted = sorted({e for es in mentioned.values() for e in es})
        if not wanted:
            return {}
        with self._read(scopes) as conn:
            found = self._entities(conn, "e.id = ANY(%s)", [wanted], scopes, active=False)
        known = {e.id: e for e in found}
        return {m: [known[e] for e in es if e in known] for m, es in mentioned.items()}

    @replica_read
    def graph_counts(self, scopes: ScopeFilter) -> tuple[int, int]:
        """(entities with a visible active mention, links between visible active memories)."""
        if scopes.is_empty:
            return 0, 0
        xwhere, xparams = scope_clause(scopes, alias="x")
        lwhere, lparams = scope_clause(scopes, alias="l")
        with self._read(scopes) as conn:
            row = conn.execute(
                "SELECT (SELECT count(DISTINCT x.entity_id) FROM mentions x "
                f"WHERE x.status = 'active' AND {xwhere}), "
                "(SELECT count(*) FROM links l JOIN memories a ON a.id = l.src "
                "JOIN memories b ON b.id = l.dst WHERE a.status = 'active' "
                f"AND b.status = 'active' AND {lwhere})",
                [*xparams, *lparams],
            ).fetchone()
        return (int(row[0]), int(row[1])) if row else (0, 0)

    def episode_tails(
        self, org_id: str, groups: Sequence[tuple[Scope, str, str, datetime]]
    ) -> builtins.list[str | None]:
        """For each (scope, field, value, at): the latest non-superseded memory of that
        episode (``field`` ``episode_id``) or episode-less session (``session_id``)
        whose event time is at or before ``at``."""
        out: list[str | None] = []
        if not groups:
            return out
        view = ScopeFilter(org_id, frozenset(g[0] for g in groups))
        with self._read(view) as conn:
            for scope, column, value, at in groups:
                extra = " AND m.episode_id IS NULL" if column == "session_id" else ""
                col = "episode_id" if column == "episode_id" else "session_id"
                row = conn.execute(
                    f"SELECT m.id FROM memories m WHERE m.{col} = %s{extra} AND m.org_id = %s "
                    "AND m.scope_key = %s AND m.status <> 'superseded' "
                    "AND COALESCE(m.event_at, m.created_at) <= %s "
                    "ORDER BY COALESCE(m.event_at, m.created_at) DESC, m.created_at DESC, "
                    "m.id DESC LIMIT 1",
                    (value, org_id, scope.key, at.astimezone(UTC)),
                ).fetchone()
                out.append(None if row is None else row[0])
        return out

    def scope_neighbours(
        self,
        org_id: str,
        items: Sequence[tuple[Scope, np.ndarray]],
        limit: int,
        statuses: Collection[Status] | None = None,
    ) -> builtins.list[builtins.list[tuple[str, float]]]:
        """For each (scope, vector): the cosine top ``limit`` of the memories of that
        scope with one of ``statuses`` (default: active). Scopes small enough for an
        exact scan, and any statuses asked for, are searched for all their vectors in
        one statement; larger scopes' active memories through :meth:`vector_search`."""
        flt = MemoryFilter(statuses=frozenset(statuses)) if statuses else MemoryFilter()
        wanted = sorted(s.value for s in flt.statuses)
        out: list[list[tuple[str, float]]] = [[] for _ in items]
        by_scope: dict[Scope, list[int]] = {}
        for n, (scope, _) in enumerate(items):
            by_scope.setdefault(scope, []).append(n)
        for scope, positions in by_scope.items():
            view = ScopeFilter(org_id, frozenset({scope}))
            where, params = scope_clause(view)
            with self._read(view) as conn:
                # retired memories are few beside the active ones: one exact pass
                # over them (the scope and status index finds them) is cheaper than
                # a graph search per vector that skips every active row
                if statuses is None and self._visible(conn, view)[0] > self.exact_search_max:
                    big = True
                else:
                    big = False
                    vectors = [Vector(np.asarray(items[n][1], dtype=np.float32)) for n in positions]
                    # one pass over the scope's rows for all the vectors (the policy is
                    # evaluated once per row), ranked per vector by a window
                    for n, mid, sim in conn.execute(
                        "WITH q AS MATERIALIZED (SELECT n, v FROM "
                        "unnest(%s::int[], %s::vector[]) AS u(n, v)) "
                        "SELECT n, id, 1 - d FROM (SELECT q.n, m.id, m.embedding <=> q.v AS d, "
                        "row_number() OVER (PARTITION BY q.n ORDER BY m.embedding <=> q.v, m.id) "
                        f"AS r FROM memories m CROSS JOIN q WHERE {where} "
                        "AND m.status = ANY(%s)) x WHERE r <= %s ORDER BY n, d, id",
                        [positions, vectors, *params, wanted, limit],
                    ):
                        out[n].append((mid, float(sim)))
            if big:
                for n in positions:
                    out[n] = self.vector_search(items[n][1], view, flt, limit)
        return out

    @replica_read
    def memory_vectors(self, ids: Sequence[str], scopes: ScopeFilter) -> dict[str, np.ndarray]:
        """The stored vectors of the visible memories among ``ids``."""
        if not ids or scopes.is_empty:
            return {}
        where, params = scope_clause(scopes)
        with self._read(scopes) as conn:
            rows = conn.execute(
                f"SELECT m.id, m.embedding FROM memories m WHERE m.id = ANY(%s) AND {where}",
                [list(ids), *params],
            ).fetchall()
        out: dict[str, np.ndarray] = {}
        for mid, vec in rows:
            if isinstance(vec, Vector):
                vec = vec.to_numpy()
            out[mid] = np.asarray(vec, dtype=np.float32).copy()
        return out
