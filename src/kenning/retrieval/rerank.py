"""The rerank step (opt-in): a cross-encoder's second look at the best hits.

With ``retrieval.rerank.model`` set (see :mod:`kenning.rerank`), the reranker
reads the query with each of the ``top_n`` best hits (after the priority score,
before the currency step) and scores the pair. The new order is a reciprocal-
rank blend, ``weight / (rrf_k + reranker rank) + (1 - weight) / (rrf_k +
priority rank)``: the reranker moves a hit it finds a far better answer up a
few places without overruling the pipeline's time, graph and scope signals.
The hits keep their priorities but hand them out in the new order, so the
ranking value still falls down the list; ``explain`` shows the change as the
``rerank`` signal (and the reranker's own score as ``rerank_logit``). Hits
below ``top_n`` are untouched. A reranker that fails (or returns anything but
one finite score per hit) leaves the order as it was, with a warning in the
log: the recall still answers.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import numpy as np

from ..config import RerankRecall
from ..models import Hit
from ..rerank import Reranker

__all__ = ["reranked"]

log = logging.getLogger("kenning.recall")


def _ranks(values: np.ndarray) -> np.ndarray:
    """0 for the highest value, 1 for the next (ties keep their order)."""
    ranks = np.empty(len(values), dtype=np.float64)
    ranks[np.argsort(-values, kind="stable")] = np.arange(len(values))
    return ranks


def _scores(query: str, top: Sequence[Hit], reranker: Reranker) -> np.ndarray:
    """The reranker's score of each hit, checked: one finite number per hit."""
    logits = np.asarray(reranker.scores(query, [h.memory.content for h in top]), np.float64)
    if logits.shape != (len(top),) or not np.all(np.isfinite(logits)):
        raise ValueError(
            f"reranker {reranker.model_id!r} returned scores of shape {logits.shape} "
            f"for {len(top)} texts (one finite number each expected)"
        )
    return logits


def reranked(
    query: str, hits: Sequence[Hit], reranker: Reranker, opts: RerankRecall, explain: bool
) -> list[Hit]:
    """``hits`` (priority order) with the best ``opts.top_n`` reordered; see above."""
    top = list(hits[: opts.top_n])
    if len(top) < 2 or opts.weight <= 0:
        return list(hits)
    try:
        logits = _scores(query, top, reranker)
    except Exception as exc:  # fail-open, like the graph step: the recall still answers
        log.warning("rerank step skipped, the pipeline's order kept: %s", exc)
        return list(hits)
    blend = opts.weight / (opts.rrf_k + _ranks(logits)) + (1 - opts.weight) / (
        opts.rrf_k + np.arange(len(top))
    )
    order = np.argsort(-blend, kind="stable")
    slots = [h.score for h in top]  # priority order: best first
    for slot, i in enumerate(order):
        h = top[i]
        if explain and h.explain is not None:
            h.explain.signals["rerank"] = round(slots[slot] - h.score, 6)
            h.explain.signals["rerank_logit"] = round(float(logits[i]), 4)
            h.explain.final = slots[slot]
        h.score = slots[slot]
    rest = list(hits[opts.top_n :])
    if explain:  # every hit's breakdown names the step, as it does every signal
        for h in rest:
            if h.explain is not None:
                h.explain.signals["rerank"] = 0.0
    return [top[i] for i in order] + rest
