"""Every REST call the clients make, built once: the route, the query or body, whether
it may be retried, and how its answer becomes kenning's model classes.

Each function takes the arguments of the :class:`~kenning.Memory` method of the
same name (``principal`` aside, see :func:`no_principal`) and returns a
:class:`Call`; :class:`~kenning.client.Client` sends it over a blocking
transport, :class:`~kenning.client.AsyncClient` over an asyncio one.

A call carries the engine's own checks of its arguments (:mod:`kenning.validation`,
and the engine's parsers of scopes, cursors and messages, in the engine's order),
run before anything is sent (:func:`checked`): a bad argument raises the
:class:`~kenning.errors.InvalidInput` the embedded engine raises, with the same
message and field. What only the server knows (whether a memory exists, who may
touch it) is the server's answer.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from ..access import AccessPolicy
from ..errors import InvalidInput
from ..graph.api import EntityView, Neighbour
from ..graph.model import Entity, GraphEdge, GraphPath
from ..lifecycle.consolidate import ConsolidationReport
from ..lifecycle.ingest import IngestResult, parse_messages
from ..lifecycle.model import AccessEntry, Policy, Sector
from ..lifecycle.policy import check_target
from ..lifecycle.writer import WriteResult
from ..models import (
    ALL_SCOPES,
    HistoryEntry,
    LayerStats,
    MemoryFilter,
    MemoryRecord,
    Page,
    Principal,
    RecallResult,
    Role,
    Scope,
)
from ..paging import decode_cursor
from ..validation import (
    MAX_INT32,
    UNBOUNDED,
    Limits,
    build_filter,
    check_principal,
    check_updatable,
    check_window,
    clean_batch,
    clean_changes,
    clean_count,
    clean_feedback,
    clean_flag,
    clean_item,
    clean_k,
    clean_key,
    clean_memory_type,
    clean_number,
    clean_recall,
    clean_tags,
    clean_text,
)
from . import _wire as wire
from ._wire import plain, segment

__all__ = ["Call", "checked", "no_principal"]

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
    #: The engine's checks of the arguments, under the given size limits.
    check: Callable[[Limits], object] | None = None

    @property
    def idempotent(self) -> bool:
        """May this call be sent again after a connection error or a 503?"""
        return self.method in ("GET", "PUT", "DELETE") or self.path in _POST_READS


#: Reads sent as POST (their bodies are too rich for a query string).
_POST_READS = frozenset({"/v1/recall", "/v1/memories/query", "/v1/hint"})


def checked(call: Call[Any], limits: Limits | None) -> bool:
    """Run ``call``'s checks. True when they pass; their error when ``limits`` are the
    server's; False when they failed with the limits unknown (``None``): the client then
    reads the server's limits and checks again, so the error is worded as the engine
    words it (an earlier size check may fail first, and a size limit is in the words)."""
    if call.check is None:
        return True
    try:
        call.check(UNBOUNDED if limits is None else limits)
    except InvalidInput:
        if limits is None:
            return False
        raise
    return True


def limits() -> Call[Limits]:
    """``GET /v1/limits``: the size limits the server checks."""
    return Call("GET", "/v1/limits", wire.limits)


def no_principal(principal: object) -> None:
    """Refuse ``principal=``: over HTTP the API key says who calls. The argument is
    kept so that code written for :class:`~kenning.Memory` fails loudly, not silently
    as the key's user (one that is not a Principal is refused as the engine does)."""
    if check_principal(principal) is not None:
        raise InvalidInput(
            "principal= has no meaning over HTTP: the API key says who you are "
            "(use one Client per key; persona= selects a persona)",
            field="principal",
        )


def _nothing(_: Any) -> None:
    return None


#: An admin may read every scope, so :meth:`AccessPolicy.resolve` only parses for it:
#: the engine's own parsing of ``scopes`` and ``layers`` (who may read them is the
#: server's question).
_PARSER, _ANYONE = AccessPolicy(), Principal(roles=frozenset({Role.ADMIN}))


