"""``Client``: :class:`kenning.Memory`'s methods, answered by a kenning server over REST.

The request building, retry decisions and response parsing live in
:mod:`kenning.client._calls` and :mod:`kenning.client._config`, shared with
:class:`~kenning.client.AsyncClient`; this module only sends and sleeps.
"""

from __future__ import annotations

import builtins
import time
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import Any, TypeVar

import httpx

from ..errors import KenningError
from ..graph.api import EntityView, Neighbour
from ..graph.model import Entity, GraphEdge, GraphPath, Relation
from ..lifecycle.consolidate import ConsolidationReport
from ..lifecycle.ingest import IngestResult
from ..lifecycle.model import AccessEntry, Policy, Sector
from ..lifecycle.writer import WriteResult
from ..models import (
    ALL_SCOPES,
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
from ..validation import UNBOUNDED, Limits
from . import _calls as calls
from ._calls import Call, ScopesArg, checked, no_principal
from ._config import ClientConfig
from ._transport import StdlibTransport

__all__ = ["Client", "ClientGraph"]

T = TypeVar("T")


class _Sender:
    """Sends calls over one ``httpx.Client``, retrying what may be retried."""

    def __init__(self, config: ClientConfig, transport: httpx.BaseTransport | None) -> None:
        self.config = config
        self.http = httpx.Client(
            headers=config.headers(),
            timeout=config.timeout_s,
            transport=transport or StdlibTransport(),
        )
        #: The server's size limits, once read (see :func:`~kenning.client._calls.checked`).
        self.limits: Limits | None = None
        self.sleep: Callable[[float], None] = time.sleep

    def send(self, call: Call[T]) -> T:
        if not checked(call, self.limits):  # worded with the server's limits, then raised
            checked(call, self.server_limits())
        attempt = 0
        while True:
            try:
                response = self.http.request(**self.config.request(call))
            except httpx.TransportError as exc:
                wait = self.config.retry_after_error(call, attempt, exc)
            else:
                wait = self.config.retry_after_status(call, attempt, response)
                if wait < 0:
                    return self.config.result(call, response)
            self.sleep(wait)
            attempt += 1

    def server_limits(self) -> Limits:
        """The server's size limits (read once); unbounded when it does not say."""
        if self.limits is None:
            try:
                self.limits = self.send(calls.limits())
            except KenningError:
                return UNBOUNDED
        return self.limits


class ClientGraph:
    """The memory graph over REST (``client.graph``, mirroring ``Memory.graph``)."""

    def __init__(self, sender: _Sender) -> None:
        self._sender = sender

    def neighbours(
        self,
        memory_id: str | None = None,
        *,
        entity: str | None = None,
        relations: Collection[str | Relation] | None = None,
        limit: int = 20,
        principal: Principal | None = None,
        persona: str | None = None,
    ) -> builtins.list[Neighbour]:
        """Memories linked to ``memory_id`` (with the link), or mentioning ``entity``."""
        no_principal(principal)
        return self._sender.send(calls.neighbours(memory_id, entity, relations, limit, persona))

    def entity(
        self, name: str, *, principal: Principal | None = None, persona: str | None = None
    ) -> EntityView:
        """An entity or topic: the memories mentioning it and its co-mentioned entities."""
        no_principal(principal)
        return self._sender.send(calls.entity(name, persona))

    def entities(
        self, memory_id: str, *, principal: Principal | None = None, persona: str | None = None
    ) -> builtins.list[Entity]:
        """The entities and topics a memory mentions."""
        no_principal(principal)
        return self._sender.send(calls.entities(memory_id, persona))

    def paths(
        self,
        a: str,
        b: str,
        max_hops: int = 3,
        limit: int = 5,
        *,
        principal: Principal | None = None,
        persona: str | None = None,
    ) -> builtins.list[GraphPath]:
        """The strongest paths between memories ``a`` and ``b``, best first."""
        no_principal(principal)
        return self._sender.send(calls.paths(a, b, max_hops, limit, persona))

    def link(
        self,
        a: str,
        b: str,
        relation: str | Relation,
        weight: float = 1.0,
        *,
        principal: Principal | None = None,
        persona: str | None = None,
    ) -> GraphEdge:
        """Link two memories of one scope with a typed, weighted edge."""
        no_principal(principal)
        return self._sender.send(calls.link(a, b, relation, weight, persona))


class Client:
    """A kenning server, with the methods of :class:`kenning.Memory`.

    >>> client = Client("http://127.0.0.1:8765", "kn_...")   # doctest: +SKIP
    >>> client.remember("Alice prefers tea over coffee")      # doctest: +SKIP
    >>> client.recall("what does Alice drink?")[0].memory     # doctest: +SKIP

    ``base_url`` and ``api_key`` default to ``KENNING_URL`` and ``KENNING_API_KEY``
    (read here, when the client is built). ``persona`` is the persona every call acts
    as unless a call names its own (``persona=``). ``timeout`` is in seconds; idempotent
    calls are retried ``retries`` times on connection errors and HTTP 503, waiting
    ``min(backoff * 2**n, max_backoff)`` seconds. ``transport`` replaces the network
    transport (default: keep-alive connections over the standard library's
    ``http.client``, see :mod:`kenning.client._transport`). Methods take
    ``principal=`` only to refuse it (the key says who calls): see
    :func:`kenning.client._calls.no_principal`.
    """

    def __init__(
        self,
        base_url: str | None = None,
        api_key: str | None = None,
        *,
        persona: str | None = None,
        timeout: float = 30.0,
        retries: int = 2,
        backoff: float = 0.2,
        max_backoff: float = 5.0,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.config = ClientConfig.resolve(
            base_url,
            api_key,
            persona=persona,
            timeout_s=timeout,
            retries=retries,
            backoff_s=backoff,
            max_backoff_s=max_backoff,
        )
        self._sender = _Sender(self.config, transport)
        self._graph = ClientGraph(self._sender)

    @property
    def graph(self) -> ClientGraph:
        """The memory graph (neighbours, entity, entities, paths, link)."""
        return self._graph

    def close(self) -> None:
        """Close the connection pool."""
        self._sender.http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- writes ---------------------------------------------------------------------------

    def remember(
        self,
        content: str,
        *,
        scope: Scope | str | None = None,
        principal: Principal | None = None,
        persona: str | None = None,
        **fields: Any,
    ) -> MemoryRecord:
        """Store one memory and return the memory that now holds it (see ``Memory.remember``)."""
        no_principal(principal)
        return self._sender.send(calls.remember(content, scope, fields, persona))

    def remember_many(
        self,
        items: Sequence[Mapping[str, Any]],
        *,
        principal: Principal | None = None,
        progress: Callable[[int], None] | None = None,
        persona: str | None = None,
    ) -> builtins.list[MemoryRecord]:
        """Store a batch atomically (one request); ``progress`` is called once, at the end."""
        results = self.write(items, principal=principal, persona=persona)
        if progress is not None:
            progress(len(results))
        return [r.record for r in results]

    def write(
        self,
        items: Sequence[Mapping[str, Any]],
        *,
        reconcile: bool = True,
        principal: Principal | None = None,
        progress: Callable[[int], None] | None = None,
        persona: str | None = None,
    ) -> builtins.list[WriteResult]:
        """Store a batch in one transaction, reconciling each item (see ``Memory.write``)."""
        no_principal(principal)
        results = self._sender.send(calls.write(items, reconcile, persona))
        if progress is not None:
            progress(len(results))
        return results

    def upsert(
        self,
        key: str,
        content: str,
        *,
        scope: Scope | str | None = None,
        principal: Principal | None = None,
        persona: str | None = None,
        **fields: Any,
    ) -> MemoryRecord:
        """Create or update the memory with ``key`` in ``scope``."""
        no_principal(principal)
        return self._sender.send(calls.upsert(key, content, scope, fields, persona))

    def update(
        self,
        memory_id: str,
        *,
        principal: Principal | None = None,
        expected_version: int | None = None,
        persona: str | None = None,
        **changes: Any,
    ) -> MemoryRecord:
        """Change fields of a memory; with ``expected_version``, only if it is unchanged."""
        no_principal(principal)
        return self._sender.send(calls.update(memory_id, expected_version, changes, persona))

    def forget(
        self, memory_id: str, *, principal: Principal | None = None, persona: str | None = None
    ) -> None:
        """Delete a memory from every index; its history keeps who and when only."""
        no_principal(principal)
        return self._sender.send(calls.forget(memory_id, persona))

    def archive(
        self, memory_id: str, *, principal: Principal | None = None, persona: str | None = None
    ) -> MemoryRecord:
        """Take a memory out of recall without deleting it (reversible)."""
        no_principal(principal)
        return self._sender.send(calls.archive(memory_id, persona))

    def restore(
        self, memory_id: str, *, principal: Principal | None = None, persona: str | None = None
    ) -> MemoryRecord:
        """Bring an archived, superseded or pending memory back to active."""
        no_principal(principal)
        return self._sender.send(calls.restore(memory_id, persona))

    def feedback(
        self,
        memory_id: str,
        kind: FeedbackKind | str,
        *,
        principal: Principal | None = None,
        persona: str | None = None,
    ) -> MemoryRecord:
        """Adjust confidence (upvote, downvote, validate, contradict, confirm)."""
        no_principal(principal)
        return self._sender.send(calls.feedback(memory_id, kind, persona))

    # -- reads ----------------------------------------------------------------------------

    def get(
        self, memory_id: str, *, principal: Principal | None = None, persona: str | None = None
    ) -> MemoryRecord:
        """One memory the caller may read (``NotFound`` otherwise)."""
        no_principal(principal)
        return self._sender.send(calls.get(memory_id, persona))

    def recall(
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
        persona: str | None = None,
    ) -> RecallResult:
        """The ``k`` memories that best answer ``query`` (see ``Memory.recall``)."""
        no_principal(principal)
        call = calls.recall(
            query,
            k,
            scopes=scopes,
            layers=layers,
            filters=filters,
            min_confidence=min_confidence,
            explain=explain,
            sector=sector,
            min_score=min_score,
            persona=persona,
        )
        return self._sender.send(call)

    def list(
        self,
        *,
        scopes: ScopesArg = None,
        layers: Iterable[Layer | str] | None = None,
        filters: MemoryFilter | Mapping[str, Any] | None = None,
        limit: int = 50,
        cursor: str | None = None,
        principal: Principal | None = None,
        persona: str | None = None,
    ) -> Page:
        """Memories newest first, one page at a time (pass ``next_cursor`` back)."""
        no_principal(principal)
        call = calls.list_(
            scopes=scopes,
            layers=layers,
            filters=filters,
            limit=limit,
            cursor=cursor,
            persona=persona,
        )
        return self._sender.send(call)

    def history(
        self, memory_id: str, *, principal: Principal | None = None, persona: str | None = None
    ) -> builtins.list[HistoryEntry]:
        """Every change to a memory, oldest first."""
        no_principal(principal)
        return self._sender.send(calls.history(memory_id, persona))

    def stats(
        self,
        *,
        scopes: ScopesArg = ALL_SCOPES,
        principal: Principal | None = None,
        persona: str | None = None,
    ) -> builtins.list[LayerStats]:
        """Per-layer statistics over the scopes the caller may read."""
        no_principal(principal)
        return self._sender.send(calls.stats(scopes, persona))

    # -- conversations and lifecycle ------------------------------------------------------

    def ingest(
        self,
        messages: Sequence[str | Mapping[str, Any]],
        session_id: str,
        *,
        scope: Scope | str | None = None,
        episode_id: str | None = None,
        extract: bool = True,
        principal: Principal | None = None,
        persona: str | None = None,
    ) -> IngestResult:
        """Store conversation messages and the facts extracted from them."""
        no_principal(principal)
        call = calls.ingest(
            messages,
            session_id,
            scope=scope,
            episode_id=episode_id,
            extract=extract,
            persona=persona,
        )
        return self._sender.send(call)

    def context(
        self,
        session_id: str,
        *,
        scope: Scope | str | None = None,
        principal: Principal | None = None,
        persona: str | None = None,
    ) -> builtins.list[MemoryRecord]:
        """The session's context window (its working-memory messages), oldest first."""
        no_principal(principal)
        return self._sender.send(calls.context(session_id, scope, persona))

    def consolidate(
        self,
        *,
        scopes: ScopesArg = ALL_SCOPES,
        dry_run: bool = False,
        principal: Principal | None = None,
        persona: str | None = None,
    ) -> ConsolidationReport:
        """One consolidation pass over the scopes the caller may write (or a dry run)."""
        no_principal(principal)
        return self._sender.send(calls.consolidate(scopes, dry_run, persona))

    def build_hint(
        self,
        *,
        persona: str | None = None,
        query: str | None = None,
        max_chars: int = 6000,
        principal: Principal | None = None,
    ) -> str:
        """A fenced memory block for a system prompt; ``persona`` acts as that persona
        (sent in the body, checked by the engine; the header keeps the client's persona)."""
        no_principal(principal)
        return self._sender.send(calls.build_hint(persona, query, max_chars, None))

    # -- review ---------------------------------------------------------------------------

    def review_queue(
        self,
        *,
        scopes: ScopesArg = None,
        limit: int = 50,
        cursor: str | None = None,
        principal: Principal | None = None,
        persona: str | None = None,
    ) -> Page:
        """Pending memories the caller may review, newest first."""
        no_principal(principal)
        return self._sender.send(calls.review_queue(scopes, limit, cursor, persona))

    def approve(
        self,
        memory_id: str,
        *,
        changes: Mapping[str, Any] | None = None,
        principal: Principal | None = None,
        persona: str | None = None,
    ) -> MemoryRecord:
        """Make a pending memory active, optionally with edits."""
        no_principal(principal)
        return self._sender.send(calls.approve(memory_id, changes, persona))

    def reject(
        self,
        memory_id: str,
        *,
        reason: str | None = None,
        principal: Principal | None = None,
        persona: str | None = None,
    ) -> None:
        """Delete a pending memory (the audit line keeps the reason)."""
        no_principal(principal)
        return self._sender.send(calls.reject(memory_id, reason, persona))

    def review_many(
        self,
        ids: Sequence[str],
        action: str,
        *,
        reason: str | None = None,
        principal: Principal | None = None,
        persona: str | None = None,
    ) -> tuple[dict[str, str], dict[str, str]]:
        """Approve or reject many; per id, what was done or the error that stopped it."""
        no_principal(principal)
        return self._sender.send(calls.review_many(ids, action, reason, persona))

    # -- strength, access log, sectors, policies -----------------------------------------

    def reinforce(
        self, memory_id: str, *, principal: Principal | None = None, persona: str | None = None
    ) -> MemoryRecord:
        """Strengthen a memory now: +reinforcement, its decay clock restarts."""
        no_principal(principal)
        return self._sender.send(calls.reinforce(memory_id, persona))

    def strength(
        self, memory_id: str, *, principal: Principal | None = None, persona: str | None = None
    ) -> float:
        """A memory's current strength (decayed to now, with its sector's multiplier)."""
        no_principal(principal)
        return self._sender.send(calls.strength(memory_id, persona))

    def confidence_components(
        self, memory_id: str, *, principal: Principal | None = None, persona: str | None = None
    ) -> dict[str, float]:
        """The component confidence of a memory, each component shown (source,
        entities, relationships, validation, feedback) with the confidence they give."""
        no_principal(principal)
        return self._sender.send(calls.confidence_components(memory_id, persona))

    def create_sector(
        self,
        name: str,
        *,
        scope: Scope | str | None = None,
        parent_id: str | None = None,
        decay_multiplier: float = 1.0,
        topics: Sequence[str] = (),
        max_size: int | None = None,
        principal: Principal | None = None,
        persona: str | None = None,
    ) -> Sector:
        """Add a sector to a scope's hierarchy: new memories with one of its
        ``topics`` as a tag (or close to its centroid) are assigned to it."""
        no_principal(principal)
        call = calls.create_sector(
            name, scope, parent_id, decay_multiplier, topics, max_size, persona
        )
        return self._sender.send(call)

    def access_log(
        self,
        memory_id: str,
        *,
        limit: int = 100,
        principal: Principal | None = None,
        persona: str | None = None,
    ) -> builtins.list[AccessEntry]:
        """The latest accesses of a memory (recall hits, reinforcements), oldest first."""
        no_principal(principal)
        return self._sender.send(calls.access_log(memory_id, limit, persona))

    def sectors(
        self,
        *,
        scopes: ScopesArg = ALL_SCOPES,
        principal: Principal | None = None,
        persona: str | None = None,
    ) -> builtins.list[Sector]:
        """The sectors of the scopes the caller may read, with their sizes."""
        no_principal(principal)
        return self._sender.send(calls.sectors(scopes, persona))

    def set_policy(
        self,
        target: str = "*",
        *,
        memory_type: str = "*",
        retention_days: float | None = None,
        capacity: int | None = None,
        review: bool = False,
        principal: Principal | None = None,
        persona: str | None = None,
    ) -> Policy:
        """Set the retention / capacity / review policy for a target and memory type
        (organization admins only)."""
        no_principal(principal)
        call = calls.set_policy(target, memory_type, retention_days, capacity, review, persona)
        return self._sender.send(call)

    def delete_policy(
        self,
        target: str = "*",
        *,
        memory_type: str = "*",
        principal: Principal | None = None,
        persona: str | None = None,
    ) -> None:
        """Remove a policy (organization admins only); ``NotFound`` when there is none."""
        no_principal(principal)
        return self._sender.send(calls.delete_policy(target, memory_type, persona))

    def policies(
        self, *, principal: Principal | None = None, persona: str | None = None
    ) -> builtins.list[Policy]:
        """The organization's retention, capacity and review policies."""
        no_principal(principal)
        return self._sender.send(calls.policies(persona))
