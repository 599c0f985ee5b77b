"""Rerankers: a second, slower look at a recall's best hits (opt-in).

See :mod:`kenning.rerank.base` for the seam, :mod:`kenning.rerank.registry`
for names and plugins, :mod:`kenning.retrieval.rerank` for the recall stage.
"""

from .base import Reranker
from .registry import (
    ENTRY_POINT_GROUP,
    Rerankers,
    available_rerankers,
    create_reranker,
    register_reranker,
)

__all__ = [
    "ENTRY_POINT_GROUP",
    "Reranker",
    "Rerankers",
    "available_rerankers",
    "create_reranker",
    "register_reranker",
]
