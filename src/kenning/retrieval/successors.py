"""For a question about now, the memory that replaced a match answers in its place.

Reconcile retires a fact when a new statement changes it (``superseded_by``
points at the new one). The new statement often shares no word with the
question the old one matched word for word: "I work at Nokia" matches "Where
do I work now?", and "I quit Nokia and joined Philips", which replaced it,
does not. A question about the present value therefore also searches
superseded memories (:func:`~kenning.retrieval.currency.include_history`),
and :func:`successors_answer`, the first part of the currency step, lets each
superseded match hand its place to the end of its chain of replacements:

* the superseded memory leaves the hits (history never answers "now");
* the replacement, fetched in the reader's own view when it is no candidate
  (one it may not see stays unseen; none is fetched when the request filters
  more than statuses, since it might not pass them), takes the better of the
  two priorities;
* what reads the hit's fit to the question afterwards (the step's order by
  meaning, the calibrated score) takes the better of the two's
  (:func:`meaning`, ``RecallContext.replaced``);
* a conversation turn that a superseded fact restates (``ingest`` keeps a
  turn and the facts drawn from it) is as stale as that fact and leaves with
  it, unless a fact still current restates it too. The facts drawn from the
  best :data:`LOOKUP` turns are looked up by their links, so a turn leaves
  even when its retired fact is not among the hits.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..graph.model import Relation
from ..models import EXTRACTED, Hit, MemoryRecord, ScoreBreakdown, Status
from .collapse import restated_turn
from .signals.base import RecallContext

if TYPE_CHECKING:
    from ..access import ScopeFilter
    from ..stores import Store

__all__ = ["CHAIN", "LOOKUP", "drawn_facts", "meaning", "replaced_by_drawn", "successors_answer"]

#: How many replacements a chain of superseded memories is followed through.
CHAIN = 8
#: How many of the best hits have the facts drawn from them looked up.
LOOKUP = 30


def successors_answer(ctx: RecallContext, hits: list[Hit]) -> list[Hit]:
    """``hits`` (priority order) with every superseded one, and every turn such a
    one restates, replaced by the current end of its chain (see the module
    docstring); again in priority order."""
    ends = _stale(hits)
    ends.update(_drawn_stale(ctx, hits, ends))
    if not ends:
        return hits
    keep = [h for h in hits if h.memory.id not in ends]
    if ctx.store is None or ctx.view is None:
        return keep
    known = _follow(ctx, {h.memory.id: h.memory for h in hits}, ends)
    current = {h.memory.id: h for h in keep}
    fresh: list[str] = []
    for h in sorted((h for h in hits if h.memory.id in ends), key=lambda h: -h.score):
        rec = known.get(ends[h.memory.id] or "")
        if rec is None or rec.status is not Status.ACTIVE:
            continue
        succ = current.get(rec.id)
        if succ is None and ctx.filtered:  # it may not pass the request's filters
            continue
        if succ is None:
            succ = Hit(rec, h.score, _inherited(h.explain))
            current[rec.id] = succ
            keep.append(succ)
            ctx.records[rec.id] = rec
            fresh.append(rec.id)
        elif h.score > succ.score:
            succ.score = h.score
        else:
            continue
        ctx.replaced[rec.id] = h.memory.id
    if fresh and ctx.qvec is not None:  # their own cosines, for what reads them below
        ctx.dense = {**ctx.dense, **ctx.store.vector_scores(ctx.qvec, fresh, ctx.view)}
    keep.sort(key=lambda h: (-h.score, h.memory.id))
    return keep


def meaning(ctx: RecallContext, mid: str) -> float:
    """The memory's cosine to the question, or that of the memory whose place it
    took (:func:`successors_answer`) if better."""
    own = ctx.dense.get(mid, 0.0)
    prev = ctx.replaced.get(mid)
    return own if prev is None else max(own, ctx.dense.get(prev, 0.0))


def _stale(hits: list[Hit]) -> dict[str, str | None]:
    """The stale hits' ids, each with the id of the memory that replaced it: the
    superseded hits, and the active turns a superseded hit restates and no current
    hit restates too."""
    ends: dict[str, str | None] = {
        h.memory.id: h.memory.superseded_by for h in hits if h.memory.status is Status.SUPERSEDED
    }
    if not ends:
        return ends
    by_turn = {t: h.memory for h in hits if h.memory.id in ends and (t := restated_turn(h.memory))}
    live = {restated_turn(h.memory) for h in hits if h.memory.id not in ends}
    for h in hits:
        fact = by_turn.get(h.memory.id)
        if fact is not None and h.memory.id not in live and h.memory.status is Status.ACTIVE:
            ends[h.memory.id] = fact.superseded_by
    return ends


def _drawn_stale(
    ctx: RecallContext, hits: list[Hit], known: dict[str, str | None]
) -> dict[str, str | None]:
    """The turns among the best :data:`LOOKUP` hits whose facts (the ones that restate
    them alone) are all retired, each with its fact's replacement: found through
    the links from each fact to its turn, whether or not the fact is a hit."""
    if ctx.store is None or ctx.view is None:
        return {}
    turns = [
        h.memory.id
        for h in hits[:LOOKUP]
        if h.memory.status is Status.ACTIVE
        and h.memory.source != EXTRACTED
        and h.memory.id not in known
    ]
    out: dict[str, str | None] = {}
    for turn, said in drawn_facts(ctx.store, ctx.view, turns).items():
        if all(f.status is Status.SUPERSEDED for f in said):
            out[turn] = min(said, key=lambda f: f.id).superseded_by
    return out


def drawn_facts(store: Store, view: ScopeFilter, turns: list[str]) -> dict[str, list[MemoryRecord]]:
    """Turn id -> the facts drawn from that turn alone, current or retired, found
    through the links from each fact to its turn."""
    if not turns:
        return {}
    edges = store.graph_edges(
        turns, view, relations={Relation.REFERENCE.value}, far={Status.ACTIVE, Status.SUPERSEDED}
    )
    asked = set(turns)
    drawn = sorted({e.src for e in edges if e.dst in asked})
    facts: dict[str, list[MemoryRecord]] = {}
    for fact in store.get(drawn, view) if drawn else []:
        turn = restated_turn(fact)
        if turn in asked:
            facts.setdefault(turn, []).append(fact)
    return facts


def replaced_by_drawn(
    store: Store, view: ScopeFilter, turns: Sequence[MemoryRecord]
) -> dict[str, list[str]]:
    """Turn id -> the memories that the facts drawn from that turn alone replaced on
    write, in one lookup for all ``turns`` (a memory that is itself a drawn fact has
    none)."""
    asked = [t.id for t in turns if t.source != EXTRACTED]
    return {
        turn: [f.supersedes for f in facts if f.supersedes]
        for turn, facts in drawn_facts(store, view, asked).items()
    }


def _follow(
    ctx: RecallContext, known: dict[str, MemoryRecord], ends: dict[str, str | None]
) -> dict[str, MemoryRecord]:
    """Move each of ``ends`` along its chain of replacements (at most :data:`CHAIN`
    steps) to a memory that is not superseded, fetching the records ``known``
    lacks in the reader's view; ``known`` with them."""
    assert ctx.store is not None and ctx.view is not None
    for _ in range(CHAIN):
        missing = [e for e in ends.values() if e and e not in known]
        if missing:
            known.update((r.id, r) for r in ctx.store.get(missing, ctx.view))
        moved = False
        for mid, end in ends.items():
            rec = known.get(end or "")
            if rec is not None and rec.status is Status.SUPERSEDED and rec.superseded_by:
                ends[mid] = rec.superseded_by
                moved = True
        if not moved:
            break
    return known


def _inherited(explain: ScoreBreakdown | None) -> ScoreBreakdown | None:
    """The breakdown of a hit brought in by the memory it replaced: that memory's,
    whose place it took."""
    return None if explain is None else dataclasses.replace(explain, signals=dict(explain.signals))
