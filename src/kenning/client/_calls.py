"""Every REST call the clients make, built once: the route, the query or body, whether
it may be retried, and how its answer becomes kenning's model classes.

Each function takes the arguments of the :class:`~kenning.Memory` method of the
same name (``principal`` aside, see :func:`no_principal`) and returns a
:class:`Call`; :class:`~kenning.client.Client` sends it over a blocking
transport, :class:`~kenning.client.AsyncClient` over an asyncio one.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from ..errors import InvalidInput
from ..graph.api import EntityView, Neighbour
from ..graph.model import Entity, GraphEdge, GraphPath
from ..lifecycle.consolidate import ConsolidationReport
from ..lifecycle.ingest import IngestResult
from ..lifecycle.writer import WriteResult
from ..models import (
    ALL_SCOPES,
    HistoryEntry,
    LayerStats,
    MemoryFilter,
    MemoryRecord,
    Page,
    RecallResult,
    Scope,
)
from . import _wire as wire
from ._wire import plain, segment

__all__ = ["Call", "no_principal"]

T = TypeVar("T")
Params = list[tuple[str, str]]
ScopesArg = str | Scope | Iterable[Scope | str] | None


@dataclass(frozen=True, slots=True)
class Call(Generic[T]):
    """One request and how to read its answer. ``idempotent`` calls (GET, PUT,
    DELETE and reads sent as POST) may be retried; others are sent once."""

    method: str
    path: str
    parse: Callable[[Any], T]
    params: Params | None = None
    body: Any = None
    persona: str | None = None

    @property
    def idempotent(self) -> bool:
        """May this call be sent again after a connection error or a 503?"""
        return self.method in ("GET", "PUT", "DELETE") or self.path in _POST_READS


#: Reads sent as POST (their bodies are too rich for a query string).
_POST_READS = frozenset({"/v1/recall", "/v1/memories/query", "/v1/hint"})


def no_principal(principal: object) -> None:
    """Refuse ``principal=``: over HTTP the API key says who calls. The argument is
    kept so that code written for :class:`~kenning.Memory` fails loudly, not silently
    as the key's user."""
    if principal is not None:
        raise InvalidInput(
            "principal= has no meaning over HTTP: the API key says who you are "
            "(use one Client per key; persona= selects a persona)",
            field="principal",
        )


def _nothing(_: Any) -> None:
    return None


def _scopes(scopes: ScopesArg) -> Any:
    """``scopes`` as the API takes it: None, ``"all"`` or a list of scope keys."""
    if scopes is None:
        return None
    if isinstance(scopes, str) and scopes == ALL_SCOPES:
        return ALL_SCOPES
    if isinstance(scopes, str | Scope):
        return [plain(scopes)]
    if isinstance(scopes, Iterable):
        return [plain(s) for s in scopes]
    return scopes  # the server refuses it with a precise message


def _scope_params(scopes: ScopesArg) -> Params:
    wanted = _scopes(scopes)
    if wanted is None:
        return []
    if wanted == ALL_SCOPES:
        return [("scope", ALL_SCOPES)]
    return [("scope", str(s)) for s in wanted]


def _layers(layers: Iterable[Any] | None) -> Any:
    return None if layers is None or isinstance(layers, str) else [plain(x) for x in layers]


def _items(items: Sequence[Mapping[str, Any]]) -> Any:
    if not isinstance(items, Sequence) or isinstance(items, str | bytes):
        raise InvalidInput("items must be a list of mappings", field="items")
    return [plain(dict(i)) if isinstance(i, Mapping) else i for i in items]


def _memory(path: str, persona: str | None, method: str = "GET", body: Any = None) -> Call[Any]:
    return Call(method, path, wire.record, body=body, persona=persona)


def _id(memory_id: object) -> str:
    return f"/v1/memories/{segment(memory_id, 'memory id')}"


# -- memories ----------------------------------------------------------------------------


def write(
    items: Sequence[Mapping[str, Any]], reconcile: bool, persona: str | None
) -> Call[list[WriteResult]]:
    """``POST /v1/memories/batch``."""
    body = {"items": _items(items), "reconcile": reconcile}
    return Call(
        "POST",
        "/v1/memories/batch",
        lambda data: [wire.write_result(r) for r in data],
        body=body,
        persona=persona,
    )


def remember(
    content: str, scope: Scope | str | None, fields: Mapping[str, Any], persona: str | None
) -> Call[MemoryRecord]:
    """``POST /v1/memories`` (one memory, reconciled)."""
    body = plain({"content": content, "scope": scope, **fields})
    return Call(
        "POST",
        "/v1/memories",
        lambda data: wire.write_result(data).record,
        body={k: v for k, v in body.items() if v is not None or k == "content"},
        persona=persona,
    )


