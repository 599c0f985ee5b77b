"""``mem.graph``: explore and edit the memory graph (every door calls these).

Reads see exactly what the principal may read (every readable scope, as
:meth:`kenning.Memory.get` does) and only *active* memories: a link or a
path never passes through a memory the caller cannot read, nor through an
archived, superseded or pending one. Bad input raises
:class:`~kenning.errors.InvalidInput` (and an unknown or unreadable memory the
same :class:`~kenning.errors.NotFound` as ``get``) before anything is written.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..access import ScopeFilter
from ..audit import audited
from ..errors import ConfigError, Conflict, InvalidInput, NotFound
from ..models import ALL_SCOPES, MemoryRecord, Principal, ScopeKind
from ..validation import clean_k, clean_text
from .links import SYMMETRIC_RELATIONS, canonical
from .model import RELATION_PRIORS, Entity, GraphEdge, GraphPath, MemoryLink, Relation
from .project import RebuildReport

if TYPE_CHECKING:
    from ..core import Core
    from ..models import ScopesArg

__all__ = ["Graph", "Neighbour", "EntityView", "MAX_HOPS", "path_strength"]

#: Paths are searched up to this many hops.
MAX_HOPS = 6
#: Nodes explored from each end of a path search (bounds its cost on hubs).
_PATH_NODES = 4000
_ENTITY_MEMORIES = 50


@dataclass(frozen=True, slots=True)
class Neighbour:
    """A memory next to the one asked about (``edge`` joins them), or one mentioning
    the entity asked about (``edge`` is None)."""

    memory: MemoryRecord
    edge: GraphEdge | None = None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {
            "memory": self.memory.to_dict(),
            "edge": None if self.edge is None else self.edge.to_dict(),
        }


@dataclass(frozen=True, slots=True)
class EntityView:
    """Everything the caller may read about one entity."""

    entity: Entity
    memories: tuple[MemoryRecord, ...]
    related: tuple[tuple[Entity, int], ...] = ()  # co-mentioned entities, with counts
    also: tuple[Entity, ...] = field(default=())  # other nodes the name resolved to

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {
            "entity": self.entity.to_dict(),
            "memories": [m.to_dict() for m in self.memories],
            "related": [{"entity": e.to_dict(), "co_mentions": n} for e, n in self.related],
            "also": [e.to_dict() for e in self.also],
        }


def path_strength(
    edges: Iterable[GraphEdge], priors: Mapping[str, float] = RELATION_PRIORS
) -> float:
    """Product over the hops of weight x relation prior (seed 003; ``priors``: the
    ``graph.priors`` setting, as recall uses them)."""
    out = 1.0
    fallback = priors.get("related", RELATION_PRIORS["related"])
    for e in edges:
        out *= e.weight * priors.get(e.relation, fallback)
    return out


def _relations(value: object) -> frozenset[str] | None:
    if value is None:
        return None
    items = [value] if isinstance(value, str | Relation) else value
    if not isinstance(items, Iterable):
        raise InvalidInput("relations must be a list of relation names", field="relations")
    return frozenset(_relation(x) for x in items)


def _relation(value: object) -> str:
    try:
        return Relation(value).value
    except ValueError:
        known = ", ".join(r.value for r in Relation)
        raise InvalidInput(
            f"unknown relation {value!r}; expected one of {known}", field="relation"
        ) from None


class Graph:
    """The graph façade of one :class:`~kenning.Memory` (``mem.graph``)."""

    def __init__(self, core: Core) -> None:
        #: The engine's core (services take it; the audit reads it).
        self.core = core

    # -- helpers --------------------------------------------------------------------

    def _view(self, principal: Principal | None) -> tuple[Principal, ScopeFilter]:
        who = self.core.who(principal)
        return who, self.core.policy.readable(who)

    @property
    def _on(self) -> bool:
        return self.core.settings.graph_enabled

    def _writable_view(self, who: Principal, scopes: ScopesArg) -> ScopeFilter:
        policy = self.core.policy
        if scopes is None or (isinstance(scopes, str) and scopes == ALL_SCOPES):
            if who.is_admin:
                return ScopeFilter(who.org_id, kinds=frozenset(ScopeKind))
            readable = policy.readable(who)
            return ScopeFilter(
                who.org_id, frozenset(s for s in readable.scopes if policy.can_write(who, s))
            )
        view = policy.resolve(who, scopes)
        for scope in view.scopes:
            policy.check_write(who, scope)
        return view

    # -- reads ----------------------------------------------------------------------

    @audited("graph.neighbours", read=True)
    def neighbours(
        self,
        memory_id: str | None = None,
        *,
        entity: str | None = None,
        relations: Collection[str | Relation] | None = None,
        limit: int = 20,
        principal: Principal | None = None,
    ) -> list[Neighbour]:
        """The memories linked to ``memory_id`` (heaviest link first, with the link), or
        the memories mentioning ``entity`` (newest first). Give exactly one of them."""
        if (memory_id is None) == (entity is None):
            raise InvalidInput("give a memory id or an entity name (exactly one)", field="entity")
        limit = clean_k(limit, self.core.settings.max_k, "limit")
        wanted = _relations(relations)
        who, view = self._view(principal)
        store = self.core.store
        if memory_id is not None:
            record = self.core.visible(memory_id, who)
            if not self._on:
                return []
            edges = store.graph_edges([record.id], view, wanted, limit)
            found = {r.id: r for r in store.get([e.other(record.id) for e in edges], view)}
            return [
                Neighbour(found[e.other(record.id)], e)
                for e in edges
                if e.other(record.id) in found
            ]
        if wanted is not None:
            raise InvalidInput(
                "relations apply to a memory's neighbours, not an entity's", field="relations"
            )
        name = clean_text(entity, "entity", 256)
        if not self._on:
            return []
        ents = store.find_entities(who.org_id, [name], view)
        if not ents:
            raise NotFound(f"entity {name!r} not found")
        by_entity = store.entity_memories([e.id for e in ents], view, limit)
        ids = list(dict.fromkeys(i for e in ents for i in by_entity.get(e.id, [])))
        records = store.get(ids, view)
        records.sort(key=lambda r: (r.created_at, r.id), reverse=True)
        return [Neighbour(r) for r in records[:limit]]

    @audited("graph.entity", read=True, target=lambda result, args: args[0] if args else None)
    def entity(self, name: str, *, principal: Principal | None = None) -> EntityView:
        """An entity (or topic) by name or alias: its memories (newest first, up to 50)
        and the entities mentioned alongside it, most co-mentions first."""
        name = clean_text(name, "entity", 256)
        who, view = self._view(principal)
        store = self.core.store
        ents = store.find_entities(who.org_id, [name], view) if self._on else []
        if not ents:
            raise NotFound(f"entity {name!r} not found")
        main = ents[0]
        ids = store.entity_memories([main.id], view, _ENTITY_MEMORIES).get(main.id, [])
        records = tuple(store.get(ids, view))
        counts: dict[str, int] = {}
        known: dict[str, Entity] = {}
        for entities in store.entities_of(ids, view).values():
            for e in entities:
                if e.id != main.id:
                    counts[e.id] = counts.get(e.id, 0) + 1
                    known[e.id] = e
        related = sorted(
            ((known[i], n) for i, n in counts.items()),
            key=lambda x: (-x[1], -x[0].mentions, x[0].id),
        )[:20]
        return EntityView(main, records, tuple(related), tuple(ents[1:]))

    def entities(self, memory_id: str, *, principal: Principal | None = None) -> list[Entity]:
        """The entities and topics one memory mentions (a memory the caller may read)."""
        who, view = self._view(principal)
        record = self.core.visible(memory_id, who)
        return list(self.core.store.entities_of([record.id], view).get(record.id, []))

    @audited(
        "graph.paths",
        read=True,
        target=lambda result, args: "->".join(args[:2]) if len(args) >= 2 else None,
    )
    def paths(
        self,
        a: str,
        b: str,
        max_hops: int = 3,
        limit: int = 5,
        *,
        principal: Principal | None = None,
    ) -> list[GraphPath]:
        """The strongest simple paths from memory ``a`` to memory ``b`` (seed 003's
        multi-hop query), strength = product of weight x relation prior, best first.

        Every hop joins two readable, active memories; ``max_hops`` is 1 to 6.
        """
        if (
            isinstance(max_hops, bool)
            or not isinstance(max_hops, int)
            or not (1 <= max_hops <= MAX_HOPS)
        ):
            raise InvalidInput(
                f"max_hops must be an integer from 1 to {MAX_HOPS}, got {max_hops!r}",
                field="max_hops",
            )
        limit = clean_k(limit, self.core.settings.max_k, "limit")
        who, view = self._view(principal)
        start = self.core.visible(a, who).id
        goal = self.core.visible(b, who).id
        if start == goal:
            raise InvalidInput("a path needs two different memories", field="b")
        if not self._on:
            return []
        return _best_paths(
            self.core.store.graph_edges,
            view,
            start,
            goal,
            max_hops,
            limit,
            self.core.settings.graph.priors,
        )

    # -- writes ---------------------------------------------------------------------

    @audited(
        "graph.link", target=lambda result, args: "->".join(args[:2]) if len(args) >= 2 else None
    )
    def link(
        self,
        a: str,
        b: str,
        relation: str | Relation,
        weight: float = 1.0,
        *,
        principal: Principal | None = None,
    ) -> GraphEdge:
        """Link two memories of one scope (both writable by the caller); an existing link
        of that relation gets the new weight. API links survive updates of either end."""
        rel = _relation(relation)
        if (
            isinstance(weight, bool)
            or not isinstance(weight, int | float)
            or not (math.isfinite(weight) and 0 < weight <= 1)
        ):
            raise InvalidInput(f"weight must be a number in (0, 1], got {weight!r}", field="weight")
        who = self.core.who(principal)
        first = self.core.writable(a, who)
        second = self.core.writable(b, who)
        if first.id == second.id:
            raise InvalidInput("a memory cannot link to itself", field="b")
        if first.scope != second.scope:
            raise InvalidInput(
                f"links join memories of one scope; {first.id} is in {first.scope.key!r}, "
                f"{second.id} in {second.scope.key!r}",
                field="b",
            )
        if not self._on:
            raise ConfigError("the memory graph is disabled (graph_enabled = false)")
        link = canonical(MemoryLink(first.id, second.id, Relation(rel), float(weight)))
        if not self.core.store.graph_link(who.org_id, link, self.core.clock.now()):
            raise Conflict(f"memory {first.id!r} or {second.id!r} changed meanwhile; try again")
        return GraphEdge(link.src, link.dst, rel, float(weight))

    @audited("graph.alias", target=lambda result, args: args[0] if args else None)
    def alias(self, name: str, alias: str, *, principal: Principal | None = None) -> Entity:
        """Make ``alias`` resolve to the entity ``name`` (one the caller can see)."""
        from .resolve import normalise_name

        name = clean_text(name, "entity", 256)
        norm = normalise_name(clean_text(alias, "alias", 256))
        if not norm:
            raise InvalidInput(f"alias {alias!r} has no letters or digits", field="alias")
        who, view = self._view(principal)
        ents = self.core.store.find_entities(who.org_id, [name], view) if self._on else []
        if not ents:
            raise NotFound(f"entity {name!r} not found")
        self.core.store.graph_alias(who.org_id, ents[0].id, norm)
        return ents[0]

    @audited("graph.rebuild", target=lambda result, args: None)
    def rebuild(
        self,
        scopes: ScopesArg = None,
        *,
        clear_first: bool = False,
        progress: Callable[[int], None] | None = None,
        principal: Principal | None = None,
    ) -> RebuildReport:
        """Re-project stored memories: mentions, topics, ``semantic_neighbor`` (from the
        stored vectors) and ``temporal_next``. ``co_occurs`` and typed relations cannot
        be rebuilt (their write batches and decisions are not recorded); ``clear_first``
        deletes them with the rest. Default scopes: every scope the caller may write."""
        if not isinstance(clear_first, bool):
            raise InvalidInput("clear_first must be true or false", field="clear_first")
        who = self.core.who(principal)
        view = self._writable_view(who, scopes)
        if not self._on:
            raise ConfigError("the memory graph is disabled (graph_enabled = false)")
        now = self.core.clock.now()
        return self.core.projector.rebuild(
            view, clear_first=clear_first, now=now, progress=progress
        )


def _best_paths(
    fetch: Callable[..., list[GraphEdge]],
    view: ScopeFilter,
    start: str,
    goal: str,
    hops: int,
    limit: int,
    priors: Mapping[str, float],
) -> list[GraphPath]:
    """Bidirectional expansion (ceil(h/2) layers from ``start``, floor(h/2) from ``goal``:
    every edge of every path of <= h hops is fetched), then a best-first enumeration of
    simple paths pruned by distance-to-goal and by the current k-th best strength."""
    best: dict[frozenset[str], GraphEdge] = {}

    def expand(root: str, layers: int) -> None:
        seen, frontier = {root}, [root]
        for _ in range(layers):
            if not frontier or len(seen) > _PATH_NODES:
                break
            nxt: list[str] = []
            for chunk in range(0, len(frontier), 200):
                for e in fetch(frontier[chunk : chunk + 200], view):
                    pair = frozenset((e.src, e.dst))
                    score = path_strength([e], priors)
                    if pair not in best or score > path_strength([best[pair]], priors):
                        best[pair] = e
                    for node in (e.src, e.dst):
                        if node not in seen:
                            seen.add(node)
                            nxt.append(node)
            frontier = nxt

    expand(start, (hops + 1) // 2)
    expand(goal, hops // 2)
    adj: dict[str, list[GraphEdge]] = {}
    for e in best.values():
        adj.setdefault(e.src, []).append(e)
        adj.setdefault(e.dst, []).append(e)
    # hop distance of every node to the goal, over the fetched edges
    dist = {goal: 0}
    layer = [goal]
    while layer:
        nxt = []
        for node in layer:
            for e in adj.get(node, []):
                other = e.other(node)
                if other not in dist:
                    dist[other] = dist[node] + 1
                    nxt.append(other)
        layer = nxt
    if start not in dist or dist[start] > hops:
        return []
    found: list[tuple[float, tuple[str, ...], tuple[GraphEdge, ...]]] = []
    floor = 0.0

    def walk(node: str, nodes: tuple[str, ...], edges: tuple[GraphEdge, ...], s: float) -> None:
        nonlocal floor
        if node == goal:
            heapq.heappush(found, (s, nodes, edges))
            if len(found) > limit:
                heapq.heappop(found)
            if len(found) == limit:
                floor = found[0][0]
            return
        left = hops - len(edges)
        options = []
        for e in adj.get(node, []):
            other = e.other(node)
            if other in nodes or dist.get(other, hops + 1) > left - 1:
                continue
            options.append((s * path_strength([e], priors), other, e))
        for score, other, e in sorted(options, key=lambda o: -o[0]):
            if len(found) == limit and score <= floor:
                break
            walk(other, (*nodes, other), (*edges, e), score)

    walk(start, (start,), (), 1.0)
    out = []
    for s, nodes, edges in sorted(found, key=lambda f: (-f[0], f[1])):
        forward = tuple(
            e.relation in SYMMETRIC_RELATIONS or e.src == nodes[i] for i, e in enumerate(edges)
        )
        out.append(GraphPath(nodes, tuple(e.relation for e in edges), s, forward))
    return out
