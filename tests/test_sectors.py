"""Sector hierarchy logic: routing, descendants, multipliers, centroids, splits."""

from __future__ import annotations

import numpy as np
import pytest

from kenning.errors import InvalidInput
from kenning.lifecycle.sectors import (
    NEAR_TIE,
    SectorInfo,
    assign_sector,
    descendants,
    effective_multiplier,
    plan_split,
    update_centroid,
)

DIM = 16


def unit(*weights: float) -> np.ndarray:
    vec = np.zeros(DIM)
    vec[: len(weights)] = weights
    return vec / np.linalg.norm(vec)


def sector(
    id: str,
    parent: str | None = None,
    *,
    topics: tuple[str, ...] = (),
    centroid: np.ndarray | None = None,
    size: int = 0,
    mult: float = 1.0,
    name: str | None = None,
) -> SectorInfo:
    return SectorInfo(
        id=id,
        name=name or id,
        parent_id=parent,
        decay_multiplier=mult,
        topics=topics,
        centroid=centroid,
        size=size,
        max_size=100,
    )


# Root > Work > Project_A > Meeting_Notes ; Root > Personal > Health
TREE = [
    sector("root"),
    sector("work", "root", topics=("work", "job"), centroid=unit(1, 0, 0), mult=0.5),
    sector("project_a", "work", topics=("project-a",), centroid=unit(1, 0.3, 0), mult=1.0),
    sector(
        "meetings", "project_a", topics=("Meeting_Notes", "standup"), centroid=unit(1, 0.3, 0.1)
    ),
    sector("personal", "root", topics=("personal",), centroid=unit(0, 0, 1), mult=2.0),
    sector("health", "personal", topics=("health", "standup"), centroid=unit(0, 0.2, 1), size=3),
]


# -- routing -------------------------------------------------------------------------------


def test_topics_route_to_the_deepest_matching_sector() -> None:
    assert assign_sector(["work"], unit(0, 0, 1), TREE) == "work"
    # "work" matches depth 1, "meeting notes" depth 3: the deeper wins, whatever the vector
    assert assign_sector(["Work", "#meeting-notes"], unit(0, 0, 1), TREE) == "meetings"


def test_topic_ties_prefer_more_shared_then_smaller_then_id() -> None:
    same_depth = [
        sector("b", topics=("x", "y"), size=10),
        sector("a", topics=("x",), size=1),
        sector("c", topics=("x", "y"), size=5),
        sector("d", topics=("x", "y"), size=5),
    ]
    assert assign_sector(["x", "y"], unit(1), same_depth) == "c"
    assert assign_sector(["x"], unit(1), same_depth) == "a"
    # "standup" is a topic of meetings (depth 3) and health (depth 2)
    assert assign_sector(["standup"], unit(0, 0, 1), TREE) == "meetings"


def test_without_topics_the_closest_centroid_wins() -> None:
    assert assign_sector([], unit(0, 0.1, 1), TREE) == "health"
    assert assign_sector(["unrelated"], unit(0, -0.2, 1), TREE) == "personal"


def test_centroid_near_ties_prefer_the_deeper_sector() -> None:
    parent = unit(1, 0, 0)
    child = unit(1, 0.2, 0)
    sectors = [
        sector("p", centroid=parent),
        sector("c", "p", centroid=child),
    ]
    query = unit(1, 0.02, 0)  # a little closer to the parent
    gap = float(query @ parent - query @ child)
    assert 0 < gap < NEAR_TIE
    assert assign_sector([], query, sectors) == "c"
    far_child = [sector("p", centroid=parent), sector("c", "p", centroid=unit(1, 0.8, 0))]
    assert assign_sector([], query, far_child) == "p"


def test_no_sector_below_min_similarity_or_without_centroids() -> None:
    assert assign_sector([], unit(0, 0, 0, 1), TREE) is None
    assert assign_sector([], unit(0, 0, 0, 1), TREE, min_similarity=-1.0) is not None
    assert assign_sector(["nothing"], unit(1), [sector("bare")]) is None
    assert assign_sector([], np.zeros(DIM), TREE) is None
    assert assign_sector([], unit(1), []) is None


# -- hierarchy -----------------------------------------------------------------------------


def test_descendants_include_itself_and_all_children() -> None:
    assert descendants("work", TREE) == {"work", "project_a", "meetings"}
    assert descendants("root", TREE) == {s.id for s in TREE}
    assert descendants("meetings", TREE) == {"meetings"}
    assert descendants("unknown", TREE) == {"unknown"}


def test_descendants_and_multipliers_survive_cycles() -> None:
    cyclic = [
        sector("a", "c", mult=2.0),
        sector("b", "a", mult=3.0),
        sector("c", "b", mult=5.0),
        sector("d", "c", mult=7.0),
        sector("self", "self", mult=4.0),
    ]
    assert descendants("a", cyclic) == {"a", "b", "c", "d"}
    assert descendants("self", cyclic) == {"self"}
    by_id = {s.id: s for s in cyclic}
    assert effective_multiplier("d", by_id) == pytest.approx(7 * 5 * 3 * 2)
    assert effective_multiplier("self", by_id) == pytest.approx(4.0)