def _resolve(scopes: ScopesArg, layers: Iterable[Any] | None = None) -> None:
    _PARSER.resolve(_ANYONE, scopes, layers)


def _scope(value: Any) -> Scope | None:
    """A write's scope as the engine reads it (None: the caller's own)."""
    return value if value is None or isinstance(value, Scope) else Scope.parse(value)


def _memory_id(memory_id: object) -> None:
    clean_text(memory_id, "memory id", 64)


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
    return scopes


def _scope_params(scopes: ScopesArg) -> Params:
    wanted = _scopes(scopes)
    if wanted is None:
        return []
    if wanted == ALL_SCOPES:
        return [("scope", ALL_SCOPES)]
    return [("scope", str(s)) for s in wanted]


def _layers(layers: Iterable[Any] | None) -> Any:
    if layers is None or isinstance(layers, str) or not isinstance(layers, Iterable):
        return layers
    return [plain(x) for x in layers]


def _items(items: Any) -> Any:
    if not isinstance(items, Sequence) or isinstance(items, str | bytes):
        return items
    return [plain(dict(i)) if isinstance(i, Mapping) else i for i in items]


def _new_items(items: Any, lim: Limits) -> None:
    clean_batch(items, lim.batch, lambda item: clean_item(item, lim, _scope))


def _update(changes: Mapping[str, Any], lim: Limits) -> None:
    check_updatable(changes)
    new = clean_changes(changes, lim)
    if "valid_from" in new and "valid_to" in new:
        check_window(new["valid_from"], new["valid_to"])


def _memory(
    path: str,
    persona: str | None,
    method: str = "GET",
    body: Any = None,
    check: Callable[[Limits], object] | None = None,
) -> Call[Any]:
    return Call(method, path, wire.record, body=body, persona=persona, check=check)


def _id(memory_id: object) -> str:
    return f"/v1/memories/{segment(memory_id)}"


def _by_id(memory_id: object) -> Callable[[Limits], object]:
    return lambda lim: _memory_id(memory_id)


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
        check=lambda lim: _new_items(items, lim),
    )


def remember(
    content: str, scope: Scope | str | None, fields: Mapping[str, Any], persona: str | None
) -> Call[MemoryRecord]:
    """``POST /v1/memories`` (one memory, reconciled)."""
    item = {"content": content, "scope": scope, **fields}
    body = plain(item)
    return Call(
        "POST",
        "/v1/memories",
        lambda data: wire.write_result(data).record,
        body={k: v for k, v in body.items() if v is not None or k == "content"},
        persona=persona,
        check=lambda lim: _new_items([item], lim),
    )


def upsert(
    key: str,
    content: str,
    scope: Scope | str | None,
    fields: Mapping[str, Any],
    persona: str | None,
) -> Call[MemoryRecord]:
    """``PUT /v1/memories/by-key`` (checked as the engine checks a new keyed memory)."""

    def check(lim: Limits) -> None:
        _scope(scope)
        clean_key(key, lim.key_chars)
        _new_items([{"content": content, "scope": scope, "key": key, **fields}], lim)

    body = plain({"key": key, "content": content, "scope": scope, **fields})
    return _memory("/v1/memories/by-key", persona, "PUT", body, check)


def update(
    memory_id: str,
    expected_version: int | None,
    changes: Mapping[str, Any],
    persona: str | None,
) -> Call[MemoryRecord]:
    """``PATCH /v1/memories/{id}``."""

    def check(lim: Limits) -> None:
        check_updatable(changes)
        _memory_id(memory_id)
        _update(changes, lim)

    body = plain(dict(changes))
    if expected_version is not None:
        body["expected_version"] = expected_version
    return _memory(_id(memory_id), persona, "PATCH", body, check)


def forget(memory_id: str, persona: str | None) -> Call[None]:
    """``DELETE /v1/memories/{id}``."""
    return Call("DELETE", _id(memory_id), _nothing, persona=persona, check=_by_id(memory_id))


