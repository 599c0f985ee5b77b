"""The lifecycle half of the engine façade (mixed into :class:`~kenning.engine.Memory`).

Strength and reinforcement, conversations (``ingest``, ``context``),
consolidation, the memory hint, sectors, policies and the confidence
components. Like every façade method these only validate, check access and
call the lifecycle modules and the store; the logic lives in
:mod:`kenning.lifecycle`.
"""

from __future__ import annotations

import builtins
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from ..access import ScopeFilter
from ..audit import audited
from ..errors import NotFound, PermissionDenied
from ..facade import Facade
from ..models import (
    ALL_SCOPES,
    MemoryFilter,
    MemoryRecord,
    Principal,
    Scope,
    ScopesArg,
    Status,
    new_id,
)
from ..retrieval.pipeline import RecallRequest
from ..retrieval.ranker import rank
from ..scoring import component_confidence
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
from .consolidate import ConsolidationReport
from .hint import HintItem, format_hint
from .ingest import IngestResult
from .model import AccessEntry, Policy, Sector
from .policy import check_target

__all__ = ["LifecycleMethods"]


class LifecycleMethods(Facade):
    """Lifecycle methods of :class:`~kenning.engine.Memory` (see the module docstring)."""

    def confidence_components(
        self, memory_id: str, *, principal: Principal | None = None
    ) -> dict[str, float]:
        """The component confidence of a memory, each component shown: source
        reliability, entities extracted (graph mentions), relationships (graph links),
        validation (a ``validate`` feedback; pending review counts half) and user
        feedback (upvotes and downvotes from its history; 0.5 with none). The stored
        ``confidence`` moves by the confidence adjustments; this is the formula's view."""
        who = self.core.who(principal)
        record = self.core.visible(memory_id, who)
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
        self.core.access.flush()

    def reinforce(self, memory_id: str, *, principal: Principal | None = None) -> MemoryRecord:
        """Strengthen a memory now: +reinforcement, its decay clock restarts."""
        who = self.core.who(principal)
        record = self.core.visible(memory_id, who)
        now = self.clock.now()
        (access,) = self.core.strength.accesses([record], now, "reinforce")
        self.store.record_access(who.org_id, [access])
        return self.core.visible(memory_id, who)

    def strength(self, memory_id: str, *, principal: Principal | None = None) -> float:
        """A memory's current strength (decayed to now, with its sector's multiplier)."""
        who = self.core.who(principal)
        record = self.core.visible(memory_id, who)
        self.core.strength.learn_sectors([record], self.policy.readable(who))
        return self.core.strength.of(record, self.clock.now())

    @audited("memory.access_log", read=True, target=lambda result, args: args[0] if args else None)
    def access_log(
        self, memory_id: str, *, limit: int = 100, principal: Principal | None = None
    ) -> builtins.list[AccessEntry]:
        """The latest accesses of a memory (recall hits, reinforcements), oldest first."""
        who = self.core.who(principal)
        record = self.core.visible(memory_id, who)
        limit = clean_k(limit, self.settings.max_k, "limit")
        return self.store.access_log(record.id, self.policy.readable(who), limit)

    # -- lifecycle: conversations, consolidation, hints, sectors, policies ---------------

    @audited("memory.ingest", target=lambda result, args: result.session_id)
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
        who = self.core.who(principal)
        return self.ingestor.run(
            who, messages, session_id, self.core.write_scope(scope, who), episode_id, extract
        )

    @audited("memory.context", read=True)
    def context(
        self,
        session_id: str,
        *,
        scope: Scope | str | None = None,
        principal: Principal | None = None,
    ) -> builtins.list[MemoryRecord]:
        """The session's context window (its working-memory messages), oldest first."""
        who = self.core.who(principal)
        return self.ingestor.context(who, session_id, self.core.write_scope(scope, who))

    @audited("memory.consolidate", target=lambda result, args: None)
    def consolidate(
        self,
        *,
        scopes: ScopesArg = ALL_SCOPES,
        dry_run: bool = False,
        principal: Principal | None = None,
    ) -> ConsolidationReport:
        """Run consolidation over the scopes the caller may write.

        Working memory ages into episodic, weak or trivial old memories and
        those past retention are archived, capacity caps evict the weakest,
        repeated or reinforced episodes are promoted to semantic memories,
        oversized sectors split. Reversible from history; ``dry_run`` writes nothing.
        """
        who = self.core.who(principal)
        view = self.policy.writable(who, self.policy.resolve(who, scopes))
        return self.consolidator.run(who, view, dry_run=dry_run)

    def build_hint(
        self,
        *,
        persona: str | None = None,
        query: str | None = None,
        max_chars: int = 6000,
        principal: Principal | None = None,
    ) -> str:
        """A memory block for a system prompt, fenced as data.

        With ``query``: the best memories for it; without: the top memories by
        priority (confidence, recency, strength) in the caller's default view.
        ``persona`` acts as that persona (one the caller may use).
        """
        who = self.core.who(principal)
        if persona is not None:
            persona = clean_text(persona, "persona", 128)
            if persona not in who.personas and not self._admin_may_use(who, persona):
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
                min_score=self.settings.retrieval.hint_min_score,
            )
            result = self.reads.run(request, self.settings, self.clock.now())
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

    def _admin_may_use(self, who: Principal, persona: str) -> bool:
        """An admin may act as any persona of their organization: in an organization
        the directory governs, one it lists (an unknown id is refused as a member's
        persona is, saying nothing of other organizations)."""
        if not who.is_admin:
            return False
        directory = self.core.directory
        return not directory.governed(who.org_id) or directory.has_persona(who.org_id, persona)

    def _top_by_priority(self, who: Principal, limit: int) -> builtins.list[MemoryRecord]:
        """Seed 001's empty-query recall: the newest active memories of the default view,
        ordered by priority with no relevance term."""
        view = self.policy.default_recall(who)
        rows = self.store.list(view, MemoryFilter(), limit=1000, cursor=None)
        now = self.clock.now()
        by_id = {r.id: r for r in rows}
        self.core.strength.learn_sectors(rows, view)
        hits = rank(
            query="",
            relevance=dict.fromkeys(by_id, 0.0),
            records=by_id,
            principal=who,
            settings=self.settings,
            now=now,
            strength_of=self.core.strength.strengths(by_id, now),
        )
        return [h.memory for h in hits[:limit]]

    @audited("memory.sector.create")
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
        """Add a sector to a scope's hierarchy: new memories with one of its
        ``topics`` as a tag (or close to its centroid) are assigned to it."""
        who = self.core.who(principal)
        target = self.core.write_scope(scope, who)
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
        self.core.strength.forget_sectors()
        return sector

    def sectors(
        self, *, scopes: ScopesArg = ALL_SCOPES, principal: Principal | None = None
    ) -> builtins.list[Sector]:
        """The sectors of the scopes the caller may read, with their sizes."""
        who = self.core.who(principal)
        return self.store.sectors(self.policy.resolve(who, scopes))

    @audited("admin.policy.set", target=lambda result, args: result.target)
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
        who = self.core.who(principal)
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

    @audited("admin.policy.delete")
    def delete_policy(
        self, target: str = "*", *, memory_type: str = "*", principal: Principal | None = None
    ) -> None:
        """Remove a policy (organization admins only); ``NotFound`` when there is none."""
        who = self.core.who(principal)
        self._check_admin(who)
        if not self.store.delete_policy(who.org_id, target, memory_type):
            raise NotFound(f"no policy for {target!r} / {memory_type!r}")

    def policies(self, *, principal: Principal | None = None) -> builtins.list[Policy]:
        """The organization's retention, capacity and review policies."""
        return self.store.policies(self.core.who(principal).org_id)

    @staticmethod
    def _check_admin(who: Principal) -> None:
        if not who.is_admin:
            raise PermissionDenied(f"{who.user_id!r} is not an admin of {who.org_id!r}")
