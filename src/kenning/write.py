"""The one write pipeline: every path that writes memories goes through it.

New memories (remember, write, upsert's create, ingest's turns and facts,
consolidation's promotions, imports) take these stages, in this order:

1. **validate** each item into a record (:meth:`WritePipeline.build`), all
   before any is written;
2. **check the scope**: the caller may write there, and the organization has
   it (:meth:`~kenning.directory.Directory.check_scopes`: a governed
   organization refuses a team, persona or user it does not list);
3. **hold for review** where the scope's review switch asks for it (unless the
   writer reviews that scope), or where a lifecycle policy holds derived
   memories (extracted facts, consolidation summaries);
4. **embed and extract** (the entity extractor runs beside the embedder);
5. **assign sectors**;
6. **plan**: reconcile against the nearest memories of the same scope
   (:class:`~kenning.lifecycle.writer.WritePlanner`);
7. **commit** records, vectors, keyword rows, graph projection, changes to
   older memories and history in **one transaction** (``store.atomic()``),
   after checking the organization's memory quota in it (:mod:`kenning.quota`).

Changes to a stored memory (update, upsert's update, review approval,
feedback, archive, restore) go through :meth:`WritePipeline.change`, and
re-embedding through :meth:`WritePipeline.reembed`: the same scope check and
one transaction each. A rule added here holds for every writer.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any

import numpy as np

from ._gc import collector_paused
from .access import ScopeFilter
from .core import Core
from .decay import type_defaults
from .embeddings import content_hash
from .errors import Conflict, InvalidInput
from .graph.model import Projection
from .graph.project import Extracted
from .lifecycle.model import Sector
from .lifecycle.policy import needs_review
from .lifecycle.sectors import SectorInfo, assign_sector, update_centroid
from .lifecycle.split import split_sector
from .lifecycle.writer import WritePlan, WritePlanner, WriteResult, reconciler_for
from .models import EXTRACTED, MemoryRecord, Principal, Scope, ScopeKind, Status, new_id
from .quota import check_quota
from .scoring import source_reliability
from .stores import Replacement
from .validation import (
    UPDATABLE,
    Limits,
    check_updatable,
    check_window,
    clean_batch,
    clean_changes,
    clean_item,
)

__all__ = ["DERIVED_SOURCES", "UPDATABLE", "WritePipeline", "WriteResult"]

#: Sources of memories kenning derived itself; a review policy holds them for review.
DERIVED_SOURCES = frozenset({EXTRACTED, "consolidation"})

#: Adds links and changes to a plan before it commits (ingest's evidence links and
#: aged turns, consolidation's notes on the memories it promoted).
Extend = Callable[[WritePlan], None]


class WritePipeline:
    """The write stages over one :class:`~kenning.core.Core` (see the module docstring)."""

    def __init__(self, core: Core) -> None:
        self.core = core
        self.planner = WritePlanner(
            core.store,
            core.settings,
            core.projector,
            reconciler_for(core.settings, core.chat),
            core.embedder.embed_many,
        )

    # -- 1. validate ----------------------------------------------------------------------

    def build(self, who: Principal, item: Mapping[str, Any], now: datetime) -> MemoryRecord:
        """Validate one memory description into a new record (nothing stored)."""
        s = self.core.settings

        def scope_of(value: Any) -> Scope:
            scope = self.core.write_scope(value, who)
            self.core.policy.check_write(who, scope)
            return scope

        f = clean_item(item, Limits.of(s), scope_of)
        source, confidence = f["source"], f["confidence"]
        confidence = source_reliability(source) if confidence is None else confidence
        memory_type = f["memory_type"]
        strength, decay_rate = type_defaults(
            memory_type, s.lifecycle.initial_strength, s.lifecycle.decay_rate
        )
        return MemoryRecord(
            id=new_id(),
            org_id=who.org_id,
            scope=f["scope"],
            content=f["content"],
            key=f["key"],
            memory_type=memory_type,
            strength=strength,
            decay_rate=decay_rate,
            importance=f["importance"],
            confidence=confidence,
            status=f["status"],
            tags=f["tags"],
            metadata=f["metadata"],
            source=source,
            created_by=who.user_id,
            created_at=now,
            updated_at=now,
            event_at=f["event_at"],
            valid_from=f["valid_from"],
            valid_to=f["valid_to"],
            content_hash=content_hash(f["content"]),
            source_channel_id=f["source_channel_id"],
            agent_id=f["agent_id"],
            session_id=f["session_id"],
            episode_id=f["episode_id"],
            sector_id=f["sector_id"],
        )

    def build_many(
        self, who: Principal, items: Sequence[Mapping[str, Any]], now: datetime
    ) -> list[MemoryRecord]:
        """Validate a batch (all items before any is written; errors name the item)."""
        limit = self.core.settings.max_batch
        size = len(items) if isinstance(items, Sequence) else 0  # else clean_batch refuses it
        with collector_paused(size):
            return clean_batch(items, limit, lambda item: self.build(who, item, now))

    # -- 2. the scope exists; 3. review -------------------------------------------------

    def check_scopes(self, who: Principal, scopes: Iterable[Scope]) -> None:
        """The caller may write into every scope, and the organization has each."""
        wanted = set(scopes)
        for scope in wanted:
            self.core.policy.check_write(who, scope)
        self.core.directory.check_scopes(who.org_id, wanted)

    def hold_for_review(self, records: Sequence[MemoryRecord], who: Principal) -> None:
        """Mark new records pending where their scope's review switch asks for it (and
        the writer does not review that scope; on the organization layer every write
        waits), or where a review policy holds derived memories."""
        if not records:
            return
        core = self.core
        switch: dict[Scope, bool] = {}
        policies = None
        for record in records:
            if record.status is not Status.ACTIVE:
                continue
            scope = record.scope
            if scope not in switch:
                switch[scope] = core.directory.review_required(record.org_id, scope) and (
                    scope.kind is ScopeKind.ORG or not core.policy.can_review(who, scope)
                )
            held = switch[scope]
            if not held and record.source in DERIVED_SOURCES:
                if policies is None:
                    policies = core.store.policies(who.org_id)
                held = needs_review(
                    policies,
                    who.org_id,
                    scope,
                    record.memory_type,
                    core.settings.lifecycle.review_extracted_layers,
                )
            if held:
                record.status = Status.PENDING_REVIEW

    # -- the whole pipeline for new memories ----------------------------------------------

    def write(
        self,
        who: Principal,
        records: Sequence[MemoryRecord],
        *,
        reconcile: bool = True,
        progress: Callable[[int], None] | None = None,
        extend: Extend | None = None,
    ) -> list[WriteResult]:
        """Stages 2-7 for built records (see the module docstring); one transaction."""
        if not records:
            return []
        with collector_paused(len(records)), self.core.helpers.call():
            return self._write(who, records, reconcile, progress, extend)

    def _write(
        self,
        who: Principal,
        records: Sequence[MemoryRecord],
        reconcile: bool,
        progress: Callable[[int], None] | None,
        extend: Extend | None,
    ) -> list[WriteResult]:
        self.check_scopes(who, (r.scope for r in records))
        self.hold_for_review(records, who)
        keys = [(r.scope, r.key) for r in records if r.key]
        if len(keys) != len(set(keys)):
            raise InvalidInput("two items of the batch share a scope and key", field="key")
        projector = self.core.projector
        ahead = projector.extract_ahead(records)
        try:
            vectors = self.core.embedder.embed_many(
                [r.content for r in records], batch_size=256, progress=progress
            )
        except BaseException:
            if ahead is not None:
                ahead.cancel()  # (one already running finishes; its result is dropped)
            raise
        extracted = ahead.result() if ahead is not None else None
        touched = self.assign_sectors(records, vectors)
        now = self.core.clock.now()
        plan = self.planner.plan(records, vectors, now, reconcile=reconcile)
        if extend is not None:
            extend(plan)
        self.commit(plan, who, now, extracted)
        self.save_centroids(touched, who)
        return plan.results

    def commit(
        self, plan: WritePlan, who: Principal, now: datetime, extracted: Extracted | None = None
    ) -> None:
        """Write a plan in one transaction: new records with their graph projection,
        changes to older memories, and links between stored ones."""
        store = self.core.store
        graph = None
        if plan.inserts:
            graph = self.core.projector.for_insert(
                [r for r, _ in plan.inserts],
                np.stack([v for _, v in plan.inserts]),
                plan.links,
                plan.neighbours,
                extracted,
            )
        with store.atomic():
            if plan.inserts:
                limit = self.core.settings.max_memories_per_org
                check_quota(store, limit, (r.org_id for r, _ in plan.inserts))
                store.insert(plan.inserts, who.user_id, graph=graph)
            if plan.replacements:
                store.replace_many(plan.replacements, who.user_id)
            if not plan.inserts and plan.links:
                store.graph_write(who.org_id, Projection(links=plan.links), now)

    # -- 5. sectors -------------------------------------------------------------------------

    def assign_sectors(
        self, records: Sequence[MemoryRecord], vectors: np.ndarray
    ) -> dict[str, Sector]:
        """Put each record without a sector into its scope's best sector (by tags, else
        centroid); returns the sectors whose centroid moved."""
        scopes = {r.scope for r in records if r.sector_id is None}
        if not scopes:
            return {}
        found = self.core.store.sectors(ScopeFilter(records[0].org_id, frozenset(scopes)))
        if not found:
            return {}
        touched: dict[str, Sector] = {}
        for record, vector in zip(records, vectors, strict=True):
            if record.sector_id is not None:
                continue
            mine = [s for s in found if s.scope == record.scope]
            chosen = assign_sector(record.tags, vector, [SectorInfo.from_sector(s) for s in mine])
            if chosen is None:
                continue
            record.sector_id = chosen
            sector = touched.get(chosen) or next(s for s in mine if s.id == chosen)
            sector.centroid = update_centroid(sector.centroid, sector.size, vector)
            sector.size += 1
            touched[chosen] = sector
        return touched

    def save_centroids(self, touched: Mapping[str, Sector], who: Principal) -> None:
        """Store the moved centroids; a sector that outgrew its maximum splits now
        (``lifecycle.sector_auto_split``), as consolidation would."""
        now = self.core.clock.now()
        for sector in touched.values():
            sector.updated_at = now
            self.core.store.put_sector(sector)
            if self.core.settings.lifecycle.sector_auto_split and sector.size > sector.max_size:
                split_sector(self.core, sector, who, now)

    # -- changes to a stored memory ---------------------------------------------------------

    def edit(
        self,
        who: Principal,
        memory_id: str,
        changes: Mapping[str, Any],
        *,
        op: str = "update",
        status: Status | None = None,
        expected_version: int | None = None,
    ) -> MemoryRecord:
        """Validate ``changes`` (fields of :data:`UPDATABLE`) to a memory the caller may
        change and store them (``status``: the new status too, as approval sets it)."""
        check_updatable(changes)
        record = self.core.writable(memory_id, who)
        if expected_version is not None and record.version != expected_version:
            raise Conflict(
                f"memory {record.id!r} is at version {record.version}, not {expected_version}"
            )
        new = self._changed(record, changes)
        if status is not None:
            new.status = status
        diff = record.changes_to(new, (*UPDATABLE, "status"))
        if not diff:
            return record
        new.updated_at = self.core.clock.now()
        return self.change(who, record, new, op, diff, expected_version=expected_version)

    def _changed(self, record: MemoryRecord, changes: Mapping[str, Any]) -> MemoryRecord:
        new = replace(record, tags=record.tags, metadata=dict(record.metadata))
        for name, value in clean_changes(changes, Limits.of(self.core.settings)).items():
            setattr(new, name, value)
        check_window(new.valid_from, new.valid_to)
        return new

    def change(
        self,
        who: Principal,
        old: MemoryRecord,
        new: MemoryRecord,
        op: str,
        changes: Mapping[str, Any],
        *,
        expected_version: int | None = None,
    ) -> MemoryRecord:
        """Store ``new`` in place of ``old`` (one transaction): a changed content is
        re-embedded and re-projected into the graph, a changed scope is checked."""
        if new.scope != old.scope:
            self.check_scopes(who, [new.scope])
        else:
            self.core.directory.check_scopes(who.org_id, [new.scope])
        vector = None
        if "content" in changes:
            new.content_hash = content_hash(new.content)
            vector = self.core.embedder.embed(new.content)
        graph = None
        if "content" in changes or "tags" in changes:
            graph = self.core.projector.for_update(new, vector)
        return self.core.store.replace(
            new,
            vector,
            op=op,
            actor=who.user_id,
            changes=changes,
            expected_version=expected_version,
            graph=graph,
        )

    def apply(self, changes: Sequence[Replacement], who: Principal, page: int = 1000) -> None:
        """Maintenance changes to stored memories (consolidation, sector moves), a page
        per transaction."""
        for start in range(0, len(changes), page):
            self.core.store.replace_many(changes[start : start + page], who.user_id)

    # -- imports and re-embedding ------------------------------------------------------------

    def import_rows(
        self,
        who: Principal,
        rows: Sequence[Mapping[str, Any]],
        progress: Callable[[int], None] | None = None,
    ) -> int:
        """Exported rows in one transaction, each scope checked as a write's is; an active
        memory entering a scope whose review switch holds the importer's writes arrives
        pending."""
        records = [MemoryRecord.from_dict(row["record"]) for row in rows]
        self.check_scopes(who, (r.scope for r in records))
        self.hold_for_review(records, who)
        held = [
            {**row, "record": record.to_dict()}
            if record.status.value != row["record"].get("status")
            else row
            for row, record in zip(rows, records, strict=True)
        ]
        store = self.core.store
        with store.atomic():
            limit = self.core.settings.max_memories_per_org
            check_quota(store, limit, (r.org_id for r in records))
            store.import_rows(held, progress=progress)
        return len(held)

    def reembed(
        self, org_id: str, batch_size: int, progress: Callable[[int], None] | None = None
    ) -> int:
        """Give every memory of ``org_id`` a vector of the configured model, a batch per
        transaction (an interrupted run resumes where it stopped)."""
        store, embedder = self.core.store, self.core.embedder
        model_id = embedder.model_id
        done = 0
        while stale := store.stale_vectors(org_id, model_id, batch_size):
            vectors = embedder.embed_many([text for _, text in stale], batch_size=batch_size)
            pairs = [(mid, vec) for (mid, _), vec in zip(stale, vectors, strict=True)]
            changed = store.replace_vectors(org_id, model_id, pairs)
            if changed == 0:  # deleted meanwhile, or the store refuses: do not loop
                break
            done += changed
            if progress:
                progress(len(stale))
        return done
