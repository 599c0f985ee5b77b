"""Pure scoring functions: temporal decay, confidence adjustment, priority, fusion.

No I/O here; every function takes the time it needs as an argument so the
results are reproducible under an injected clock.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from datetime import datetime

from .models import FeedbackKind

__all__ = [
    "temporal_score",
    "confidence_level",
    "adjust_confidence",
    "CONFIDENCE_ADJUSTMENTS",
    "before_contradiction",
    "normalise",
    "fuse_convex",
    "fuse_rrf",
    "priority",
    "SOURCE_RELIABILITY",
    "component_confidence",
    "source_reliability",
]

#: Seed 000's source reliability (also the default confidence of a new memory).
SOURCE_RELIABILITY: Mapping[str, float] = {
    "user_input": 0.8,
    "webhook": 0.9,
    "mcp_tool": 0.95,
    "api": 0.85,
}
_DEFAULT_RELIABILITY = 0.7


def source_reliability(source: str) -> float:
    """Seed 000's reliability of a source (0.7 for any other source)."""
    return SOURCE_RELIABILITY.get(source, _DEFAULT_RELIABILITY)


def component_confidence(
    *,
    source: str,
    entities: int,
    entities_with_properties: int,
    relationships: int,
    validated: bool,
    validation_pending: bool,
    feedback: float | None,
) -> dict[str, float]:
    """Seed 000's confidence from its components, with each component shown.

    Weighted: source reliability 0.25, entity extraction 0.20 (0.2 per entity
    + 0.1 per entity with properties, capped at 1), relationship clarity 0.15
    (0.15 per relationship, capped), validation 0.20 (1 validated, 0.5
    pending), user feedback 0.20 (0.5 when there is none).
    """
    parts = {
        "source": source_reliability(source),
        "entities": min(1.0, entities * 0.2 + entities_with_properties * 0.1) if entities else 0.0,
        "relationships": min(1.0, relationships * 0.15),
        "validation": 1.0 if validated else 0.5 if validation_pending else 0.0,
        "feedback": 0.5 if feedback is None else min(1.0, max(0.0, feedback)),
    }
    weights = {
        "source": 0.25,
        "entities": 0.20,
        "relationships": 0.15,
        "validation": 0.20,
        "feedback": 0.20,
    }
    parts["confidence"] = round(sum(parts[k] * w for k, w in weights.items()), 3)
    return parts


#: Seed 000's confidence adjustments.
CONFIDENCE_ADJUSTMENTS: Mapping[FeedbackKind, float] = {
    FeedbackKind.UPVOTE: 0.05,
    FeedbackKind.DOWNVOTE: -0.10,
    FeedbackKind.VALIDATE: 0.15,
    FeedbackKind.CONTRADICT: -0.20,
    FeedbackKind.CONFIRM: 0.10,
}


def temporal_score(at: datetime, now: datetime, decay_days: float, floor: float) -> float:
    """Seed 000's temporal score: exponential decay with half-life ``decay_days / 2``.

    Memories from the last 7 days get x1.2, the last 30 days x1.1, capped at 1;
    the result never drops below the layer's ``floor``. A future ``at`` scores 1.
    """
    age_days = (now - at).total_seconds() / 86_400.0
    if age_days < 0:
        return 1.0
    score = math.exp(-math.log(2) / (decay_days / 2.0) * age_days)
    if age_days <= 7:
        score = min(1.0, score * 1.2)
    elif age_days <= 30:
        score = min(1.0, score * 1.1)
    return max(floor, score)


def confidence_level(confidence: float) -> str:
    """Seed 000's named confidence bands."""
    if confidence >= 0.90:
        return "very_high"
    if confidence >= 0.75:
        return "high"
    if confidence >= 0.60:
        return "medium"
    if confidence >= 0.40:
        return "low"
    return "very_low"


def adjust_confidence(confidence: float, kind: FeedbackKind) -> float:
    """Apply one seed-000 adjustment, clamped to [0, 1]."""
    return round(min(1.0, max(0.0, confidence + CONFIDENCE_ADJUSTMENTS[kind])), 4)


def before_contradiction(confidence: float) -> float:
    """The confidence a memory had before a contradiction's adjustment cut it
    (clamped to [0, 1]): what undoing a supersede gives back."""
    return round(
        min(1.0, max(0.0, confidence - CONFIDENCE_ADJUSTMENTS[FeedbackKind.CONTRADICT])), 4
    )


def normalise(scores: Mapping[str, float], how: str, window: int | None = None) -> dict[str, float]:
    """Map raw scores to [0, 1] within one candidate set.

    ``max``: divide by the best; ``minmax``: spread over [0, 1]; ``rank``:
    1 / (1 + rank / 10). With ``window``, ``minmax`` spreads only the best
    ``window`` candidates and gives the rest 0, so a long tail of weak
    candidates does not compress the differences at the top.
    """
    if not scores:
        return {}
    if how == "minmax" and window is not None and len(scores) > window:
        top = sorted(scores, key=lambda k: -scores[k])[:window]
        inner = normalise({k: scores[k] for k in top}, "minmax")
        return {k: inner.get(k, 0.0) for k in scores}
    if how == "rank":
        order = sorted(scores, key=lambda k: -scores[k])
        return {k: 1.0 / (1.0 + i / 10.0) for i, k in enumerate(order)}
    hi = max(scores.values())
    if how == "minmax":
        lo = min(scores.values())
        span = hi - lo
        if span <= 1e-6 * max(1.0, abs(hi)):  # float noise, not a difference
            return dict.fromkeys(scores, 1.0)
        return {k: (v - lo) / span for k, v in scores.items()}
    return {k: (v / hi if hi > 0 else 0.0) for k, v in scores.items()}


def fuse_convex(
    dense: Mapping[str, float], keyword: Mapping[str, float], alpha: float
) -> dict[str, float]:
    """Convex combination of min-max normalised dense and keyword scores.

    ``alpha`` weighs the dense side. A candidate missing from one list gets 0
    for that side.
    """
    d = normalise(dense, "minmax")
    k = normalise(keyword, "minmax")
    return {
        key: alpha * d.get(key, 0.0) + (1.0 - alpha) * k.get(key, 0.0) for key in set(d) | set(k)
    }


def fuse_rrf(rankings: Sequence[Sequence[str]], k: int = 60) -> dict[str, float]:
    """Reciprocal rank fusion over ranked id lists."""
    out: dict[str, float] = {}
    for ranking in rankings:
        for rank, key in enumerate(ranking):
            out[key] = out.get(key, 0.0) + 1.0 / (k + rank + 1)
    return out


def priority(
    *,
    relevance: float,
    confidence: float,
    temporal: float,
    strength: float,
    weights: Mapping[str, float],
    boost: float = 0.0,
) -> float:
    """Seed 000's priority: weighted confidence, temporal and relevance (+ strength).

    ``weights`` holds ``confidence``, ``temporal``, ``relevance`` and ``strength``;
    ``boost`` adds the layer, scope and exact-match boosts.
    """
    return (
        weights["confidence"] * confidence
        + weights["temporal"] * temporal
        + weights["relevance"] * relevance
        + weights["strength"] * strength
        + boost
    )
