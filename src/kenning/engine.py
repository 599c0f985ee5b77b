"""The engine façade: every door (SDK, CLI, REST, MCP) calls these methods.

``Memory`` owns a store, an embedder, an access policy and a clock. Every
method takes an optional ``principal``; without one it acts for the instance's
default principal (the embedded single-user install: org ``default``, user
``default``, admin of that org).
"""

from __future__ import annotations

import base64
import builtins
import json
import logging
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import Any, TextIO

import numpy as np
from pydantic import ValidationError

from .access import AccessPolicy
from .clock import Clock, SystemClock
from .config import Settings
from .decay import type_defaults
from .directory import Directory
from .embeddings import CachedEmbedder, Embedder, MemoryCacheBackend, content_hash, create_embedder
from .errors import ConfigError, Conflict, InvalidInput, NotFound, PermissionDenied
from .graph.api import Graph
from .graph.project import Extracted, Extractor, Projector
from .insight import InsightMethods
from .lifecycle.api import LifecycleMethods
from .lifecycle.ingest import Ingestor
from .lifecycle.strength import AccessWriter, StrengthModel
from .lifecycle.writer import WritePlan, WritePlanner, WriteResult, reconciler_for
from .llm import ChatModel, chat_model_from_settings
from .models import (
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
    Role,
    Scope,
    Status,
    new_id,
)
from .retrieval.pipeline import RecallPipeline, RecallRequest
from .review import ReviewMethods
from .scoring import (
    SOURCE_RELIABILITY,
    adjust_confidence,
    source_reliability,
)
from .stores import Store, database_url, open_store
from .validation import (
    build_filter,
    clean_confidence,
    clean_content,
    clean_importance,
    clean_k,
    clean_key,
    clean_memory_type,
    clean_metadata,
    clean_tags,
    clean_text,
    clean_time,
)

__all__ = ["Memory", "SOURCE_RELIABILITY", "ScopesArg"]

log = logging.getLogger("kenning.engine")

ScopesArg = Scope | str | Iterable[Scope | str] | None
_UPDATABLE = (
    "content",
    "key",
    "memory_type",
    "importance",
    "confidence",
    "tags",
    "metadata",
    "event_at",
    "valid_from",
    "valid_to",
    "sector_id",
)


def _settings_from_env() -> Settings:
    try:
        return Settings()
    except ValidationError as exc:
        raise ConfigError(f"invalid KENNING_* setting: {exc}") from None


