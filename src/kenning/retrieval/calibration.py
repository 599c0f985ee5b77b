"""Calibrated hit scores (DESIGN.md §2: "a score means the same in every query").

The ranking value (seed 000's priority) mixes relevance that is min-max
normalised within each query's candidates: the best candidate of a question
nothing answers scores as high as the best of one that is answered. The
calibrated score is computed beside it, from evidence that exists before that
normalisation and means the same in every query:

* ``dense``: the raw cosine of the memory's and the query's embeddings;
* ``keyword``: the raw BM25 score bounded to [0, 1) as ``bm25 / (bm25 + c)``
  (0 when the keyword search did not return the memory);
* ``coverage``: the share of the query's search terms (after the common ones
  are dropped) found among the memory's words and its key's (both cut to
  their first five letters, a cheap stemmer);
* ``other_named``: 1 when the query names the author
  (``retrieval.author.fields``) of some candidate but not this memory's (a
  question about what Alice said is rarely answered by Bob's words); 0 when
  it names none, so memories without authors lose nothing. Also 1 when the
  query asks about the asker or their relation and the memory is about
  someone else (the currency step's verdict, ``RecallContext.elsewhere``: "My sister
  lives in Rome" for "Where do I live?"): the same fact, told by the text
  instead of the author field, with the same coefficient (it never fires on
  the LoCoMo questions, which name third persons).

A memory that took the place of the one it replaced (the currency step's
``RecallContext.replaced``, for a question about now) takes the better of its
own and that memory's ``dense``, ``keyword`` and ``coverage``: "I quit Nokia
and joined Philips" answers "Where do I work now?" as well as "I work at
Nokia" matched it.

Each input belongs to the memory and the query alone (not to the other
candidates or the hit's rank), so the same memory scores the same for the
same query whatever else the store holds, and identical memories score alike.

A logistic model with fixed coefficients turns these into a probability-like
score in [0, 1] that the hit answers the query. The coefficients were fit on
the LoCoMo dev split only (positives: a question's evidence turns among its
top 20; negatives: the other hits, and every hit of the adversarial,
category-5 questions); ``bench/fit_calibration.py`` reproduces them and prints
them. The ranking itself is untouched: hits stay in priority order, so the
calibrated score can go up from one hit to the next. ``explain`` carries the
inputs and each coefficient's contribution (``ScoreBreakdown.calibration``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from ..models import Hit, MemoryRecord
from .context import author_match
from .signals.base import RecallContext
from .text import query_terms, term_stem

__all__ = [
    "BM25_HALF",
    "COEFFICIENTS",
    "INTERCEPT",
    "INPUTS",
    "calibrate",
    "calibrated",
    "calibration_inputs",
    "coverage",
    "search_terms",
]

#: The BM25 score that maps to 0.5 in the ``keyword`` input.
BM25_HALF = 8.0

#: The model's inputs, in the order of :data:`COEFFICIENTS`.
INPUTS: tuple[str, ...] = ("dense", "keyword", "coverage", "other_named")

#: Fit on the LoCoMo dev split by ``bench/fit_calibration.py`` (31,960 top-20
#: hits of 1,598 questions, 955 positives; log loss 0.1059, AUC 0.8375).
INTERCEPT = -6.085
COEFFICIENTS: Mapping[str, float] = {
    "dense": 3.991,
    "keyword": 1.599,
    "coverage": 2.808,
    "other_named": -2.881,
}


def search_terms(text: str, dropped: set[str]) -> frozenset[str]:
    """The query's search terms as the coverage input counts them."""
    return frozenset(term_stem(t) for t in query_terms(text) if t not in dropped)


def calibration_inputs(
    ctx: RecallContext,
    hits: Sequence[Hit],
    terms: frozenset[str],
) -> list[dict[str, float]]:
    """The model's inputs for each of ``hits``."""
    fields = ctx.settings.retrieval.author.fields
    ids = [h.memory.id for h in hits]
    named = author_match(ctx.query, list(ctx.records), ctx.records, 1.0, fields)
    out: list[dict[str, float]] = []
    for mid in ids:
        inputs = _answer_inputs(ctx, mid, terms)
        prev = ctx.replaced.get(mid)
        if prev is not None:  # it answers what the memory it replaced answered
            theirs = _answer_inputs(ctx, prev, terms)
            inputs = {name: max(value, theirs[name]) for name, value in inputs.items()}
        someone_else = mid in ctx.elsewhere
        inputs["other_named"] = 1.0 if (named and mid not in named) or someone_else else 0.0
        out.append(inputs)
    return out


def coverage(record: MemoryRecord | None, terms: frozenset[str]) -> float:
    """The share of the query's search ``terms`` found among the memory's words
    and its key's (the ``coverage`` input)."""
    if record is None or not terms:
        return 0.0
    words = {term_stem(t) for t in query_terms(f"{record.content} {record.key or ''}")}
    return len(terms & words) / len(terms)


def _answer_inputs(ctx: RecallContext, mid: str, terms: frozenset[str]) -> dict[str, float]:
    """The inputs that say how well memory ``mid`` answers the query."""
    bm25 = max(0.0, ctx.keyword.get(mid, 0.0))
    return {
        "dense": float(ctx.dense.get(mid) or 0.0),
        "keyword": bm25 / (bm25 + BM25_HALF),
        "coverage": coverage(ctx.records.get(mid), terms),
    }


def calibrate(inputs: Mapping[str, float]) -> tuple[float, dict[str, float]]:
    """The calibrated score of one hit's ``inputs`` and each term's contribution
    to the logit (``intercept`` included)."""
    parts = {"intercept": INTERCEPT}
    parts.update({name: COEFFICIENTS[name] * inputs[name] for name in INPUTS})
    z = sum(parts.values())
    return 1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, z)))), parts


def calibrated(
    ctx: RecallContext, hits: Sequence[Hit], terms: frozenset[str], explain: bool
) -> list[Hit]:
    """``hits`` (same order) with calibrated scores; with ``explain``, the
    priority and the calibration's inputs and contributions in the breakdown."""
    out: list[Hit] = []
    for hit, inputs in zip(hits, calibration_inputs(ctx, hits, terms), strict=True):
        value, parts = calibrate(inputs)
        hit.score = round(value, 6)
        if explain and hit.explain is not None:
            hit.explain.priority = hit.explain.final
            hit.explain.calibration = {
                "inputs": inputs,
                "contributions": parts,
                "logit": sum(parts.values()),
            }
        out.append(hit)
    return out