def archive(memory_id: str, persona: str | None) -> Call[MemoryRecord]:
    """``POST /v1/memories/{id}/archive``."""
    return _memory(_id(memory_id) + "/archive", persona, "POST", check=_by_id(memory_id))


def restore(memory_id: str, persona: str | None) -> Call[MemoryRecord]:
    """``POST /v1/memories/{id}/restore``."""
    return _memory(_id(memory_id) + "/restore", persona, "POST", check=_by_id(memory_id))


def feedback(memory_id: str, kind: Any, persona: str | None) -> Call[MemoryRecord]:
    """``POST /v1/memories/{id}/feedback``."""

    def check(lim: Limits) -> None:
        clean_feedback(kind)
        _memory_id(memory_id)

    path = _id(memory_id) + "/feedback"
    return _memory(path, persona, "POST", {"kind": plain(kind)}, check)


def get(memory_id: str, persona: str | None) -> Call[MemoryRecord]:
    """``GET /v1/memories/{id}``."""
    return _memory(_id(memory_id), persona, check=_by_id(memory_id))


def history(memory_id: str, persona: str | None) -> Call[list[HistoryEntry]]:
    """``GET /v1/memories/{id}/history``."""
    return Call(
        "GET",
        _id(memory_id) + "/history",
        wire.history,
        persona=persona,
        check=_by_id(memory_id),
    )


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

    def check(lim: Limits) -> None:
        clean_recall(query, k, min_confidence, min_score, filters, lim)
        _resolve(scopes, layers)
        if sector is not None:
            clean_text(sector, "sector", 256)

    body = {
        "query": query,
        "k": k,
        "scopes": _scopes(scopes),
        "layers": _layers(layers),
        "filters": _filters(filters),
        "min_confidence": min_confidence,
        "explain": explain,
        "sector": sector,
        "min_score": min_score,
    }
    return Call("POST", "/v1/recall", wire.recall_result, body=body, persona=persona, check=check)


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

    def check(lim: Limits) -> None:
        clean_k(limit, lim.k, "limit")
        _resolve(scopes, layers)
        build_filter(filters)
        decode_cursor(cursor)

    body = {
        "scopes": _scopes(scopes),
        "layers": _layers(layers),
        "filters": _filters(filters),
        "limit": limit,
        "cursor": cursor,
    }
    return Call("POST", "/v1/memories/query", wire.page, body=body, persona=persona, check=check)


def stats(scopes: ScopesArg, persona: str | None) -> Call[list[LayerStats]]:
    """``GET /v1/stats``."""
    params = _scope_params(scopes) if scopes is not None else [("scope", "default")]
    return Call(
        "GET",
        "/v1/stats",
        wire.stats,
        params=params,
        persona=persona,
        check=lambda lim: _resolve(scopes),
    )


# -- conversations, lifecycle -------------------------------------------------------------------


def _session(session_id: object) -> str:
    return f"/v1/sessions/{segment(session_id)}"


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

    def check(lim: Limits) -> None:
        _scope(scope)
        clean_text(session_id, "session_id", 256)
        if episode_id is not None:
            clean_text(episode_id, "episode_id", 256)
        parse_messages(messages, lim.content_chars)

    body = {
        "messages": plain(messages) if isinstance(messages, Sequence) else messages,
        "scope": plain(scope),
        "episode_id": episode_id,
        "extract": extract,
    }
    path = _session(session_id) + "/messages"
    return Call("POST", path, wire.ingest_result, body=body, persona=persona, check=check)


def context(
    session_id: str, scope: Scope | str | None, persona: str | None
) -> Call[list[MemoryRecord]]:
    """``GET /v1/sessions/{session_id}/context``."""

    def check(lim: Limits) -> None:
        _scope(scope)
        clean_text(session_id, "session_id", 256)

    params = [] if scope is None else [("scope", str(plain(scope)))]
    return Call(
        "GET",
        _session(session_id) + "/context",
        lambda data: [wire.record(m) for m in data],
        params=params,
        persona=persona,
        check=check,
    )


