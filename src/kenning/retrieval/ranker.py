"""Fusion and priority scoring of recall candidates (no I/O).

Dense and keyword candidates are fused into one relevance score, normalised
within the candidate set, then mixed with confidence, temporal decay per layer
and strength by seed 000's priority formula, plus the layer, persona-scope,
high-confidence and exact-match boosts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime

from ..config import Settings
from ..models import Hit, Layer, MemoryRecord, Principal, RecallMode, ScopeKind, ScoreBreakdown
from ..scoring import fuse_convex, fuse_rrf, priority, temporal_score
from .text import normalise_text

__all__ = ["fuse", "rank"]


def fuse(
    dense: Sequence[tuple[str, float]], keyword: Sequence[tuple[str, float]], settings: Settings
) -> dict[str, float]:
    """One fused relevance score per candidate id (higher is better)."""
    if settings.fusion == "rrf":
        return fuse_rrf([[i for i, _ in dense], [i for i, _ in keyword]], settings.rrf_k)
    return fuse_convex(dict(dense), dict(keyword), settings.fusion_alpha)


def _temporal(
    record: MemoryRecord,
    now: datetime,
    settings: Settings,
    window: tuple[datetime | None, datetime | None] | None = None,
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
        return temporal_score(at, now, settings.decay_days_personal, settings.min_temporal_personal)
    if layer is Layer.SHARED:
        return temporal_score(at, now, settings.decay_days_shared, settings.min_temporal_shared)
    return temporal_score(
        at, now, settings.decay_days_organization, settings.min_temporal_organization
    )


_PERSONA_ORDERED = (ScopeKind.USER, ScopeKind.PERSONA, ScopeKind.PERSONA_USER)


def _boosts(record: MemoryRecord, principal: Principal, settings: Settings) -> tuple[float, float]:
    """(layer boost, scope boost).

    With an active persona, seed 001's order persona_user > persona > user
    decides between those three scopes, so the layer boost (seed 000) is not
    applied to them; it still lifts team scopes in org mode.
    """
    w = settings.scoring
    personal_mode = principal.mode is RecallMode.PERSONAL
    layer = 0.0
    if principal.active_persona and record.scope.kind in _PERSONA_ORDERED:
        layer = 0.0
    elif personal_mode and record.layer is Layer.PERSONAL:
        layer = w.layer_boost
    elif not personal_mode and record.layer is Layer.SHARED:
        layer = w.layer_boost
    scope = 0.0
    if principal.active_persona and record.scope.owner_id == principal.active_persona:
        if record.scope.kind is ScopeKind.PERSONA_USER:
            scope = w.persona_user_boost
        elif record.scope.kind is ScopeKind.PERSONA:
            scope = w.persona_boost
    return layer, scope


def _same_text(text: str, wanted: str) -> bool:
    """Exact match after normalisation (cheap length check first)."""
    if abs(len(text) - len(wanted)) > max(8, len(wanted) // 4):
        return False
    return normalise_text(text) == wanted


def rank(
    *,
    query: str,
    relevance: Mapping[str, float],
    records: Mapping[str, MemoryRecord],
    principal: Principal,
    settings: Settings,
    now: datetime,
    dense: Mapping[str, float] | None = None,
    keyword: Mapping[str, float] | None = None,
    fused: Mapping[str, float] | None = None,
    graph: Mapping[str, float] | None = None,
    time: Mapping[str, float] | None = None,
    context: Mapping[str, float] | None = None,
    window: tuple[datetime | None, datetime | None] | None = None,
    strength_of: Mapping[str, float] | None = None,
    explain: bool = False,
) -> list[Hit]:
    """Priority-score every candidate of ``relevance`` that has a record; best first.

    ``relevance`` is normalised and final; ``graph``, ``time`` and ``context``
    are the parts of the fused score that graph support, the time match and
    the conversation context added before normalisation (for the breakdown).
    ``window``: the time the query names, from which the temporal term then
    measures age.
    """
    w = settings.scoring
    weights = {
        "confidence": w.confidence,
        "temporal": w.temporal,
        "relevance": w.relevance,
        "strength": w.strength,
    }
    wanted = normalise_text(query)
    hits: list[Hit] = []
    for mid, rel in relevance.items():
        record = records.get(mid)
        if record is None:
            continue
        temporal = _temporal(record, now, settings, window)
        strength = (strength_of or {}).get(mid, record.strength)
        layer_boost, scope_boost = _boosts(record, principal, settings)
        exact = bool(wanted) and (
            _same_text(record.content, wanted)
            or (record.key is not None and _same_text(record.key, wanted))
        )
        boost = layer_boost + scope_boost + (w.exact_match_boost if exact else 0.0)
        if record.confidence > 0.9:
            boost += w.high_confidence_boost
        final = priority(
            relevance=rel,
            confidence=record.confidence,
            temporal=temporal,
            strength=strength,
            weights=weights,
            boost=boost,
        )
        breakdown = None
        if explain:
            breakdown = ScoreBreakdown(
                dense=(dense or {}).get(mid),
                keyword=(keyword or {}).get(mid),
                fused=(fused or {}).get(mid, 0.0),
                relevance=rel,
                confidence=record.confidence,
                temporal=temporal,
                strength=strength,
                layer_boost=layer_boost,
                scope_boost=scope_boost,
                exact_match=exact,
                final=final,
                graph=(graph or {}).get(mid, 0.0),
                time=(time or {}).get(mid, 0.0),
                context=(context or {}).get(mid, 0.0),
            )
        hits.append(Hit(record, final, breakdown))
    hits.sort(key=lambda h: (-h.score, h.memory.id))
    return hits