class Memory(LifecycleMethods, ReviewMethods, InsightMethods):
    """Long-term memory for agents, on the embedded store by default.

    >>> mem = Memory("/tmp/kenning-demo.db")            # doctest: +SKIP
    >>> mem.remember("Alice prefers tea over coffee")   # doctest: +SKIP
    >>> mem.recall("what does Alice drink?")[0].memory.content  # doctest: +SKIP
    """

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
        self.settings = settings or _settings_from_env()
        if path is not None:  # a SQLite file, or a sqlite:/// or postgresql:// URL
            url = database_url(str(path), field="path")
            self.settings = self.settings.model_copy(update={"database_url": url})
        inner = embedder or create_embedder(self.settings.embedder, **self._embed_options())
        self.store: Store = store or open_store(self.settings, inner.model_id, inner.dim)
        # Writes look vectors up in the store too (the vectors table is the cache);
        # queries use an in-process cache only, so they never wait on the store.
        self.embedder = CachedEmbedder(inner, [MemoryCacheBackend(50_000), self.store])
        self._query_embedder = CachedEmbedder(inner, [MemoryCacheBackend(10_000)])
        self.clock: Clock = clock or SystemClock()
        self.principal = principal or Principal()
        self.policy = AccessPolicy()
        self._pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="kenning-recall")
        self._lock = threading.Lock()
        self._strength = StrengthModel(self.store, self.settings.lifecycle.reinforcement)
        self._recall = RecallPipeline(self.store, self._query_embedder, self._pool, self._strength)
        self._projector = Projector(self.store, self.settings, extractor)
        self._chat = chat if chat is not None else chat_model_from_settings(self.settings)
        self._planner = WritePlanner(
            self.store, self.settings, self._projector, reconciler_for(self.settings, self._chat)
        )
        # reinforcement after a recall is written off the caller's path
        lc = self.settings.lifecycle
        self._access = AccessWriter(
            self.store, lc.reinforcement, delay=lc.access_write_delay_ms / 1000
        )
        self._ingestor = Ingestor(self)
        self._graph = Graph(self)
        self._directory = Directory(self.store, self.clock)

    @property
    def graph(self) -> Graph:
        """The memory graph: neighbours, entities, paths, links (:mod:`kenning.graph.api`)."""
        return self._graph

    @property
    def directory(self) -> Directory:
        """Tenancy, API keys, switches and the audit log (:mod:`kenning.directory`)."""
        return self._directory

    def _embed_options(self) -> dict[str, Any]:
        options: dict[str, Any] = dict(self.settings.embedder_options)
        if self.settings.embedder == "minilm" and self.settings.embed_threads:
            options.setdefault("threads", self.settings.embed_threads)
        return options

    def warm_up(self) -> None:
        """Load the embedding model and the entity extractor now rather than on the
        first request (a server does this before it reports ready). Writes nothing."""
        self._query_embedder.embed("kenning warm-up")
        self._projector.extractor.warm_up()

    def close(self) -> None:
        """Finish pending access writes; release the store and worker threads."""
        self._access.close()
        self._pool.shutdown(wait=True)
        self._projector.close()
        self.store.close()

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- helpers --------------------------------------------------------------------

    def _who(self, principal: Principal | None) -> Principal:
        if principal is not None and not isinstance(principal, Principal):
            raise InvalidInput("principal must be a Principal", field="principal")
        return principal or self.principal

    def _default_write_scope(self, who: Principal) -> Scope:
        if who.active_persona:
            return Scope.persona_user(who.active_persona, who.user_id)
        return Scope.user(who.user_id)

    def _scope(self, scope: Scope | str | None, who: Principal) -> Scope:
        if scope is None:
            return self._default_write_scope(who)
        return scope if isinstance(scope, Scope) else Scope.parse(scope)

    def _visible(self, memory_id: str, who: Principal) -> MemoryRecord:
        memory_id = clean_text(memory_id, "memory id", 64)
        found = self.store.get([memory_id], self.policy.readable(who))
        if not found:
            raise NotFound(f"memory {memory_id!r} not found")
        return found[0]

    def _writable(self, memory_id: str, who: Principal) -> MemoryRecord:
        record = self._visible(memory_id, who)
        self.policy.check_write(who, record.scope)
        return record

    def _build(self, who: Principal, item: Mapping[str, Any], now: datetime) -> MemoryRecord:
        """Validate one memory description into a new record (nothing stored)."""
        unknown = set(item) - _REMEMBER_FIELDS
        if unknown:
            raise InvalidInput(f"unknown field(s) {sorted(unknown)}", field=sorted(unknown)[0])
        s = self.settings
        content = clean_content(item.get("content"), s.max_content_chars)
        scope = self._scope(item.get("scope"), who)
        self.policy.check_write(who, scope)
        source = clean_text(item.get("source", "api"), "source", 64)
        confidence = item.get("confidence")
        confidence = (
            source_reliability(source) if confidence is None else clean_confidence(confidence)
        )
        status = item.get("status", Status.ACTIVE)
        if status not in (Status.ACTIVE, Status.PENDING_REVIEW, "active", "pending_review"):
            raise InvalidInput("a new memory is 'active' or 'pending_review'", field="status")
        valid_from = clean_time(item.get("valid_from"), "valid_from")
        valid_to = clean_time(item.get("valid_to"), "valid_to")
        if valid_from and valid_to and valid_to < valid_from:
            raise InvalidInput("valid_to is before valid_from", field="valid_to")

        def optional(name: str) -> str | None:
            value = item.get(name)
            return None if value is None else clean_text(value, name, 256)

        memory_type = clean_memory_type(item.get("memory_type", "semantic"))
        strength, decay_rate = type_defaults(
            memory_type, s.lifecycle.initial_strength, s.lifecycle.decay_rate
        )
        return MemoryRecord(
            id=new_id(),
            org_id=who.org_id,
            scope=scope,
            content=content,
            key=clean_key(item.get("key"), s.max_key_chars),
            memory_type=memory_type,
            strength=strength,
            decay_rate=decay_rate,
            importance=clean_importance(item.get("importance", 3)),
            confidence=confidence,
            status=Status(status),
            tags=clean_tags(item.get("tags"), s.max_tags),
            metadata=clean_metadata(item.get("metadata")),
            source=source,
            created_by=who.user_id,
            created_at=now,
            updated_at=now,
            event_at=clean_time(item.get("event_at"), "event_at"),
            valid_from=valid_from,
            valid_to=valid_to,
            content_hash=content_hash(content),
            source_channel_id=optional("source_channel_id"),
            agent_id=optional("agent_id"),
            session_id=optional("session_id"),
            episode_id=optional("episode_id"),
            sector_id=optional("sector_id"),
        )

    # -- writes -----------------------------------------------------------------------

    def remember(
        self,
        content: str,
        *,
        scope: Scope | str | None = None,
        principal: Principal | None = None,
        **fields: Any,
    ) -> MemoryRecord:
        """Store one memory and return it.

        ``fields`` may set ``key``, ``memory_type``, ``importance``, ``confidence``,
        ``tags``, ``metadata``, ``source``, ``source_channel_id``, ``agent_id``,
        ``session_id``, ``episode_id``, ``sector_id``, ``event_at``,
        ``valid_from``, ``valid_to`` and ``status``. The scope defaults to the
        caller's personal scope (persona_user when a persona is active).
        """
        return self.remember_many(
            [{"content": content, "scope": scope, **fields}], principal=principal
        )[0]

    def remember_many(
        self,
        items: Sequence[Mapping[str, Any]],
        *,
        principal: Principal | None = None,
        progress: Callable[[int], None] | None = None,
    ) -> list[MemoryRecord]:
        """Store a batch atomically: every item is validated first; all or nothing.

        Each item is reconciled with what its scope holds (see :meth:`write`);
        the list holds, per item, the memory that now carries it.
        """
        return [r.record for r in self.write(items, principal=principal, progress=progress)]

    def write(
        self,
        items: Sequence[Mapping[str, Any]],
        *,
        reconcile: bool = True,
        principal: Principal | None = None,
        progress: Callable[[int], None] | None = None,
    ) -> list[WriteResult]:
        """Store a batch in one transaction, reconciling each item on the way in.

        Every item is validated first (all or nothing). Semantic and procedural
        memories are compared with their nearest memories in the same scope:
        ``add``, ``update`` (same key), ``supersede`` (a newer contradicting
        value), ``shadow`` (a fuller restatement) or ``noop`` (a near-duplicate
        confirms the existing memory). ``reconcile=False`` adds every item.
        """
        who = self._who(principal)
        if isinstance(items, Mapping) or not isinstance(items, Sequence):
            raise InvalidInput("items must be a list of memory objects", field="items")
        if not items:
            return []
        if len(items) > self.settings.max_batch:
            raise InvalidInput(
                f"a batch holds at most {self.settings.max_batch} memories, got {len(items)}",
                field="items",
            )
        now = self.clock.now()
        records: list[MemoryRecord] = []
        for index, item in enumerate(items):
            if not isinstance(item, Mapping):
                raise InvalidInput(f"items[{index}] must be an object", field="items")
            try:
                records.append(self._build(who, item, now))
            except InvalidInput as exc:
                if len(items) == 1:
                    raise
                raise InvalidInput(f"items[{index}]: {exc}", field=exc.field) from None
        self._hold_for_review(records, who)
        keys = [(r.scope, r.key) for r in records if r.key]
        if len(keys) != len(set(keys)):
            raise InvalidInput("two items of the batch share a scope and key", field="key")
        # entity extraction runs beside the embedding (each mostly native code)
        ahead = self._projector.extract_ahead(records)
        try:
            vectors = self.embedder.embed_many(
                [r.content for r in records], batch_size=256, progress=progress
            )
        except BaseException:
            if ahead is not None:
                ahead.cancel()  # (one already running finishes; its result is dropped)
            raise
        extracted = ahead.result() if ahead is not None else None
        touched = self._assign_sectors(records, vectors)
        plan = self._planner.plan(records, vectors, now, reconcile=reconcile)
        results = self._commit(plan, who, extracted)
        self._save_centroids(touched, who)
        return results

    def _commit(
        self, plan: WritePlan, who: Principal, extracted: Extracted | None = None
    ) -> list[WriteResult]:
        """Write a plan in one transaction (records, graph, changes to old memories)."""
        graph = None
        if plan.inserts:
            graph = self._projector.for_insert(
                [r for r, _ in plan.inserts],
                np.stack([v for _, v in plan.inserts]),
                plan.links,
                plan.neighbours,
                extracted,
            )
        self.store.insert(plan.inserts, who.user_id, graph=graph, replacements=plan.replacements)
        return plan.results

    def upsert(
        self,
        key: str,
        content: str,
        *,
        scope: Scope | str | None = None,
        principal: Principal | None = None,
        **fields: Any,
    ) -> MemoryRecord:
        """Create or update the memory with ``key`` in ``scope`` (seed 001 semantics).

        On update, the updatable ``fields`` change too; provenance fields
        (``source``, ``agent_id``, ...) describe the first write and are kept.
        """
        who = self._who(principal)
        target = self._scope(scope, who)
        clean = clean_key(key, self.settings.max_key_chars)
        assert clean is not None
        for _ in range(3):
            existing = self.store.find_by_key(who.org_id, target, clean)
            try:
                if existing is None:
                    return self.remember(content, scope=target, key=clean, principal=who, **fields)
                self.policy.check_write(who, existing.scope)
                changes = {k: v for k, v in fields.items() if k in _UPDATABLE}
                return self.update(
                    existing.id,
                    content=content,
                    principal=who,
                    _op="upsert",
                    _status=Status.ACTIVE,
                    **changes,
                )
            except Conflict:
                continue
        raise Conflict(f"key {clean!r} kept changing under concurrent writers; try again")

    def update(
        self,
        memory_id: str,
        *,
        principal: Principal | None = None,
        expected_version: int | None = None,
        _op: str = "update",
        _status: Status | None = None,
        **changes: Any,
    ) -> MemoryRecord:
        """Change fields of a memory (content is re-embedded); returns the new state."""
        who = self._who(principal)
        unknown = set(changes) - set(_UPDATABLE)
        if unknown:
            raise InvalidInput(
                f"cannot update {sorted(unknown)}; updatable: {list(_UPDATABLE)}",
                field=sorted(unknown)[0],
            )
        record = self._writable(memory_id, who)
        if expected_version is not None and record.version != expected_version:
            raise Conflict(
                f"memory {record.id!r} is at version {record.version}, not {expected_version}"
            )
        new = self._apply_changes(record, changes)
        if _status is not None:
            new.status = _status
        diff = record.changes_to(new, (*_UPDATABLE, "status"))
        if not diff:
            return record
        new.updated_at = self.clock.now()
        vector = None
        if "content" in diff:
            new.content_hash = content_hash(new.content)
            vector = self.embedder.embed(new.content)
        graph = None
        if "content" in diff or "tags" in diff:
            graph = self._projector.for_update(new, vector)
        return self.store.replace(
            new,
            vector,
            op=_op,
            actor=who.user_id,
            changes=diff,
            expected_version=expected_version,
            graph=graph,
        )

    def _apply_changes(self, record: MemoryRecord, changes: Mapping[str, Any]) -> MemoryRecord:
        s = self.settings
        new = replace(record, tags=record.tags, metadata=dict(record.metadata))
        cleaners: dict[str, Callable[[Any], Any]] = {
            "content": lambda v: clean_content(v, s.max_content_chars),
            "key": lambda v: clean_key(v, s.max_key_chars),
            "memory_type": clean_memory_type,
            "importance": clean_importance,
            "confidence": clean_confidence,
            "tags": lambda v: clean_tags(v, s.max_tags),
            "metadata": clean_metadata,
            "event_at": lambda v: clean_time(v, "event_at"),
            "valid_from": lambda v: clean_time(v, "valid_from"),
            "valid_to": lambda v: clean_time(v, "valid_to"),
            "sector_id": lambda v: None if v is None else clean_text(v, "sector_id", 256),
        }
        for name, value in changes.items():
            setattr(new, name, cleaners[name](value))
        if new.valid_from and new.valid_to and new.valid_to < new.valid_from:
            raise InvalidInput("valid_to is before valid_from", field="valid_to")
        return new

    def forget(self, memory_id: str, *, principal: Principal | None = None) -> None:
        """Delete a memory from every index; its history keeps who and when only."""
        who = self._who(principal)
        record = self._writable(memory_id, who)
        if not self.store.delete(record.org_id, record.id, who.user_id, self.clock.now()):
            raise NotFound(f"memory {memory_id!r} not found")

    def _set_status(self, memory_id: str, status: Status, op: str, who: Principal) -> MemoryRecord:
        record = self._writable(memory_id, who)
        if record.status is status:
            return record
        new = replace(record, status=status, updated_at=self.clock.now())
        changes = {"status": [record.status.value, status.value]}
        return self.store.replace(new, None, op=op, actor=who.user_id, changes=changes)

    def archive(self, memory_id: str, *, principal: Principal | None = None) -> MemoryRecord:
        """Take a memory out of recall without deleting it (reversible)."""
        return self._set_status(memory_id, Status.ARCHIVED, "archive", self._who(principal))

    def restore(self, memory_id: str, *, principal: Principal | None = None) -> MemoryRecord:
        """Bring an archived, superseded or pending memory back to active.

        What retired it is undone from its history: the validity window a
        supersede closed, the pointer to its successor, the confidence the
        contradiction took (archive, forget, retention, eviction, supersede and
        shadow are all reversible). Restoring counts as a use (a reinforcement).
        """
        who = self._who(principal)
        record = self._writable(memory_id, who)
        if record.status is Status.ACTIVE:
            return record
        new = replace(record, status=Status.ACTIVE, updated_at=self.clock.now())
        trail = self.store.history(record.id, self.policy.readable(who))
        last = next((e for e in reversed(trail) if e.op in RETIRING_OPS), None)
        if last is not None:
            for name in _UNDONE:
                if name in last.changes:
                    setattr(new, name, MemoryRecord.field_value(name, last.changes[name][0]))
            new.status = Status.ACTIVE
        changes = record.changes_to(new, ("status", *_UNDONE))
        restored = self.store.replace(new, None, op="restore", actor=who.user_id, changes=changes)
        # bringing a memory back is a use of it: without this, one that was forgotten
        # for weakness would be forgotten again by the next consolidation
        self.store.record_access(
            who.org_id, self._strength.accesses([restored], self.clock.now(), "restore")
        )
        return self._visible(restored.id, who)

    def feedback(
        self, memory_id: str, kind: FeedbackKind | str, *, principal: Principal | None = None
    ) -> MemoryRecord:
        """Adjust confidence (upvote, downvote, validate, contradict, confirm)."""
        who = self._who(principal)
        try:
            fb = FeedbackKind(kind)
        except ValueError:
            known = ", ".join(k.value for k in FeedbackKind)
            raise InvalidInput(
                f"feedback must be one of {known}; got {kind!r}", field="kind"
            ) from None
        record = self._visible(memory_id, who)
        if fb in (FeedbackKind.VALIDATE, FeedbackKind.CONTRADICT):
            self.policy.check_write(who, record.scope)
        new = replace(
            record, confidence=adjust_confidence(record.confidence, fb), updated_at=self.clock.now()
        )
        changes = {"feedback": fb.value, "confidence": [record.confidence, new.confidence]}
        return self.store.replace(new, None, op="feedback", actor=who.user_id, changes=changes)

    # -- reads ---------------------------------------------------------------------------

    def get(self, memory_id: str, *, principal: Principal | None = None) -> MemoryRecord:
        """One memory the caller may read (``NotFound`` otherwise, never a hint)."""
        return self._visible(memory_id, self._who(principal))

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
    ) -> RecallResult:
        """The ``k`` memories that best answer ``query``, ranked by priority.

        ``scopes``: None for the caller's default view, ``"all"`` for every
        readable scope, or named scopes (each checked). ``layers`` restricts to
        personal/shared/organization. ``filters`` see :class:`MemoryFilter`.
        ``sector``: only memories of that sector and its children.
        """
        who = self._who(principal)
        query = clean_text(query, "query", self.settings.max_content_chars)
        k = clean_k(k, self.settings.max_k)
        floor = (
            self.settings.min_confidence
            if min_confidence is None
            else clean_confidence(min_confidence, "min_confidence")
        )
        flt = build_filter(filters)
        view = self.policy.resolve(who, scopes, layers)
        if sector is not None:
            flt = replace(flt, sectors=self._sector_tree(sector, view))
        request = RecallRequest(query, k, who, view, flt, floor, explain)
        now = self.clock.now()
        result = self._recall.run(request, self.settings, now)
        if self.settings.lifecycle.reinforce_on_recall and result.hits:
            accesses = self._strength.accesses(
                [h.memory for h in result.hits], now, "recall", query[:500]
            )
            self._access.submit(who.org_id, accesses)
        return result

    def list(
        self,
        *,
        scopes: ScopesArg = None,
        layers: Iterable[Layer | str] | None = None,
        filters: MemoryFilter | Mapping[str, Any] | None = None,
        limit: int = 50,
        cursor: str | None = None,
        principal: Principal | None = None,
    ) -> Page:
        """Memories newest first, one page at a time (pass ``next_cursor`` back)."""
        who = self._who(principal)
        limit = clean_k(limit, self.settings.max_k, "limit")
        view = self.policy.resolve(who, scopes, layers)
        rows = self.store.list(
            view, build_filter(filters), limit=limit + 1, cursor=_decode_cursor(cursor)
        )
        more = len(rows) > limit
        rows = rows[:limit]
        nxt = _encode_cursor(rows[-1]) if more and rows else None
        return Page(rows, nxt)

    def history(
        self, memory_id: str, *, principal: Principal | None = None
    ) -> builtins.list[HistoryEntry]:
        """Every change to a memory, oldest first (deleted ones too: who and when)."""
        who = self._who(principal)
        memory_id = clean_text(memory_id, "memory id", 64)
        entries = self.store.history(memory_id, self.policy.readable(who))
        if not entries:
            raise NotFound(f"memory {memory_id!r} not found")
        return entries

    def stats(
        self, *, scopes: ScopesArg = ALL_SCOPES, principal: Principal | None = None
    ) -> builtins.list[LayerStats]:
        """Seed 000's per-layer statistics over the scopes the caller may read."""
        who = self._who(principal)
        view = self.policy.resolve(who, scopes)
        layers = self.store.stats(view, self.clock.now())
        if self.settings.graph_enabled:
            for st in layers:
                counts = self.store.graph_counts(view.restrict_layers([Layer(st.layer)]))
                st.entities_count, st.relationships_count = counts
        return layers

    # -- export / import ----------------------------------------------------------------

    def export_jsonl(
        self, out: TextIO, *, scopes: ScopesArg = ALL_SCOPES, principal: Principal | None = None
    ) -> int:
        """Write every readable memory (record, vector, history) as JSON lines."""
        who = self._who(principal)
        n = 0
        for row in self.store.iter_export(self.policy.resolve(who, scopes)):
            out.write(json.dumps(row, sort_keys=True) + "\n")
            n += 1
        return n

    def import_jsonl(
        self,
        lines: Iterable[str],
        *,
        principal: Principal | None = None,
        progress: Callable[[int], None] | None = None,
    ) -> int:
        """Load an export in one transaction; every row is checked before any is written."""
        who = self._who(principal)
        rows = list(_parse_export(lines, who, self.policy, self.embedder.dim))
        self.store.import_rows(rows, progress=progress)
        return len(rows)

    def reembed(
        self,
        *,
        batch_size: int = 256,
        principal: Principal | None = None,
        progress: Callable[[int], None] | None = None,
    ) -> int:
        """Give every memory of the caller's organization a vector of the configured
        model (those made by another model, e.g. after the default changed); admins
        only. Each batch is one transaction, so an interrupted run resumes where it
        stopped. Returns how many vectors were replaced. Run it with no other writer."""
        who = self._who(principal)
        if Role.ADMIN not in who.roles:
            raise PermissionDenied("re-embedding an organization's memories needs the admin role")
        batch_size = clean_k(batch_size, 10_000, "batch_size")
        model_id = self.embedder.model_id
        done = 0
        while stale := self.store.stale_vectors(who.org_id, model_id, batch_size):
            vectors = self.embedder.embed_many([text for _, text in stale], batch_size=batch_size)
            pairs = [(mid, vec) for (mid, _), vec in zip(stale, vectors, strict=True)]
            changed = self.store.replace_vectors(who.org_id, model_id, pairs)
            if changed == 0:  # deleted meanwhile, or the store refuses: do not loop
                break
            done += changed
            if progress:
                progress(len(stale))
        return done

    def reembed_all(
        self, *, batch_size: int = 256, progress: Callable[[int], None] | None = None
    ) -> dict[str, int]:
        """:meth:`reembed` for every organization in the store, as its admin: the
        operator's task after a model change (``kenning reembed``; like ``kenning
        migrate``, it is not offered through the server). Organization -> count."""
        return {
            org: self.reembed(
                batch_size=batch_size,
                progress=progress,
                principal=Principal(
                    org_id=org, user_id=self.principal.user_id, roles=frozenset({Role.ADMIN})
                ),
            )
            for org in self.store.organizations()
        }


