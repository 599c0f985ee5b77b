"""``AsyncMemory``: the same engine for asyncio code.

Every method has the same name, parameters and behaviour as on
:class:`~kenning.engine.Memory`; the logic is shared, only the I/O runs in a
worker thread so the event loop never blocks. Each method is written out with
the sync method's signature, so type checkers see real parameter and return
types (see :mod:`kenning._aio`); a parity test locks this. ``graph`` and
``directory`` are the async forms of ``Memory.graph`` and ``Memory.directory``.
"""

from __future__ import annotations

import asyncio
import builtins
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, TextIO

from ._aio import mirrors
from .directory.aio import AsyncDirectory
from .directory.service import Directory
from .engine import Memory, ScopesArg
from .graph.aio import AsyncGraph
from .lifecycle.consolidate import ConsolidationReport
from .lifecycle.ingest import IngestResult
from .lifecycle.model import AccessEntry, Policy, Sector
from .lifecycle.writer import WriteResult
from .models import (
    FeedbackKind,
    HistoryEntry,
    Layer,
    LayerStats,
    MemoryFilter,
    MemoryRecord,
    Page,
    Principal,
    RecallResult,
    Scope,
)

__all__ = ["AsyncMemory", "AsyncGraph", "AsyncDirectory"]

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
#: The ``mem.directory`` methods AsyncDirectory mirrors.
DIRECTORY_METHODS = tuple(
    name for name, value in vars(Directory).items() if not name.startswith("_") and callable(value)
)