def consolidate(scopes: ScopesArg, dry_run: bool, persona: str | None) -> Call[ConsolidationReport]:
    """``POST /v1/consolidate``."""
    body = {"scopes": _scopes(scopes), "dry_run": dry_run}
    return Call(
        "POST",
        "/v1/consolidate",
        wire.consolidation,
        body=body,
        persona=persona,
        check=lambda lim: _resolve(scopes),
    )


def build_hint(
    hint_persona: str | None, query: str | None, max_chars: int, persona: str | None
) -> Call[str]:
    """``POST /v1/hint``."""

    def check(lim: Limits) -> None:
        if hint_persona is not None:
            clean_text(hint_persona, "persona", 128)
        clean_count(max_chars, "max_chars", minimum=200)
        if query is not None and query.strip():
            clean_text(query, "query", lim.content_chars)

    body = {"persona": hint_persona, "query": query, "max_chars": max_chars}
    return Call(
        "POST",
        "/v1/hint",
        lambda data: str(data["hint"]),
        body=body,
        persona=persona,
        check=check,
    )


# -- review ---------------------------------------------------------------------------------------


def review_queue(
    scopes: ScopesArg, limit: int, cursor: str | None, persona: str | None
) -> Call[Page]:
    """``GET /v1/review``."""

    def check(lim: Limits) -> None:
        if not (scopes is None or scopes == ALL_SCOPES):
            _resolve(scopes)
        clean_k(limit, lim.k, "limit")
        decode_cursor(cursor)

    params = _scope_params(scopes) + [("limit", str(limit))]
    if cursor is not None:
        params.append(("cursor", str(cursor)))
    return Call("GET", "/v1/review", wire.page, params=params, persona=persona, check=check)


def approve(
    memory_id: str, changes: Mapping[str, Any] | None, persona: str | None
) -> Call[MemoryRecord]:
    """``POST /v1/review/{id}/approve`` (``changes`` checked as an update's)."""

    def check(lim: Limits) -> None:
        _memory_id(memory_id)
        if isinstance(changes, Mapping):
            _update(changes, lim)

    edits = plain(dict(changes)) if isinstance(changes, Mapping) else changes
    path = f"/v1/review/{segment(memory_id)}/approve"
    return _memory(path, persona, "POST", {"changes": edits}, check)


def reject(memory_id: str, reason: str | None, persona: str | None) -> Call[None]:
    """``POST /v1/review/{id}/reject``."""

    def check(lim: Limits) -> None:
        _memory_id(memory_id)
        if reason is not None:
            clean_text(reason, "reason", 1000)

    path = f"/v1/review/{segment(memory_id)}/reject"
    return Call("POST", path, _nothing, body={"reason": reason}, persona=persona, check=check)


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


# -- strength, sectors, policies -------------------------------------------------------------


def access_log(memory_id: str, limit: int, persona: str | None) -> Call[list[AccessEntry]]:
    """``GET /v1/memories/{id}/access-log``."""

    def check(lim: Limits) -> None:
        _memory_id(memory_id)
        clean_k(limit, lim.k, "limit")

    return Call(
        "GET",
        _id(memory_id) + "/access-log",
        lambda data: [wire.access_entry(a) for a in data],
        params=[("limit", str(limit))],
        persona=persona,
        check=check,
    )


def strength(memory_id: str, persona: str | None) -> Call[float]:
    """``GET /v1/memories/{id}/strength``."""
    return Call(
        "GET",
        _id(memory_id) + "/strength",
        lambda data: float(data["strength"]),
        persona=persona,
        check=_by_id(memory_id),
    )


