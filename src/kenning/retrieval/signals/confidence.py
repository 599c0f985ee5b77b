"""The ``high_confidence`` signal (seed 000): a memory whose confidence is above
``scoring.high_confidence_threshold`` (0.9) gains ``scoring.high_confidence_boost``
on the final score."""

from __future__ import annotations

from collections.abc import Mapping

from .base import RecallContext, Stage

__all__ = ["HighConfidence"]


class HighConfidence:
    """The high-confidence boost as a signal (stage ``boost``)."""

    name = "high_confidence"
    stage: Stage = "boost"
    reads: tuple[str, ...] = ("scoring.high_confidence_boost", "scoring.high_confidence_threshold")

    def contribute(self, ctx: RecallContext, scores: Mapping[str, float]) -> dict[str, float]:
        """The boost of each candidate above the threshold."""
        w = ctx.settings.scoring
        out: dict[str, float] = {}
        for mid in scores:
            record = ctx.records.get(mid)
            if record is not None and record.confidence > w.high_confidence_threshold:
                out[mid] = w.high_confidence_boost
        return out