def upsert(
    key: str,
    content: str,
    scope: Scope | str | None,
    fields: Mapping[str, Any],
    persona: str | None,
) -> Call[MemoryRecord]:
    """``PUT /v1/memories/by-key``."""
    body = plain({"key": key, "content": content, "scope": scope, **fields})
    return _memory("/v1/memories/by-key", persona, "PUT", {k: v for k, v in body.items()})


def update(
    memory_id: str,
    expected_version: int | None,
    changes: Mapping[str, Any],
    persona: str | None,
) -> Call[MemoryRecord]:
    """``PATCH /v1/memories/{id}``."""
    body = plain(dict(changes))
    if expected_version is not None:
        body["expected_version"] = expected_version
    return _memory(_id(memory_id), persona, "PATCH", body)


def forget(memory_id: str, persona: str | None) -> Call[None]:
    """``DELETE /v1/memories/{id}``."""
    return Call("DELETE", _id(memory_id), _nothing, persona=persona)


def archive(memory_id: str, persona: str | None) -> Call[MemoryRecord]:
    """``POST /v1/memories/{id}/archive``."""
    return _memory(_id(memory_id) + "/archive", persona, "POST")


def restore(memory_id: str, persona: str | None) -> Call[MemoryRecord]:
    """``POST /v1/memories/{id}/restore``."""
    return _memory(_id(memory_id) + "/restore", persona, "POST")


def feedback(memory_id: str, kind: Any, persona: str | None) -> Call[MemoryRecord]:
    """``POST /v1/memories/{id}/feedback``."""
    return _memory(_id(memory_id) + "/feedback", persona, "POST", {"kind": plain(kind)})


def get(memory_id: str, persona: str | None) -> Call[MemoryRecord]:
    """``GET /v1/memories/{id}``."""
    return _memory(_id(memory_id), persona)


def history(memory_id: str, persona: str | None) -> Call[list[HistoryEntry]]:
    """``GET /v1/memories/{id}/history``."""
    return Call("GET", _id(memory_id) + "/history", wire.history, persona=persona)


def _filters(filters: MemoryFilter | Mapping[str, Any] | None) -> Any:
    return None if filters is None else plain(filters)


def recall(
    query: str,
    k: int,
    *,
    scopes: ScopesArg,
    layers: Iterable[Any] | None,
    filters: MemoryFilter | Mapping[str, Any] | None,
    min_confidence: float | None,
    explain: bool,
    sector: str | None,
    min_score: float | None,
    persona: str | None,
) -> Call[RecallResult]:
    """``POST /v1/recall``."""
    body = {
        "query": query,
        "k": k,
        "scopes": _scopes(scopes),
        "layers": _layers(layers) if layers is not None else None,
        "filters": _filters(filters),
        "min_confidence": min_confidence,
        "explain": explain,
        "sector": sector,
        "min_score": min_score,
    }
    if isinstance(layers, str):
        body["layers"] = layers
    return Call("POST", "/v1/recall", wire.recall_result, body=body, persona=persona)


def list_(
    *,
    scopes: ScopesArg,
    layers: Iterable[Any] | None,
    filters: MemoryFilter | Mapping[str, Any] | None,
    limit: int,
    cursor: str | None,
    persona: str | None,
) -> Call[Page]:
    """``POST /v1/memories/query`` (a listing with every filter the engine takes)."""
    body = {
        "scopes": _scopes(scopes),
        "layers": layers if isinstance(layers, str) else _layers(layers),
        "filters": _filters(filters),
        "limit": limit,
        "cursor": cursor,
    }
    return Call("POST", "/v1/memories/query", wire.page, body=body, persona=persona)


def stats(scopes: ScopesArg, persona: str | None) -> Call[list[LayerStats]]:
    """``GET /v1/stats``."""
    params = _scope_params(scopes) if scopes is not None else [("scope", "default")]
    return Call("GET", "/v1/stats", wire.stats, params=params, persona=persona)


# -- conversations, lifecycle -------------------------------------------------------------------


def ingest(
    messages: Sequence[str | Mapping[str, Any]],
    session_id: str,
    *,
    scope: Scope | str | None,
    episode_id: str | None,
    extract: bool,
    persona: str | None,
) -> Call[IngestResult]:
    """``POST /v1/sessions/{session_id}/messages``."""
    body = {
        "messages": plain(messages) if isinstance(messages, Sequence) else messages,
        "scope": plain(scope),
        "episode_id": episode_id,
        "extract": extract,
    }
    path = f"/v1/sessions/{segment(session_id, 'session id')}/messages"
    return Call("POST", path, wire.ingest_result, body=body, persona=persona)


