"""The memory graph on SQLite: writes inside the store's transactions, scoped reads.

Mixed into :class:`~kenning.stores.sqlite.store.SQLiteStore`. Tables (migration
``003_graph``): ``entities`` (one per org, kind and norm; the id is derived
from them, see :mod:`kenning.graph.links`), ``entity_aliases``, ``mentions``
(memory -> entity, with the memory's scope and status repeated) and ``links``
(memory -> memory, both endpoints in one scope).

Every read applies the scope filter inside the query: a link comes back only
when both endpoint memories are visible and active; an entity only through a
visible, active mention, and its label, type and count come from those
mentions alone.
"""

from __future__ import annotations

import builtins
from collections.abc import Collection, Iterator, Mapping, Sequence
from datetime import datetime
from typing import Any

import numpy as np

from ...access import ScopeFilter
from ...graph.links import canonical, entity_id, origin_of
from ...graph.model import (
    Entity,
    EntityMention,
    GraphEdge,
    MemoryLink,
    NodeKind,
    Projection,
    unique_by_norm,
)
from ...graph.resolve import normalise_name
from ...models import MemoryFilter, Scope, Status
from .driver import sqlite3
from .parts import StoreParts
from .sql import scope_clause

__all__ = ["SQLiteGraph"]

_CHUNK = 500


def _marks(n: int) -> str:
    return ",".join("?" * n)


def _chunks(items: Sequence[Any]) -> Iterator[builtins.list[Any]]:
    for start in range(0, len(items), _CHUNK):
        yield list(items[start : start + _CHUNK])


