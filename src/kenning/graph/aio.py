"""``AsyncGraph``: the memory graph (``Memory.graph``) for asyncio code.

The same methods, parameters and results as :class:`~kenning.graph.api.Graph`;
each runs the sync method in a worker thread (see :mod:`kenning._aio`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Collection

from .._aio import mirrors
from ..engine import ScopesArg
from ..models import Principal
from .api import EntityView, Graph, Neighbour
from .model import Entity, GraphEdge, GraphPath, Relation
from .project import RebuildReport

__all__ = ["AsyncGraph"]


class AsyncGraph:
    """Asynchronous ``mem.graph``: the same methods as :class:`~kenning.graph.api.Graph`."""

    def __init__(self, graph: Graph) -> None:
        """Wrap ``graph`` (kept as :attr:`sync`)."""
        self.sync = graph

    @mirrors(Graph.neighbours)
    async def neighbours(
        self,
        memory_id: str | None = None,
        *,
        entity: str | None = None,
        relations: Collection[str | Relation] | None = None,
        limit: int = 20,
        principal: Principal | None = None,
    ) -> list[Neighbour]:
        return await asyncio.to_thread(
            self.sync.neighbours,
            memory_id,
            entity=entity,
            relations=relations,
            limit=limit,
            principal=principal,
        )

    @mirrors(Graph.entity)
    async def entity(self, name: str, *, principal: Principal | None = None) -> EntityView:
        return await asyncio.to_thread(self.sync.entity, name, principal=principal)

    @mirrors(Graph.entities)
    async def entities(self, memory_id: str, *, principal: Principal | None = None) -> list[Entity]:
        return await asyncio.to_thread(self.sync.entities, memory_id, principal=principal)

    @mirrors(Graph.paths)
    async def paths(
        self,
        a: str,
        b: str,
        max_hops: int = 3,
        limit: int = 5,
        *,
        principal: Principal | None = None,
    ) -> list[GraphPath]:
        return await asyncio.to_thread(self.sync.paths, a, b, max_hops, limit, principal=principal)

    @mirrors(Graph.link)
    async def link(
        self,
        a: str,
        b: str,
        relation: str | Relation,
        weight: float = 1.0,
        *,
        principal: Principal | None = None,
    ) -> GraphEdge:
        return await asyncio.to_thread(self.sync.link, a, b, relation, weight, principal=principal)

    @mirrors(Graph.alias)
    async def alias(self, name: str, alias: str, *, principal: Principal | None = None) -> Entity:
        return await asyncio.to_thread(self.sync.alias, name, alias, principal=principal)

    @mirrors(Graph.rebuild)
    async def rebuild(
        self,
        scopes: ScopesArg = None,
        *,
        clear_first: bool = False,
        progress: Callable[[int], None] | None = None,
        principal: Principal | None = None,
    ) -> RebuildReport:
        return await asyncio.to_thread(
            self.sync.rebuild,
            scopes,
            clear_first=clear_first,
            progress=progress,
            principal=principal,
        )
