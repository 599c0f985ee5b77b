"""The read pipeline (DESIGN.md §2): candidates -> fusion -> graph -> time -> priority.

:class:`RecallPipeline` runs one recall for an already validated request:

1. **Time.** The query's time expressions become a window (or an event
   anchor, looked up among the reader's memories) and leave the search text.
2. **Candidates.** Query words common to most of the reader's memories are
   dropped first; then the keyword search runs on the calling thread while the
   vector search runs on a worker. The query is embedded on that worker too,
   beside the keyword search, unless the embedder already runs one text on
   every core (:attr:`~kenning.embeddings.Embedder.parallel_query`, the local
   model): then it is embedded first, on the calling thread. The worker is
   used only while the recall has the process to itself
   (:class:`~kenning.helpers.Helpers`); beside other engine calls the two
   searches run one after the other. With a window, a
   second, window-filtered search adds candidates from that time.
3. **Fusion** into one relevance in [0, 1] per candidate.
4. **Signals** (:mod:`kenning.retrieval.signals`), stage by stage: graph
   post-processing (seed 002: support, expansion; fail-open), the
   conversation context (episode, author), the time match; each adds to the
   fused relevance.
5. The **learned relevance** (:mod:`kenning.retrieval.order`): a linear model
   fit on dev data reads each candidate's evidence (match, signals, episode,
   text) side by side; its normalised score is the relevance the priority
   reads (questions about the asker keep the signals' relevance).
6. Seed 000's **priority** score plus the boost signals (layer, persona,
   exact match, high confidence); the opt-in **rerank** step
   (:mod:`kenning.retrieval.rerank`: a cross-encoder's second look at the best
   hits); the **currency** step
   (:mod:`kenning.retrieval.currency`: the newest value of the question's
   subject first, other people's facts below; superseded memories searched
   for questions about before); a fact drawn from one turn and that turn
   count once (:mod:`kenning.retrieval.collapse`); min-confidence, top k.
7. The **calibrated score** of each hit (:mod:`kenning.retrieval.calibration`;
   the order stays the priority's), min-score; relation paths.

Every store call takes the reader's scope filter; nothing here can widen it.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime

import numpy as np

from ..access import ScopeFilter
from ..config import Settings
from ..embeddings import CachedEmbedder
from ..graph.model import GraphPath
from ..helpers import Helpers
from ..lifecycle.slots import aspect_words
from ..lifecycle.strength import StrengthModel
from ..models import Hit, MemoryFilter, MemoryRecord, Principal, RecallResult, Status
from ..rerank import Rerankers
from ..scoring import normalise
from ..stores import Store
from .calibration import calibrated, search_terms
from .collapse import collapse_restatements
from .currency import Question, current_first, include_history, question_of
from .graph_rerank import GraphOutcome, relation_paths
from .order import learned_relevance
from .ranker import fuse, score
from .rerank import reranked
from .signals import RELEVANCE_STAGES, RecallContext, active_signals, add_scores
from .signals.graph import graph_knobs
from .text import query_terms, strip_terms
from .time_aware import Window, anchored_window
from .timeq import TimeQuery, parse_time_query

__all__ = ["RecallPipeline", "RecallRequest"]

log = logging.getLogger("kenning.recall")


def _ms(start: float) -> float:
    return round((time.perf_counter() - start) * 1000, 3)


@dataclass(frozen=True, slots=True)
class RecallRequest:
    """A validated recall: who asks, what they may read, and how."""

    query: str
    k: int
    who: Principal
    view: ScopeFilter
    filters: MemoryFilter
    floor: float
    explain: bool = False
    #: Hits whose calibrated score is below this are left out (None: none are).
    min_score: float | None = None


@dataclass(slots=True)
class _Pool:
    """The candidate pool as it grows through the stages."""

    dense: dict[str, float] = field(default_factory=dict)
    keyword: dict[str, float] = field(default_factory=dict)
    records: dict[str, MemoryRecord] = field(default_factory=dict)
    qvec: np.ndarray | None = None
    dropped: set[str] = field(default_factory=set)
    timings: dict[str, float] = field(default_factory=dict)


class RecallPipeline:
    """Runs recalls against one store with one query embedder (thread-safe)."""

    def __init__(
        self,
        store: Store,
        embedder: CachedEmbedder,
        helpers: Helpers,
        strength: StrengthModel | None = None,
        rerankers: Rerankers | None = None,
    ) -> None:
        self.store = store
        self.embedder = embedder
        self.helpers = helpers
        self.strength = strength or StrengthModel(store, 0.0)
        self.rerankers = rerankers or Rerankers()

    def run(self, req: RecallRequest, settings: Settings, now: datetime) -> RecallResult:
        """Recall for ``req`` under ``settings`` at ``now``; see the module docstring."""
        with self.helpers.call():
            return self._run(req, settings, now)

    def _run(self, req: RecallRequest, settings: Settings, now: datetime) -> RecallResult:
        started = time.perf_counter()
        on = settings.retrieval.time.enabled
        tq = parse_time_query(req.query, now) if on else TimeQuery()
        text = strip_terms(_search_text(req.query, tq), aspect_words(req.query))
        question = question_of(req.query, bool(tq.start or tq.end), tq.anchor)
        searched = _with_history(req, question, settings)
        # for a question about now a superseded match only hands its place on
        added = searched is not req
        history, successors = added and question.aspect != "now", added and question.aspect == "now"
        req = searched
        pool = self._candidates(text, req, settings)
        window = self._window(tq, req, pool)
        if window is not None:
            self._window_candidates(text, window, req, settings, pool)
        fused = {
            k: v
            for k, v in fuse(list(pool.dense.items()), list(pool.keyword.items()), settings).items()
            if k in pool.records
        }
        ctx = RecallContext(
            req.query,
            req.who,
            settings,
            now,
            pool.records,
            active_signals(settings),
            window=window,
            asks_when=tq.asks_when,
            dense=pool.dense,
            keyword=pool.keyword,
            fused=fused,
            store=self.store,
            view=req.view,
            qvec=pool.qvec,
            filtered=not req.filters.is_plain,
            history=history,
            successors=successors,
        )
        adjusted = _relevance(ctx, fused, pool.timings)
        w = settings.scoring
        rel = normalise(adjusted, w.relevance_norm, w.relevance_window)
        t = time.perf_counter()  # "rank": the learned relevance, the priority and after
        rel = learned_relevance(ctx, adjusted, rel, question)
        strengths = None
        if w.strength or req.explain:  # with no weight, strength shows only in explain
            ranked = {k: pool.records[k] for k in rel if k in pool.records}
            self.strength.learn_sectors(ranked.values(), req.view)
            strengths = self.strength.strengths(ranked, now)
        hits = score(ctx, rel, strengths, req.explain)
        reranker = self.rerankers.get(settings.retrieval.rerank)
        if reranker is not None:
            started_rerank = time.perf_counter()
            hits = reranked(req.query, hits, reranker, settings.retrieval.rerank, req.explain)
            pool.timings["rerank"] = _ms(started_rerank)
            t += time.perf_counter() - started_rerank  # "rank" leaves the rerank out
        terms = search_terms(text, pool.dropped)
        hits = current_first(ctx, hits, question, req.k, req.explain, terms)
        collapsed = 0
        if settings.retrieval.collapse_restatements:
            hits, collapsed = collapse_restatements(hits)
        hits = [h for h in hits if h.memory.confidence >= req.floor][: req.k]
        hits = calibrated(ctx, hits, terms, req.explain)
        abstained = _abstains(hits, settings.retrieval.abstain_below)
        hits = [] if abstained else _at_least(hits, req.min_score)
        pool.timings["rank"] = _ms(t)
        t = time.perf_counter()
        outcome = ctx.graph or GraphOutcome(dict(fused))
        paths = self._attach(hits, outcome, rel, pool, settings, req.view)
        pool.timings["graph"] += _ms(t)
        pool.timings["total"] = _ms(started)
        if not req.explain:
            return RecallResult(hits, pool.timings, abstained=abstained)
        return RecallResult(
            hits,
            pool.timings,
            {
                "dense": len(pool.dense),
                "keyword": len(pool.keyword),
                "fused": len(pool.records),
                "collapsed": collapsed,
            },
            sorted(pool.dropped),
            paths=paths,
            graph=outcome.stats,
            time_window=_iso(window),
            abstained=abstained,
        )

    # -- candidates ------------------------------------------------------------------

    def _candidates(self, text: str, req: RecallRequest, s: Settings) -> _Pool:
        pool = _Pool()
        t0 = time.perf_counter()
        # The common-term check comes first: the query is embedded without the
        # words it drops (a speaker's name in most of the memories pulls every
        # memory alike). It is quick, and embedding the query as typed beside it
        # would keep a core busy for nothing whenever a word is dropped.
        pool.dropped = self.store.common_terms(
            query_terms(text),
            req.view,
            s.retrieval.common_term_ratio,
            s.retrieval.common_term_min_docs,
            s.retrieval.common_term_max_docs,
        )
        search_text = strip_terms(text, pool.dropped)
        pool.timings["terms"] = _ms(t0)
        qvec: np.ndarray | None = None
        if self.embedder.parallel_query:  # the model takes every core: embed first
            t = time.perf_counter()
            qvec = self.embedder.embed(search_text)
            pool.timings["embed"] = _ms(t)
        dense_job = self.helpers.submit(self._dense, search_text, qvec, req, s)
        t1 = time.perf_counter()
        keyword = self.store.keyword_search(
            search_text, req.view, req.filters, max(s.retrieval.candidates_keyword, req.k)
        )
        pool.timings["keyword"] = _ms(t1)
        t2 = time.perf_counter()
        pool.records = {r.id: r for r in self.store.get([i for i, _ in keyword], req.view)}
        pool.timings["fetch_keyword"] = _ms(t2)
        qvec, dense, dense_timings = dense_job.result()
        pool.timings.update(dense_timings)
        t3 = time.perf_counter()
        self._merge(pool, qvec, dense, keyword, req)
        pool.timings["fetch"] = _ms(t3)
        return pool

    def _dense(
        self, text: str, qvec: np.ndarray | None, req: RecallRequest, s: Settings
    ) -> tuple[np.ndarray, list[tuple[str, float]], dict[str, float]]:
        """Embed the query unless ``qvec`` is given, then run the vector search (on a worker)."""
        timings: dict[str, float] = {}
        if qvec is None:
            t = time.perf_counter()
            qvec = self.embedder.embed(text)
            timings["embed"] = _ms(t)
        t = time.perf_counter()
        dense = self.store.vector_search(
            qvec, req.view, req.filters, max(s.retrieval.candidates_dense, req.k)
        )
        timings["dense"] = _ms(t)
        return qvec, dense, timings

    def _merge(
        self,
        pool: _Pool,
        qvec: np.ndarray,
        dense: Sequence[tuple[str, float]],
        keyword: Sequence[tuple[str, float]],
        req: RecallRequest,
    ) -> None:
        """Add candidates to the pool: records, and the cosine of keyword-only ones."""
        pool.qvec = qvec
        later = [i for i, _ in dense if i not in pool.records]
        pool.records.update((r.id, r) for r in self.store.get(later, req.view))
        for i, value in keyword:
            pool.keyword[i] = max(value, pool.keyword.get(i, value))
        pool.dense.update(dense)
        missing = [i for i, _ in keyword if i not in pool.dense]
        if missing:  # fusion needs the cosine of keyword-only candidates too
            pool.dense.update(self.store.vector_scores(qvec, missing, req.view))

    # -- time ------------------------------------------------------------------------

    def _window(self, tq: TimeQuery, req: RecallRequest, pool: _Pool) -> Window | None:
        if tq.start is not None or tq.end is not None:
            return tq.start, tq.end
        if not tq.anchor:
            return None
        t = time.perf_counter()
        found = self.store.keyword_search(tq.anchor, req.view, req.filters, 1)
        records = self.store.get([found[0][0]], req.view) if found else []
        pool.timings["anchor"] = _ms(t)
        return anchored_window(tq, records[0].said_at) if records else None

    def _window_candidates(
        self, text: str, window: Window, req: RecallRequest, s: Settings, pool: _Pool
    ) -> None:
        """Candidates from inside the window, so an old but dated answer is in the pool."""
        if pool.qvec is None or s.retrieval.time.window_candidates <= 0:
            return
        t = time.perf_counter()
        start, end = window
        flt = req.filters
        if start is not None and (flt.event_after is None or flt.event_after < start):
            flt = replace(flt, event_after=start)
        if end is not None and (flt.event_before is None or flt.event_before > end):
            flt = replace(flt, event_before=end)
        search_text = strip_terms(text, pool.dropped)
        n = s.retrieval.time.window_candidates
        keyword = self.store.keyword_search(search_text, req.view, flt, n)
        dense = self.store.vector_search(pool.qvec, req.view, flt, n)
        more = [i for i, _ in keyword if i not in pool.records]
        pool.records.update((r.id, r) for r in self.store.get(more, req.view))
        self._merge(pool, pool.qvec, dense, keyword, req)
        pool.timings["window"] = _ms(t)

    # -- graph ---------------------------------------------------------------------------

    def _attach(
        self,
        hits: list[Hit],
        outcome: GraphOutcome,
        scores: Mapping[str, float],
        pool: _Pool,
        s: Settings,
        view: ScopeFilter,
    ) -> list[GraphPath]:
        """Merged expansions ride with their seed; relation paths between the hits."""
        if not outcome.admitted and not outcome.edges:
            return []
        by_id = {h.memory.id: h for h in hits}
        if s.graph.expand_merge_seed:
            riding = [a for a in outcome.admitted if a.seed in by_id and a.memory_id not in by_id]
            wanted = [a.memory_id for a in riding if a.memory_id not in pool.records]
            pool.records.update((r.id, r) for r in self.store.get(wanted, view))
            for a in riding:
                record = pool.records.get(a.memory_id)
                if record is not None:
                    by_id[a.seed].related.append(Hit(record, a.score, via=a.path))
        return relation_paths(
            list(by_id), scores, outcome.edges, outcome.admitted, graph_knobs(s.graph)
        )


_RELATION_TAIL = re.compile(
    r"\s*\b(?:before|after|since|until|till|during|following|prior\s+to)\s*$", re.I
)


def _search_text(query: str, tq: TimeQuery) -> str:
    """The query without its time expressions and without "before <event>":
    the event only places the answer in time, it is not what is asked about."""
    text = tq.remainder if tq.matched else query
    if tq.anchor:
        head, found, tail = text.partition(tq.anchor)
        if found:
            text = f"{_RELATION_TAIL.sub('', head)} {tail}"
    text = " ".join(text.split())
    return text if query_terms(text) else query


def _with_history(req: RecallRequest, q: Question, s: Settings) -> RecallRequest:
    """``req`` searching superseded memories too when ``q`` asks about an earlier
    value or a time, and the caller asked for active memories only."""
    if req.filters.statuses != _ACTIVE or not include_history(q, s.retrieval.currency):
        return req
    return replace(req, filters=replace(req.filters, statuses=_HISTORY))


_ACTIVE = frozenset({Status.ACTIVE})
_HISTORY = frozenset({Status.ACTIVE, Status.SUPERSEDED})


def _abstains(hits: list[Hit], bar: float | None) -> bool:
    """Whether no hit's calibrated score reaches ``bar`` (``retrieval.abstain_below``):
    nothing stored answers the query."""
    return bar is not None and bool(hits) and max(h.score for h in hits) < bar


def _at_least(hits: list[Hit], min_score: float | None) -> list[Hit]:
    """``hits`` without those whose calibrated score is below ``min_score``."""
    return hits if min_score is None else [h for h in hits if h.score >= min_score]


def _relevance(
    ctx: RecallContext, fused: Mapping[str, float], timings: dict[str, float]
) -> dict[str, float]:
    """Fused relevance plus what each relevance stage's signals add, stage by stage."""
    scores = dict(fused)
    for stage in RELEVANCE_STAGES:
        t = time.perf_counter()
        scores = add_scores(scores, ctx.run_stage(stage, scores))
        if stage == "graph":
            timings["graph"] = _ms(t)
    return scores


def _iso(window: Window | None) -> dict[str, str | None]:
    if window is None:
        return {}
    start, end = window
    return {
        "start": start.isoformat() if isinstance(start, datetime) else None,
        "end": end.isoformat() if isinstance(end, datetime) else None,
    }
