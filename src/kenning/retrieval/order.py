"""Learned relevance: one linear model reads every candidate's evidence side by side.

The pipeline's relevance adds up its evidence with weights set by hand, one
knob at a time: the fused cosine and BM25, then what each signal adds. This
step reads the same evidence side by side, plus what the candidate's text and
its neighbours in the pool say, and scores every candidate with a linear
model whose weights were fit on the LoCoMo dev split (``bench/fit_order.py``:
pairs of an evidence turn and a turn that is not evidence for the same
question, a logistic loss on their score difference, each question weighing
the same). The score, normalised like the relevance it stands in for
(``scoring.relevance_norm``), is the relevance seed 000's priority reads
(blended with the signals' own at ``retrieval.learned_weight``, 1 by
default): the confidence, the age, the strength and the boosts (an exact
match, the layer, the persona, high confidence, any registered boost signal)
rank as before. Recency is not among the features: it stays the priority's
tie-breaker, and the same text in two places scores alike.

The features of a candidate (the pool ordered by the relevance the signals
left, best first):

* **how the pipeline placed it**: its rank (as ``1 / (1 + rank)`` and
  ``log(1 + rank)``), its relevance after the signals, raw and normalised,
  and the raw one's gap to the best;
* **how it matches**: its fused relevance, its cosine and the gap to the best
  cosine, its rank by cosine, its BM25 (bounded as in the calibrated score),
  whether the keyword search found it at all, its rank by BM25;
* **what the signals added**: the conversation context (its episode among
  the best, its author named; a registered signal of that stage counts here
  too), the episode part alone, the author part alone, the time match, and
  the time match again when the question asks "when". Graph support counts
  only inside the relevance the signals left: as a feature of its own the
  model trusted it past its meaning outside conversations (in a store of
  facts about people, a person's other facts support each other) for no gain
  on dev;
* **its episode**: the share of the five best candidates from the same
  session, and the summed normalised relevance of its session's candidates
  among the best twenty (a question is often answered where the talk was
  about it);
* **its text**: its length (as ``log(1 + characters)``), and whether it is a
  question itself (ends with "?": a question asked in a conversation seldom
  holds the answer to one asked later).

Everything is read from the pool; nothing from the store. The relevance of
the signals stays when ``retrieval.learned_weight`` is 0, and for a question
about the asker or the asker's relation ("Where do I live now?"): the model
was fit on questions about people named in conversations, and the currency
step, which orders the values such questions ask for, was set on that
relevance. ``explain`` shows the model's raw score (``learned``); the hit's
``relevance`` is the normalised one the priority read.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from ..scoring import normalise
from .calibration import BM25_HALF
from .currency import Question
from .signals.base import RecallContext

__all__ = [
    "FEATURES",
    "MONOTONE",
    "MEAN",
    "SCALE",
    "WEIGHTS",
    "features",
    "learned_relevance",
    "order_scores",
    "ranked_pool",
    "runs_for",
]

#: The model's inputs, in column order (see the module docstring).
FEATURES: tuple[str, ...] = (
    "inv_rank",
    "log_rank",
    "adjusted",
    "adjusted_gap",
    "relevance",
    "fused",
    "dense",
    "dense_gap",
    "inv_dense_rank",
    "keyword",
    "no_keyword",
    "inv_keyword_rank",
    "context",
    "episode",
    "author",
    "time",
    "when_time",
    "top5_session",
    "session_relevance",
    "log_length",
    "question_form",
)

#: The sign each feature's weight is held to (1: not below 0, -1: not above 0):
#: more evidence (a better rank, cosine, BM25, signal or episode) never lowers
#: a candidate's score, whatever the other features say. The text's length and
#: form, and whether the keyword search found it, are free.
MONOTONE: Mapping[str, int] = {
    "inv_rank": 1,
    "log_rank": -1,
    "adjusted": 1,
    "adjusted_gap": 1,
    "relevance": 1,
    "fused": 1,
    "dense": 1,
    "dense_gap": 1,
    "inv_dense_rank": 1,
    "keyword": 1,
    "inv_keyword_rank": 1,
    "context": 1,
    "episode": 1,
    "author": 1,
    "time": 1,
    "when_time": 1,
    "top5_session": 1,
    "session_relevance": 1,
}

#: Fit on the LoCoMo dev split by ``bench/fit_order.py`` (printed there to paste
#: here): the features' mean and scale over the training pools, and the weight
#: of each standardised feature.
MEAN: Mapping[str, float] = {
    "inv_rank": 0.0764715,
    "log_rank": 3.1821,
    "adjusted": 0.631413,
    "adjusted_gap": -0.832954,
    "relevance": 0.0880488,
    "fused": 0.340855,
    "dense": 0.274254,
    "dense_gap": -0.257949,
    "inv_dense_rank": 0.0764716,
    "keyword": 0.162209,
    "no_keyword": 0.476718,
    "inv_keyword_rank": 0.0637349,
    "context": 0.197851,
    "episode": 0.0226436,
    "author": 0.175207,
    "time": 0.0238553,
    "when_time": 0.00445014,
    "top5_session": 0.112748,
    "session_relevance": 0.592802,
    "log_length": 4.99938,
    "question_form": 0.246187,
}
SCALE: Mapping[str, float] = {
    "inv_rank": 0.144076,
    "log_rank": 0.914416,
    "adjusted": 0.298382,
    "adjusted_gap": 0.32823,
    "relevance": 0.202704,
    "fused": 0.178529,
    "dense": 0.134592,
    "dense_gap": 0.141688,
    "inv_dense_rank": 0.144076,
    "keyword": 0.169409,
    "no_keyword": 0.499458,
    "inv_keyword_rank": 0.148344,
    "context": 0.152589,
    "episode": 0.038288,
    "author": 0.147867,
    "time": 0.0789766,
    "when_time": 0.0310649,
    "top5_session": 0.226943,
    "session_relevance": 1.05864,
    "log_length": 0.517884,
    "question_form": 0.430789,
}
WEIGHTS: Mapping[str, float] = {
    "inv_rank": 0,
    "log_rank": -0.050851,
    "adjusted": 0.661398,
    "adjusted_gap": 0.601252,
    "relevance": 0,
    "fused": 0,
    "dense": 0,
    "dense_gap": 0,
    "inv_dense_rank": 0,
    "keyword": 0.162698,
    "no_keyword": 0.129267,
    "inv_keyword_rank": 0.107388,
    "context": 0.0941711,
    "episode": 0,
    "author": 0.716952,
    "time": 0.240766,
    "when_time": 0.125574,
    "top5_session": 0.336142,
    "session_relevance": 0.0228505,
    "log_length": 0.416907,
    "question_form": -0.404342,
}


def _ranks(values: Sequence[float]) -> np.ndarray:
    """Each value's rank, 0 for the highest: how many values are above it by more
    than float noise, so equal values (the same text in two scopes) share one."""
    v = np.asarray(values, dtype=np.float64)
    bars = v + 1e-9 * np.maximum(1.0, np.abs(v))
    return len(v) - np.searchsorted(np.sort(v), bars, side="right")


def _inverse_ranks(values: Sequence[float]) -> list[float]:
    """``1 / (1 + rank)`` of each value (:func:`_ranks`)."""
    return [1.0 / (1.0 + float(r)) for r in _ranks(values)]


def ranked_pool(adjusted: Mapping[str, float], ctx: RecallContext) -> list[str]:
    """The candidates with a record, best relevance first (ties by id)."""
    return sorted((m for m in adjusted if m in ctx.records), key=lambda m: (-adjusted[m], m))


def features(
    ctx: RecallContext,
    ids: Sequence[str],
    adjusted: Mapping[str, float],
    relevance: Mapping[str, float],
) -> np.ndarray:
    """One row of :data:`FEATURES` per candidate of ``ids`` (best relevance first,
    :func:`ranked_pool`): ``adjusted`` is the relevance the signals left,
    ``relevance`` the same normalised."""
    n = len(ids)
    if n == 0:
        return np.zeros((0, len(FEATURES)))
    dense = [float(ctx.dense.get(i) or 0.0) for i in ids]
    bm25 = [max(0.0, float(ctx.keyword.get(i, 0.0))) for i in ids]
    dense_rank = _inverse_ranks(dense)
    keyword_rank = [
        r if i in ctx.keyword else 0.0 for r, i in zip(_inverse_ranks(bm25), ids, strict=True)
    ]
    totals = ctx.stage_totals
    context, timed = (totals.get(s, {}) for s in ("context", "time"))
    episode = ctx.contributions.get("episode", {})
    author = ctx.contributions.get("author", {})
    sessions = [ctx.records[i].session_id for i in ids]
    top5: dict[str, int] = {}
    for s in sessions[:5]:
        if s is not None:
            top5[s] = top5.get(s, 0) + 1
    summed: dict[str, float] = {}
    for s, i in zip(sessions[:20], ids[:20], strict=True):
        if s is not None:
            summed[s] = summed.get(s, 0.0) + relevance.get(i, 0.0)
    best, best_dense = adjusted[ids[0]], max(dense)
    ranks = _ranks([adjusted[i] for i in ids])
    when = 1.0 if ctx.asks_when else 0.0
    rows = np.empty((n, len(FEATURES)), dtype=np.float64)
    for r, mid in enumerate(ids):
        session = sessions[r]
        text = ctx.records[mid].content.rstrip()
        rows[r] = (
            1.0 / (1.0 + float(ranks[r])),
            math.log1p(float(ranks[r])),
            adjusted[mid],
            adjusted[mid] - best,
            relevance.get(mid, 0.0),
            ctx.fused.get(mid, 0.0),
            dense[r],
            dense[r] - best_dense,
            dense_rank[r],
            bm25[r] / (bm25[r] + BM25_HALF),
            0.0 if mid in ctx.keyword else 1.0,
            keyword_rank[r],
            context.get(mid, 0.0),
            episode.get(mid, 0.0),
            author.get(mid, 0.0),
            timed.get(mid, 0.0),
            when * timed.get(mid, 0.0),
            top5.get(session, 0) / 5.0 if session is not None else 0.0,
            summed.get(session, 0.0) if session is not None else 0.0,
            math.log1p(len(text)),
            1.0 if text.endswith("?") else 0.0,
        )
    return rows


def order_scores(
    rows: np.ndarray,
    weights: Mapping[str, float] | None = None,
    mean: Mapping[str, float] | None = None,
    scale: Mapping[str, float] | None = None,
) -> np.ndarray:
    """The model's score of each row of :func:`features` (higher ranks first);
    the shipped :data:`WEIGHTS`, :data:`MEAN` and :data:`SCALE` unless given."""
    mean, scale, weights = mean or MEAN, scale or SCALE, weights or WEIGHTS
    mu = np.array([mean[f] for f in FEATURES])
    sd = np.array([scale[f] for f in FEATURES])
    w = np.array([weights[f] for f in FEATURES])
    out: np.ndarray = ((rows - mu) / sd) @ w
    return out


def runs_for(ctx: RecallContext, question: Question) -> bool:
    """Whether the step reads this recall: ``retrieval.learned_weight`` is above 0
    and the query is not about the asker (see the module docstring); a question
    about now that names no one is read too, as it may ask of someone written in
    lower case ("what does alice drink")."""
    asker = question.about_asker and not (question.thing and question.aspect == "now")
    return ctx.settings.retrieval.learned_weight > 0 and not asker


def learned_relevance(
    ctx: RecallContext,
    adjusted: Mapping[str, float],
    relevance: dict[str, float],
    question: Question,
) -> dict[str, float]:
    """The relevance the priority reads: ``relevance`` (the signals', normalised)
    blended with the model's scores of the candidates, normalised the same way,
    at ``retrieval.learned_weight`` (see the module docstring); ``relevance``
    itself when the step does not run. The raw scores are kept in
    ``ctx.learned`` for ``explain``."""
    if not runs_for(ctx, question):
        return relevance
    ids = ranked_pool(adjusted, ctx)
    if len(ids) < 2:
        return relevance
    # rounded: the same evidence (one text in two scopes) must score alike
    scores = np.round(order_scores(features(ctx, ids, adjusted, relevance)), 6)
    ctx.learned = {m: float(v) for m, v in zip(ids, scores, strict=True)}
    w = ctx.settings.scoring
    learned = normalise(ctx.learned, w.relevance_norm, w.relevance_window)
    weight = ctx.settings.retrieval.learned_weight
    return {m: (1 - weight) * v + weight * learned.get(m, 0.0) for m, v in relevance.items()}