#: History ops that take a memory out of recall; ``restore`` undoes the latest.
RETIRING_OPS = frozenset({"archive", "supersede", "shadow", "forget", "retention", "evict"})
#: The fields a retiring op may change besides the status, restored from its history row.
_UNDONE = ("valid_to", "superseded_by", "confidence")

_REMEMBER_FIELDS = frozenset(
    {
        "content",
        "scope",
        "key",
        "memory_type",
        "importance",
        "confidence",
        "tags",
        "metadata",
        "source",
        "source_channel_id",
        "agent_id",
        "session_id",
        "episode_id",
        "sector_id",
        "event_at",
        "valid_from",
        "valid_to",
        "status",
    }
)


def _encode_cursor(record: MemoryRecord) -> str:
    raw = json.dumps([record.created_at.timestamp(), record.id]).encode()
    return base64.urlsafe_b64encode(raw).decode()


def _decode_cursor(cursor: str | None) -> tuple[float, str] | None:
    if cursor is None:
        return None
    if not isinstance(cursor, str):
        raise InvalidInput(f"cursor must be a string, got {type(cursor).__name__}", field="cursor")
    try:
        ts, mid = json.loads(base64.urlsafe_b64decode(cursor.encode()))
        return float(ts), str(mid)
    except (ValueError, TypeError):
        raise InvalidInput(f"invalid cursor {cursor!r}", field="cursor") from None


def _parse_export(
    lines: Iterable[str], who: Principal, policy: AccessPolicy, dim: int
) -> Iterator[dict[str, Any]]:
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            record = MemoryRecord.from_dict(row["record"])
            vector = base64.b64decode(row["vector"], validate=True)
        except (ValueError, KeyError, TypeError) as exc:
            raise InvalidInput(
                f"line {n}: not a kenning export row ({exc})", field="import"
            ) from None
        if record.org_id != who.org_id:
            raise PermissionDenied(f"line {n}: memory belongs to organization {record.org_id!r}")
        policy.check_write(who, record.scope)
        if len(vector) != dim * 4:
            raise InvalidInput(
                f"line {n}: vector has {len(vector) // 4} dimensions, expected {dim}"
            )
        yield row
