"""What every service shares: the store, access policy, clock, embedders, extractor,
chat model, directory, auditor and settings.

:class:`Core` is the engine's inside. The façade (:class:`kenning.Memory`) is
a thin layer over it, and every service (the write pipeline, recall, graph,
ingest, consolidation, review, insight) takes the core, never the façade.
Services reach only the core's public members; the helpers here are the ones
they all need: whose call this is, and the memories a caller may read or
change.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from .access import AccessPolicy, ScopeFilter
from .audit import Auditor
from .clock import Clock, SystemClock
from .config import Settings
from .directory import Directory
from .embeddings import (
    BatchingEmbedder,
    CachedEmbedder,
    Embedder,
    MemoryCacheBackend,
    create_embedder,
)
from .errors import ConfigError, NotFound
from .graph.project import Extractor, Projector
from .helpers import Helpers
from .lifecycle.sectors import SectorInfo, descendants
from .lifecycle.strength import AccessWriter, StrengthModel
from .llm import ChatModel, chat_model_from_settings
from .models import MemoryRecord, Principal, Scope, TeamRole
from .rerank import Rerankers
from .stores import Store, database_url, open_store
from .validation import check_principal, clean_text

__all__ = ["Core", "settings_from_env"]


def settings_from_env() -> Settings:
    """Settings from the ``KENNING_*`` environment (a clear error when one is invalid)."""
    try:
        return Settings()
    except ValidationError as exc:
        raise ConfigError(f"invalid KENNING_* setting: {exc}") from None


@dataclass(eq=False)
class Core:
    """The shared inside of one engine (see the module docstring). Build it with
    :meth:`open`; :meth:`close` releases what it holds."""

    settings: Settings
    store: Store
    #: Writes look vectors up in the store too (the vectors table is the cache).
    embedder: CachedEmbedder
    #: Queries use an in-process cache only, so they never wait on the store.
    query_embedder: CachedEmbedder
    clock: Clock
    principal: Principal
    policy: AccessPolicy
    projector: Projector
    chat: ChatModel | None
    directory: Directory
    auditor: Auditor
    strength: StrengthModel
    access: AccessWriter
    #: Helper threads a recall spreads its work over while it has the process to itself.
    helpers: Helpers
    #: Concurrent embedding calls share model runs through it (None: switched off).
    batcher: BatchingEmbedder | None = None
    #: The rerank step's models (``retrieval.rerank.model``), built once each.
    rerankers: Rerankers = field(default_factory=Rerankers)

    @classmethod
    def open(
        cls,
        path: str | Path | None = None,
        *,
        settings: Settings | None = None,
        store: Store | None = None,
        embedder: Embedder | None = None,
        clock: Clock | None = None,
        principal: Principal | None = None,
        extractor: Extractor | None = None,
        chat: ChatModel | None = None,
    ) -> Core:
        """Build the core (arguments as :class:`kenning.Memory` takes them)."""
        settings = settings or settings_from_env()
        if path is not None:  # a SQLite file, or a store URL
            url = database_url(str(path), field="path")
            settings = settings.model_copy(update={"database_url": url})
        inner = embedder or create_embedder(settings.embedder, **_embed_options(settings))
        rerankers = Rerankers()
        rerankers.get(settings.retrieval.rerank)  # a bad name fails before the store opens
        store = store or open_store(settings, inner.model_id, inner.dim)
        batcher = (
            BatchingEmbedder(
                inner,
                max_batch=settings.embed_batch_max,
                max_wait_ms=settings.embed_batch_wait_ms,
            )
            if settings.embed_batching
            else None
        )
        inner = batcher or inner
        clock = clock or SystemClock()
        lc = settings.lifecycle
        directory = Directory(store, clock)
        return cls(
            settings=settings,
            store=store,
            embedder=CachedEmbedder(inner, [MemoryCacheBackend(50_000), store]),
            query_embedder=CachedEmbedder(inner, [MemoryCacheBackend(10_000)]),
            clock=clock,
            principal=principal or Principal(),
            policy=AccessPolicy(),
            projector=Projector(store, settings, extractor),
            chat=chat if chat is not None else chat_model_from_settings(settings),
            directory=directory,
            auditor=Auditor(directory, settings.server.audit_admin_reads),
            strength=StrengthModel(store, lc.reinforcement),
            access=AccessWriter(store, lc.reinforcement, delay=lc.access_write_delay_ms / 1000),
            helpers=Helpers(),
            batcher=batcher,
            rerankers=rerankers,
        )

    def close(self) -> None:
        """Finish pending access writes; release the store and worker threads."""
        self.access.close()
        self.helpers.shutdown(wait=True)
        self.projector.close()
        self.store.close()

    # -- whose call, and what it may touch --------------------------------------------------

    def who(self, principal: Principal | None) -> Principal:
        """The caller: ``principal``, or the instance's own. When that one is an admin
        of an ungoverned organization (the embedded single user), it is a member of
        every team the organization records, so what it wrote into ``team:X`` is in
        its default recall."""
        given = check_principal(principal)
        if given is not None:
            return given
        own = self.principal
        if not own.is_admin:
            return own
        teams = self.directory.open_teams(own.org_id)
        if not teams or all(t in own.teams for t in teams):
            return own
        return replace(own, teams={**dict.fromkeys(teams, TeamRole.LEAD), **own.teams})

    def write_scope(self, scope: Scope | str | None, who: Principal) -> Scope:
        """The scope a write names, or the caller's personal one (persona_user when a
        persona is active)."""
        if scope is None:
            if who.active_persona:
                return Scope.persona_user(who.active_persona, who.user_id)
            return Scope.user(who.user_id)
        return scope if isinstance(scope, Scope) else Scope.parse(scope)

    def visible(self, memory_id: str, who: Principal) -> MemoryRecord:
        """A memory the caller may read (``NotFound`` otherwise, never a hint)."""
        memory_id = clean_text(memory_id, "memory id", 64)
        found = self.store.get([memory_id], self.policy.readable(who))
        if not found:
            raise NotFound(f"memory {memory_id!r} not found")
        return found[0]

    def writable(self, memory_id: str, who: Principal) -> MemoryRecord:
        """A memory the caller may change (``NotFound``/``PermissionDenied`` otherwise)."""
        record = self.visible(memory_id, who)
        self.policy.check_write(who, record.scope)
        return record

    def sector_tree(self, sector: str, view: ScopeFilter) -> frozenset[str]:
        """A sector id and its descendants' (``NotFound`` when ``view`` has no such sector)."""
        sector = clean_text(sector, "sector", 256)
        infos = [SectorInfo.from_sector(s) for s in self.store.sectors(view)]
        if all(i.id != sector for i in infos):
            raise NotFound(f"sector {sector!r} not found")
        return frozenset(descendants(sector, infos))


def _embed_options(settings: Settings) -> dict[str, Any]:
    options: dict[str, Any] = dict(settings.embedder_options)
    if settings.embedder == "minilm" and settings.embed_threads:
        options.setdefault("threads", settings.embed_threads)
    return options
