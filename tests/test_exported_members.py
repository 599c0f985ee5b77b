"""Lock the public surface: ``kenning.__all__`` changes only on purpose."""

from __future__ import annotations

import kenning

EXPECTED = [
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


def test_all_is_exactly_the_locked_list() -> None:
    assert kenning.__all__ == EXPECTED


def test_every_exported_name_resolves_and_is_documented() -> None:
    for name in kenning.__all__:
        value = getattr(kenning, name)
        if callable(value) and not name.startswith("_"):
            assert (value.__doc__ or "").strip(), f"kenning.{name} has no docstring"


def test_errors_share_one_root() -> None:
    for name in (
        "InvalidInput",
        "PermissionDenied",
        "Unauthenticated",
        "NotFound",
        "Conflict",
        "ConfigError",
        "EmbeddingError",
        "StoreError",
        "LLMError",
        "QuotaExceeded",
        "RateLimited",
    ):
        assert issubclass(getattr(kenning, name), kenning.KenningError)


def test_star_import_gives_exactly_all() -> None:
    namespace: dict[str, object] = {}
    exec("from kenning import *", namespace)
    assert sorted(k for k in namespace if k != "__builtins__") == sorted(EXPECTED)
