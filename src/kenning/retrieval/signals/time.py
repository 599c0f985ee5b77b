"""The ``time`` signal: memories from the window the query names ("last May",
"before the trip"), or whose text refers to it, and for "when ...?" memories
whose text names a time, gain fused relevance; see
:func:`kenning.retrieval.time_aware.time_bonus`."""

from __future__ import annotations

from collections.abc import Mapping

from ..time_aware import time_bonus
from .base import RecallContext, Stage

__all__ = ["TimeMatch"]


class TimeMatch:
    """The time match as a signal (stage ``time``)."""

    name = "time"
    stage: Stage = "time"
    reads: tuple[str, ...] = (
        "retrieval.time.window_boost",
        "retrieval.time.when_boost",
        "retrieval.time.content_scan",
    )

    def contribute(self, ctx: RecallContext, scores: Mapping[str, float]) -> dict[str, float]:
        """The bonus per candidate (the best ``content_scan`` have their text read)."""
        o = ctx.settings.retrieval.time
        return time_bonus(
            sorted(scores, key=lambda i: -scores[i]),
            ctx.records,
            window=ctx.window,
            asks_when=ctx.asks_when,
            window_boost=o.window_boost,
            when_boost=o.when_boost,
            content_scan=o.content_scan,
        )
