"""What goes over the wire: arguments as JSON, the server's JSON as kenning's own
model classes, and the server's error bodies as kenning's exceptions.

Pure functions, no I/O: :class:`~kenning.client.Client` and
:class:`~kenning.client.AsyncClient` share every one of them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from datetime import date, datetime
from enum import Enum
from typing import Any
from urllib.parse import quote

from ..errors import (
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
from ..graph.api import EntityView, Neighbour
from ..graph.model import Entity, GraphEdge, GraphPath, NodeKind
from ..lifecycle.consolidate import Action as ConsolidationAction
from ..lifecycle.consolidate import ConsolidationReport
from ..lifecycle.ingest import IngestResult
from ..lifecycle.model import AccessEntry, Policy, Sector
from ..lifecycle.reconcile import Action as WriteAction
from ..lifecycle.writer import WriteResult
from ..models import (
    HistoryEntry,
    Hit,
    LayerStats,
    MemoryFilter,
    MemoryRecord,
    Page,
    RecallResult,
    Scope,
    ScoreBreakdown,
)
from ..validation import Limits

__all__ = [
    "ClientError",
    "plain",
    "segment",
    "error_for",
    "record",
    "write_result",
    "recall_result",
    "page",
    "history",
    "stats",
    "ingest_result",
    "consolidation",
    "neighbour",
    "entity",
    "entity_view",
    "graph_path",
    "graph_edge",
    "access_entry",
    "sector",
    "policy",
    "limits",
]


class ClientError(KenningError):
    """The server could not be reached, timed out, or answered something that is not
    kenning's API (a proxy's error page, an unexpected status). ``status`` is the
    HTTP status when there was a response."""

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


# -- arguments out -----------------------------------------------------------------------


def plain(value: Any) -> Any:
    """``value`` as JSON-ready data: times as ISO strings, enums as their values,
    scopes as their keys, UTF-8 bytes as text, sets and tuples as lists, filters as
    mappings. Anything else is passed as it is. The client sends only arguments the
    engine's checks passed (:mod:`kenning.client._calls`), so this never meets a value
    the engine refuses."""
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, bytes | bytearray):  # text the engine takes as UTF-8
        return bytes(value).decode("utf-8", "replace")
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, Scope):
        return value.key
    if isinstance(value, MemoryFilter):
        return {
            f.name: plain(getattr(value, f.name))
            for f in dataclasses.fields(value)
            if getattr(value, f.name) != f.default
            and (f.default_factory is dataclasses.MISSING or getattr(value, f.name))
        }
    if isinstance(value, Mapping):
        return {k if not isinstance(k, Enum) else k.value: plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        items = [plain(v) for v in value]
        return sorted(items, key=str) if isinstance(value, set | frozenset) else items
    return value


def segment(value: object) -> str:
    """One path segment of a URL (a memory id, a session id, an entity name),
    percent-encoded (its checks ran before: a call is built before it is checked)."""
    return quote(str(value), safe="")


# -- errors in ---------------------------------------------------------------------------

#: The kenning error of each error ``code`` the server sends (``kenning.server.errors``).
_ERRORS: dict[str, type[KenningError]] = {
    "invalid_input": InvalidInput,
    "invalid_request": InvalidInput,
    "too_large": InvalidInput,
    "unauthenticated": Unauthenticated,
    "permission_denied": PermissionDenied,
    "quota_exceeded": QuotaExceeded,
    "rate_limited": RateLimited,
    "not_found": NotFound,
    "conflict": Conflict,
    "embedding_unavailable": EmbeddingError,
    "llm_unavailable": LLMError,
    "store_unavailable": StoreError,
}
#: By HTTP status, when the body is not kenning's error schema.
_BY_STATUS: dict[int, type[KenningError]] = {
    400: InvalidInput,
    401: Unauthenticated,
    403: PermissionDenied,
    404: NotFound,
    409: Conflict,
    413: InvalidInput,
    422: InvalidInput,
    429: RateLimited,
}


def error_for(status: int, body: object, text: str, retry_after: str | None = None) -> KenningError:
    """The exception an error response stands for, with the server's message (and
    ``field`` for invalid input, the wait of ``retry_after`` for a rate limit);
    :class:`ClientError` for what is not kenning's."""
    error = _error_for(status, body, text)
    if isinstance(error, RateLimited) and retry_after is not None:
        try:
            error.retry_after_s = max(1, int(retry_after))
        except ValueError:
            pass
    return error


def _error_for(status: int, body: object, text: str) -> KenningError:
    err = body.get("error") if isinstance(body, dict) else None
    if isinstance(err, dict) and isinstance(err.get("message"), str):
        code, message = str(err.get("code", "")), str(err["message"])
        kind = _ERRORS.get(code) or _BY_STATUS.get(status)
        if kind is InvalidInput:
            field = err.get("field")
            return InvalidInput(message, field=field if isinstance(field, str) else None)
        if kind is not None:
            return kind(message)
        return ClientError(f"server error {status} ({code}): {message}", status=status)
    kind = _BY_STATUS.get(status)
    detail = text.strip()[:200] or f"HTTP {status}"
    if kind is InvalidInput:
        return InvalidInput(detail)
    if kind is not None:
        return kind(detail)
    return ClientError(f"server error {status}: {detail}", status=status)


# -- answers in ---------------------------------------------------------------------------


def record(data: Mapping[str, Any]) -> MemoryRecord:
    """A memory (``MemoryOut``; its ``layer`` follows from the scope, and
    :meth:`~kenning.MemoryRecord.from_dict` reads only the record's fields)."""
    return MemoryRecord.from_dict(data)


