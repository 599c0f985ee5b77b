"""The base of the :class:`kenning.Memory` façade: it builds the core and the services
over it, and gives the façade's parts (memories, lifecycle, review, insight) the
few members they share. Every part only validates arguments, names the caller
and calls a service; the logic lives in the services.
"""

from __future__ import annotations

from pathlib import Path

from .access import AccessPolicy
from .clock import Clock
from .config import Settings
from .core import Core
from .directory import Directory
from .embeddings import Embedder
from .graph.api import Graph
from .graph.project import Extractor
from .lifecycle.consolidate import Consolidator
from .lifecycle.ingest import Ingestor
from .llm import ChatModel
from .models import Principal
from .retrieval.pipeline import RecallPipeline
from .stores import Store
from .write import WritePipeline

__all__ = ["Facade"]


class Facade:
    """What every part of the façade shares: the core and its services."""

    #: The engine's inside (store, policy, clock, models, directory, auditor, settings).
    core: Core
    #: The one write pipeline.
    writes: WritePipeline
    #: The read pipeline.
    reads: RecallPipeline
    #: Conversations in.
    ingestor: Ingestor
    #: Consolidation passes.
    consolidator: Consolidator

    def __init__(
        self,
        path: str | Path | None = None,
        *,
        settings: Settings | None = None,
        store: Store | None = None,
        embedder: Embedder | None = None,
        clock: Clock | None = None,
        principal: Principal | None = None,
        extractor: Extractor | None = None,
        chat: ChatModel | None = None,
    ) -> None:
        core = Core.open(
            path,
            settings=settings,
            store=store,
            embedder=embedder,
            clock=clock,
            principal=principal,
            extractor=extractor,
            chat=chat,
        )
        self.core = core
        self.writes = WritePipeline(core)
        self.reads = RecallPipeline(
            core.store, core.query_embedder, core.helpers, core.strength, core.rerankers
        )
        self.ingestor = Ingestor(core, self.writes)
        self.consolidator = Consolidator(core, self.writes)
        self._graph = Graph(core)

    # -- what the doors read ------------------------------------------------------------

    @property
    def settings(self) -> Settings:
        """The settings this engine runs with. Setting them changes what each call
        reads (recall, consolidation, limits); the store, the models and the write
        planner keep the settings they were built with."""
        return self.core.settings

    @settings.setter
    def settings(self, value: Settings) -> None:
        self.core.settings = value

    @property
    def store(self) -> Store:
        """The store (SQLite or PostgreSQL) behind this engine."""
        return self.core.store

    @property
    def embedder(self) -> Embedder:
        """The embedding model, behind its cache."""
        return self.core.embedder

    @property
    def clock(self) -> Clock:
        """The clock every time in this engine comes from."""
        return self.core.clock

    @property
    def policy(self) -> AccessPolicy:
        """The access policy (principal -> the scopes it may read and write)."""
        return self.core.policy

    @property
    def principal(self) -> Principal:
        """Who a call without ``principal=`` acts for."""
        return self.core.principal

    @property
    def graph(self) -> Graph:
        """The memory graph: neighbours, entities, paths, links (:mod:`kenning.graph.api`)."""
        return self._graph

    @property
    def directory(self) -> Directory:
        """Tenancy, API keys, switches and the audit log (:mod:`kenning.directory`)."""
        return self.core.directory

    def warm_up(self) -> None:
        """Load the embedding model and the entity extractor now rather than on the
        first request (a server does this before it reports ready). Writes nothing."""
        self.core.query_embedder.embed("kenning warm-up")
        self.core.projector.extractor.warm_up()

    def close(self) -> None:
        """Finish pending access writes; release the store and worker threads."""
        self.core.close()
