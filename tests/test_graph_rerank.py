"""Read-side graph post-processing (seed 002 §3) as pure functions."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import pytest

from kenning.graph.model import GraphEdge
from kenning.retrieval.graph_rerank import (
    GraphKnobs,
    expand,
    mention_support,
    post_process,
    propagate,
    relation_paths,
)


class Graph:
    """An in-memory edge list standing in for the store's scoped graph_edges."""

    def __init__(self, edges: Sequence[GraphEdge]) -> None:
        self.edges = list(edges)
        self.calls: list[list[str]] = []

    def __call__(self, ids: Sequence[str]) -> list[GraphEdge]:
        self.calls.append(list(ids))
        wanted = set(ids)
        return [e for e in self.edges if e.src in wanted or e.dst in wanted]


def sims(values: Mapping[str, float]):  # type: ignore[no-untyped-def]
    return lambda ids: {i: values[i] for i in ids if i in values}


def test_support_follows_the_seed_formula() -> None:
    scores = {"a": 1.0, "b": 0.5, "c": 0.2}
    edges = [GraphEdge("a", "c", "causes", 1.0), GraphEdge("b", "c", "co_occurs", 0.5)]
    new, support = propagate(scores, edges, GraphKnobs(beta=0.15))
    expected = (0.90 * 1.0 * 1.0 + 0.55 * 0.5 * 0.5) / math.sqrt(2)
    assert support["c"] == pytest.approx(expected)
    assert new["c"] == pytest.approx(0.2 + 0.15 * expected)
    # a and b each have one pool edge (to c)
    assert support["a"] == pytest.approx(0.90 * 0.2)
    assert new["a"] == pytest.approx(1.0 + 0.15 * 0.90 * 0.2)


def test_support_is_capped_and_never_adds_candidates() -> None:
    scores = {"a": 1.0, "b": 1.0}
    edges = [GraphEdge("a", "b", "causes", 5.0), GraphEdge("a", "zz", "causes", 1.0)]
    new, _ = propagate(scores, edges, GraphKnobs(beta=0.15, support_cap=0.5))
    assert set(new) == {"a", "b"}
    assert new["b"] == pytest.approx(1.0 + 0.15 * 0.5)


def test_zero_beta_leaves_scores_alone() -> None:
    scores = {"a": 1.0, "b": 0.3}
    new, _ = propagate(scores, [GraphEdge("a", "b", "causes", 1.0)], GraphKnobs(beta=0))
    assert new == scores


def test_expansion_admits_linked_memories_through_all_gates() -> None:
    scores = {"s": 0.9, "weak": 0.3}
    graph = Graph(
        [
            GraphEdge("s", "x", "temporal_next", 1.0),  # admitted
            GraphEdge("s", "far", "elaborates", 1.0),  # fails the semantic gate
            GraphEdge("weak", "y", "causes", 1.0),  # its seed is below the floor
            GraphEdge("x", "z", "causes", 1.0),  # second hop from s via x
        ]
    )
    cos = sims({"s": 0.6, "x": 0.5, "far": 0.1, "y": 0.9, "z": 0.45, "weak": 0.2})
    admitted, stats = expand(scores, graph, cos, GraphKnobs())
    got = {a.memory_id: a for a in admitted}
    assert set(got) == {"x", "z"}
    assert got["x"].score == pytest.approx(0.3 * 0.9 * 0.70)
    assert got["z"].score == pytest.approx(0.3 * 0.9 * 0.70 * 0.90)
    assert got["z"].path.nodes == ("s", "x", "z")
    assert got["z"].path.relations == ("temporal_next", "causes")
    assert stats["gated"] == 1 and stats["seeds"] == 1


