"""The ``episode`` signal (seed 002 §4, episode recall): the memories of the
best-scoring episodes (else sessions) gain up to ``retrieval.episode.weight``
fused relevance; see :func:`kenning.retrieval.context.episode_lift`."""

from __future__ import annotations

from collections.abc import Mapping

from ..context import episode_lift
from .base import RecallContext, Stage

__all__ = ["EpisodeLift"]


class EpisodeLift:
    """Episode recall as a signal (stage ``context``)."""

    name = "episode"
    stage: Stage = "context"
    reads: tuple[str, ...] = ("retrieval.episode.weight", "retrieval.episode.top")

    def contribute(self, ctx: RecallContext, scores: Mapping[str, float]) -> dict[str, float]:
        """The lift of each candidate in one of the best episodes."""
        o = ctx.settings.retrieval.episode
        return episode_lift(scores, ctx.records, o.weight, o.top)
