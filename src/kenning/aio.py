"""``AsyncMemory``: the same engine for asyncio code.

Every method has the same name, parameters and behaviour as on
:class:`~kenning.engine.Memory`; the logic is shared, only the I/O runs in a
worker thread so the event loop never blocks. A parity test locks this.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

from .engine import Memory
from .graph.api import Graph

__all__ = ["AsyncMemory", "AsyncGraph"]

T = TypeVar("T")

#: The engine methods AsyncMemory mirrors.
PUBLIC_METHODS = (
    "remember",
    "remember_many",
    "write",
    "upsert",
    "update",
    "forget",
    "archive",
    "restore",
    "feedback",
    "get",
    "recall",
    "list",
    "history",
    "stats",
    "export_jsonl",
    "import_jsonl",
    "flush",
    "reinforce",
    "strength",
    "access_log",
    "ingest",
    "context",
    "consolidate",
    "build_hint",
    "create_sector",
    "sectors",
    "set_policy",
    "delete_policy",
    "policies",
    "confidence_components",
    "review_queue",
    "approve",
    "reject",
    "review_many",
    "traffic",
    "strength_curves",
    "warm_up",
    "reembed",
    "reembed_all",
)
#: The ``mem.graph`` methods AsyncGraph mirrors.
GRAPH_METHODS = ("neighbours", "entity", "entities", "paths", "link", "alias", "rebuild")


def _mirror(name: str, cls: type = Memory) -> Callable[..., Coroutine[Any, Any, Any]]:
    sync = getattr(cls, name)

    @functools.wraps(sync)
    async def method(self: AsyncMemory | AsyncGraph, *args: Any, **kwargs: Any) -> Any:
        return await asyncio.to_thread(getattr(self.sync, name), *args, **kwargs)

    method.__signature__ = inspect.signature(sync)  # type: ignore[attr-defined]
    return method


class AsyncGraph:
    """Asynchronous ``mem.graph``: the same methods as :class:`~kenning.graph.api.Graph`."""

    def __init__(self, graph: Graph) -> None:
        self.sync = graph

    neighbours = _mirror("neighbours", Graph)
    entity = _mirror("entity", Graph)
    entities = _mirror("entities", Graph)
    paths = _mirror("paths", Graph)
    link = _mirror("link", Graph)
    alias = _mirror("alias", Graph)
    rebuild = _mirror("rebuild", Graph)


class AsyncMemory:
    """Asynchronous façade over :class:`Memory` (same constructor arguments)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.sync = kwargs.pop("memory", None) or Memory(*args, **kwargs)
        self._graph = AsyncGraph(self.sync.graph)

    @property
    def graph(self) -> AsyncGraph:
        """The memory graph (:class:`AsyncGraph`, mirroring ``Memory.graph``)."""
        return self._graph

    async def close(self) -> None:
        """Release the store and worker threads."""
        await asyncio.to_thread(self.sync.close)

    async def __aenter__(self) -> AsyncMemory:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    remember = _mirror("remember")
    remember_many = _mirror("remember_many")
    upsert = _mirror("upsert")
    update = _mirror("update")
    forget = _mirror("forget")
    archive = _mirror("archive")
    restore = _mirror("restore")
    feedback = _mirror("feedback")
    get = _mirror("get")
    recall = _mirror("recall")
    list = _mirror("list")
    history = _mirror("history")
    stats = _mirror("stats")
    export_jsonl = _mirror("export_jsonl")
    import_jsonl = _mirror("import_jsonl")
    reembed = _mirror("reembed")
    reembed_all = _mirror("reembed_all")
    write = _mirror("write")
    flush = _mirror("flush")
    reinforce = _mirror("reinforce")
    strength = _mirror("strength")
    access_log = _mirror("access_log")
    ingest = _mirror("ingest")
    context = _mirror("context")
    consolidate = _mirror("consolidate")
    build_hint = _mirror("build_hint")
    create_sector = _mirror("create_sector")
    sectors = _mirror("sectors")
    set_policy = _mirror("set_policy")
    delete_policy = _mirror("delete_policy")
    policies = _mirror("policies")
    confidence_components = _mirror("confidence_components")
    review_queue = _mirror("review_queue")
    approve = _mirror("approve")
    reject = _mirror("reject")
    review_many = _mirror("review_many")
    traffic = _mirror("traffic")
    strength_curves = _mirror("strength_curves")
    warm_up = _mirror("warm_up")