def test_expansion_respects_hops_max_and_quota() -> None:
    scores = {"s": 1.0}
    edges = [GraphEdge("s", f"n{i}", "co_occurs", 1.0) for i in range(6)]
    edges.append(GraphEdge("n0", "deep", "causes", 1.0))
    cos = sims({"s": 0.5, **{f"n{i}": 0.5 for i in range(6)}, "deep": 0.5})
    one_hop, _ = expand(scores, Graph(edges), cos, GraphKnobs(hops=1))
    assert "deep" not in {a.memory_id for a in one_hop}
    capped, _ = expand(scores, Graph(edges), cos, GraphKnobs(max_expand=2))
    assert len(capped) == 2
    quota, stats = expand(scores, Graph(edges), cos, GraphKnobs(relation_quota=3))
    assert sum(a.path.relations[0] == "co_occurs" for a in quota) == 3
    assert stats["quota"] == 4  # n3-n5 and deep (reached through n0) hit it
    off, _ = expand(scores, Graph(edges), cos, GraphKnobs(gamma=0))
    assert off == []


def test_temporal_direction_is_kept_in_paths() -> None:
    scores = {"later": 1.0}
    graph = Graph([GraphEdge("earlier", "later", "temporal_next", 1.0)])
    admitted, _ = expand(scores, graph, sims({"later": 0.5, "earlier": 0.5}), GraphKnobs())
    assert admitted[0].path.nodes == ("later", "earlier")
    assert admitted[0].path.forward == (False,)


def test_relation_paths_between_hits() -> None:
    scores = {"a": 0.9, "b": 0.6, "c": 0.1}
    edges = [
        GraphEdge("a", "b", "causes", 1.0),
        GraphEdge("b", "c", "co_occurs", 1.0),  # both ends below the floor? b is 0.6
        GraphEdge("a", "outside", "causes", 1.0),
    ]
    paths = relation_paths(["a", "b", "c"], scores, edges, [], GraphKnobs(path_floor=0.7))
    assert [p.nodes for p in paths] == [("a", "b")]
    assert paths[0].strength == pytest.approx(0.9)
    assert relation_paths(["a", "b"], scores, edges, [], GraphKnobs(paths=False)) == []


def test_post_process_asks_the_store_once_per_memory() -> None:
    scores = {"a": 1.0, "b": 0.8}
    graph = Graph([GraphEdge("a", "x", "causes", 1.0), GraphEdge("x", "y", "causes", 1.0)])
    out = post_process(scores, graph, sims({"a": 0.5, "b": 0.5, "x": 0.5, "y": 0.5}), GraphKnobs())
    asked = [i for call in graph.calls for i in call]
    assert sorted(asked) == ["a", "b", "x"]  # the pool once, then the frontier
    assert [a.memory_id for a in out.admitted] == ["x", "y"]
    assert out.stats["edges"] == 1 and out.stats["admitted"] == 2


def test_post_process_can_restrict_relations() -> None:
    scores = {"a": 1.0}
    graph = Graph([GraphEdge("a", "x", "causes", 1.0), GraphEdge("a", "y", "co_occurs", 1.0)])
    out = post_process(
        scores, graph, sims({"a": 0.5, "x": 0.5, "y": 0.5}), GraphKnobs(), relations={"co_occurs"}
    )
    assert [a.memory_id for a in out.admitted] == ["y"]


def test_mention_support_goes_through_rare_entities_only() -> None:
    scores = {"seed": 0.9, "peer": 0.2, "crowd": 0.3, "low": 0.1}
    mentions = {"seed": ["rare", "hub"], "low": ["rare"]}
    members = {"rare": ["seed", "peer", "outside"], "hub": ["seed", "crowd", "x", "y"]}
    got = mention_support(scores, ["seed"], mentions, members, weight=0.2, max_df=3)
    assert got == {"peer": pytest.approx(0.2 * 0.9)}  # not the hub's, not outside the pool
    both = mention_support(scores, ["seed", "low"], mentions, members, weight=0.2, max_df=3)
    assert both["peer"] == pytest.approx(0.18)  # the best seed counts, not the sum
    assert both["seed"] == pytest.approx(0.2 * 0.1)
    assert mention_support(scores, ["seed"], mentions, members, weight=0, max_df=3) == {}