def context(
    session_id: str, scope: Scope | str | None, persona: str | None
) -> Call[list[MemoryRecord]]:
    """``GET /v1/sessions/{session_id}/context``."""
    params = [] if scope is None else [("scope", str(plain(scope)))]
    path = f"/v1/sessions/{segment(session_id, 'session id')}/context"
    return Call(
        "GET", path, lambda data: [wire.record(m) for m in data], params=params, persona=persona
    )


def consolidate(scopes: ScopesArg, dry_run: bool, persona: str | None) -> Call[ConsolidationReport]:
    """``POST /v1/consolidate``."""
    body = {"scopes": _scopes(scopes), "dry_run": dry_run}
    return Call("POST", "/v1/consolidate", wire.consolidation, body=body, persona=persona)


def build_hint(
    hint_persona: str | None, query: str | None, max_chars: int, persona: str | None
) -> Call[str]:
    """``POST /v1/hint``."""
    body = {"persona": hint_persona, "query": query, "max_chars": max_chars}
    return Call("POST", "/v1/hint", lambda data: str(data["hint"]), body=body, persona=persona)


# -- review ---------------------------------------------------------------------------------------


def review_queue(
    scopes: ScopesArg, limit: int, cursor: str | None, persona: str | None
) -> Call[Page]:
    """``GET /v1/review``."""
    params = _scope_params(scopes) + [("limit", str(limit))]
    if cursor is not None:
        params.append(("cursor", str(cursor)))
    return Call("GET", "/v1/review", wire.page, params=params, persona=persona)


def approve(
    memory_id: str, changes: Mapping[str, Any] | None, persona: str | None
) -> Call[MemoryRecord]:
    """``POST /v1/review/{id}/approve``."""
    body = {"changes": None if changes is None else plain(dict(changes))}
    path = f"/v1/review/{segment(memory_id, 'memory id')}/approve"
    return _memory(path, persona, "POST", body)


def reject(memory_id: str, reason: str | None, persona: str | None) -> Call[None]:
    """``POST /v1/review/{id}/reject``."""
    path = f"/v1/review/{segment(memory_id, 'memory id')}/reject"
    return Call("POST", path, _nothing, body={"reason": reason}, persona=persona)


def review_many(
    ids: Sequence[str], action: str, reason: str | None, persona: str | None
) -> Call[tuple[dict[str, str], dict[str, str]]]:
    """``POST /v1/review/bulk``."""
    body = {"ids": list(ids), "action": action, "reason": reason}
    return Call(
        "POST",
        "/v1/review/bulk",
        lambda data: (dict(data["done"]), dict(data["failed"])),
        body=body,
        persona=persona,
    )


# -- graph ----------------------------------------------------------------------------------------


def neighbours(
    memory_id: str | None,
    entity: str | None,
    relations: Collection[Any] | None,
    limit: int,
    persona: str | None,
) -> Call[list[Neighbour]]:
    """``GET /v1/graph/neighbours``."""
    params: Params = [("limit", str(limit))]
    if memory_id is not None:
        params.append(("memory_id", str(memory_id)))
    if entity is not None:
        params.append(("entity", str(entity)))
    params += [("relation", str(plain(r))) for r in relations or ()]
    return Call(
        "GET",
        "/v1/graph/neighbours",
        lambda data: [wire.neighbour(n) for n in data],
        params=params,
        persona=persona,
    )


def entity(name: str, persona: str | None) -> Call[EntityView]:
    """``GET /v1/graph/entities/{name}``."""
    path = f"/v1/graph/entities/{segment(name, 'entity name')}"
    return Call("GET", path, wire.entity_view, persona=persona)


def entities(memory_id: str, persona: str | None) -> Call[list[Entity]]:
    """``GET /v1/memories/{id}/entities``."""
    return Call(
        "GET",
        _id(memory_id) + "/entities",
        lambda data: [wire.entity(e) for e in data],
        persona=persona,
    )


def paths(a: str, b: str, max_hops: int, limit: int, persona: str | None) -> Call[list[GraphPath]]:
    """``GET /v1/graph/paths``."""
    params = [("a", str(a)), ("b", str(b)), ("max_hops", str(max_hops)), ("limit", str(limit))]
    return Call(
        "GET",
        "/v1/graph/paths",
        lambda data: [wire.graph_path(p) for p in data],
        params=params,
        persona=persona,
    )


def link(a: str, b: str, relation: Any, weight: float, persona: str | None) -> Call[GraphEdge]:
    """``POST /v1/graph/links``."""
    body = {"a": a, "b": b, "relation": plain(relation), "weight": weight}
    return Call("POST", "/v1/graph/links", wire.graph_edge, body=body, persona=persona)
