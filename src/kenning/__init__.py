"""kenning: long-term memory for AI agents, scoped, local-first.

>>> from kenning import Memory          # doctest: +SKIP
>>> mem = Memory()                       # doctest: +SKIP
>>> mem.remember("Alice prefers tea")    # doctest: +SKIP
>>> mem.recall("what does Alice drink?") # doctest: +SKIP
"""

from .aio import AsyncMemory
from .clock import Clock, FixedClock, SystemClock
from .config import ScoringWeights, Settings
from .embeddings import Embedder, register_embedder
from .engine import Memory
from .errors import (
    ConfigError,
    Conflict,
    EmbeddingError,
    InvalidInput,
    KenningError,
    NotFound,
    PermissionDenied,
    StoreError,
    Unauthenticated,
)
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

__version__ = "0.1.0"

__all__ = [
    "ALL_SCOPES",
    "AsyncMemory",
    "Clock",
    "ConfigError",
    "Conflict",
    "Embedder",
    "EmbeddingError",
    "FeedbackKind",
    "FixedClock",
    "HistoryEntry",
    "Hit",
    "InvalidInput",
    "KenningError",
    "Layer",
    "LayerStats",
    "Memory",
    "MemoryFilter",
    "MemoryRecord",
    "MemoryType",
    "NotFound",
    "Page",
    "PermissionDenied",
    "Unauthenticated",
    "Principal",
    "RecallMode",
    "RecallResult",
    "Role",
    "Scope",
    "ScopeKind",
    "ScoreBreakdown",
    "ScoringWeights",
    "Settings",
    "Status",
    "StoreError",
    "SystemClock",
    "TeamRole",
    "__version__",
    "register_embedder",
]
