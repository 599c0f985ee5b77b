"""kenning: long-term memory for AI agents, scoped, local-first.

>>> from kenning import Memory          # doctest: +SKIP
>>> mem = Memory()                       # doctest: +SKIP
>>> mem.remember("Alice prefers tea")    # doctest: +SKIP
>>> mem.recall("what does Alice drink?") # doctest: +SKIP
"""

from typing import TYPE_CHECKING, Any

from .access import AccessPolicy, ScopeFilter
from .aio import AsyncDirectory, AsyncGraph, AsyncMemory
from .clock import Clock, FixedClock, SystemClock
from .config import ScoringWeights, Settings
from .directory import ApiKey, AuditEntry, Directory, Erasure, Org, Persona, Team, User
from .embeddings import Embedder, register_embedder
from .engine import Memory
from .errors import (
    ConfigError,
    Conflict,
    EmbeddingError,
    InvalidInput,
    KenningError,
    LLMError,
    NotFound,
    PermissionDenied,
    QuotaExceeded,
    RateLimited,
    StoreError,
    Unauthenticated,
)
from .graph.api import EntityView, Graph, Neighbour
from .graph.extractor import Extractor
from .graph.model import Entity, GraphEdge, GraphPath, NodeKind, Relation
from .graph.project import RebuildReport
from .lifecycle.consolidate import Action as ConsolidationAction
from .lifecycle.consolidate import ConsolidationReport
from .lifecycle.ingest import IngestResult
from .lifecycle.model import AccessEntry, Policy, Sector
from .lifecycle.reconcile import Action as WriteAction
from .lifecycle.writer import WriteResult
from .llm import ChatModel
from .models import (
    ALL_SCOPES,
    FeedbackKind,
    HistoryEntry,
    Hit,
    Layer,
    LayerStats,
    MemoryFilter,
    MemoryRecord,
    MemoryType,
    Page,
    Principal,
    RecallMode,
    RecallResult,
    Role,
    Scope,
    ScopeKind,
    ScoreBreakdown,
    Status,
    TeamRole,
)
from .stores import Store

__version__ = "0.1.0"

__all__ = [
    "ALL_SCOPES",
    "AccessEntry",
    "AccessPolicy",
    "ApiKey",
    "AsyncClient",
    "AsyncDirectory",
    "AsyncGraph",
    "AsyncMemory",
    "AuditEntry",
    "ChatModel",
    "Client",
    "Clock",
    "ConfigError",
    "Conflict",
    "ConsolidationAction",
    "ConsolidationReport",
    "Directory",
    "Embedder",
    "EmbeddingError",
    "Entity",
    "EntityView",
    "Erasure",
    "Extractor",
    "FeedbackKind",
    "FixedClock",
    "Graph",
    "GraphEdge",
    "GraphPath",
    "HistoryEntry",
    "Hit",
    "IngestResult",
    "InvalidInput",
    "KenningError",
    "LLMError",
    "Layer",
    "LayerStats",
    "Memory",
    "MemoryFilter",
    "MemoryRecord",
    "MemoryType",
    "Neighbour",
    "NodeKind",
    "NotFound",
    "Org",
    "Page",
    "PermissionDenied",
    "Persona",
    "Policy",
    "Principal",
    "QuotaExceeded",
    "RateLimited",
    "RebuildReport",
    "RecallMode",
    "RecallResult",
    "Relation",
    "Role",
    "Scope",
    "ScopeFilter",
    "ScopeKind",
    "ScoreBreakdown",
    "ScoringWeights",
    "Sector",
    "Settings",
    "Status",
    "Store",
    "StoreError",
    "SystemClock",
    "Team",
    "TeamRole",
    "Unauthenticated",
    "User",
    "WriteAction",
    "WriteResult",
    "__version__",
    "register_embedder",
]

if TYPE_CHECKING:
    from .client import AsyncClient, Client


def __getattr__(name: str) -> Any:
    """``Client`` and ``AsyncClient`` load on first use: ``import kenning`` loads no
    HTTP library (the embedded engine never needs one)."""
    if name in ("Client", "AsyncClient"):
        from . import client

        return getattr(client, name)
    raise AttributeError(f"module 'kenning' has no attribute {name!r}")