class SQLiteGraph(StoreParts):
    """Graph methods of the SQLite store (see :mod:`kenning.stores.base`)."""

    def vector_search(
        self, vector: np.ndarray, scopes: ScopeFilter, filters: MemoryFilter, limit: int
    ) -> builtins.list[tuple[str, float]]:
        raise NotImplementedError  # provided by the store

    # -- writes (inside the caller's transaction) ------------------------------------

    @staticmethod
    def _memory_rows(
        conn: sqlite3.Connection, ids: Collection[str]
    ) -> dict[str, tuple[int, str, int, str, float]]:
        """id -> (pk, org, scope_pk, status, created_at) of existing memories."""
        out: dict[str, tuple[int, str, int, str, float]] = {}
        for chunk in _chunks(sorted(ids)):
            for row in conn.execute(
                "SELECT id, pk, org_id, scope_pk, status, created_at FROM memories "
                f"WHERE id IN ({_marks(len(chunk))})",
                chunk,
            ):
                out[row[0]] = (row[1], row[2], row[3], row[4], row[5])
        return out

    def _graph_write(
        self, conn: sqlite3.Connection, projection: Projection, at: float, *, api: bool = False
    ) -> int:
        """Write mentions (creating entities) and links; returns the links written.

        Links whose endpoints are missing, equal, or in different scopes are
        skipped: edges only ever join memories of one scope.
        """
        if projection.empty:
            return 0
        ids = set(projection.mentions)
        for link in projection.links:
            ids.update((link.src, link.dst))
        rows = self._memory_rows(conn, ids)
        entities: list[tuple[Any, ...]] = []
        mentions: list[tuple[Any, ...]] = []
        for mid, found in projection.mentions.items():
            row = rows.get(mid)
            if row is None:
                continue
            pk, org, scope_pk, status, created = row
            for m in unique_by_norm(found):
                kind = NodeKind(m.kind).value
                eid = entity_id(org, kind, m.norm)
                entities.append((eid, org, kind, m.norm, m.label, m.entity_type, created))
                mentions.append((pk, eid, scope_pk, status, created, m.label, m.entity_type))
        conn.executemany(
            "INSERT OR IGNORE INTO entities (id, org_id, kind, norm, label, entity_type, "
            "created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
            entities,
        )
        conn.executemany(
            "INSERT OR IGNORE INTO mentions (memory_pk, entity_id, scope_pk, status, created_at, "
            "label, entity_type) VALUES (?, ?, ?, ?, ?, ?, ?)",
            mentions,
        )
        links: list[tuple[Any, ...]] = []
        for link in projection.links:
            c = canonical(link)
            a, b = rows.get(c.src), rows.get(c.dst)
            if a is None or b is None or a[0] == b[0] or a[1:3] != b[1:3]:
                continue
            origin = "api" if api else origin_of(c.relation.value)
            links.append((a[0], b[0], c.relation.value, float(c.weight), a[1], a[2], origin, at))
        conflict = "DO UPDATE SET weight = excluded.weight, origin = 'api'" if api else "DO NOTHING"
        before = conn.total_changes
        conn.executemany(
            "INSERT INTO links (src_pk, dst_pk, relation, weight, org_id, scope_pk, origin, "
            "created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) "
            f"ON CONFLICT (src_pk, dst_pk, relation) {conflict}",
            links,
        )
        return conn.total_changes - before

    @staticmethod
    def _drop_orphans(conn: sqlite3.Connection, entity_ids: Collection[str]) -> None:
        """Delete the entities (and aliases) among ``entity_ids`` left without a mention."""
        for chunk in _chunks(sorted(entity_ids)):
            orphans = [
                r[0]
                for r in conn.execute(
                    f"SELECT e.id FROM entities e WHERE e.id IN ({_marks(len(chunk))}) "
                    "AND NOT EXISTS (SELECT 1 FROM mentions x WHERE x.entity_id = e.id)",
                    chunk,
                )
            ]
            if orphans:
                marks = _marks(len(orphans))
                conn.execute(f"DELETE FROM entity_aliases WHERE entity_id IN ({marks})", orphans)
                conn.execute(f"DELETE FROM entities WHERE id IN ({marks})", orphans)

    def _graph_forget(self, conn: sqlite3.Connection, pk: int, *, content_only: bool) -> None:
        """Remove a memory's mentions and links (only content-derived links if asked)."""
        touched = [
            r[0] for r in conn.execute("SELECT entity_id FROM mentions WHERE memory_pk = ?", (pk,))
        ]
        conn.execute("DELETE FROM mentions WHERE memory_pk = ?", (pk,))
        only = " AND origin = 'content'" if content_only else ""
        conn.execute(f"DELETE FROM links WHERE src_pk = ?{only}", (pk,))
        conn.execute(f"DELETE FROM links WHERE dst_pk = ?{only}", (pk,))
        self._drop_orphans(conn, touched)

    @staticmethod
    def _graph_status(conn: sqlite3.Connection, pk: int, status: str) -> None:
        conn.execute("UPDATE mentions SET status = ? WHERE memory_pk = ?", (status, pk))

    # -- writes (own transaction) ------------------------------------------------------

    def graph_write(self, org_id: str, projection: Projection, at: datetime) -> int:
        """Add mentions and links of existing memories (rebuild); returns links written."""
        with self.atomic() as conn:
            return self._graph_write(conn, _in_org(conn, org_id, projection), at.timestamp())

    def graph_link(self, org_id: str, link: MemoryLink, at: datetime) -> bool:
        """Add or re-weight one API link; False when its endpoints do not share a scope."""
        with self.atomic() as conn:
            projection = _in_org(conn, org_id, Projection(links=[link]))
            return self._graph_write(conn, projection, at.timestamp(), api=True) > 0

    def graph_alias(self, org_id: str, entity: str, alias_norm: str) -> None:
        """Make ``alias_norm`` resolve to ``entity`` in ``org_id``."""
        with self.atomic() as conn:
            conn.execute(
                "INSERT OR IGNORE INTO entity_aliases (org_id, alias_norm, entity_id) "
                "SELECT org_id, ?, id FROM entities WHERE id = ? AND org_id = ?",
                (alias_norm, entity, org_id),
            )

    def graph_clear(self, scopes: ScopeFilter) -> tuple[int, int]:
        """Delete every mention and link inside ``scopes`` (and orphaned entities)."""
        if scopes.is_empty:
            return 0, 0
        where, params = scope_clause(scopes, alias="l")
        xwhere, xparams = scope_clause(scopes, alias="x")
        with self.atomic() as conn:
            links = conn.execute(f"DELETE FROM links AS l WHERE {where}", params).rowcount
            rows = conn.execute(
                f"SELECT DISTINCT x.entity_id FROM mentions x WHERE {xwhere}", xparams
            )
            touched = [r[0] for r in rows]
            mentions = conn.execute(f"DELETE FROM mentions AS x WHERE {xwhere}", xparams).rowcount
            self._drop_orphans(conn, touched)
        return mentions, links

    # -- reads -----------------------------------------------------------------------

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
        """Links touching ``ids`` whose two endpoints are visible and active (the far
        one: of ``far``'s statuses; one among ``ids``: active or of ``near``'s)."""
        if not ids or scopes.is_empty or (relations is not None and not relations):
            return []
        if within:
            return self._edges_within(ids, scopes, relations, limit, near)
        statuses = sorted(s.value for s in far) if far else [Status.ACTIVE.value]
        # A link joins two memories of one scope (the projection and the link
        # writes enforce it), so the scope test runs once, on the ids given;
        # the far end only has to be active.
        rel, rparams = "", []
        if relations is not None:
            rel = f" AND l.relation IN ({_marks(len(relations))})"
            rparams = sorted(relations)
        found: dict[tuple[str, str, str], GraphEdge] = {}
        with self._read() as conn:
            for chunk in _chunks(list(dict.fromkeys(ids))):
                pks = self._active_pks(conn, chunk, scopes, near or ())
                if not pks:
                    continue
                marks = _marks(len(pks))
                for near_end, far_end in (("src_pk", "dst_pk"), ("dst_pk", "src_pk")):
                    for mine, other, r, w in conn.execute(
                        f"SELECT l.{near_end}, o.id, l.relation, l.weight FROM links l "
                        f"JOIN memories o ON o.pk = l.{far_end} WHERE l.{near_end} IN ({marks}) "
                        f"AND o.status IN ({_marks(len(statuses))}) "
                        f"AND o.scope_pk = l.scope_pk{rel}",
                        [*pks, *statuses, *rparams],
                    ):
                        a, b = (pks[mine], other) if near_end == "src_pk" else (other, pks[mine])
                        found[(a, b, r)] = GraphEdge(a, b, r, float(w))
        edges = sorted(found.values(), key=lambda e: (-e.weight, e.src, e.dst, e.relation))
        return edges if limit is None else edges[:limit]

    def _edges_within(
        self,
        ids: Sequence[str],
        scopes: ScopeFilter,
        relations: Collection[str] | None,
        limit: int | None,
        near: Collection[Status] | None = None,
    ) -> builtins.list[GraphEdge]:
        """Links between two of ``ids``: both ends are checked here (visible, active or
        of ``near``'s statuses), so the links table answers alone, through its
        primary key."""
        wanted = list(dict.fromkeys(ids))
        rel, rparams = "", []
        if relations is not None:
            rel = f" AND relation IN ({_marks(len(relations))})"
            rparams = sorted(relations)
        found: builtins.list[GraphEdge] = []
        with self._read() as conn:
            pks = self._active_pks(conn, wanted, scopes, near or ())
            keys = list(pks)
            for part in _chunks(keys):
                marks = _marks(len(part))
                for src, dst, r, w in conn.execute(
                    # "+dst_pk": probe the primary key by src_pk only and test dst_pk on
                    # the rows found (n probes, not the n x n pairs of both IN lists)
                    f"SELECT src_pk, dst_pk, relation, weight FROM links WHERE src_pk IN ({marks}) "
                    f"AND +dst_pk IN ({_marks(len(keys))}){rel}",
                    [*part, *keys, *rparams],
                ):
                    found.append(GraphEdge(pks[src], pks[dst], r, float(w)))
        found.sort(key=lambda e: (-e.weight, e.src, e.dst, e.relation))
        return found if limit is None else found[:limit]

    def graph_mentions(
        self, ids: Sequence[str], scopes: ScopeFilter
    ) -> dict[str, builtins.list[str]]:
        """Memory id -> entity ids, for the visible memories among ``ids``."""
        out: dict[str, builtins.list[str]] = {}
        if not ids or scopes.is_empty:
            return out
        where, params = scope_clause(scopes)
        with self._read() as conn:
            for chunk in _chunks(list(dict.fromkeys(ids))):
                for mid, eid in conn.execute(
                    "SELECT m.id, x.entity_id FROM memories m JOIN mentions x "
                    f"ON x.memory_pk = m.pk WHERE m.id IN ({_marks(len(chunk))}) AND {where} "
                    "ORDER BY m.id, x.entity_id",
                    [*chunk, *params],
                ):
                    out.setdefault(mid, []).append(eid)
        return out

    def entity_memories(
        self, entity_ids: Sequence[str], scopes: ScopeFilter, limit_per_entity: int
    ) -> dict[str, builtins.list[str]]:
        """Entity id -> the visible active memories mentioning it, newest first."""
        out: dict[str, builtins.list[str]] = {}
        if not entity_ids or scopes.is_empty or limit_per_entity <= 0:
            return out
        where, params = scope_clause(scopes, alias="x")
        with self._read() as conn:
            for eid in dict.fromkeys(entity_ids):
                rows = conn.execute(
                    "SELECT m.id FROM mentions x JOIN memories m ON m.pk = x.memory_pk "
                    f"WHERE x.entity_id = ? AND x.status = 'active' AND {where} "
                    "ORDER BY x.created_at DESC, m.id DESC LIMIT ?",
                    [eid, *params, limit_per_entity],
                ).fetchall()
                if rows:
                    out[eid] = [r[0] for r in rows]
        return out

    def _entities(
        self, conn: sqlite3.Connection, where: str, params: Sequence[Any], scopes: ScopeFilter
    ) -> builtins.list[Entity]:
        xwhere, xparams = scope_clause(scopes, alias="x")
        rows = conn.execute(
            "SELECT e.id, MIN(x.label), e.norm, e.kind, MAX(x.entity_type), COUNT(*) "
            "FROM entities e JOIN mentions x ON x.entity_id = e.id "
            f"WHERE {where} AND x.status = 'active' AND {xwhere} "
            "GROUP BY e.id ORDER BY COUNT(*) DESC, e.id",
            [*params, *xparams],
        ).fetchall()
        return [Entity(r[0], r[1], r[2], NodeKind(r[3]), r[4], int(r[5])) for r in rows]

    def find_entities(
        self, org_id: str, names: Sequence[str], scopes: ScopeFilter
    ) -> builtins.list[Entity]:
        """Entities named (or aliased) ``names`` with at least one visible active mention."""
        norms = sorted({n for n in (normalise_name(x) for x in names) if n})
        if not norms or scopes.is_empty or scopes.org_id != org_id:
            return []
        marks = _marks(len(norms))
        where = (
            f"e.org_id = ? AND (e.norm IN ({marks}) OR e.id IN (SELECT a.entity_id FROM "
            f"entity_aliases a WHERE a.org_id = ? AND a.alias_norm IN ({marks})))"
        )
        with self._read() as conn:
            return self._entities(conn, where, [org_id, *norms, org_id, *norms], scopes)

    def entities_of(
        self, memory_ids: Sequence[str], scopes: ScopeFilter
    ) -> dict[str, builtins.list[Entity]]:
        """Memory id -> its entities (visible memories only); counts over visible mentions."""
        mentioned = self.graph_mentions(memory_ids, scopes)
        wanted = sorted({e for es in mentioned.values() for e in es})
        if not wanted:
            return {}
        known: dict[str, Entity] = {}
        with self._read() as conn:
            for chunk in _chunks(wanted):
                where = f"e.id IN ({_marks(len(chunk))})"
                known.update((e.id, e) for e in self._entities(conn, where, chunk, scopes))
            # entities whose only visible mentions are inactive: shown with a zero count
            rest = [e for e in wanted if e not in known]
            where, params = scope_clause(scopes)
            for chunk in _chunks(rest):
                for r in conn.execute(
                    "SELECT e.id, MIN(x.label), e.norm, e.kind, MAX(x.entity_type) FROM entities e"
                    " JOIN mentions x ON x.entity_id = e.id JOIN memories m ON m.pk = x.memory_pk"
                    f" WHERE e.id IN ({_marks(len(chunk))}) AND {where} GROUP BY e.id",
                    [*chunk, *params],
                ):
                    known[r[0]] = Entity(r[0], r[1], r[2], NodeKind(r[3]), r[4], 0)
        return {m: [known[e] for e in es if e in known] for m, es in mentioned.items()}

    def graph_counts(self, scopes: ScopeFilter) -> tuple[int, int]:
        """(entities with a visible active mention, links between visible active memories)."""
        if scopes.is_empty:
            return 0, 0
        xwhere, xparams = scope_clause(scopes, alias="x")
        lwhere, lparams = scope_clause(scopes, alias="l")
        with self._read() as conn:
            (entities,) = conn.execute(
                "SELECT COUNT(DISTINCT x.entity_id) FROM mentions x "
                f"WHERE x.status = 'active' AND {xwhere}",
                xparams,
            ).fetchone()
            (links,) = conn.execute(
                "SELECT COUNT(*) FROM links l JOIN memories a ON a.pk = l.src_pk "
                "JOIN memories b ON b.pk = l.dst_pk WHERE a.status = 'active' "
                f"AND b.status = 'active' AND {lwhere}",
                lparams,
            ).fetchone()
        return int(entities), int(links)

    def episode_tails(
        self, org_id: str, groups: Sequence[tuple[Scope, str, str, datetime]]
    ) -> builtins.list[str | None]:
        """For each (scope, field, value, at): the latest non-superseded memory of that
        episode (``field`` ``episode_id``) or episode-less session (``session_id``)
        whose event time is at or before ``at``."""
        out: list[str | None] = []
        with self._read() as conn:
            for scope, column, value, at in groups:
                row = conn.execute(
                    tail_sql(column), (value, org_id, scope.key, at.timestamp())
                ).fetchone()
                out.append(None if row is None else row[0])
        return out

    def memory_vectors(self, ids: Sequence[str], scopes: ScopeFilter) -> dict[str, np.ndarray]:
        """The stored vectors of the visible memories among ``ids``."""
        out: dict[str, np.ndarray] = {}
        if not ids or scopes.is_empty:
            return out
        where, params = scope_clause(scopes)
        with self._read() as conn:
            for chunk in _chunks(list(ids)):
                for mid, blob in conn.execute(
                    "SELECT m.id, v.vector FROM memories m JOIN vectors v ON v.pk = m.pk "
                    f"WHERE m.id IN ({_marks(len(chunk))}) AND {where}",
                    [*chunk, *params],
                ):
                    out[mid] = np.frombuffer(blob, dtype=np.float32).copy()
        return out


