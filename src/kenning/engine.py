"""The engine façade: every door (SDK, CLI, REST, MCP) calls these methods.

``Memory`` is a thin façade over the engine's core (:mod:`kenning.core`): each
method names the caller, validates what only the façade sees, and calls a
service (the write pipeline, the read pipeline, graph, ingest, consolidation,
review, insight). Every method takes an optional ``principal``; without one
it acts for the instance's default principal (the embedded single-user
install: org ``default``, user ``default``, admin of that org). Memory writes,
forgets, review decisions and admins' reads are audited once each
(:mod:`kenning.audit`), whichever door they came through.
"""

from __future__ import annotations

import base64
import builtins
import json
import logging
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from typing import Any, TextIO

from .access import AccessPolicy
from .audit import audited
from .audit import target_of as _target
from .errors import Conflict, InvalidInput, NotFound, PermissionDenied
from .insight import InsightMethods
from .lifecycle.api import LifecycleMethods
from .lifecycle.writer import WriteResult
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
    ScopesArg,
    Status,
)
from .paging import page
from .retrieval.pipeline import RecallRequest
from .review import ReviewMethods
from .scoring import SOURCE_RELIABILITY, adjust_confidence, before_contradiction
from .validation import (
    UPDATABLE,
    Limits,
    build_filter,
    clean_feedback,
    clean_k,
    clean_key,
    clean_recall,
    clean_text,
)

__all__ = ["Memory", "SOURCE_RELIABILITY", "ScopesArg"]

log = logging.getLogger("kenning.engine")


def _written(result: object, args: tuple[Any, ...]) -> str | None:
    """The memory a write stored (never its content, which is not a target)."""
    return _target(result, ())


def _count(result: object, args: tuple[Any, ...]) -> str | None:
    return f"{result} memories" if isinstance(result, int) else None


