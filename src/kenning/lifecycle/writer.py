"""Reconcile on write (seed 002 lifecycle sync): one batch in, one transaction out.

:class:`WritePlanner` reads a bounded candidate set per new memory (its
``reconcile_neighbours`` nearest active memories of the same scope, the
memory holding the same key, and as many of the closest earlier items of the
batch in that scope), asks the
:class:`~kenning.lifecycle.reconcile.Reconciler`, and turns the decisions
into a :class:`WritePlan` the store commits at once:

=========  ===================================================================
ADD        insert the new memory
UPDATE     same key: the existing memory takes the new content (a new version)
NOOP       a near-duplicate: nothing new is stored; the existing memory is
           confirmed (seed 000's +0.10) and the caller gets it back
SUPERSEDE  the new value replaces a contradicted one: the old memory becomes
           ``superseded``, its validity window closes when the new one starts,
           its confidence takes the contradiction adjustment (-0.20); it stays
           readable as history and :meth:`Memory.restore` undoes all of it
SHADOW     the new memory restates the old one with more: the old one retires
           (``superseded``, window left open), linked ``elaborates``
=========  ===================================================================

A memory that would be added is also compared with the nearest retired facts
whose replacement only ended them ("Rex passed away" for "I have a dog named
Rex"): a new value of such a fact ("We adopted a puppy called Luna") replaces
the ending, so a value that ended and the one that came after stay one chain.
And a fact ``ingest`` drew that would be added is judged again as its speaker
said it: when it and an earlier drawn fact of the same speaker each come from
a turn of one sentence, the turns decide ("I switched to Dr. Jones." / "My
doctor is Dr. Smith."), so the same words change the same facts through
``ingest`` as through ``write``.

Only active memories of the types in ``lifecycle.reconcile_types`` are
reconciled: episodic and working memories are events (two alike events stay
two), and a memory written as ``pending_review`` waits for its reviewer
instead of changing what is already trusted. One kind of event takes part:
an event ``ingest`` draws from a conversation ("The user got laid off from
Nokia in May") may end or change a stored fact ("The user works at Nokia")
when it has a word that ends or changes one, as the same words written as a
fact would; it never repeats or details one.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any, NamedTuple

import numpy as np

from ..access import ScopeFilter
from ..config import Settings
from ..errors import ConfigError
from ..graph.model import MemoryLink, Relation
from ..graph.project import Projector
from ..llm import ChatModel
from ..models import EXTRACTED, FeedbackKind, MemoryFilter, MemoryRecord, MemoryType, Status
from ..retrieval.collapse import restated_turn
from ..retrieval.context import speaker_of
from ..retrieval.successors import drawn_facts
from ..scoring import adjust_confidence
from ..stores import Replacement, Store
from ._fact_rules import _sentences
from .reconcile import (
    Action,
    Decision,
    Incoming,
    LLMReconciler,
    Neighbour,
    Reconciler,
    RuleReconciler,
    changes_slot,
    ends_too,
    names_a_value,
    only_ends,
    says_an_end,
    slot_query,
)
from .slots import change_cue, renews_its_thing

__all__ = ["WritePlan", "WritePlanner", "WriteResult", "reconciler_for"]

_BATCH = "batch:"


def reconciler_for(settings: Settings, chat: ChatModel | None) -> Reconciler | None:
    """The reconciler ``lifecycle.reconcile`` names (None for "off")."""
    mode = settings.lifecycle.reconcile
    if mode == "off":
        return None
    rules = RuleReconciler(settings.lifecycle.reconcile_rules)
    if mode == "llm":
        if chat is None:
            raise ConfigError("KENNING_LIFECYCLE_RECONCILE=llm needs an LLM (KENNING_LLM_*)")
        return LLMReconciler(chat, fallback=rules)
    return rules


@dataclass(frozen=True, slots=True)
class WriteResult:
    """What happened to one written item: the memory now holding it and why."""

    record: MemoryRecord
    action: Action = Action.ADD
    target: str | None = None
    reason: str = ""

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {
            "action": self.action.value,
            "target": self.target,
            "reason": self.reason,
            "memory": self.record.to_dict(),
        }


@dataclass(slots=True)
class WritePlan:
    """Inserts, changes to existing memories and extra links, for one transaction."""

    inserts: list[tuple[MemoryRecord, np.ndarray]] = field(default_factory=list)
    replacements: list[Replacement] = field(default_factory=list)
    links: list[MemoryLink] = field(default_factory=list)
    results: list[WriteResult] = field(default_factory=list)
    #: New record id -> the nearest memories of its scope, as reconcile searched them
    #: (the graph projection reuses them instead of searching again).
    neighbours: dict[str, list[tuple[str, float]]] = field(default_factory=dict)


class WritePlanner:
    """Plans a batch of new records against what the store holds (see module doc)."""

    def __init__(
        self,
        store: Store,
        settings: Settings,
        projector: Projector,
        reconciler: Reconciler | None,
        embed: Callable[[Sequence[str]], np.ndarray],
    ) -> None:
        self.store = store
        #: Embeds what speakers said for the as-said pass (:meth:`_as_said`).
        self.embed = embed
        self.settings = settings
        self.projector = projector
        self.reconciler = reconciler

    def plan(
        self,
        records: Sequence[MemoryRecord],
        vectors: np.ndarray,
        now: datetime,
        reconcile: bool = True,
    ) -> WritePlan:
        """Decide every record; ``reconcile=False`` adds them all."""
        lc = self.settings.lifecycle
        eligible = [
            i
            for i, r in enumerate(records)
            if reconcile
            and self.reconciler is not None
            and (r.memory_type.value in lc.reconcile_types or _drawn_event(r))
            and r.status is Status.ACTIVE
        ]
        decisions: dict[int, Decision] = {}
        existing: dict[str, MemoryRecord] = {}
        plan = WritePlan()
        if eligible:
            decisions, existing, near = self._decide(records, vectors, eligible)
            if lc.reconcile_neighbours >= self.settings.graph_semantic_max + 1:
                plan.neighbours = {
                    records[i].id: hits for i, hits in zip(eligible, near, strict=True)
                }
        rows = [replace(r) for r in records]
        holder: dict[int, MemoryRecord] = {}  # batch index -> its row, to be inserted
        merged: dict[int, MemoryRecord] = {}  # batch index -> the stored memory it went into
        for i, record in enumerate(rows):
            d = decisions.get(i)
            if d is None or d.action is Action.ADD or d.target is None:
                plan.inserts.append((record, vectors[i]))
                holder[i] = record
                plan.results.append(WriteResult(record, Action.ADD, None, d.reason if d else ""))
                continue
            if d.target.startswith(_BATCH):
                j = int(d.target.removeprefix(_BATCH))
                if j in merged and d.action in (Action.NOOP, Action.UPDATE):
                    merged[i] = merged[j]  # its twin already went into a stored memory
                    plan.results.append(WriteResult(merged[j], Action.NOOP, merged[j].id, d.reason))
                    continue
                plan.results.append(self._within_batch(d, i, rows, vectors, holder, plan, now))
                continue
            old = existing[d.target]
            result = self._against(d, record, vectors[i], old, plan, now)
            plan.results.append(result)
            if d.action in (Action.SUPERSEDE, Action.SHADOW):
                holder[i] = record
            else:
                merged[i] = result.record
        return plan

    # -- decisions ------------------------------------------------------------------------

    def _decide(
        self, records: Sequence[MemoryRecord], vectors: np.ndarray, eligible: list[int]
    ) -> tuple[dict[int, Decision], dict[str, MemoryRecord], list[list[tuple[str, float]]]]:
        lc = self.settings.lifecycle
        org = records[0].org_id
        near = self.store.scope_neighbours(
            org, [(records[i].scope, vectors[i]) for i in eligible], lc.reconcile_neighbours
        )
        slotted = self._slot_statements(records, vectors, eligible, near)
        by_key: dict[int, MemoryRecord] = {}
        for i in eligible:
            r = records[i]
            if r.key:
                found = self.store.find_by_key(org, r.scope, r.key)
                if found is not None and found.status is not Status.SUPERSEDED:
                    by_key[i] = found
        view = ScopeFilter(org, frozenset(records[i].scope for i in eligible))
        ids = {mid for hits in (*near, *slotted) for mid, _ in hits}
        ids |= {r.id for r in by_key.values()}
        existing = {r.id: r for r in self.store.get(sorted(ids), view)}
        key_vectors = self.store.memory_vectors([r.id for r in by_key.values()], view)
        items: list[tuple[Incoming, list[Neighbour]]] = []
        earlier = _batch_candidates(
            records, vectors, eligible, lc.reconcile_neighbours + 1, lc.reconcile_rules.batch_floor
        )
        for n, i in enumerate(eligible):
            r = records[i]
            # an event of the batch is no fact a later item repeats or details
            earlier[n] = [(j, sim) for j, sim in earlier[n] if not _drawn_event(records[j])]
            cands: dict[str, Neighbour] = {}
            for mid, sim in near[n]:  # facts are reconciled with facts, not with events
                found = existing.get(mid)
                if found is not None and found.memory_type.value in lc.reconcile_types:
                    cands[mid] = _neighbour(found, sim, self._author(found))
            keyed = by_key.get(i)
            if keyed is not None and keyed.id not in cands:
                vec = key_vectors.get(keyed.id)
                sim = float(np.dot(vec, vectors[i])) if vec is not None else 0.0
                cands[keyed.id] = _neighbour(keyed, sim, self._author(keyed))
            for j, sim in earlier[n]:  # earlier items of the batch, same scope
                near_j = _neighbour(records[j], sim, self._author(records[j]))
                cands[f"{_BATCH}{j}"] = replace(near_j, id=f"{_BATCH}{j}")
            best = sorted(cands.values(), key=lambda c: -c.similarity)
            best = best[: lc.reconcile_neighbours + 1]
            if keyed is not None and all(c.id != keyed.id for c in best):
                best.append(cands[keyed.id])
            for mid, sim in slotted[n]:  # the slot's statements, however far apart
                found = existing.get(mid)
                if found is not None and found.memory_type.value in lc.reconcile_types:
                    best.append(_neighbour(found, sim, self._author(found)))
            items.append((Incoming(r.content, r.key, r.said_at, self._author(r)), best))
        assert self.reconciler is not None
        decided = self.reconciler.decide_many(items)
        decided = self._after_endings(records, vectors, eligible, items, decided, existing)
        decided = self._as_said(records, vectors, eligible, items, decided, existing)
        decided = [
            _as_event(d, item) if _drawn_event(records[i]) else d
            for i, d, item in zip(eligible, decided, items, strict=True)
        ]
        return dict(zip(eligible, decided, strict=True)), existing, near

    def _slot_statements(
        self,
        records: Sequence[MemoryRecord],
        vectors: np.ndarray,
        eligible: list[int],
        near: list[list[tuple[str, float]]],
    ) -> list[list[tuple[str, float]]]:
        """Per eligible record, the scope's statements of the slot it fills that its
        nearest neighbours miss, with their cosines (:func:`~.reconcile.slot_query`):
        "Today was my first day at Philips" embeds at 0.23 from "I work at Nokia",
        which a store of many memories does not put among the nearest. Looked up
        only when the nearest reach below the cosine the rule needs: otherwise they
        hold every memory that could pass it."""
        out: list[list[tuple[str, float]]] = []
        lc = self.settings.lifecycle
        top = lc.reconcile_neighbours
        for n, i in enumerate(eligible):
            slot = slot_query(records[i].content, lc.reconcile_rules)
            if slot is None or len(near[n]) < top or min(s for _, s in near[n]) < slot[1]:
                out.append([])
                continue
            query = slot[0]
            view = ScopeFilter(records[i].org_id, frozenset({records[i].scope}))
            seen = {mid for mid, _ in near[n]}
            found = [
                mid
                for mid, _ in self.store.keyword_search(query, view, MemoryFilter(), top)
                if mid not in seen
            ]
            sims = self.store.vector_scores(vectors[i], found, view) if found else {}
            out.append([(mid, sims[mid]) for mid in found if mid in sims])
        return out

    def _after_endings(
        self,
        records: Sequence[MemoryRecord],
        vectors: np.ndarray,
        eligible: list[int],
        items: list[tuple[Incoming, list[Neighbour]]],
        decided: list[Decision],
        existing: dict[str, MemoryRecord],
    ) -> list[Decision]:
        """``decided``, where a new value follows one that ended: it continues that fact.

        "Rex passed away" retired "I have a dog named Rex"; "We adopted a puppy called
        Luna" shares little with the ending, so it was added beside it, and the ending
        kept answering "What's my dog called?". Each memory that would be added is
        compared with the nearest retired ones (``_AFTER_ENDINGS``) whose replacement
        only ended them (:func:`~.reconcile.only_ends`, said before the new one): a
        supersede of the retired fact supersedes its ending, so the chain reads Rex,
        his end, Luna. ``existing`` gains the endings read."""
        adds = [n for n, d in enumerate(decided) if d.action is Action.ADD]
        if not adds:
            return decided
        org = records[0].org_id
        asked = [(records[eligible[n]].scope, vectors[eligible[n]]) for n in adds]
        near = self.store.scope_neighbours(org, asked, _AFTER_ENDINGS, {Status.SUPERSEDED})
        floor = self.settings.lifecycle.reconcile_rules.batch_floor  # as for the batch's own
        near = [[(mid, sim) for mid, sim in hits if sim >= floor] for hits in near]
        ids = sorted({mid for hits in near for mid, _ in hits})
        if not ids:
            return decided
        view = ScopeFilter(org, frozenset(scope for scope, _ in asked))
        retired = {r.id: r for r in self.store.get(ids, view)}
        ends = {r.superseded_by for r in retired.values() if r.superseded_by} - set(existing)
        existing.update((r.id, r) for r in self.store.get(sorted(e for e in ends if e), view))
        again: list[tuple[int, tuple[Incoming, list[Neighbour]]]] = []
        for n, hits in zip(adds, near, strict=True):
            new = items[n][0]
            stand_ins = []
            for mid, sim in hits:
                old = retired.get(mid)
                end = existing.get(old.superseded_by or "") if old is not None else None
                if old is None or end is None or not _ended_by(old, end, new):
                    continue
                stand_ins.append(replace(_neighbour(old, sim, self._author(old)), id=end.id))
            if stand_ins:
                again.append((n, (new, stand_ins)))
        return self._supersedes_again(decided, again, lambda _, d: f"after {d.target} ended it")

    def _as_said(
        self,
        records: Sequence[MemoryRecord],
        vectors: np.ndarray,
        eligible: list[int],
        items: list[tuple[Incoming, list[Neighbour]]],
        decided: list[Decision],
        existing: dict[str, MemoryRecord],
    ) -> list[Decision]:
        """``decided``, where a drawn fact that would be added changes an earlier fact
        drawn from the same speaker's words, judged as the speaker said both.

        ``ingest`` writes facts about the speaker by name ("Kim switched to Dr.
        Jones", "Kim's doctor is Dr. Smith"). The name lifts the cosine of any two
        of the speaker's facts, so the rules trust a change between named facts
        only when it shares a value or ends one. What the speaker said ("I switched
        to Dr. Jones." / "My doctor is Dr. Smith.") carries no name: the pair is
        decided again on the speaker's words, with their own cosine, as a write of
        the same words would be; only a supersede is taken from it. The words are
        the turn when it is one sentence (its vector is stored), else the statement
        the fact was drawn from (``metadata.said``), embedded here; such a statement
        counts only when it names a value, the new one saying it is new or changed
        (:func:`_brings_a_value`). The rules alone: a model reads the name as the
        speaker already, and asking it again would cost a call per fact."""
        if not isinstance(self.reconciler, RuleReconciler):
            return decided
        adds = [
            n
            for n, d in enumerate(decided)
            if d.action is Action.ADD and restated_turn(records[eligible[n]])
        ]
        if not adds:
            return decided
        batch = {r.id: (r, vectors[i]) for i, r in enumerate(records)}
        olds = {
            c.id: existing[c.id]
            for n in adds
            for c in items[n][1]
            if c.id in existing and restated_turn(existing[c.id])
        }
        if not olds:
            return decided
        turn_ids = sorted({restated_turn(r) or "" for r in olds.values()} - set(batch))
        view = ScopeFilter(records[0].org_id, frozenset(r.scope for r in olds.values()))
        stored = {r.id: r for r in self.store.get(turn_ids, view)}
        stored_vectors = self.store.memory_vectors(sorted(stored), view)
        turns: dict[str, tuple[MemoryRecord, np.ndarray | None]] = {
            tid: (r, stored_vectors.get(tid)) for tid, r in stored.items()
        }
        pending: list[tuple[int, _Words, list[tuple[Neighbour, _Words | None]]]] = []
        for n in adds:
            new, fact = items[n][0], records[eligible[n]]
            turn, vector = batch.get(restated_turn(fact) or "", (None, None))
            mine = _words_of(fact, turn, vector, new.author)
            if mine is None or (mine.vector is None and not _brings_a_value(mine.text)):
                continue
            theirs: list[tuple[Neighbour, _Words | None]] = []
            for c in items[n][1]:
                old = olds.get(c.id)
                turn, vector = (
                    turns.get(restated_turn(old) or "", (None, None)) if old else (None, None)
                )
                same = turn is not None and new.author and self._author(turn) == new.author
                words = _words_of(old, turn, vector, new.author) if same else None
                if words is not None and words.vector is None:
                    # a statement of a longer turn changes only with a value named
                    words = words if names_a_value(words.text) else None
                theirs.append((c, words))
            if any(w is not None for _, w in theirs):
                pending.append((n, mine, theirs))
        unread = {
            w.text
            for _, mine, theirs in pending
            for w in (mine, *(w for _, w in theirs))
            if w is not None and w.vector is None
        }
        read = dict(zip(sorted(unread), self.embed(sorted(unread)), strict=True)) if unread else {}
        again: list[tuple[int, tuple[Incoming, list[Neighbour]]]] = []
        for n, mine, theirs in pending:
            # every candidate stays; those the speaker said are read as said, with the
            # cosine of what was said
            new, vector = items[n][0], _vector(mine, read)
            stand_ins = []
            for c, words in theirs:
                if words is None:
                    stand_ins.append(c)
                    continue
                as_said = _neighbour(
                    words.turn, float(np.dot(vector, _vector(words, read))), new.author
                )
                stand_ins.append(replace(as_said, id=c.id, content=words.text))
            stand_ins.sort(key=lambda c: -c.similarity)
            again.append((n, (replace(new, content=mine.text), stand_ins)))
        return self._supersedes_again(
            decided, again, lambda n, _: f"as {items[n][0].author} said it"
        )

    def _supersedes_again(
        self,
        decided: list[Decision],
        again: list[tuple[int, tuple[Incoming, list[Neighbour]]]],
        why: Callable[[int, Decision], str],
    ) -> list[Decision]:
        """``decided`` with the items of ``again`` (index, new item) decided once
        more: a supersede replaces the first decision, its reason extended by
        ``why(index, decision)``; any other answer leaves the first decision."""
        if not again:
            return decided
        assert self.reconciler is not None
        out = list(decided)
        decided_again = self.reconciler.decide_many([item for _, item in again])
        for (n, _), d in zip(again, decided_again, strict=True):
            if d.action is Action.SUPERSEDE and d.target is not None:
                out[n] = replace(d, reason=f"{d.reason}, {why(n, d)}")
        return out

    def _author(self, record: MemoryRecord) -> str | None:
        """Whose "I" ``record`` speaks for (:func:`.speaker_of`), so "I" is
        compared with "I" and a drawn fact's "Kim" with Kim's "I"."""
        return speaker_of(record, self.settings.retrieval.author.fields)

    # -- against a stored memory -----------------------------------------------------------

    def _against(
        self,
        d: Decision,
        new: MemoryRecord,
        vector: np.ndarray,
        old: MemoryRecord,
        plan: WritePlan,
        now: datetime,
    ) -> WriteResult:
        note: dict[str, Any] = {
            "action": d.action.value,
            "reason": d.reason,
            "by": d.decided_by,
            "similarity": round(d.similarity, 4),
        }
        if d.action is Action.NOOP:
            # a keyed write confirming a keyless memory gives it the key: the key must
            # find this fact afterwards (the rules never match a different key)
            confirmed = replace(
                old,
                updated_at=now,
                key=old.key or new.key,
                confidence=adjust_confidence(old.confidence, FeedbackKind.CONFIRM),
            )
            changes = old.changes_to(confirmed, ("confidence", "key"))
            changes["reconcile"] = {**note, "content": new.content}
            plan.replacements.append(Replacement(confirmed, None, "confirm", changes))
            return WriteResult(confirmed, d.action, old.id, d.reason)
        if d.action is Action.UPDATE:
            updated = replace(
                old,
                content=new.content,
                content_hash=new.content_hash,
                updated_at=now,
                tags=new.tags or old.tags,
                metadata={**old.metadata, **new.metadata},
                event_at=new.event_at or old.event_at,
                valid_from=new.valid_from or old.valid_from,
            )
            changes = old.changes_to(updated, _TRACKED)
            changes["reconcile"] = note
            graph = self.projector.for_update(updated, vector)
            plan.replacements.append(Replacement(updated, vector, "update", changes, graph))
            return WriteResult(updated, d.action, old.id, d.reason)
        # SUPERSEDE / SHADOW: the new memory goes in; the old one retires.
        plan.inserts.append((new, vector))
        new.supersedes = old.id
        _retire(plan, old, new, d.action, note | {"by_memory": new.id}, now)
        if d.action is Action.SUPERSEDE:
            taken = {r.record.id for r in plan.replacements}
            for twin in self._ended_with(old, new):
                if twin.id not in taken:
                    why = note | {"by_memory": new.id, "with": old.id}
                    _retire(plan, twin, new, d.action, why, now)
        return WriteResult(new, d.action, old.id, d.reason)

    def _ended_with(self, old: MemoryRecord, new: MemoryRecord) -> list[MemoryRecord]:
        """The other facts drawn from the turn ``old`` was drawn from whose value
        ``new`` ends as it ends ``old``'s (:func:`.reconcile.ends_too`): "Rex died
        in March" retires "Kim's dog Rex is a beagle" and "Rex is Kim's dog", both
        drawn from "My dog Rex is a beagle"; left active, the second kept the turn
        they restate current."""
        turn = restated_turn(old)
        author = self._author(new)
        if turn is None or not only_ends(new.content, old.content, author):
            return []
        view = ScopeFilter(old.org_id, frozenset({old.scope}))
        return [
            r
            for r in drawn_facts(self.store, view, [turn]).get(turn, [])
            if r.id != old.id
            and r.status is Status.ACTIVE
            and ends_too(new.content, old.content, r.content, author)
        ]

    # -- against an earlier item of the same batch ----------------------------------------

    def _within_batch(
        self,
        d: Decision,
        i: int,
        rows: list[MemoryRecord],
        vectors: np.ndarray,
        holder: dict[int, MemoryRecord],
        plan: WritePlan,
        now: datetime,
    ) -> WriteResult:
        j = int(d.target.removeprefix(_BATCH)) if d.target else -1
        first = holder.get(j)
        new = rows[i]
        if first is None:
            d = Decision(Action.ADD, None, "its batch twin went into a stored memory")
        elif first.key and new.key and first.key != new.key:
            d = Decision(Action.ADD, None, "same fact under two keys: both kept")
        if d.action is Action.ADD or first is None:
            plan.inserts.append((new, vectors[i]))
            holder[i] = new
            return WriteResult(new, Action.ADD, None, d.reason)
        if d.action in (Action.NOOP, Action.UPDATE):
            # the same fact twice in one batch: stored once
            if not first.key:
                first.key = new.key  # not written yet: the key comes along
            return WriteResult(first, Action.NOOP, first.id, d.reason)
        plan.inserts.append((new, vectors[i]))
        holder[i] = new
        new.supersedes = first.id
        first.status = Status.SUPERSEDED
        first.superseded_by = new.id
        if d.action is Action.SUPERSEDE:  # as against a stored memory
            first.valid_to = new.valid_from or new.said_at
            first.confidence = adjust_confidence(first.confidence, FeedbackKind.CONTRADICT)
        relation = Relation.CONTRADICTION if d.action is Action.SUPERSEDE else Relation.ELABORATES
        plan.links.append(MemoryLink(new.id, first.id, relation, 1.0))
        return WriteResult(new, d.action, first.id, d.reason)


def _batch_candidates(
    records: Sequence[MemoryRecord],
    vectors: np.ndarray,
    eligible: list[int],
    top: int,
    floor: float,
) -> list[list[tuple[int, float]]]:
    """Per eligible item: (batch index, cosine) of the earlier eligible items of its
    scope at or above ``floor``, the ``top`` closest (ties at the cut kept), in
    batch order.

    Only that many candidates survive the reconcile cut in any case, so the
    rest are never built; the cosines are taken one scope at a time.
    """
    out: list[list[tuple[int, float]]] = [[] for _ in eligible]
    groups: dict[Any, list[int]] = {}
    for n, i in enumerate(eligible):
        groups.setdefault(records[i].scope, []).append(n)
    for members in groups.values():
        if len(members) < 2:
            continue
        block = vectors[[eligible[n] for n in members]]
        sims = block @ block.T
        for a in range(1, len(members)):
            row = sims[a, :a]
            close = np.flatnonzero(row >= floor)
            if len(close) > top:
                cut = np.partition(row[close], len(close) - top)[len(close) - top]
                close = close[row[close] >= cut]
            out[members[a]] = [(eligible[members[b]], float(row[b])) for b in close]
    return out


#: How many of the nearest retired memories a new one that would be added is compared
#: with, for a value that ended before it (``WritePlanner._after_endings``).
_AFTER_ENDINGS = 3


def _drawn_event(record: MemoryRecord) -> bool:
    """Whether ``record`` is an event ``ingest`` drew from a conversation ("The user got
    laid off from Nokia in May"): it may end or change a fact, never repeat or detail
    one, and no fact repeats or details it."""
    return record.memory_type is MemoryType.EPISODIC and record.source == EXTRACTED


def _retire(
    plan: WritePlan,
    old: MemoryRecord,
    new: MemoryRecord,
    action: Action,
    note: dict[str, Any],
    now: datetime,
) -> None:
    """Retire stored memory ``old`` for ``new`` (a supersede or a shadow) in
    ``plan``: its status, successor, validity and confidence, the history entry
    (``note`` as its reconcile record) and the link between the two."""
    retired = replace(old, status=Status.SUPERSEDED, superseded_by=new.id, updated_at=now)
    relation = Relation.ELABORATES
    if action is Action.SUPERSEDE:
        retired.valid_to = new.valid_from or new.said_at
        retired.confidence = adjust_confidence(old.confidence, FeedbackKind.CONTRADICT)
        relation = Relation.CONTRADICTION
    changes = old.changes_to(retired, _TRACKED)
    changes["reconcile"] = note
    plan.replacements.append(Replacement(retired, None, action.value, changes))
    plan.links.append(MemoryLink(new.id, old.id, relation, 1.0))


def _as_event(d: Decision, item: tuple[Incoming, Sequence[Neighbour]]) -> Decision:
    """An event's decision: a supersede stands when the event says something ended or
    changed ("got laid off", "moved out", "sold") or fills the single-valued slot of
    the fact it retires with another value ("Kim started a new job at Meta last
    week" / "Kim works at Google") or says that the thing the fact names is new
    or changed ("Kim found a new therapist, Dr. Hart" / "Kim's therapist is Dr.
    Weiss"); anything else adds it (an event of a day,
    "Audrey got a surprise for Andrew", changes no standing fact)."""
    if d.action is Action.ADD:
        return d
    new, near = item
    if d.action is Action.SUPERSEDE:
        if says_an_end(new.content):
            return d
        old = next((n for n in near if n.id == d.target), None)
        if old is not None and changes_slot(old.content, new.content, (old.author, new.author)):
            return d
        if old is not None and renews_its_thing(old.content, new.content):
            return d  # "Kim found a new therapist, Dr. Hart" / "Kim's therapist is Dr. Weiss"
    return Decision(Action.ADD, None, f"an event, kept beside {d.target} ({d.reason})")


class _Words(NamedTuple):
    """What a speaker said in ``turn``, and its vector when one is stored (else it
    is embedded)."""

    text: str
    vector: np.ndarray | None
    turn: MemoryRecord


def _words_of(
    fact: MemoryRecord | None,
    turn: MemoryRecord | None,
    vector: np.ndarray | None,
    author: str | None,
) -> _Words | None:
    """What the speaker of ``turn`` said that ``fact`` was drawn from: the whole turn
    when it is one sentence (with its stored ``vector``), else the fact's ``said``."""
    if fact is None or turn is None:
        return None
    text = _own_words(turn, author)
    if len(_sentences(text)) == 1:
        return _Words(text, vector, turn) if vector is not None else None
    said = fact.metadata.get("said")
    return _Words(said, None, turn) if isinstance(said, str) and said.strip() else None


def _vector(words: _Words, read: dict[str, np.ndarray]) -> np.ndarray:
    return words.vector if words.vector is not None else read[words.text]


def _brings_a_value(text: str) -> bool:
    """Whether ``text`` says a value is new or changed and names one ("I switched to
    Dr. Jones"): what a statement drawn from a longer turn needs to be read as
    said. Chat says "new", "now" and "got" of many things ("I'm now friends with
    a fellow volunteer", "I got some good advice"); a value that changes is
    mostly named."""
    return change_cue(text) is not None and names_a_value(text)


def _own_words(turn: MemoryRecord, author: str | None) -> str:
    """The turn's text without a transcript's "Andrew: " before the speaker's words."""
    text = turn.content
    if author:
        head, colon, rest = text.partition(":")
        if colon and head.strip().casefold() == author.casefold() and rest.strip():
            return rest.strip()
    return text


def _ended_by(old: MemoryRecord, end: MemoryRecord, new: Incoming) -> bool:
    """Whether ``end``, active, replaced ``old`` only to end its value, before ``new``."""
    if end.status is not Status.ACTIVE or end.supersedes != old.id:
        return False
    if new.said_at is not None and new.said_at < end.said_at:
        return False
    return only_ends(end.content, old.content)


def _neighbour(record: MemoryRecord, similarity: float, author: str | None) -> Neighbour:
    return Neighbour(record.id, record.content, similarity, record.key, record.said_at, author)


#: The fields a reconcile change records (with before and after) in history.
_TRACKED = (
    "content",
    "status",
    "valid_to",
    "superseded_by",
    "confidence",
    "tags",
    "metadata",
    "event_at",
    "valid_from",
)