def _tail_query(column: str, extra: str) -> str:
    return (
        "SELECT m.id FROM memories m CROSS JOIN scopes s ON s.pk = m.scope_pk "
        f"WHERE m.{column} = ?{extra} AND s.org_id = ? AND s.key = ? "
        "AND m.status != 'superseded' AND COALESCE(m.event_at, m.created_at) <= ? "
        "ORDER BY COALESCE(m.event_at, m.created_at) DESC, m.created_at DESC, "
        "m.id DESC LIMIT 1"
    )


_TAIL_SQL = {
    "episode_id": _tail_query("episode_id", ""),
    "session_id": _tail_query("session_id", " AND m.episode_id IS NULL"),
}


def tail_sql(column: str) -> str:
    """The query of :meth:`SQLiteGraph.episode_tails` for an episode (``column``
    ``"episode_id"``) or an episode-less session (any other ``column``).

    CROSS JOIN keeps the memories outermost, so the episode's or session's index
    is searched; with the scope first, SQLite read and sorted every memory of
    the scope (an organization's: all of them) for each lookup."""
    return _TAIL_SQL["episode_id" if column == "episode_id" else "session_id"]


def _in_org(conn: sqlite3.Connection, org_id: str, projection: Projection) -> Projection:
    """The part of ``projection`` whose memories belong to ``org_id``."""
    ids = set(projection.mentions) | {x for lk in projection.links for x in (lk.src, lk.dst)}
    rows = SQLiteGraph._memory_rows(conn, ids)
    mine = {i for i, r in rows.items() if r[1] == org_id}
    mentions: Mapping[str, Sequence[EntityMention]] = {
        k: v for k, v in projection.mentions.items() if k in mine
    }
    links = [lk for lk in projection.links if lk.src in mine and lk.dst in mine]
    return Projection(mentions, links)
