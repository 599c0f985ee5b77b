"""The ``author`` signal: a memory whose author (``metadata.speaker`` or
``author``) is named in the query gains ``retrieval.author.boost`` fused
relevance; see :func:`kenning.retrieval.context.author_match`."""

from __future__ import annotations

from collections.abc import Mapping

from ..context import author_match
from .base import RecallContext, Stage

__all__ = ["AuthorBoost"]


class AuthorBoost:
    """Author match as a signal (stage ``context``)."""

    name = "author"
    stage: Stage = "context"
    reads: tuple[str, ...] = ("retrieval.author.boost", "retrieval.author.fields")

    def contribute(self, ctx: RecallContext, scores: Mapping[str, float]) -> dict[str, float]:
        """The boost of each candidate whose author the query names."""
        o = ctx.settings.retrieval.author
        return author_match(ctx.query, list(scores), ctx.records, o.boost, o.fields)
