"""Consolidation (seed 004): working -> episodic -> semantic, forgetting, retention,
capacity, sector splits. A job: ``Memory.consolidate`` / ``kenning consolidate``.

One pass over the active memories the caller may write, at the clock's now:

1. **Working memory** older than ``working_ttl_days`` becomes episodic (the
   raw turn is kept, DESIGN.md §2); trivial working memory is archived.
2. **Forgetting** (seed 004): strength < ``forget_strength`` and older than
   ``forget_after_days``, or trivial (importance 1) and older than
   ``trivial_after_days``: archived (op ``forget``). Critical memories never.
3. **Retention**: older than its policy's ``retention_days``: archived (``retention``).
4. **Promotion**: an episodic memory reinforced more than
   ``promote_min_reinforcements`` times with importance >= ``promote_min_importance``
   (seed 004), or ``promote_min_repeats`` near-duplicate episodic memories of
   one scope, become one semantic memory: an LLM summary when one is
   configured, else the most central of them; it links to its evidence
   (``reference``) and each evidence memory records ``consolidated_into``.
   The new memory is written through the write pipeline (reconcile, review),
   so promoting a fact that is already known confirms it instead of repeating
   it; a group whose scope the organization no longer has (a deleted team) is
   reported as ``skip`` and left as it is.
5. **Capacity**: past a policy's ``capacity``, the weakest memories it targets
   are archived (``evict``).
6. **Sectors** past their ``max_size`` split in two (``sector_auto_split``).

Nothing is deleted: every step archives or changes fields, records the before
and after in history, and :meth:`Memory.restore` reverses it. ``dry_run``
reports the same actions and writes nothing.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any

import numpy as np

from ..access import ScopeFilter
from ..decay import type_defaults
from ..errors import InvalidInput, LLMError
from ..graph.model import MemoryLink, Relation
from ..llm import Message
from ..models import MemoryRecord, MemoryType, Principal, Status
from ..stores import Replacement
from .model import Policy, Sector
from .policy import matches, retention_days
from .split import scan, split_sector
from .writer import WritePlan

if TYPE_CHECKING:
    from ..core import Core
    from ..write import WritePipeline

__all__ = ["Action", "ConsolidationReport", "Consolidator"]

log = logging.getLogger("kenning.consolidate")

_SUMMARY_PROMPT = (
    "These memories record the same thing on different occasions. Write the lasting "
    "fact they establish as one short, self-contained sentence in the third person. "
    "Answer with the sentence only."
)


@dataclass(frozen=True, slots=True)
class Action:
    """One thing consolidation did (or would do, in a dry run)."""

    op: str
    memory_id: str
    reason: str
    evidence: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        out: dict[str, Any] = {"op": self.op, "memory_id": self.memory_id, "reason": self.reason}
        if self.evidence:
            out["evidence"] = list(self.evidence)
        return out


@dataclass(slots=True)
class ConsolidationReport:
    """What one consolidation pass did; ``counts`` per op."""

    dry_run: bool
    scanned: int = 0
    actions: list[Action] = field(default_factory=list)

    @property
    def counts(self) -> dict[str, int]:
        """Number of actions per op."""
        out: dict[str, int] = {}
        for a in self.actions:
            out[a.op] = out.get(a.op, 0) + 1
        return out

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {
            "dry_run": self.dry_run,
            "scanned": self.scanned,
            "counts": self.counts,
            "actions": [a.to_dict() for a in self.actions],
        }


class Consolidator:
    """Runs consolidation passes over one :class:`~kenning.core.Core`; what it writes
    goes through the write pipeline."""

    def __init__(self, core: Core, writes: WritePipeline) -> None:
        self.core = core
        self.writes = writes

    def run(
        self, who: Principal, view: ScopeFilter, *, dry_run: bool = False
    ) -> ConsolidationReport:
        """One pass over what ``view`` covers (the caller's writable scopes)."""
        core, lc = self.core, self.core.settings.lifecycle
        now = core.clock.now()
        report = ConsolidationReport(dry_run)
        policies = core.store.policies(view.org_id)
        changes: list[Replacement] = []
        kept: list[MemoryRecord] = []
        for record in scan(self.core, view):
            report.scanned += 1
            step = self._retire_or_age(record, now, policies)
            if step is None:
                kept.append(record)
                continue
            op, new, reason = step
            report.actions.append(Action(op, record.id, reason))
            changes.append(
                Replacement(
                    new,
                    None,
                    op,
                    record.changes_to(new, ("status", "memory_type", "decay_rate"))
                    | {"reason": reason},
                )
            )
            if new.status is Status.ACTIVE:
                kept.append(new)
        evicted = self._capacity(kept, policies, now)
        for record, reason in evicted:
            report.actions.append(Action("evict", record.id, reason))
            new = replace(record, status=Status.ARCHIVED, updated_at=now)
            changes.append(
                Replacement(
                    new, None, "evict", record.changes_to(new, ("status",)) | {"reason": reason}
                )
            )
        gone = {r.id for r, _ in evicted}
        kept = [r for r in kept if r.id not in gone]
        if not dry_run:
            self.writes.apply(changes, who)
        for group, reason in self._promotions(kept, view, lc.repeat_similarity):
            evidence = tuple(r.id for r in group)
            if not dry_run:
                try:
                    self._promote(group, who, now)
                except InvalidInput as exc:  # its scope is gone (a deleted team): skip it
                    if exc.field != "scope":
                        raise
                    report.actions.append(Action("skip", group[0].id, str(exc), evidence))
                    continue
            report.actions.append(Action("promote", group[0].id, reason, evidence))
        for sector, plan_reason in self._splits(view):
            report.actions.append(Action("split", sector.id, plan_reason))
            if not dry_run:
                split_sector(core, sector, who, now)
        return report

    # -- per memory ------------------------------------------------------------------------

    def _retire_or_age(
        self, r: MemoryRecord, now: datetime, policies: Sequence[Policy]
    ) -> tuple[str, MemoryRecord, str] | None:
        lc = self.core.settings.lifecycle
        age = (now - r.created_at).total_seconds() / 86_400.0
        archived = replace(r, status=Status.ARCHIVED, updated_at=now)
        if r.importance < 5:
            if r.importance == 1 and age > lc.trivial_after_days:
                return "forget", archived, f"trivial and {age:.0f} days old"
            strength = self.core.strength.of(r, now)
            if strength < lc.forget_strength and age > lc.forget_after_days:
                return "forget", archived, f"strength {strength:.3f} and {age:.0f} days old"
            keep = retention_days(policies, r)
            said_age = (now - r.said_at).total_seconds() / 86_400.0
            if keep is not None and said_age > keep:
                return "retention", archived, f"{said_age:.0f} days old, retention {keep:g} days"
        if r.memory_type is MemoryType.WORKING and age > lc.working_ttl_days:
            _, rate = type_defaults(MemoryType.EPISODIC, lc.initial_strength, lc.decay_rate)
            aged = replace(r, memory_type=MemoryType.EPISODIC, decay_rate=rate, updated_at=now)
            return "consolidate", aged, f"working memory {age:.1f} days old -> episodic"
        return None

    def _capacity(
        self, kept: Sequence[MemoryRecord], policies: Sequence[Policy], now: datetime
    ) -> list[tuple[MemoryRecord, str]]:
        out: list[tuple[MemoryRecord, str]] = []
        gone: set[str] = set()
        for p in policies:
            if p.capacity is None:
                continue
            members = [r for r in kept if r.id not in gone and matches(p, r)]
            over = len(members) - p.capacity
            if over <= 0:
                continue
            # critical memories are never evicted; the weakest (then oldest) go first
            ranked = sorted(
                (r for r in members if r.importance < 5),
                key=lambda r: (self.core.strength.of(r, now), r.created_at, r.id),
            )
            for r in ranked[:over]:
                gone.add(r.id)
                out.append((r, f"capacity {p.capacity} of {p.target}/{p.memory_type}"))
        return out

    # -- promotion ---------------------------------------------------------------------------

    def _promotions(
        self, kept: Sequence[MemoryRecord], view: ScopeFilter, threshold: float
    ) -> list[tuple[list[MemoryRecord], str]]:
        lc = self.core.settings.lifecycle
        episodic = [
            r
            for r in kept
            if r.memory_type is MemoryType.EPISODIC and "consolidated_into" not in r.metadata
        ]
        out: list[tuple[list[MemoryRecord], str]] = []
        used: set[str] = set()
        for r in episodic:
            if (
                r.reinforcement_count > lc.promote_min_reinforcements
                and r.importance >= lc.promote_min_importance
            ):
                out.append(([r], f"reinforced {r.reinforcement_count} times"))
                used.add(r.id)
        by_scope: dict[Any, list[MemoryRecord]] = {}
        for r in episodic:
            if r.id not in used:
                by_scope.setdefault(r.scope, []).append(r)
        for members in by_scope.values():
            if len(members) < lc.promote_min_repeats:
                continue
            vectors = self.core.store.memory_vectors([r.id for r in members], view)
            members = [r for r in members if r.id in vectors]
            for group in _clusters(members, vectors, threshold, lc.promote_min_repeats):
                out.append((group, f"said {len(group)} times"))
        return out

    def _promote(self, group: list[MemoryRecord], who: Principal, now: datetime) -> None:
        content = self._summary(group)
        first = group[0]
        item = {
            "content": content,
            "scope": first.scope,
            "memory_type": "semantic",
            "importance": max(r.importance for r in group),
            "confidence": round(sum(r.confidence for r in group) / len(group), 4),
            "tags": sorted({t for r in group for t in r.tags})[: self.core.settings.max_tags],
            "metadata": {"evidence": [r.id for r in group]},
            "source": "consolidation",
            "episode_id": first.episode_id,
            "session_id": first.session_id,
        }

        def note_evidence(plan: WritePlan) -> None:
            # the summary (or the known fact it confirmed) is linked to its evidence,
            # and each piece of evidence notes where it went: in the same transaction
            target = plan.results[0].record
            for r in group:
                noted = replace(
                    r, metadata={**r.metadata, "consolidated_into": target.id}, updated_at=now
                )
                plan.replacements.append(
                    Replacement(noted, None, "consolidate", r.changes_to(noted, ("metadata",)))
                )
                if r.id != target.id:
                    plan.links.append(MemoryLink(target.id, r.id, Relation.REFERENCE, 1.0))

        self.writes.write(who, [self.writes.build(who, item, now)], extend=note_evidence)

    def _summary(self, group: Sequence[MemoryRecord]) -> str:
        """An LLM summary when configured (falling back on any error), else the most
        central memory's text."""
        chat = self.core.chat
        if chat is not None and len(group) > 1:
            listing = "\n".join(f"- {r.content}" for r in group[:20])
            try:
                text = chat.complete(
                    [Message("system", _SUMMARY_PROMPT), Message("user", listing)]
                ).text.strip()
                if 0 < len(text) <= self.core.settings.max_content_chars:
                    return text
            except LLMError as exc:
                log.warning("consolidation summary fell back to a representative: %s", exc)
        return group[0].content

    # -- sectors ----------------------------------------------------------------------------

    def _splits(self, view: ScopeFilter) -> list[tuple[Sector, str]]:
        if not self.core.settings.lifecycle.sector_auto_split:
            return []
        return [
            (s, f"{s.size} memories > max {s.max_size}")
            for s in self.core.store.sectors(view)
            if s.size > s.max_size
        ]


def _clusters(
    members: Sequence[MemoryRecord],
    vectors: dict[str, np.ndarray],
    threshold: float,
    min_size: int,
) -> list[list[MemoryRecord]]:
    """Groups of at least ``min_size`` mutually similar memories (greedy, most central
    first, deterministic); each group starts with its most central member."""
    if len(members) < min_size:
        return []
    matrix = np.stack([vectors[r.id] for r in members])
    sims = matrix @ matrix.T
    close = sims >= threshold
    order = sorted(range(len(members)), key=lambda i: (-int(close[i].sum()), members[i].id))
    taken: set[int] = set()
    out: list[list[MemoryRecord]] = []
    for i in order:
        if i in taken:
            continue
        group = [int(j) for j in np.flatnonzero(close[i]) if int(j) not in taken]
        if len(group) < min_size:
            continue
        group.sort(key=lambda j: (-float(sims[j, group].sum()), members[j].id))
        taken.update(group)
        out.append([members[j] for j in group])
    return out