def write_result(data: Mapping[str, Any]) -> WriteResult:
    """What a write did (``WriteOut``)."""
    return WriteResult(
        record(data["memory"]),
        WriteAction(data["action"]),
        data.get("target"),
        data.get("reason", ""),
    )


def graph_path(data: Mapping[str, Any]) -> GraphPath:
    """A chain of memories joined by edges."""
    return GraphPath(
        tuple(data["nodes"]),
        tuple(data["relations"]),
        float(data["strength"]),
        tuple(data.get("forward", ())),
    )


def graph_edge(data: Mapping[str, Any]) -> GraphEdge:
    """An edge between two memories."""
    return GraphEdge(data["src"], data["dst"], data["relation"], float(data["weight"]))


def _hit(data: Mapping[str, Any]) -> Hit:
    explain = data.get("explain")
    via = data.get("via")
    return Hit(
        record(data["memory"]),
        float(data["score"]),
        None if explain is None else ScoreBreakdown(**explain),
        [_hit(h) for h in data.get("related") or ()],
        None if via is None else graph_path(via),
    )


def recall_result(data: Mapping[str, Any]) -> RecallResult:
    """The hits of a recall (``RecallOut``)."""
    return RecallResult(
        [_hit(h) for h in data["hits"]],
        dict(data.get("timings_ms") or {}),
        dict(data.get("candidates") or {}),
        list(data.get("dropped_terms") or ()),
        [graph_path(p) for p in data.get("paths") or ()],
        dict(data.get("graph") or {}),
        dict(data.get("time_window") or {}),
        bool(data.get("abstained", False)),
    )


def page(data: Mapping[str, Any]) -> Page:
    """One page of a listing (``PageOut``)."""
    return Page([record(m) for m in data["items"]], data.get("next_cursor"))


def history(data: list[Mapping[str, Any]]) -> list[HistoryEntry]:
    """A memory's history (``HistoryOut`` rows), oldest first."""
    return [
        HistoryEntry(
            int(e["seq"]),
            e["memory_id"],
            e["op"],
            e.get("actor"),
            MemoryRecord.field_value("created_at", e["at"]),
            e.get("version"),
            e.get("content"),
            dict(e.get("changes") or {}),
        )
        for e in data
    ]


def stats(data: list[Mapping[str, Any]]) -> list[LayerStats]:
    """Per-layer statistics (``StatsOut`` rows)."""
    return [LayerStats(**row) for row in data]


def ingest_result(data: Mapping[str, Any]) -> IngestResult:
    """What an ingest stored."""
    return IngestResult(
        data["session_id"],
        data["episode_id"],
        [record(t) for t in data.get("turns") or ()],
        [write_result(f) for f in data.get("facts") or ()],
        int(data.get("aged", 0)),
        list(data.get("errors") or ()),
    )


def consolidation(data: Mapping[str, Any]) -> ConsolidationReport:
    """What a consolidation pass did (``counts`` is derived from ``actions``)."""
    return ConsolidationReport(
        bool(data["dry_run"]),
        int(data.get("scanned", 0)),
        [
            ConsolidationAction(a["op"], a["memory_id"], a["reason"], tuple(a.get("evidence", ())))
            for a in data.get("actions") or ()
        ],
    )


def entity(data: Mapping[str, Any]) -> Entity:
    """An entity or topic node."""
    return Entity(
        data["id"],
        data["label"],
        data["norm"],
        NodeKind(data["kind"]),
        data.get("entity_type"),
        int(data["mentions"]),
    )


def entity_view(data: Mapping[str, Any]) -> EntityView:
    """Everything the caller may read about one entity."""
    return EntityView(
        entity(data["entity"]),
        tuple(record(m) for m in data.get("memories") or ()),
        tuple((entity(r["entity"]), int(r["co_mentions"])) for r in data.get("related") or ()),
        tuple(entity(e) for e in data.get("also") or ()),
    )


def neighbour(data: Mapping[str, Any]) -> Neighbour:
    """A memory next to the one asked about (or mentioning the entity asked about)."""
    edge = data.get("edge")
    return Neighbour(record(data["memory"]), None if edge is None else graph_edge(edge))


def _time(value: Any) -> datetime | None:
    return None if value is None else MemoryRecord.field_value("created_at", value)


def access_entry(data: Mapping[str, Any]) -> AccessEntry:
    """One access of a memory (a recall hit, a reinforcement)."""
    at = _time(data["at"])
    assert at is not None
    return AccessEntry(
        int(data["seq"]),
        data["memory_id"],
        data["access_type"],
        data.get("query"),
        float(data["strength_before"]),
        float(data["strength_after"]),
        at,
    )


def sector(data: Mapping[str, Any]) -> Sector:
    """A sector (without its centroid, which the server keeps)."""
    return Sector(
        id=data["id"],
        org_id=data["org_id"],
        scope=Scope.parse(data["scope"]),
        name=data["name"],
        parent_id=data.get("parent_id"),
        decay_multiplier=float(data["decay_multiplier"]),
        topics=tuple(data.get("topics") or ()),
        max_size=int(data["max_size"]),
        created_at=_time(data.get("created_at")),
        updated_at=_time(data.get("updated_at")),
        size=int(data.get("size", 0)),
    )


def policy(data: Mapping[str, Any]) -> Policy:
    """A retention / capacity / review policy."""
    return Policy(
        data["org_id"],
        data["target"],
        data["memory_type"],
        data.get("retention_days"),
        data.get("capacity"),
        bool(data.get("review", False)),
        _time(data.get("updated_at")),
    )


def limits(data: Mapping[str, Any]) -> Limits:
    """The size limits a server checks (``LimitsOut``)."""
    return Limits(
        int(data["content_chars"]),
        int(data["key_chars"]),
        int(data["tags"]),
        int(data["batch"]),
        int(data["k"]),
    )