def test_effective_multiplier_is_the_product_to_the_root() -> None:
    by_id = {s.id: s for s in TREE}
    assert effective_multiplier("meetings", by_id) == pytest.approx(0.5)
    assert effective_multiplier("health", by_id) == pytest.approx(2.0)
    assert effective_multiplier(None, by_id) == 1.0
    assert effective_multiplier("missing", by_id) == 1.0
    orphan = {"x": sector("x", "gone", mult=3.0)}
    assert effective_multiplier("x", orphan) == pytest.approx(3.0)


def test_sector_info_validates_and_normalises_topics() -> None:
    info = sector("s", topics=("Meeting_Notes", "#Ops", "ops", " "))
    assert info.topics == ("meeting notes", "ops")
    with pytest.raises(InvalidInput):
        sector("s", mult=0.0)
    with pytest.raises(InvalidInput):
        SectorInfo("s", "s", None, 1.0, (), None, size=-1, max_size=10)


# -- centroids -----------------------------------------------------------------------------


def test_update_centroid_is_a_renormalised_running_mean() -> None:
    first = update_centroid(None, 0, np.array([3.0, 0.0]))
    assert np.allclose(first, [1.0, 0.0])
    second = update_centroid(first, 1, np.array([0.0, 2.0]))
    assert np.allclose(second, np.array([1.0, 1.0]) / np.sqrt(2))
    heavy = update_centroid(np.array([1.0, 0.0]), 9, np.array([0.0, 1.0]))
    assert np.allclose(heavy, np.array([9.0, 1.0]) / np.linalg.norm([9.0, 1.0]))
    assert np.linalg.norm(heavy) == pytest.approx(1.0)
    with pytest.raises(InvalidInput):
        update_centroid(first, 1, np.zeros(2))
    with pytest.raises(InvalidInput):
        update_centroid(first, 1, np.ones(3))


# -- splits --------------------------------------------------------------------------------


def clusters(n: int = 12) -> list[tuple[str, np.ndarray, list[str], str]]:
    rng = np.random.default_rng(7)
    base_a, base_b = unit(1, 0.1, 0), unit(0.1, 1, 0)
    members = []
    for i in range(n):
        noise = rng.normal(scale=0.05, size=DIM)
        members.append(
            (f"m{i:02d}a", base_a + noise, ["work", "meetings"], f"Meeting notes from standup {i}")
        )
        noise = rng.normal(scale=0.05, size=DIM)
        members.append(
            (f"m{i:02d}b", base_b + noise, ["work", "billing"], f"Invoice sent to client {i}")
        )
    return members


def test_split_recovers_two_clear_clusters_with_names() -> None:
    members = clusters()
    plan = plan_split(sector("w", name="Work"), members)
    assert plan is not None and plan.parent_id == "w"
    assert len(plan.children) == 2
    groups = {k: {mid for mid, child in plan.assignment.items() if child == k} for k in (0, 1)}
    a_ids = {m[0] for m in members if m[0].endswith("a")}
    b_ids = {m[0] for m in members if m[0].endswith("b")}
    assert {frozenset(groups[0]), frozenset(groups[1])} == {frozenset(a_ids), frozenset(b_ids)}
    named = {child[0]: child for child in plan.children}
    assert set(named) == {"Work/meetings", "Work/billing"}
    assert named["Work/meetings"][1] == ("meetings",)
    index_of_meetings = [c[0] for c in plan.children].index("Work/meetings")
    assert all(plan.assignment[i] == index_of_meetings for i in a_ids)
    for _, _, centre in plan.children:
        assert np.linalg.norm(centre) == pytest.approx(1.0)
    assert float(named["Work/meetings"][2] @ unit(1, 0.1, 0)) > 0.95


def test_split_is_deterministic_and_order_independent() -> None:
    members = clusters()
    one = plan_split(sector("w", name="Work"), members)
    two = plan_split(sector("w", name="Work"), list(reversed(members)))
    assert one is not None and two is not None
    assert dict(one.assignment) == dict(two.assignment)
    assert [c[0] for c in one.children] == [c[0] for c in two.children]


def test_split_names_fall_back_to_content_words() -> None:
    members = [(mid, vec, ["work"], content) for mid, vec, _, content in clusters()]
    plan = plan_split(sector("w", name="Work"), members)
    assert plan is not None
    names = sorted(c[0] for c in plan.children)
    assert names == ["Work/client", "Work/meeting"]
    topics = {c[0]: c[1] for c in plan.children}
    assert set(topics["Work/meeting"]) == {"meeting", "notes", "standup"}
    assert "work" not in topics["Work/client"]


def test_no_split_of_a_degenerate_sector() -> None:
    same = [(f"m{i}", unit(1, 1), ["x"], "same thing") for i in range(10)]
    assert plan_split(sector("s"), same) is None
    assert plan_split(sector("s"), clusters()[:3]) is None  # fewer than 2 * min per side
    lonely = [(f"m{i}", unit(1, 0), ["x"], "a") for i in range(9)] + [
        ("odd", unit(0, 1), ["y"], "b")
    ]
    assert plan_split(sector("s"), lonely) is None  # one side would hold a single member
    assert plan_split(sector("s"), lonely, min_child_size=1) is not None
    assert plan_split(sector("s"), []) is None


def test_split_rejects_mixed_dimensions() -> None:
    members: list[tuple[str, np.ndarray, list[str], str]] = [
        ("a", np.ones(3), [], ""),
        ("b", np.ones(4), [], ""),
        ("c", np.ones(3), [], ""),
    ]
    with pytest.raises(InvalidInput):
        plan_split(sector("s"), [*members, ("d", np.ones(3), [], "")])