class AsyncMemory:
    """Asynchronous façade over :class:`Memory` (same constructor arguments)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        """Open a :class:`Memory` with these arguments, or wrap ``memory=`` an open one."""
        self.sync: Memory = kwargs.pop("memory", None) or Memory(*args, **kwargs)
        self._graph = AsyncGraph(self.sync.graph)
        self._directory = AsyncDirectory(self.sync.directory)

    @property
    def graph(self) -> AsyncGraph:
        """The memory graph (:class:`AsyncGraph`, mirroring ``Memory.graph``)."""
        return self._graph

    @property
    def directory(self) -> AsyncDirectory:
        """Tenancy, API keys, switches and the audit log (mirroring ``Memory.directory``)."""
        return self._directory

    async def close(self) -> None:
        """Release the store and worker threads."""
        await asyncio.to_thread(self.sync.close)

    async def __aenter__(self) -> AsyncMemory:
        """The memory itself; it is closed on exit."""
        return self

    async def __aexit__(self, *exc: object) -> None:
        """Close the memory."""
        await self.close()

    @mirrors(Memory.remember)
    async def remember(
        self,
        content: str,
        *,
        scope: Scope | str | None = None,
        principal: Principal | None = None,
        **fields: Any,
    ) -> MemoryRecord:
        return await asyncio.to_thread(
            self.sync.remember, content, scope=scope, principal=principal, **fields
        )

    @mirrors(Memory.remember_many)
    async def remember_many(
        self,
        items: Sequence[Mapping[str, Any]],
        *,
        principal: Principal | None = None,
        progress: Callable[[int], None] | None = None,
    ) -> list[MemoryRecord]:
        return await asyncio.to_thread(
            self.sync.remember_many, items, principal=principal, progress=progress
        )

    @mirrors(Memory.write)
    async def write(
        self,
        items: Sequence[Mapping[str, Any]],
        *,
        reconcile: bool = True,
        principal: Principal | None = None,
        progress: Callable[[int], None] | None = None,
    ) -> list[WriteResult]:
        return await asyncio.to_thread(
            self.sync.write, items, reconcile=reconcile, principal=principal, progress=progress
        )

    @mirrors(Memory.upsert)
    async def upsert(
        self,
        key: str,
        content: str,
        *,
        scope: Scope | str | None = None,
        principal: Principal | None = None,
        **fields: Any,
    ) -> MemoryRecord:
        return await asyncio.to_thread(
            self.sync.upsert, key, content, scope=scope, principal=principal, **fields
        )

    @mirrors(Memory.update)
    async def update(
        self,
        memory_id: str,
        *,
        principal: Principal | None = None,
        expected_version: int | None = None,
        **changes: Any,
    ) -> MemoryRecord:
        return await asyncio.to_thread(
            self.sync.update,
            memory_id,
            principal=principal,
            expected_version=expected_version,
            **changes,
        )

    @mirrors(Memory.forget)
    async def forget(self, memory_id: str, *, principal: Principal | None = None) -> None:
        return await asyncio.to_thread(self.sync.forget, memory_id, principal=principal)

    @mirrors(Memory.archive)
    async def archive(self, memory_id: str, *, principal: Principal | None = None) -> MemoryRecord:
        return await asyncio.to_thread(self.sync.archive, memory_id, principal=principal)

    @mirrors(Memory.restore)
    async def restore(self, memory_id: str, *, principal: Principal | None = None) -> MemoryRecord:
        return await asyncio.to_thread(self.sync.restore, memory_id, principal=principal)

    @mirrors(Memory.feedback)
    async def feedback(
        self, memory_id: str, kind: FeedbackKind | str, *, principal: Principal | None = None
    ) -> MemoryRecord:
        return await asyncio.to_thread(self.sync.feedback, memory_id, kind, principal=principal)

    @mirrors(Memory.get)
    async def get(self, memory_id: str, *, principal: Principal | None = None) -> MemoryRecord:
        return await asyncio.to_thread(self.sync.get, memory_id, principal=principal)

    @mirrors(Memory.recall)
    async def recall(
        self,
        query: str,
        k: int = 10,
        *,
        scopes: ScopesArg = None,
        layers: Iterable[Layer | str] | None = None,
        filters: MemoryFilter | Mapping[str, Any] | None = None,
        min_confidence: float | None = None,
        explain: bool = False,
        sector: str | None = None,
        principal: Principal | None = None,
        min_score: float | None = None,
    ) -> RecallResult:
        return await asyncio.to_thread(
            self.sync.recall,
            query,
            k,
            scopes=scopes,
            layers=layers,
            filters=filters,
            min_confidence=min_confidence,
            explain=explain,
            sector=sector,
            principal=principal,
            min_score=min_score,
        )

    @mirrors(Memory.list)
    async def list(
        self,
        *,
        scopes: ScopesArg = None,
        layers: Iterable[Layer | str] | None = None,
        filters: MemoryFilter | Mapping[str, Any] | None = None,
        limit: int = 50,
        cursor: str | None = None,
        principal: Principal | None = None,
    ) -> Page:
        return await asyncio.to_thread(
            self.sync.list,
            scopes=scopes,
            layers=layers,
            filters=filters,
            limit=limit,
            cursor=cursor,
            principal=principal,
        )

    @mirrors(Memory.history)
    async def history(
        self, memory_id: str, *, principal: Principal | None = None
    ) -> builtins.list[HistoryEntry]:
        return await asyncio.to_thread(self.sync.history, memory_id, principal=principal)

    @mirrors(Memory.stats)
    async def stats(
        self, *, scopes: ScopesArg = "all", principal: Principal | None = None
    ) -> builtins.list[LayerStats]:
        return await asyncio.to_thread(self.sync.stats, scopes=scopes, principal=principal)

    @mirrors(Memory.export_jsonl)
    async def export_jsonl(
        self, out: TextIO, *, scopes: ScopesArg = "all", principal: Principal | None = None
    ) -> int:
        return await asyncio.to_thread(
            self.sync.export_jsonl, out, scopes=scopes, principal=principal
        )

    @mirrors(Memory.import_jsonl)
    async def import_jsonl(
        self,
        lines: Iterable[str],
        *,
        principal: Principal | None = None,
        progress: Callable[[int], None] | None = None,
    ) -> int:
        return await asyncio.to_thread(
            self.sync.import_jsonl, lines, principal=principal, progress=progress
        )

    @mirrors(Memory.flush)
    async def flush(self) -> None:
        return await asyncio.to_thread(self.sync.flush)

    @mirrors(Memory.reinforce)
    async def reinforce(
        self, memory_id: str, *, principal: Principal | None = None
    ) -> MemoryRecord:
        return await asyncio.to_thread(self.sync.reinforce, memory_id, principal=principal)

    @mirrors(Memory.strength)
    async def strength(self, memory_id: str, *, principal: Principal | None = None) -> float:
        return await asyncio.to_thread(self.sync.strength, memory_id, principal=principal)

    @mirrors(Memory.access_log)
    async def access_log(
        self, memory_id: str, *, limit: int = 100, principal: Principal | None = None
    ) -> builtins.list[AccessEntry]:
        return await asyncio.to_thread(
            self.sync.access_log, memory_id, limit=limit, principal=principal
        )

    @mirrors(Memory.ingest)
    async def ingest(
        self,
        messages: Sequence[str | Mapping[str, Any]],
        session_id: str,
        *,
        scope: Scope | str | None = None,
        episode_id: str | None = None,
        extract: bool = True,
        principal: Principal | None = None,
    ) -> IngestResult:
        return await asyncio.to_thread(
            self.sync.ingest,
            messages,
            session_id,
            scope=scope,
            episode_id=episode_id,
            extract=extract,
            principal=principal,
        )

    @mirrors(Memory.context)
    async def context(
        self,
        session_id: str,
        *,
        scope: Scope | str | None = None,
        principal: Principal | None = None,
    ) -> builtins.list[MemoryRecord]:
        return await asyncio.to_thread(
            self.sync.context, session_id, scope=scope, principal=principal
        )

    @mirrors(Memory.consolidate)
    async def consolidate(
        self,
        *,
        scopes: ScopesArg = "all",
        dry_run: bool = False,
        principal: Principal | None = None,
    ) -> ConsolidationReport:
        return await asyncio.to_thread(
            self.sync.consolidate, scopes=scopes, dry_run=dry_run, principal=principal
        )

    @mirrors(Memory.build_hint)
    async def build_hint(
        self,
        *,
        persona: str | None = None,
        query: str | None = None,
        max_chars: int = 6000,
        principal: Principal | None = None,
    ) -> str:
        return await asyncio.to_thread(
            self.sync.build_hint,
            persona=persona,
            query=query,
            max_chars=max_chars,
            principal=principal,
        )

    @mirrors(Memory.create_sector)
    async def create_sector(
        self,
        name: str,
        *,
        scope: Scope | str | None = None,
        parent_id: str | None = None,
        decay_multiplier: float = 1.0,
        topics: Sequence[str] = (),
        max_size: int | None = None,
        principal: Principal | None = None,
    ) -> Sector:
        return await asyncio.to_thread(
            self.sync.create_sector,
            name,
            scope=scope,
            parent_id=parent_id,
            decay_multiplier=decay_multiplier,
            topics=topics,
            max_size=max_size,
            principal=principal,
        )

    @mirrors(Memory.sectors)
    async def sectors(
        self, *, scopes: ScopesArg = "all", principal: Principal | None = None
    ) -> builtins.list[Sector]:
        return await asyncio.to_thread(self.sync.sectors, scopes=scopes, principal=principal)

    @mirrors(Memory.set_policy)
    async def set_policy(
        self,
        target: str = "*",
        *,
        memory_type: str = "*",
        retention_days: float | None = None,
        capacity: int | None = None,
        review: bool = False,
        principal: Principal | None = None,
    ) -> Policy:
        return await asyncio.to_thread(
            self.sync.set_policy,
            target,
            memory_type=memory_type,
            retention_days=retention_days,
            capacity=capacity,
            review=review,
            principal=principal,
        )

    @mirrors(Memory.delete_policy)
    async def delete_policy(
        self, target: str = "*", *, memory_type: str = "*", principal: Principal | None = None
    ) -> None:
        return await asyncio.to_thread(
            self.sync.delete_policy, target, memory_type=memory_type, principal=principal
        )

    @mirrors(Memory.policies)
    async def policies(self, *, principal: Principal | None = None) -> builtins.list[Policy]:
        return await asyncio.to_thread(self.sync.policies, principal=principal)

    @mirrors(Memory.confidence_components)
    async def confidence_components(
        self, memory_id: str, *, principal: Principal | None = None
    ) -> dict[str, float]:
        return await asyncio.to_thread(
            self.sync.confidence_components, memory_id, principal=principal
        )

    @mirrors(Memory.review_queue)
    async def review_queue(
        self,
        *,
        scopes: ScopesArg = None,
        limit: int = 50,
        cursor: str | None = None,
        principal: Principal | None = None,
    ) -> Page:
        return await asyncio.to_thread(
            self.sync.review_queue, scopes=scopes, limit=limit, cursor=cursor, principal=principal
        )

    @mirrors(Memory.approve)
    async def approve(
        self,
        memory_id: str,
        *,
        changes: Mapping[str, Any] | None = None,
        principal: Principal | None = None,
    ) -> MemoryRecord:
        return await asyncio.to_thread(
            self.sync.approve, memory_id, changes=changes, principal=principal
        )

    @mirrors(Memory.reject)
    async def reject(
        self, memory_id: str, *, reason: str | None = None, principal: Principal | None = None
    ) -> None:
        return await asyncio.to_thread(
            self.sync.reject, memory_id, reason=reason, principal=principal
        )

    @mirrors(Memory.review_many)
    async def review_many(
        self,
        ids: Sequence[str],
        action: str,
        *,
        reason: str | None = None,
        principal: Principal | None = None,
    ) -> tuple[dict[str, str], dict[str, str]]:
        return await asyncio.to_thread(
            self.sync.review_many, ids, action, reason=reason, principal=principal
        )

    @mirrors(Memory.traffic)
    async def traffic(
        self, days: int = 30, *, scopes: ScopesArg = "all", principal: Principal | None = None
    ) -> builtins.list[dict[str, Any]]:
        return await asyncio.to_thread(self.sync.traffic, days, scopes=scopes, principal=principal)

    @mirrors(Memory.strength_curves)
    async def strength_curves(
        self, days: int = 365, points: int = 25
    ) -> dict[str, builtins.list[tuple[float, float]]]:
        return await asyncio.to_thread(self.sync.strength_curves, days, points)

    @mirrors(Memory.warm_up)
    async def warm_up(self) -> None:
        return await asyncio.to_thread(self.sync.warm_up)

    @mirrors(Memory.reembed)
    async def reembed(
        self,
        *,
        batch_size: int = 256,
        principal: Principal | None = None,
        progress: Callable[[int], None] | None = None,
    ) -> int:
        return await asyncio.to_thread(
            self.sync.reembed, batch_size=batch_size, principal=principal, progress=progress
        )

    @mirrors(Memory.reembed_all)
    async def reembed_all(
        self, *, batch_size: int = 256, progress: Callable[[int], None] | None = None
    ) -> dict[str, int]:
        return await asyncio.to_thread(
            self.sync.reembed_all, batch_size=batch_size, progress=progress
        )
