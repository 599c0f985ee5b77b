"""The ``exact_match`` signal: a memory whose content or key equals the query
(after normalisation) gains ``scoring.exact_match_boost`` on the final score.

Every exact match has an entry, even at a boost of 0, so ``explain`` still
says it matched (``exact_match``).
"""

from __future__ import annotations

from collections.abc import Mapping

from ..text import normalise_text
from .base import RecallContext, Stage

__all__ = ["ExactMatch"]


def _same_text(text: str, wanted: str) -> bool:
    """Exact match after normalisation (cheap length check first)."""
    if abs(len(text) - len(wanted)) > max(8, len(wanted) // 4):
        return False
    return normalise_text(text) == wanted


class ExactMatch:
    """The exact-match boost as a signal (stage ``boost``)."""

    name = "exact_match"
    stage: Stage = "boost"
    reads: tuple[str, ...] = ("scoring.exact_match_boost",)

    def contribute(self, ctx: RecallContext, scores: Mapping[str, float]) -> dict[str, float]:
        """``exact_match_boost`` for each candidate whose content or key is the query."""
        wanted = normalise_text(ctx.query)
        if not wanted:
            return {}
        boost = ctx.settings.scoring.exact_match_boost
        out: dict[str, float] = {}
        for mid in scores:
            record = ctx.records.get(mid)
            if record is not None and (
                _same_text(record.content, wanted)
                or (record.key is not None and _same_text(record.key, wanted))
            ):
                out[mid] = boost
        return out
