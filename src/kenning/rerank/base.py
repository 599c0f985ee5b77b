"""The reranker seam: a model that scores (query, text) pairs jointly.

A reranker reads the query and a candidate together (a cross-encoder), so it
sees what a vector or keyword match misses ("Today was my first day at Acme"
answers "Where do I work?"). It is far slower than the searches (a model run
per pair), so it only reorders the best few hits of a recall
(:mod:`kenning.retrieval.rerank`) and is off unless configured.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence

import numpy as np

__all__ = ["Reranker"]


class Reranker(ABC):
    """Scores how well each text answers a query; higher is better.

    Implementations must be thread-safe (the server reranks concurrent recalls)
    and deterministic: a pair's score must not depend on the other texts scored
    with it, so a recall's order does not change with its neighbours.
    """

    @property
    @abstractmethod
    def model_id(self) -> str:
        """A stable name of the model and its version (shown in ``explain``)."""

    @abstractmethod
    def scores(self, query: str, texts: Sequence[str]) -> np.ndarray:
        """One relevance score per text (float32, any scale; only the order is used)."""

    def load(self) -> None:  # noqa: B027 - optional hook
        """Load the model now instead of on the first call (no-op by default)."""