class Memory(LifecycleMethods, ReviewMethods, InsightMethods):
    """Long-term memory for agents, on the embedded store by default.

    >>> mem = Memory("/tmp/kenning-demo.db")            # doctest: +SKIP
    >>> mem.remember("Alice prefers tea over coffee")   # doctest: +SKIP
    >>> mem.recall("what does Alice drink?")[0].memory.content  # doctest: +SKIP

    Arguments: ``path`` (a SQLite file or a store URL), ``settings``, ``store``,
    ``embedder``, ``clock``, ``principal`` (who calls without ``principal=`` act
    for), ``extractor`` (the graph's entity extractor) and ``chat`` (an LLM).
    """

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- writes -----------------------------------------------------------------------

    @audited("memory.remember", target=_written)
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

    @audited("memory.remember", target=_written)
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

    @audited("memory.remember", target=_written)
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
        who = self.core.who(principal)
        records = self.writes.build_many(who, items, self.core.clock.now())
        return self.writes.write(who, records, reconcile=reconcile, progress=progress)

    @audited("memory.upsert")
    def upsert(
        self,
        key: str,
        content: str,
        *,
        scope: Scope | str | None = None,
        principal: Principal | None = None,
        **fields: Any,
    ) -> MemoryRecord:
        """Create or update the memory with ``key`` in ``scope``: one memory per key and
        scope, a new text replaces the old one (which stays in history).

        On update, the updatable ``fields`` change too; provenance fields
        (``source``, ``agent_id``, ...) describe the first write and are kept.
        """
        who = self.core.who(principal)
        target = self.core.write_scope(scope, who)
        clean = clean_key(key, self.settings.max_key_chars)
        assert clean is not None
        for _ in range(3):
            existing = self.store.find_by_key(who.org_id, target, clean)
            try:
                if existing is None:
                    return self.remember(content, scope=target, key=clean, principal=who, **fields)
                self.policy.check_write(who, existing.scope)
                changes = {k: v for k, v in fields.items() if k in UPDATABLE}
                return self.writes.edit(
                    who,
                    existing.id,
                    {**changes, "content": content},
                    op="upsert",
                    status=Status.ACTIVE,
                )
            except Conflict:
                continue
        raise Conflict(f"key {clean!r} kept changing under concurrent writers; try again")

    @audited("memory.update")
    def update(
        self,
        memory_id: str,
        *,
        principal: Principal | None = None,
        expected_version: int | None = None,
        **changes: Any,
    ) -> MemoryRecord:
        """Change fields of a memory (content is re-embedded); returns the new state."""
        who = self.core.who(principal)
        return self.writes.edit(who, memory_id, changes, expected_version=expected_version)

    @audited("memory.forget")
    def forget(self, memory_id: str, *, principal: Principal | None = None) -> None:
        """Delete a memory from every index; its history keeps who and when only."""
        who = self.core.who(principal)
        record = self.core.writable(memory_id, who)
        if not self.store.delete(record.org_id, record.id, who.user_id, self.clock.now()):
            raise NotFound(f"memory {memory_id!r} not found")

    def _set_status(self, memory_id: str, status: Status, op: str, who: Principal) -> MemoryRecord:
        record = self.core.writable(memory_id, who)
        if record.status is status:
            return record
        new = replace(record, status=status, updated_at=self.clock.now())
        changes = {"status": [record.status.value, status.value]}
        return self.writes.change(who, record, new, op, changes)

    @audited("memory.archive")
    def archive(self, memory_id: str, *, principal: Principal | None = None) -> MemoryRecord:
        """Take a memory out of recall without deleting it (reversible)."""
        return self._set_status(memory_id, Status.ARCHIVED, "archive", self.core.who(principal))

    @audited("memory.restore")
    def restore(self, memory_id: str, *, principal: Principal | None = None) -> MemoryRecord:
        """Bring an archived, superseded or pending memory back to active.

        What retired it is undone from its history: the validity window a
        supersede closed, the pointer to its successor, the confidence the
        contradiction took (archive, forget, retention, eviction, supersede and
        shadow are all reversible). Restoring counts as a use (a reinforcement).
        """
        who = self.core.who(principal)
        record = self.core.writable(memory_id, who)
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
        elif record.status is Status.SUPERSEDED and record.superseded_by:
            found = self.store.get([record.superseded_by], self.policy.readable(who))
            _undo_batch_retirement(new, found[0] if found else None)
        changes = record.changes_to(new, ("status", *_UNDONE))
        restored = self.writes.change(who, record, new, "restore", changes)
        # bringing a memory back is a use of it: without this, one that was forgotten
        # for weakness would be forgotten again by the next consolidation
        self.store.record_access(
            who.org_id, self.core.strength.accesses([restored], self.clock.now(), "restore")
        )
        return self.core.visible(restored.id, who)

    @audited("memory.feedback")
    def feedback(
        self, memory_id: str, kind: FeedbackKind | str, *, principal: Principal | None = None
    ) -> MemoryRecord:
        """Adjust confidence (upvote, downvote, validate, contradict, confirm)."""
        who = self.core.who(principal)
        fb = clean_feedback(kind)
        record = self.core.visible(memory_id, who)
        if fb in (FeedbackKind.VALIDATE, FeedbackKind.CONTRADICT):
            self.policy.check_write(who, record.scope)
        new = replace(
            record,
            confidence=adjust_confidence(record.confidence, fb),
            updated_at=self.clock.now(),
        )
        changes = {"feedback": fb.value, "confidence": [record.confidence, new.confidence]}
        return self.store.replace(new, None, op="feedback", actor=who.user_id, changes=changes)

    # -- reads ---------------------------------------------------------------------------

    @audited("memory.get", read=True)
    def get(self, memory_id: str, *, principal: Principal | None = None) -> MemoryRecord:
        """One memory the caller may read (``NotFound`` otherwise, never a hint)."""
        return self.core.visible(memory_id, self.core.who(principal))

    @audited("memory.recall", read=True, target=lambda result, args: None)
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
    ) -> RecallResult:
        """The ``k`` memories that best answer ``query``, ranked by priority.

        ``scopes``: None for the caller's default view, ``"all"`` for every
        readable scope, or named scopes (each checked). ``layers`` restricts to
        personal/shared/organization. ``filters`` see :class:`MemoryFilter`.
        ``sector``: only memories of that sector and its children.
        ``min_score`` (0-1; None: ``retrieval.min_score``) leaves out the hits
        of the top ``k`` whose calibrated score is below it, so a question
        nothing answers gets few hits or none.
        """
        core = self.core
        who = core.who(principal)
        query, k, floor_given, cut_given, flt = clean_recall(
            query, k, min_confidence, min_score, filters, Limits.of(self.settings)
        )
        floor = self.settings.min_confidence if floor_given is None else floor_given
        cut = self.settings.retrieval.min_score if cut_given is None else cut_given
        view = self.policy.resolve(who, scopes, layers)
        if sector is not None:
            flt = replace(flt, sectors=core.sector_tree(sector, view))
        request = RecallRequest(query, k, who, view, flt, floor, explain, cut)
        now = self.clock.now()
        result = self.reads.run(request, self.settings, now)
        if self.settings.lifecycle.reinforce_on_recall and result.hits:
            accesses = core.strength.accesses(
                [h.memory for h in result.hits], now, "recall", query[:500]
            )
            core.access.submit(who.org_id, accesses)
        return result

    @audited("memory.list", read=True, target=lambda result, args: None)
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
        who = self.core.who(principal)
        limit = clean_k(limit, self.settings.max_k, "limit")
        view = self.policy.resolve(who, scopes, layers)
        return page(self.core, view, build_filter(filters), limit, cursor)

    @audited("memory.history", read=True)
    def history(
        self, memory_id: str, *, principal: Principal | None = None
    ) -> builtins.list[HistoryEntry]:
        """Every change to a memory, oldest first (deleted ones too: who and when)."""
        who = self.core.who(principal)
        memory_id = clean_text(memory_id, "memory id", 64)
        entries = self.store.history(memory_id, self.policy.readable(who))
        if not entries:
            raise NotFound(f"memory {memory_id!r} not found")
        return entries

    def stats(
        self, *, scopes: ScopesArg = ALL_SCOPES, principal: Principal | None = None
    ) -> builtins.list[LayerStats]:
        """Per-layer statistics (count, age buckets, confidence levels) over the
        scopes the caller may read."""
        who = self.core.who(principal)
        view = self.policy.resolve(who, scopes)
        layers = self.store.stats(view, self.clock.now())
        if self.settings.graph_enabled:
            for st in layers:
                counts = self.store.graph_counts(view.restrict_layers([Layer(st.layer)]))
                st.entities_count, st.relationships_count = counts
        return layers

    # -- export / import ----------------------------------------------------------------

    @audited("memory.export", read=True, target=_count)
    def export_jsonl(
        self, out: TextIO, *, scopes: ScopesArg = ALL_SCOPES, principal: Principal | None = None
    ) -> int:
        """Write every readable memory (record, vector, history) as JSON lines."""
        who = self.core.who(principal)
        n = 0
        for row in self.store.iter_export(self.policy.resolve(who, scopes)):
            out.write(json.dumps(row, sort_keys=True) + "\n")
            n += 1
        return n

    @audited("memory.import", target=_count)
    def import_jsonl(
        self,
        lines: Iterable[str],
        *,
        principal: Principal | None = None,
        progress: Callable[[int], None] | None = None,
    ) -> int:
        """Load an export in one transaction; every row is checked before any is written
        (its scope as a write's: the caller may write there and the organization has it;
        a scope under review holds what the importer may not approve)."""
        who = self.core.who(principal)
        rows = list(_parse_export(lines, who, self.policy, self.embedder.dim))
        return self.writes.import_rows(who, rows, progress=progress)

    @audited("memory.reembed", target=_count)
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
        who = self.core.who(principal)
        if Role.ADMIN not in who.roles:
            raise PermissionDenied("re-embedding an organization's memories needs the admin role")
        batch_size = clean_k(batch_size, 10_000, "batch_size")
        return self.writes.reembed(who.org_id, batch_size, progress)

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
def _undo_batch_retirement(new: MemoryRecord, succ: MemoryRecord | None) -> None:
    """Undo a retirement by a later item of the memory's own write batch, which its
    history does not hold (the memory was stored retired): the pointer to its
    successor ``succ``, and for a contradiction (the window closed when ``succ``
    begins) the window and the confidence it took."""
    new.superseded_by = None
    if succ is not None and new.valid_to == (succ.valid_from or succ.said_at):
        new.valid_to = None
        new.confidence = before_contradiction(new.confidence)


RETIRING_OPS = frozenset({"archive", "supersede", "shadow", "forget", "retention", "evict"})
#: The fields a retiring op may change besides the status, restored from its history row.
_UNDONE = ("valid_to", "superseded_by", "confidence")


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
