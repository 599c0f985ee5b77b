"""The lifecycle half of the engine façade (mixed into :class:`~kenning.engine.Memory`).

Strength and reinforcement, conversations (``ingest``, ``context``),
consolidation, the memory hint, sectors, policies and seed 000's confidence
components. Like every façade method these only validate, check access and
call the lifecycle modules and the store; the logic lives in
:mod:`kenning.lifecycle`.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from ..access import AccessPolicy, ScopeFilter
from ..clock import Clock
from ..config import Settings
from ..errors import NotFound, PermissionDenied
from ..llm import ChatModel
from ..models import (
    ALL_SCOPES,
    MemoryFilter,
    MemoryRecord,
    Principal,
    Scope,
    Status,
    new_id,
)
from ..retrieval.pipeline import RecallPipeline, RecallRequest
from ..retrieval.ranker import rank
from ..scoring import component_confidence
from ..stores import Store
from ..validation import (
    MAX_INT32,
    clean_count,
    clean_flag,
    clean_k,
    clean_memory_type,
    clean_number,
    clean_tags,
    clean_text,
)
from .consolidate import ConsolidationReport, Consolidator
from .hint import HintItem, format_hint
from .ingest import Ingestor, IngestResult
from .model import AccessEntry, Policy, Sector
from .policy import check_target
from .sectors import SectorInfo, assign_sector, descendants, update_centroid
from .strength import AccessWriter, StrengthModel

if TYPE_CHECKING:
    from ..engine import Memory, ScopesArg

__all__ = ["LifecycleMethods"]


class LifecycleMethods:
    """Lifecycle methods of :class:`~kenning.engine.Memory` (see the module docstring)."""

    # provided by Memory
    settings: Settings
    store: Store
    policy: AccessPolicy
    clock: Clock
    _strength: StrengthModel
    _recall: RecallPipeline
    _ingestor: Ingestor
    _chat: ChatModel | None
    _access: AccessWriter
    _who: Callable[[Principal | None], Principal]
    _scope: Callable[[Scope | str | None, Principal], Scope]
    _visible: Callable[[str, Principal], MemoryRecord]

    def _assign_sectors(
        self, records: Sequence[MemoryRecord], vectors: np.ndarray
    ) -> dict[str, Sector]:
        """Put each record without a sector into its scope's best sector (by tags, else
        centroid); returns the sectors whose centroid moved."""
        scopes = {r.scope for r in records if r.sector_id is None}
        if not scopes:
            return {}
        found = self.store.sectors(ScopeFilter(records[0].org_id, frozenset(scopes)))
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

    def _save_centroids(self, touched: Mapping[str, Sector], who: Principal) -> None:
        """Store the moved centroids; a sector that outgrew its maximum splits now
        (``lifecycle.sector_auto_split``), as consolidation would."""
        now = self.clock.now()
        for sector in touched.values():
            sector.updated_at = now
            self.store.put_sector(sector)
            if self.settings.lifecycle.sector_auto_split and sector.size > sector.max_size:
                Consolidator(cast("Memory", self)).split(sector, who, now)

    def _sector_tree(self, sector: str, view: ScopeFilter) -> frozenset[str]:
        sector = clean_text(sector, "sector", 256)
        infos = [SectorInfo.from_sector(s) for s in self.store.sectors(view)]
        if all(i.id != sector for i in infos):
            raise NotFound(f"sector {sector!r} not found")
        return frozenset(descendants(sector, infos))

    def confidence_components(
        self, memory_id: str, *, principal: Principal | None = None
    ) -> dict[str, float]:
        """Seed 000's component confidence of a memory, each component shown: source
        reliability, entities extracted (graph mentions), relationships (graph links),
        validation (a ``validate`` feedback; pending review counts half) and user
        feedback (upvotes and downvotes from its history; 0.5 with none). The stored
        ``confidence`` moves by seed 000's adjustments; this is the formula's view."""
        who = self._who(principal)
        record = self._visible(memory_id, who)
        view = self.policy.readable(who)
        trail = self.store.history(record.id, view)
        votes = [e.changes.get("feedback") for e in trail if e.op == "feedback"]
        ups, downs = votes.count("upvote"), votes.count("downvote")
        entities = self.store.entities_of([record.id], view).get(record.id, [])
        return component_confidence(
            source=record.source,
            entities=len(entities),
            entities_with_properties=sum(1 for e in entities if e.entity_type),
            relationships=len(self.store.graph_edges([record.id], view)),
            validated="validate" in votes,
            validation_pending=record.status is Status.PENDING_REVIEW,
            feedback=(ups / (ups + downs)) if ups + downs else None,
        )

    def flush(self) -> None:
        """Wait until the access writes of earlier recalls are stored (raises their error)."""
        self._access.flush()

    def reinforce(self, memory_id: str, *, principal: Principal | None = None) -> MemoryRecord:
        """Strengthen a memory now (seed 003): +reinforcement, its decay clock restarts."""
        who = self._who(principal)
        record = self._visible(memory_id, who)
        now = self.clock.now()
        (access,) = self._strength.accesses([record], now, "reinforce")
        self.store.record_access(who.org_id, [access])
        return self._visible(memory_id, who)

    def strength(self, memory_id: str, *, principal: Principal | None = None) -> float:
        """A memory's current strength (decayed to now, with its sector's multiplier)."""
        who = self._who(principal)
        record = self._visible(memory_id, who)
        self._strength.learn_sectors([record], self.policy.readable(who))
        return self._strength.of(record, self.clock.now())

    def access_log(
        self, memory_id: str, *, limit: int = 100, principal: Principal | None = None
    ) -> builtins.list[AccessEntry]:
        """The latest accesses of a memory (recall hits, reinforcements), oldest first."""
        who = self._who(principal)
        record = self._visible(memory_id, who)
        limit = clean_k(limit, self.settings.max_k, "limit")
        return self.store.access_log(record.id, self.policy.readable(who), limit)

    # -- lifecycle: conversations, consolidation, hints, sectors, policies ---------------

    def ingest(
        self,
        messages: Sequence[str | Mapping[str, Any]],
        session_id: str,
        *,
        scope: Scope | str | None = None,
        episode_id: str | None = None,
        extract: bool = True,
        principal: Principal | None = None,
    ) -> IngestResult:
        """Store conversation messages as working memory and extract facts from them.

        ``messages``: strings, or objects with ``content`` and optional ``role``,
        ``name`` (the speaker) and ``at``. The session keeps its last
        ``lifecycle.context_window`` messages as working memory; older ones
        become episodic. Extracted facts (LLM when configured, rules otherwise)
        are reconciled and linked to the turns they came from. One transaction.
        """
        who = self._who(principal)
        return self._ingestor.run(
            who, messages, session_id, self._scope(scope, who), episode_id, extract
        )

    def context(
        self,
        session_id: str,
        *,
        scope: Scope | str | None = None,
        principal: Principal | None = None,
    ) -> builtins.list[MemoryRecord]:
        """The session's context window (its working-memory messages), oldest first."""
        who = self._who(principal)
        return self._ingestor.context(who, session_id, self._scope(scope, who))

    def consolidate(
        self,
        *,
        scopes: ScopesArg = ALL_SCOPES,
        dry_run: bool = False,
        principal: Principal | None = None,
    ) -> ConsolidationReport:
        """Run consolidation over the scopes the caller may write (seed 004).

        Working memory ages into episodic, weak or trivial old memories and
        those past retention are archived, capacity caps evict the weakest,
        repeated or reinforced episodes are promoted to semantic memories,
        oversized sectors split. Reversible from history; ``dry_run`` writes nothing.
        """
        who = self._who(principal)
        view = self.policy.writable(who, self.policy.resolve(who, scopes))
        return Consolidator(cast("Memory", self)).run(who, view, dry_run=dry_run)

    def build_hint(
        self,
        *,
        persona: str | None = None,
        query: str | None = None,
        max_chars: int = 6000,
        principal: Principal | None = None,
    ) -> str:
        """A memory block for a system prompt (seed 001 §6), fenced as data.

        With ``query``: the best memories for it; without: the top memories by
        priority (confidence, recency, strength) in the caller's default view.
        ``persona`` acts as that persona (one the caller may use).
        """
        who = self._who(principal)
        if persona is not None:
            persona = clean_text(persona, "persona", 128)
            if persona not in who.personas and not who.is_admin:  # as Principal allows
                raise PermissionDenied(f"{who.user_id!r} may not use persona {persona!r}")
            who = replace(who, active_persona=persona)
        max_chars = clean_count(max_chars, "max_chars", minimum=200)
        if query is not None and query.strip():
            # a hint is a passive injection, not a use: no reinforcement
            query = clean_text(query, "query", self.settings.max_content_chars)
            request = RecallRequest(
                query,
                50,
                who,
                self.policy.default_recall(who),
                MemoryFilter(),
                self.settings.min_confidence,
            )
            result = self._recall.run(request, self.settings, self.clock.now())
            records = [h.memory for h in result.hits]
        else:
            records = self._top_by_priority(who, 200)
        items = []
        for r in records:
            item = HintItem.from_record(r, who.user_id)
            speaker = r.metadata.get("speaker")
            if isinstance(speaker, str) and speaker:  # a conversation turn: say whose words
                item = replace(item, content=f"{speaker} said: {item.content}")
            items.append(item)
        return format_hint(items, max_chars=max_chars)

    def _top_by_priority(self, who: Principal, limit: int) -> builtins.list[MemoryRecord]:
        """Seed 001's empty-query recall: the newest active memories of the default view,
        ordered by priority with no relevance term."""
        view = self.policy.default_recall(who)
        rows = self.store.list(view, MemoryFilter(), limit=1000, cursor=None)
        now = self.clock.now()
        by_id = {r.id: r for r in rows}
        self._strength.learn_sectors(rows, view)
        hits = rank(
            query="",
            relevance=dict.fromkeys(by_id, 0.0),
            records=by_id,
            principal=who,
            settings=self.settings,
            now=now,
            strength_of=self._strength.strengths(by_id, now),
        )
        return [h.memory for h in hits[:limit]]

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
    ) -> Sector:
        """Add a sector to a scope's hierarchy (seed 003): new memories with one of its
        ``topics`` as a tag (or close to its centroid) are assigned to it."""
        who = self._who(principal)
        target = self._scope(scope, who)
        self.policy.check_write(who, target)
        name = clean_text(name, "name", 128)
        multiplier = clean_number(decay_multiplier, "decay_multiplier", at_most=100)
        cap = clean_count(
            self.settings.lifecycle.sector_max_size if max_size is None else max_size,
            "max_size",
            minimum=4,
            maximum=MAX_INT32,
        )
        view = ScopeFilter(who.org_id, frozenset({target}))
        if parent_id is not None and parent_id not in {s.id for s in self.store.sectors(view)}:
            raise NotFound(f"sector {parent_id!r} not found in scope {target.key!r}")
        now = self.clock.now()
        sector = Sector(
            id=new_id(),
            org_id=who.org_id,
            scope=target,
            name=name,
            parent_id=parent_id,
            decay_multiplier=multiplier,
            topics=tuple(clean_tags(list(topics), self.settings.max_tags)),
            max_size=cap,
            created_at=now,
            updated_at=now,
        )
        self.store.put_sector(sector)
        self._strength.forget_sectors()
        return sector

    def sectors(
        self, *, scopes: ScopesArg = ALL_SCOPES, principal: Principal | None = None
    ) -> builtins.list[Sector]:
        """The sectors of the scopes the caller may read, with their sizes."""
        who = self._who(principal)
        return self.store.sectors(self.policy.resolve(who, scopes))

    def set_policy(
        self,
        target: str = "*",
        *,
        memory_type: str = "*",
        retention_days: float | None = None,
        capacity: int | None = None,
        review: bool = False,
        principal: Principal | None = None,
    ) -> Policy:
        """Set the retention / capacity / review policy for a target and memory type
        (organization admins only). Target: ``*``, ``layer:<layer>``,
        ``scope:<scope>`` or ``sector:<id>``."""
        who = self._who(principal)
        self._check_admin(who)
        policy = Policy(
            who.org_id,
            check_target(clean_text(target, "target", 300)),
            "*" if memory_type == "*" else clean_memory_type(memory_type).value,
            None if retention_days is None else clean_number(retention_days, "retention_days"),
            None if capacity is None else clean_count(capacity, "capacity", maximum=MAX_INT32),
            clean_flag(review, "review"),
            self.clock.now(),
        )
        self.store.put_policy(policy)
        return policy

    def delete_policy(
        self, target: str = "*", *, memory_type: str = "*", principal: Principal | None = None
    ) -> None:
        """Remove a policy (organization admins only); ``NotFound`` when there is none."""
        who = self._who(principal)
        self._check_admin(who)
        if not self.store.delete_policy(who.org_id, target, memory_type):
            raise NotFound(f"no policy for {target!r} / {memory_type!r}")

    def policies(self, *, principal: Principal | None = None) -> builtins.list[Policy]:
        """The organization's retention, capacity and review policies."""
        return self.store.policies(self._who(principal).org_id)

    @staticmethod
    def _check_admin(who: Principal) -> None:
        if not who.is_admin:
            raise PermissionDenied(f"{who.user_id!r} is not an admin of {who.org_id!r}")