def reinforce(memory_id: str, persona: str | None) -> Call[MemoryRecord]:
    """``POST /v1/memories/{id}/reinforce``."""
    return _memory(_id(memory_id) + "/reinforce", persona, "POST", check=_by_id(memory_id))


def confidence_components(memory_id: str, persona: str | None) -> Call[dict[str, float]]:
    """``GET /v1/memories/{id}/confidence``."""
    return Call(
        "GET",
        _id(memory_id) + "/confidence",
        lambda data: {str(k): float(v) for k, v in data.items()},
        persona=persona,
        check=_by_id(memory_id),
    )


def create_sector(
    name: str,
    scope: Scope | str | None,
    parent_id: str | None,
    decay_multiplier: float,
    topics: Sequence[str],
    max_size: int | None,
    persona: str | None,
) -> Call[Sector]:
    """``POST /v1/sectors`` (who may write the scope, and whether the parent exists,
    are the server's answer; an unset ``max_size`` is the server's default)."""

    def check(lim: Limits) -> None:
        _scope(scope)
        clean_text(name, "name", 128)
        clean_number(decay_multiplier, "decay_multiplier", at_most=100)
        if max_size is not None:
            clean_count(max_size, "max_size", minimum=4, maximum=MAX_INT32)
        clean_tags(list(topics), lim.tags)

    body = {
        "name": name,
        "scope": plain(scope),
        "parent_id": parent_id,
        "decay_multiplier": decay_multiplier,
        "topics": plain(list(topics)) if isinstance(topics, Iterable) else topics,
        "max_size": max_size,
    }
    return Call("POST", "/v1/sectors", wire.sector, body=body, persona=persona, check=check)


def sectors(scopes: ScopesArg, persona: str | None) -> Call[list[Sector]]:
    """``GET /v1/sectors``."""
    params = _scope_params(scopes) if scopes is not None else [("scope", "default")]
    return Call(
        "GET",
        "/v1/sectors",
        lambda data: [wire.sector(x) for x in data],
        params=params,
        persona=persona,
        check=lambda lim: _resolve(scopes),
    )


def policies(persona: str | None) -> Call[list[Policy]]:
    """``GET /v1/admin/policies``."""
    return Call(
        "GET", "/v1/admin/policies", lambda data: [wire.policy(x) for x in data], persona=persona
    )


def set_policy(
    target: str,
    memory_type: str,
    retention_days: float | None,
    capacity: int | None,
    review: bool,
    persona: str | None,
) -> Call[Policy]:
    """``PUT /v1/admin/policies`` (who may set one is the server's answer)."""

    def check(lim: Limits) -> None:
        check_target(clean_text(target, "target", 300))
        if memory_type != "*":
            clean_memory_type(memory_type)
        if retention_days is not None:
            clean_number(retention_days, "retention_days")
        if capacity is not None:
            clean_count(capacity, "capacity", maximum=MAX_INT32)
        clean_flag(review, "review")

    body = {
        "target": target,
        "memory_type": plain(memory_type),
        "retention_days": retention_days,
        "capacity": capacity,
        "review": review,
    }
    return Call("PUT", "/v1/admin/policies", wire.policy, body=body, persona=persona, check=check)


def delete_policy(target: str, memory_type: str, persona: str | None) -> Call[None]:
    """``DELETE /v1/admin/policies``."""
    params = [("target", str(target)), ("memory_type", str(plain(memory_type)))]
    return Call("DELETE", "/v1/admin/policies", _nothing, params=params, persona=persona)


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
    path = f"/v1/graph/entities/{segment(name)}"
    return Call(
        "GET",
        path,
        wire.entity_view,
        persona=persona,
        check=lambda lim: clean_text(name, "entity", 256),
    )


def entities(memory_id: str, persona: str | None) -> Call[list[Entity]]:
    """``GET /v1/memories/{id}/entities``."""
    return Call(
        "GET",
        _id(memory_id) + "/entities",
        lambda data: [wire.entity(e) for e in data],
        persona=persona,
        check=_by_id(memory_id),
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
