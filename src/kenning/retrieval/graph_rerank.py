"""Read-side graph post-processing (seed 002 §3): support, expansion, paths.

Runs between fusion and priority scoring on the fused relevance of the
candidate pool (normalised to [0, 1]). Three steps, each bounded:

A. **Support propagation** reranks the pool, never adds to it::

       support(v) = sum(prior(r) * w(u, v) * score(u)) / sqrt(pool_degree(v))
       score'(v)  = score(v) + beta * min(support(v), cap)

   over the edges between pool members, ``iters`` times.
B. **Bounded relation expansion** nominates memories outside the pool that
   are linked to a *seed* (one of the best ``seeds`` pool members, scoring at
   least ``seed_floor``), up to ``hops`` hops away, walking on from at most
   ``max_expand`` nodes per hop; the best ``prefilter`` nominees (by the score
   they would get) face the gates. A nominee is
   admitted only if its cosine with the query is at least its seed's minus
   ``delta`` (the semantic hard gate), within a per-relation quota and the
   overall ``max_expand``; its score is ``gamma * score(seed) * strength``,
   where strength is the product of prior x weight along the walk. Admitted
   memories are merged into their seed (returned with it, taking no top-k
   slot) unless ``merge_seed`` is off, in which case they compete for slots.
C. **Relation paths** between the final hits (and their merged memories)
   are returned with them, temporal edges with their direction.

Edges come through ``edges_of`` (the store's scoped ``graph_edges``), cosines
through ``sims_of``: this module does no I/O of its own and never sees a
memory the caller could not read. The engine calls it fail-open.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field

from ..graph.model import RELATION_PRIORS, GraphEdge, GraphPath

__all__ = [
    "mention_support",
    "GraphKnobs",
    "GraphOutcome",
    "Admitted",
    "propagate",
    "expand",
    "relation_paths",
    "post_process",
]

EdgesOf = Callable[[Sequence[str]], Sequence[GraphEdge]]
SimsOf = Callable[[Sequence[str]], Mapping[str, float]]


@dataclass(frozen=True, slots=True)
class GraphKnobs:
    """The read-side settings (seed 002 defaults; see ``Settings.graph_*``)."""

    beta: float = 0.3
    iters: int = 1
    support_cap: float = 1.0
    gamma: float = 0.3
    seed_floor: float = 0.5
    max_expand: int = 20
    hops: int = 2
    seeds: int = 10
    prefilter: int = 50
    delta: float = 0.2
    relation_quota: int = 10
    merge_seed: bool = True
    paths: bool = True
    path_floor: float = 0.5
    priors: Mapping[str, float] = field(default_factory=lambda: dict(RELATION_PRIORS))

    def prior(self, relation: str) -> float:
        """The relation-type prior (untyped ``related`` for unknown types)."""
        return self.priors.get(relation, self.priors.get("related", 0.5))


@dataclass(frozen=True, slots=True)
class Admitted:
    """A memory brought in by expansion: its seed, score and the walk to it."""

    memory_id: str
    seed: str
    score: float
    path: GraphPath


@dataclass(slots=True)
class GraphOutcome:
    """What post-processing did: new scores, admissions, paths and statistics."""

    scores: dict[str, float]
    support: dict[str, float] = field(default_factory=dict)
    admitted: list[Admitted] = field(default_factory=list)
    paths: list[GraphPath] = field(default_factory=list)
    stats: dict[str, float] = field(default_factory=dict)
    #: Every edge read on the way (for the paths between the final hits).
    edges: list[GraphEdge] = field(default_factory=list)


def _adjacency(edges: Sequence[GraphEdge], members: Collection[str]) -> dict[str, list[GraphEdge]]:
    adj: dict[str, list[GraphEdge]] = {}
    for edge in edges:
        if edge.src == edge.dst:
            continue
        for end in (edge.src, edge.dst):
            if end in members:
                adj.setdefault(end, []).append(edge)
    return adj


def propagate(
    scores: Mapping[str, float], edges: Sequence[GraphEdge], knobs: GraphKnobs
) -> tuple[dict[str, float], dict[str, float]]:
    """Step A: (new scores, support per memory) over edges inside the pool."""
    current = dict(scores)
    support: dict[str, float] = {}
    inner = [e for e in edges if e.src in scores and e.dst in scores and e.src != e.dst]
    adj = _adjacency(inner, scores)
    for _ in range(max(0, knobs.iters)):
        nxt = dict(current)
        for v, incident in adj.items():
            total = sum(knobs.prior(e.relation) * e.weight * current[e.other(v)] for e in incident)
            s = total / math.sqrt(len(incident))
            support[v] = s
            nxt[v] = current[v] + knobs.beta * min(s, knobs.support_cap)
        current = nxt
    return current, support


def _walk(
    seeds: Sequence[str], scores: Mapping[str, float], edges_of: EdgesOf, knobs: GraphKnobs
) -> dict[str, tuple[str, float, list[GraphEdge]]]:
    """Best (seed, strength, edges) for every node reachable from the seeds."""
    best: dict[str, tuple[str, float, list[GraphEdge]]] = {s: (s, 1.0, []) for s in seeds}
    frontier = list(seeds)
    for _ in range(max(0, knobs.hops)):
        if not frontier:
            break
        if len(frontier) > knobs.max_expand:  # walk on from the most promising only
            frontier.sort(key=lambda n: (-scores.get(best[n][0], 0.0) * best[n][1], n))
            frontier = frontier[: knobs.max_expand]
        reached: list[str] = []
        for edge in edges_of(frontier):
            for here in (edge.src, edge.dst):
                if here not in best or here == edge.other(here):
                    continue
                there = edge.other(here)
                if there in scores:  # already a candidate: support handles it
                    continue
                seed, strength, trail = best[here]
                step = strength * knobs.prior(edge.relation) * min(edge.weight, 1.0)
                if there not in best or step > best[there][1]:
                    if there not in best:
                        reached.append(there)
                    best[there] = (seed, step, [*trail, edge])
        frontier = reached
    return {k: v for k, v in best.items() if k not in seeds}


def expand(
    scores: Mapping[str, float],
    edges_of: EdgesOf,
    sims_of: SimsOf,
    knobs: GraphKnobs,
) -> tuple[list[Admitted], dict[str, float]]:
    """Step B: the admitted memories (best first) and admission statistics."""
    stats = {"seeds": 0.0, "nominated": 0.0, "gated": 0.0, "quota": 0.0, "admitted": 0.0}
    if knobs.gamma <= 0 or knobs.max_expand <= 0 or knobs.hops <= 0:
        return [], stats
    ranked = sorted(scores, key=lambda k: (-scores[k], k))
    seeds = [s for s in ranked[: knobs.seeds] if scores[s] >= knobs.seed_floor]
    stats["seeds"] = len(seeds)
    if not seeds:
        return [], stats
    reach = _walk(seeds, scores, edges_of, knobs)
    stats["nominated"] = len(reach)
    if not reach:
        return [], stats
    offers = sorted(
        (
            (knobs.gamma * scores[seed] * strength, node, seed, trail)
            for node, (seed, strength, trail) in reach.items()
        ),
        key=lambda o: (-o[0], o[1]),
    )[: knobs.prefilter]
    stats["prefiltered"] = len(offers)
    sims = sims_of([*seeds, *(o[1] for o in offers)])
    admitted: list[Admitted] = []
    per_relation: dict[str, int] = {}
    for score, node, seed, trail in offers:
        if len(admitted) >= knobs.max_expand:
            break
        if sims.get(node, -1.0) < sims.get(seed, 0.0) - knobs.delta:
            stats["gated"] += 1
            continue
        first = trail[0].relation
        if per_relation.get(first, 0) >= knobs.relation_quota:
            stats["quota"] += 1
            continue
        per_relation[first] = per_relation.get(first, 0) + 1
        admitted.append(Admitted(node, seed, score, _path(seed, trail, knobs)))
    stats["admitted"] = len(admitted)
    return admitted, stats


def _path(start: str, trail: Sequence[GraphEdge], knobs: GraphKnobs) -> GraphPath:
    nodes = [start]
    forward: list[bool] = []
    strength = 1.0
    for edge in trail:
        here = nodes[-1]
        nodes.append(edge.other(here))
        forward.append(edge.src == here)
        strength *= knobs.prior(edge.relation) * min(edge.weight, 1.0)
    return GraphPath(
        nodes=tuple(nodes),
        relations=tuple(e.relation for e in trail),
        strength=round(strength, 6),
        forward=tuple(forward),
    )


def mention_support(
    scores: Mapping[str, float],
    seeds: Sequence[str],
    mentions: Mapping[str, Sequence[str]],
    members: Mapping[str, Sequence[str]],
    weight: float,
    max_df: int,
) -> dict[str, float]:
    """Support through shared *rare* entities (``MENTIONS`` edges).

    A candidate that mentions an entity one of the ``seeds`` (the best
    candidates) mentions gains ``weight * score(seed)``, if at most ``max_df``
    readable memories mention that entity: a name that appears everywhere (the
    user's own, say) links nothing. ``mentions``: seed -> entity ids;
    ``members``: entity id -> the memories mentioning it (at most max_df + 1).
    The best seed counts, not the sum, so a hub cannot pile support up.
    """
    out: dict[str, float] = {}
    if weight <= 0:
        return out
    for seed in seeds:
        for entity in mentions.get(seed, ()):
            near = members.get(entity, ())
            if len(near) > max_df:
                continue
            for other in near:
                if other != seed and other in scores:
                    out[other] = max(out.get(other, 0.0), weight * scores[seed])
    return out


def relation_paths(
    hits: Sequence[str],
    scores: Mapping[str, float],
    edges: Sequence[GraphEdge],
    admitted: Sequence[Admitted],
    knobs: GraphKnobs,
) -> list[GraphPath]:
    """Step C: one-hop paths between final hits scoring at least ``path_floor``,
    plus the walks that admitted memories were reached by."""
    if not knobs.paths:
        return []
    high = {h for h in hits if scores.get(h, 0.0) >= knobs.path_floor}
    shown = set(hits)
    out: list[GraphPath] = []
    seen: set[tuple[str, str, str]] = set()
    for edge in edges:
        if edge.src not in shown or edge.dst not in shown:
            continue
        if edge.src not in high and edge.dst not in high:
            continue
        key = (edge.src, edge.dst, edge.relation)
        if key in seen or edge.src == edge.dst:
            continue
        seen.add(key)
        out.append(_path(edge.src, [edge], knobs))
    out.extend(a.path for a in admitted if a.seed in shown)
    out.sort(key=lambda p: (-p.strength, p.nodes))
    return out


def post_process(
    scores: Mapping[str, float],
    edges_of: EdgesOf,
    sims_of: SimsOf,
    knobs: GraphKnobs,
    *,
    relations: Collection[str] | None = None,
    within: EdgesOf | None = None,
) -> GraphOutcome:
    """Steps A and B over a pool of (id -> normalised relevance).

    Paths (step C) need the final hits, so the caller runs
    :func:`relation_paths` after priority scoring. ``relations`` restricts the
    edge types used (None: all). ``within(ids)``, if given, returns only the
    edges between two of ``ids``: enough for step A, and cheaper; expansion
    then reads the seeds' edges through ``edges_of``.
    """

    known: dict[str, list[GraphEdge]] = {}

    def scoped(ids: Sequence[str]) -> Sequence[GraphEdge]:
        """Edges touching ``ids``, asking the store once per memory."""
        missing = [i for i in ids if i not in known]
        if missing:
            for i in missing:
                known[i] = []
            for edge in edges_of(missing):
                if relations is not None and edge.relation not in relations:
                    continue
                for end in {edge.src, edge.dst}:
                    if end in known:
                        known[end].append(edge)
        unique: dict[tuple[str, str, str], GraphEdge] = {}
        for i in ids:
            for edge in known[i]:
                unique.setdefault((edge.src, edge.dst, edge.relation), edge)
        return list(unique.values())

    members = list(scores)
    pool_edges = [
        e
        for e in (within(members) if within is not None and members else scoped(members))
        if relations is None or e.relation in relations
    ]
    new_scores, support = propagate(scores, pool_edges, knobs)
    admitted, stats = expand(new_scores, scoped, sims_of, knobs)
    stats["edges"] = len(pool_edges)
    stats["supported"] = sum(1 for s in support.values() if s > 0)
    seen = {(e.src, e.dst, e.relation): e for e in [*pool_edges, *scoped(list(known))]}
    return GraphOutcome(new_scores, support, admitted, [], stats, list(seen.values()))
