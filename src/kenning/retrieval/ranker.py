"""Fusion and priority scoring of recall candidates (no I/O).

Dense and keyword candidates are fused into one relevance score, normalised
within the candidate set, then mixed with confidence, temporal decay per layer
and strength by seed 000's priority formula, plus what the ``boost``-stage
signals add (layer, persona scope, exact match, high confidence: see
:mod:`kenning.retrieval.signals`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime

from ..config import ScoringWeights, Settings
from ..models import Hit, Layer, MemoryRecord, Principal, ScoreBreakdown, Status
from ..scoring import before_contradiction, fuse_convex, fuse_rrf, priority, temporal_score
from .signals import RecallContext, active_signals
from .time_aware import Window

__all__ = ["fuse", "rank", "score"]


def fuse(
    dense: Sequence[tuple[str, float]], keyword: Sequence[tuple[str, float]], settings: Settings
) -> dict[str, float]:
    """One fused relevance score per candidate id (higher is better)."""
    r = settings.retrieval
    if r.fusion == "rrf":
        return fuse_rrf([[i for i, _ in dense], [i for i, _ in keyword]], r.rrf_k)
    return fuse_convex(dict(dense), dict(keyword), r.fusion_alpha)


def _temporal(
    record: MemoryRecord, now: datetime, w: ScoringWeights, window: Window | None
) -> float:
    """Seed 000's per-layer decay of the memory's age.

    With a ``window`` named in the query, age is the distance from the window
    instead of from now: a memory from inside it is fresh for this question,
    and one from after it is as stale as one equally far before it.
    """
    at = record.said_at
    if window is not None:
        start, end = window
        if end is not None and at >= end:
            at = now - (at - end)
        elif start is not None and at < start:
            at = now - (start - at)
        else:
            at = now
    layer = record.layer
    if layer is Layer.PERSONAL:
        return temporal_score(at, now, w.decay_days_personal, w.min_temporal_personal)
    if layer is Layer.SHARED:
        return temporal_score(at, now, w.decay_days_shared, w.min_temporal_shared)
    return temporal_score(at, now, w.decay_days_organization, w.min_temporal_organization)


def score(
    ctx: RecallContext,
    relevance: Mapping[str, float],
    strength_of: Mapping[str, float] | None = None,
    explain: bool = False,
) -> list[Hit]:
    """Priority-score every candidate of ``relevance`` that has a record; best first.

    ``relevance`` is normalised and final. The ``boost``-stage signals of
    ``ctx`` run here; with ``explain``, each hit's breakdown is drawn from
    ``ctx`` (the relevance stages' contributions) and those boosts.
    """
    w = ctx.settings.scoring
    weights = {
        "confidence": w.confidence,
        "temporal": w.temporal,
        "relevance": w.relevance,
        "strength": w.strength,
    }
    boosts = ctx.run_stage("boost", relevance)
    strengths = strength_of or {}
    hits: list[Hit] = []
    for mid, rel in relevance.items():
        record = ctx.records.get(mid)
        if record is None:
            continue
        temporal = _temporal(record, ctx.now, w, ctx.window)
        strength = strengths.get(mid, record.strength)
        final = priority(
            relevance=rel,
            confidence=_confidence(record, ctx.history),
            temporal=temporal,
            strength=strength,
            weights=weights,
            boost=boosts.get(mid, 0.0),
        )
        breakdown = _breakdown(ctx, mid, rel, temporal, strength, final) if explain else None
        hits.append(Hit(record, final, breakdown))
    hits.sort(key=lambda h: (-h.score, h.memory.id))
    return hits


def _confidence(record: MemoryRecord, history: bool) -> float:
    """The confidence the priority reads: for a question that searches history, a
    memory a contradiction retired (superseded, with its ``valid_to`` set) reads it
    as before the contradiction cut it ("I go to Basic-Fit", replaced in 2024,
    answers "Where did I work out in 2022?" as well as it did then)."""
    if not history or record.status is not Status.SUPERSEDED or record.valid_to is None:
        return record.confidence
    return before_contradiction(record.confidence)


def _breakdown(
    ctx: RecallContext, mid: str, rel: float, temporal: float, strength: float, final: float
) -> ScoreBreakdown:
    """One hit's breakdown: the fixed fields, and every signal's entry by name."""
    signals = {s.name: ctx.contributions.get(s.name, {}).get(mid, 0.0) for s in ctx.signals}
    stage = ctx.stage_totals
    return ScoreBreakdown(
        dense=ctx.dense.get(mid),
        keyword=ctx.keyword.get(mid),
        fused=ctx.fused.get(mid, 0.0),
        relevance=rel,
        confidence=_confidence(ctx.records[mid], ctx.history),
        temporal=temporal,
        strength=strength,
        layer_boost=signals.get("layer", 0.0),
        scope_boost=signals.get("persona", 0.0),
        exact_match=mid in ctx.contributions.get("exact_match", {}),
        final=final,
        graph=stage.get("graph", {}).get(mid, 0.0),
        time=stage.get("time", {}).get(mid, 0.0),
        context=stage.get("context", {}).get(mid, 0.0),
        signals=signals,
        learned=ctx.learned.get(mid),
    )


def rank(
    *,
    query: str,
    relevance: Mapping[str, float],
    records: Mapping[str, MemoryRecord],
    principal: Principal,
    settings: Settings,
    now: datetime,
    strength_of: Mapping[str, float] | None = None,
) -> list[Hit]:
    """Priority-score candidates outside the read pipeline (the memory hint's
    empty-query ranking): only the ``boost``-stage signals apply."""
    ctx = RecallContext(query, principal, settings, now, dict(records), active_signals(settings))
    return score(ctx, relevance, strength_of)
