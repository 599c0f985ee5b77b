"""The ``graph`` signal: support from linked memories (seed 002 §3), co-mention
support, and expansion (admitted memories join the pool or ride with their seed).

Its contribution is what post-processing added to each candidate's fused
score; the outcome (admissions, edges read, statistics) stays on the context
for the relation paths drawn after ranking. Fail-open: an error is logged
and the candidate order stands. Reads ``graph_enabled`` and ``graph.*``.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence

from ...config import GraphRead
from ...graph.model import GraphEdge
from ...models import Status
from ..graph_rerank import GraphKnobs, GraphOutcome, mention_support, post_process
from .base import RecallContext, Stage

__all__ = ["GraphSupport", "graph_knobs"]

#: The statuses of candidates whose links count for a question about before.
_HISTORY = frozenset({Status.ACTIVE, Status.SUPERSEDED})

log = logging.getLogger("kenning.recall")


def graph_knobs(g: GraphRead) -> GraphKnobs:
    """The post-processing knobs from the settings (seed 002's names)."""
    return GraphKnobs(
        beta=g.propagate_beta,
        iters=g.propagate_iters,
        support_cap=g.support_cap,
        gamma=g.relax_gamma,
        seed_floor=g.seed_floor,
        max_expand=g.max_expand,
        hops=g.expand_hops,
        seeds=g.expand_seeds,
        prefilter=g.expand_prefilter_top_n,
        delta=g.seed_sim_delta,
        relation_quota=g.relation_quota,
        merge_seed=g.expand_merge_seed,
        paths=g.path_enabled,
        path_floor=g.path_high_floor,
        priors=g.priors,
    )


class GraphSupport:
    """Graph post-processing as a signal (stage ``graph``)."""

    name = "graph"
    stage: Stage = "graph"
    reads: tuple[str, ...] = ("graph_enabled", "graph")

    def contribute(self, ctx: RecallContext, scores: Mapping[str, float]) -> dict[str, float]:
        """Support (and co-mention support) per candidate; admissions' whole score."""
        outcome = self._outcome(ctx, scores)
        ctx.graph = outcome
        # (a memory admitted by expansion competing for a slot has no fused score:
        # all of its relevance is graph support)
        return {k: v - scores.get(k, 0.0) for k, v in outcome.scores.items() if v != scores.get(k)}

    def _outcome(self, ctx: RecallContext, rel: Mapping[str, float]) -> GraphOutcome:
        s = ctx.settings
        store, view = ctx.store, ctx.view
        if not (s.graph_enabled and s.graph.rerank_enabled) or not rel or store is None:
            return GraphOutcome(dict(rel))
        assert view is not None
        knobs = graph_knobs(s.graph)

        def edges_of(ids: Sequence[str]) -> list[GraphEdge]:
            return store.graph_edges(ids, view)

        # a question about before searches superseded memories: their links hold
        # between candidates too ("Cooking for me means keto food only" and the
        # fact drawn from it, retired by "I stopped being keto")
        near = _HISTORY if ctx.history else None

        def within(ids: Sequence[str]) -> list[GraphEdge]:
            return store.graph_edges(ids, view, within=True, near=near)

        def sims_of(ids: Sequence[str]) -> dict[str, float]:
            out = {i: ctx.dense[i] for i in ids if i in ctx.dense}
            missing = [i for i in ids if i not in out]
            if missing and ctx.qvec is not None:
                out.update(store.vector_scores(ctx.qvec, missing, view))
            return out

        try:
            outcome = post_process(rel, edges_of, sims_of, knobs, within=within)
            self._admit(ctx, outcome, knobs)
            shared = self._co_mentions(ctx, rel)
            for k, v in shared.items():
                outcome.scores[k] = outcome.scores.get(k, rel.get(k, 0.0)) + v
            outcome.stats["co_mentioned"] = len(shared)
            return outcome
        except Exception:  # fail-open (seed 002 §3): the pre-graph order stands
            log.exception("graph post-processing failed; recall continues without it")
            return GraphOutcome(dict(rel), stats={"error": 1.0})

    @staticmethod
    def _co_mentions(ctx: RecallContext, scores: Mapping[str, float]) -> dict[str, float]:
        g = ctx.settings.graph
        if g.mention_support <= 0 or g.mention_seeds <= 0 or ctx.store is None:
            return {}
        assert ctx.view is not None
        seeds = sorted(scores, key=lambda i: (-scores[i], i))[: g.mention_seeds]
        mentions = ctx.store.graph_mentions(seeds, ctx.view)
        entities = list(dict.fromkeys(e for ids in mentions.values() for e in ids))
        if not entities:
            return {}
        members = ctx.store.entity_memories(entities, ctx.view, g.mention_max_df + 1)
        return mention_support(
            scores, seeds, mentions, members, g.mention_support, g.mention_max_df
        )

    @staticmethod
    def _admit(ctx: RecallContext, outcome: GraphOutcome, knobs: GraphKnobs) -> None:
        """Admitted memories competing for slots join the pool (merged ones are
        fetched later, only for the seeds that make the top k)."""
        if knobs.merge_seed or ctx.store is None:
            return
        assert ctx.view is not None
        ids = [a.memory_id for a in outcome.admitted if a.memory_id not in ctx.records]
        ctx.records.update((r.id, r) for r in ctx.store.get(ids, ctx.view))
        outcome.admitted = [a for a in outcome.admitted if a.memory_id in ctx.records]
        for a in outcome.admitted:
            outcome.scores.setdefault(a.memory_id, a.score)
