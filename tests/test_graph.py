"""The memory graph on every store: projection in the write, lifecycle, reads, doors.

Raw table counts are read past kenning (``db_rows``), so "nothing is left"
means nothing in the database, not merely nothing returned.
"""

from __future__ import annotations

import asyncio
import math
import re
import threading
from collections.abc import Callable, Sequence
from datetime import timedelta
from typing import Any

import pytest
from conftest import T0

from kenning import (
    AsyncMemory,
    ConfigError,
    Conflict,
    InvalidInput,
    Memory,
    NotFound,
    PermissionDenied,
    Principal,
    Settings,
)
from kenning.aio import GRAPH_METHODS
from kenning.graph.api import Graph, path_strength
from kenning.graph.extract import Extractor, mention
from kenning.graph.model import EntityMention, GraphEdge
from kenning.graph.resolve import normalise_name

Rows = Callable[..., list[Any]]
GRAPH_TABLES = ("entities", "entity_aliases", "mentions", "links")


def graph_rows(db_rows: Rows, mem: Memory) -> dict[str, int]:
    return {
        t: int(
            db_rows(
                mem,
                {"sqlite": f"SELECT COUNT(*) FROM {t}", "postgresql": f"SELECT COUNT(*) FROM {t}"},
            )[0][0]
        )
        for t in GRAPH_TABLES
    }


class Names(Extractor):
    """Deterministic test extractor: every capitalised word is an entity.

    The graph's mechanics are tested here, not NER quality (that is
    ``test_graph_extract.py``), so the names found must not depend on a model.
    """

    def extract_batch(self, texts: Sequence[str]) -> list[list[EntityMention]]:
        out = []
        for text in texts:
            found: dict[str, EntityMention] = {}
            for word in re.findall(r"\b[A-Z][\w'’]*", text):
                label = re.sub(r"(?:'s|’s)$", "", word)
                found.setdefault(normalise_name(label), mention(label))
            out.append(list(found.values()))
        return out


def quiet(**kw: Any) -> Settings:
    """Settings with only the graph parts a test asks for."""
    base = {"graph_co_occurs_max": 0, "graph_semantic_max": 0, "graph_temporal_spine": False}
    return Settings(**{**base, **kw})


def edges_of(mem: Memory, ids: list[str], relation: str | None = None) -> list[GraphEdge]:
    view = mem.policy.readable(mem.principal)
    return mem.store.graph_edges(ids, view, None if relation is None else {relation})


def edge_set(mem: Memory, ids: list[str], skip: tuple[str, ...] = ()) -> set[tuple[str, ...]]:
    return {(e.src, e.dst, e.relation) for e in edges_of(mem, ids) if e.relation not in skip}


# ---------------------------------------------------------------------------- write side


def test_a_failing_write_leaves_no_graph_rows(
    make_memory: Callable[..., Memory], db_rows: Rows
) -> None:
    mem = make_memory(extractor=Names(), settings=Settings(graph_semantic_min=0.0))
    mem.remember("Alice keeps the Berlin keys", key="keys", tags=["home"])
    before = graph_rows(db_rows, mem)
    items = [{"content": f"Bob visits Paris on day {i}", "episode_id": "trip"} for i in range(5)]
    items.append({"content": "Carol owns the keys now", "key": "keys"})  # key conflict
    with pytest.raises(Conflict):
        mem.remember_many(items)
    assert graph_rows(db_rows, mem) == before
    with pytest.raises(NotFound):
        mem.graph.entity("Bob")


def test_co_occurs_is_bounded_for_a_batch_of_fifty(make_memory: Callable[..., Memory]) -> None:
    mem = make_memory(extractor=Names(), settings=quiet(graph_co_occurs_max=4))
    items = [
        {"content": f"Note number {i} about item {i * 7}", "scope": "team:a"} for i in range(50)
    ]
    items += [{"content": f"Other note {i}", "scope": "team:b"} for i in range(3)]
    records = mem.remember_many(items)
    ids = [r.id for r in records]
    edges = edges_of(mem, ids, "co_occurs")
    degree: dict[str, int] = {}
    for e in edges:
        degree[e.src] = degree.get(e.src, 0) + 1
        degree[e.dst] = degree.get(e.dst, 0) + 1
    assert max(degree.values()) <= 4
    assert len(edges) == (50 * 2 - 3) + (3 * 2 - 3)  # window of 2 ahead, per scope
    scope_of = {r.id: r.scope for r in records}
    assert all(scope_of[e.src] == scope_of[e.dst] for e in edges)
    assert all(e.src < e.dst for e in edges)  # symmetric: stored once


def test_temporal_next_follows_event_time_within_an_episode_and_across_batches(
    make_memory: Callable[..., Memory],
) -> None:
    mem = make_memory(extractor=Names(), settings=quiet(graph_temporal_spine=True))
    at = [T0 - timedelta(days=10 - i) for i in range(6)]
    first = mem.remember_many(
        [
            {"content": "third event", "episode_id": "e1", "event_at": at[2]},
            {"content": "first event", "episode_id": "e1", "event_at": at[0]},
            {"content": "second event", "episode_id": "e1", "event_at": at[1]},
            {"content": "other episode", "episode_id": "e2", "event_at": at[1]},
            {"content": "session only", "session_id": "s1", "event_at": at[0]},
            {"content": "no episode at all", "event_at": at[0]},
        ]
    )
    later = mem.remember_many(
        [
            {"content": "fifth event", "episode_id": "e1", "event_at": at[4]},
            {"content": "fourth event", "episode_id": "e1", "event_at": at[3]},
            {"content": "session again", "session_id": "s1", "event_at": at[5]},
            {
                "content": "same episode, other scope",
                "episode_id": "e1",
                "event_at": at[5],
                "scope": "team:x",
            },
        ]
    )
    name = {r.id: r.content for r in [*first, *later]}
    got = {(name[e.src], name[e.dst]) for e in edges_of(mem, list(name), "temporal_next")}
    assert got == {
        ("first event", "second event"),
        ("second event", "third event"),
        ("third event", "fourth event"),
        ("fourth event", "fifth event"),
        ("session only", "session again"),
    }


def test_temporal_next_follows_the_batch_order_when_event_times_tie(
    make_memory: Callable[..., Memory],
) -> None:
    """Turns of one session share its date: the chain runs in the order they were
    given (ids count up within a millisecond), the same in every run."""
    mem = make_memory(extractor=Names(), settings=quiet(graph_temporal_spine=True))
    turns = [f"turn {i} of the trip talk" for i in range(40)]
    made = mem.remember_many([{"content": t, "session_id": "s1", "event_at": T0} for t in turns])
    assert [r.id for r in made] == sorted(r.id for r in made)
    name = {r.id: r.content for r in made}
    got = {(name[e.src], name[e.dst]) for e in edges_of(mem, list(name), "temporal_next")}
    assert got == set(zip(turns, turns[1:], strict=False))


def test_semantic_neighbor_threshold_and_cap(make_memory: Callable[..., Memory]) -> None:
    mem = make_memory(
        extractor=Names(), settings=quiet(graph_semantic_max=2, graph_semantic_min=0.8)
    )
    base = mem.remember("Caroline adopted a rescue dog named Biscuit last spring")
    unrelated = mem.remember("The quarterly tax filing deadline moved to April")
    close = [
        mem.remember(t)
        for t in (
            "Last spring Caroline adopted Biscuit, a rescue dog",
            "Caroline's rescue dog Biscuit was adopted last spring",
            "In spring Caroline adopted the rescue dog Biscuit",
        )
    ]
    view = mem.policy.readable(mem.principal)
    edges = mem.store.graph_edges([r.id for r in [base, unrelated, *close]], view)
    assert edges and all(e.relation == "semantic_neighbor" and e.weight >= 0.8 for e in edges)
    assert unrelated.id not in {x for e in edges for x in (e.src, e.dst)}
    earlier = [base.id, unrelated.id]
    for r in close:  # each new memory links to at most 2 earlier ones
        mine = {e.other(r.id) for e in edges if r.id in (e.src, e.dst)}
        assert 1 <= len(mine & set(earlier)) <= 2
        earlier.append(r.id)
    strict = make_memory("strict", settings=quiet(graph_semantic_max=3, graph_semantic_min=0.99))
    strict.remember("Caroline adopted a rescue dog named Biscuit last spring")
    again = strict.remember("Last spring Caroline adopted Biscuit, a rescue dog")
    assert edges_of(strict, [again.id]) == []


def test_update_refreshes_mentions_and_content_links_but_keeps_api_links(
    make_memory: Callable[..., Memory], db_rows: Rows
) -> None:
    mem = make_memory(
        extractor=Names(), settings=quiet(graph_semantic_max=3, graph_semantic_min=0.8)
    )
    a = mem.remember("Alice met Bob at the harbour in Lisbon")
    twin = mem.remember("Alice and Bob met at the Lisbon harbour")
    other = mem.remember("Deploys happen every Thursday")
    assert {e.relation for e in edges_of(mem, [a.id])} == {"semantic_neighbor"}
    mem.graph.link(a.id, other.id, "causes", 0.5)
    assert mem.graph.entity("Alice").entity.mentions == 2
    mem.update(a.id, content="Carol phoned Dave about Thursday deploys", tags=["ops"])
    assert mem.graph.entity("Alice").entity.mentions == 1
    assert mem.graph.entity("Carol").entity.mentions == 1
    assert mem.graph.entity("ops").entity.kind.value == "topic"
    assert mem.graph.entity("Lisbon").entity.mentions == 1  # only the twin now
    rels = {(e.relation, e.other(a.id)) for e in edges_of(mem, [a.id])}
    assert ("causes", other.id) in rels and ("semantic_neighbor", twin.id) not in rels
    mem.update(twin.id, content="Nothing of note here")
    with pytest.raises(NotFound):
        mem.graph.entity("Lisbon")
    norms = {
        r[0]
        for r in db_rows(
            mem, {"sqlite": "SELECT norm FROM entities", "postgresql": "SELECT norm FROM entities"}
        )
    }
    assert "lisbon" not in norms and "alice" not in norms and "carol" in norms


def test_archive_hides_edges_and_restore_brings_them_back(
    make_memory: Callable[..., Memory],
) -> None:
    mem = make_memory(extractor=Names(), settings=quiet(graph_co_occurs_max=4))
    a, b, c = mem.remember_many([{"content": f"Zed note {i}"} for i in range(3)])
    assert len(mem.graph.neighbours(a.id)) == 2
    before = sum(s.relationships_count for s in mem.stats())
    mem.archive(b.id)
    assert [n.memory.id for n in mem.graph.neighbours(a.id)] == [c.id]
    assert mem.graph.neighbours(b.id) == []
    assert sum(s.relationships_count for s in mem.stats()) == before - 2
    assert mem.graph.entity("Zed").entity.mentions == 2
    mem.restore(b.id)
    assert {n.memory.id for n in mem.graph.neighbours(a.id)} == {b.id, c.id}
    assert mem.graph.entity("Zed").entity.mentions == 3
    assert sum(s.relationships_count for s in mem.stats()) == before


def test_forget_leaves_no_link_mention_entity_or_alias(
    make_memory: Callable[..., Memory], db_rows: Rows
) -> None:
    mem = make_memory(extractor=Names(), settings=Settings(graph_semantic_min=0.0))
    a, b = mem.remember_many(
        [
            {"content": "Priya visited Oslo with Quentin", "tags": ["travel"], "episode_id": "e"},
            {"content": "Priya wrote about Oslo", "episode_id": "e"},
        ]
    )
    c = mem.remember("Quentin likes Oslo in winter", episode_id="e")
    mem.graph.link(c.id, a.id, "elaborates")
    mem.graph.alias("Quentin", "Q")
    assert mem.graph.entity("q").entity.label == "Quentin"
    mem.forget(a.id)
    assert mem.graph.entity("Q").entity.mentions == 1  # c still mentions Quentin
    with pytest.raises(NotFound):
        mem.graph.entity("travel")
    mem.forget(c.id)
    with pytest.raises(NotFound):
        mem.graph.entity("Q")
    rows = graph_rows(db_rows, mem)
    assert rows["links"] == 0 and rows["entity_aliases"] == 0
    assert rows["mentions"] == 2  # b: Priya, Oslo
    labels = db_rows(
        mem,
        {
            "sqlite": "SELECT label FROM entities ORDER BY 1",
            "postgresql": "SELECT label FROM entities ORDER BY 1",
        },
    )
    assert [r[0] for r in labels] == ["Oslo", "Priya"]
    mem.forget(b.id)
    assert graph_rows(db_rows, mem) == dict.fromkeys(GRAPH_TABLES, 0)


def test_possessives_and_case_resolve_to_one_entity(
    make_memory: Callable[..., Memory], db_rows: Rows
) -> None:
    mem = make_memory(extractor=Names(), settings=quiet())
    mem.remember("Caroline went hiking")
    mem.remember("We borrowed Caroline's tent")
    mem.remember("CAROLINE said hello", tags=["Caroline"])
    found = mem.store.find_entities("default", ["caroline’s"], mem.policy.readable(mem.principal))
    assert [(e.kind.value, e.norm, e.mentions) for e in found] == [
        ("entity", "caroline", 3),
        ("topic", "caroline", 1),
    ]
    rows = db_rows(
        mem,
        {
            "sqlite": "SELECT kind FROM entities WHERE norm = 'caroline'",
            "postgresql": "SELECT kind FROM entities WHERE norm = 'caroline'",
        },
    )
    assert sorted(r[0] for r in rows) == ["entity", "topic"]


def test_graph_disabled_projects_nothing(make_memory: Callable[..., Memory], db_rows: Rows) -> None:
    mem = make_memory(extractor=Names(), settings=Settings(graph_enabled=False))
    a, b = mem.remember_many(
        [
            {"content": "Alice and Bob", "tags": ["x"], "episode_id": "e"},
            {"content": "Alice again", "episode_id": "e"},
        ]
    )
    assert graph_rows(db_rows, mem) == dict.fromkeys(GRAPH_TABLES, 0)
    assert mem.graph.neighbours(a.id) == [] and mem.graph.paths(a.id, b.id) == []
    with pytest.raises(NotFound):
        mem.graph.entity("Alice")
    with pytest.raises(ConfigError):
        mem.graph.link(a.id, b.id, "causes")
    assert all(s.entities_count == 0 for s in mem.stats())


# ---------------------------------------------------------------------------- reads


def test_neighbours_entity_view_and_stats(make_memory: Callable[..., Memory]) -> None:
    mem = make_memory(extractor=Names(), settings=quiet(graph_co_occurs_max=2))
    a, b, c = mem.remember_many(
        [
            {"content": "Nadia plans the Kyoto trip", "tags": ["travel"]},
            {"content": "Nadia booked a Kyoto ryokan", "tags": ["travel"]},
            {"content": "Omar waters the plants"},
        ]
    )
    got = mem.graph.neighbours(a.id)
    assert [(n.memory.id, n.edge.relation if n.edge else None) for n in got] == [
        (b.id, "co_occurs")
    ]
    assert mem.graph.neighbours(a.id, relations=["causes"]) == []
    by_entity = mem.graph.neighbours(entity="nadia's")
    assert {n.memory.id for n in by_entity} == {a.id, b.id} and by_entity[0].edge is None
    view = mem.graph.entity("Kyoto")
    assert view.entity.mentions == 2 and {m.id for m in view.memories} == {a.id, b.id}
    related = {e.label: n for e, n in view.related}
    assert related == {"Nadia": 2, "travel": 2}
    (layer,) = mem.stats()
    assert layer.entities_count == 4 and layer.relationships_count == 2  # Nadia Kyoto travel Omar
    assert c.id not in {n.memory.id for n in mem.graph.neighbours(entity="travel")}


def test_paths_strength_order_and_hop_limit(make_memory: Callable[..., Memory]) -> None:
    mem = make_memory(extractor=Names(), settings=quiet())
    a, b, c, d, e = mem.remember_many([{"content": f"step {i}"} for i in range(5)])
    g = mem.graph
    g.link(a.id, b.id, "causes", 0.9)
    g.link(b.id, c.id, "elaborates", 0.8)
    g.link(c.id, d.id, "causes", 1.0)
    g.link(a.id, e.id, "related", 1.0)
    g.link(e.id, d.id, "temporal_next", 0.5)  # e -> d
    paths = g.paths(a.id, d.id, max_hops=3)
    assert [p.nodes for p in paths] == [(a.id, b.id, c.id, d.id), (a.id, e.id, d.id)]
    assert paths[0].strength == pytest.approx(0.9 * 0.9 * 0.8 * 0.9 * 1.0 * 0.9)
    assert paths[1].strength == pytest.approx(1.0 * 0.5 * 0.5 * 0.7)
    assert paths[0].relations == ("causes", "elaborates", "causes")
    assert g.paths(a.id, d.id, max_hops=2) == [paths[1]]
    assert g.paths(a.id, d.id, max_hops=1) == []
    back = g.paths(d.id, e.id, max_hops=1)
    assert back[0].forward == (False,)
    assert g.paths(a.id, d.id, limit=1) == paths[:1]
    mem.archive(e.id)
    assert [p.nodes for p in g.paths(a.id, d.id, max_hops=6)] == [(a.id, b.id, c.id, d.id)]
    assert path_strength([GraphEdge(a.id, b.id, "causes", 0.5)]) == pytest.approx(0.45)


# ---------------------------------------------------------------------------- rebuild


def test_rebuild_reproduces_the_projection_minus_co_occurs(
    make_memory: Callable[..., Memory], db_rows: Rows
) -> None:
    mem = make_memory(extractor=Names(), settings=Settings(graph_semantic_min=0.8))
    texts = [
        ("Ingrid adopted a rescue dog named Pepper", "e1"),
        ("Pepper the rescue dog was adopted by Ingrid", "e1"),
        ("The Tokyo office opens in March", "e2"),
        ("Our Tokyo office will open in March", "e2"),
        ("Lars fixed the boiler", None),
    ]
    records = []
    for n, (text, ep) in enumerate(texts):  # one at a time: distinct write batches
        records.append(
            mem.remember(text, episode_id=ep, tags=["t"], event_at=T0 - timedelta(hours=10 - n))
        )
    # batch mates get co_occurs, not semantic links: keep them unlike each other
    batch = mem.remember_many(
        [
            {"content": "Ingrid walks Pepper", "episode_id": "e1"},
            {"content": "Taxes are due in April", "episode_id": "e1"},
        ]
    )
    ids = [r.id for r in [*records, *batch]]
    mem.graph.link(ids[0], ids[4], "causes")
    want = edge_set(mem, ids, skip=("co_occurs", "causes"))
    assert {r for _, _, r in want} == {"semantic_neighbor", "temporal_next"}
    view = mem.policy.readable(mem.principal)
    mentions = mem.store.graph_mentions(ids, view)
    report = mem.graph.rebuild(clear_first=True)
    assert report.cleared and report.memories == 7 and "co_occurs" in report.not_rebuilt
    assert edge_set(mem, ids) == want
    assert mem.store.graph_mentions(ids, view) == mentions
    # without clear_first: additive, so co_occurs and typed links survive
    mem.graph.link(ids[0], ids[4], "causes")
    again = mem.graph.rebuild()
    assert again.links_written == 0
    assert edge_set(mem, ids, skip=("causes",)) == want
    assert "causes" in {e.relation for e in edges_of(mem, ids)}
    rows = graph_rows(db_rows, mem)
    assert rows["links"] == len(want) + 1


def test_rebuild_needs_write_access(make_memory: Callable[..., Memory]) -> None:
    mem = make_memory(extractor=Names())
    mem.remember("Team note", scope="team:red")
    member = Principal.member("mia")
    with pytest.raises(PermissionDenied):
        mem.graph.rebuild("team:red", principal=member)
    report = mem.graph.rebuild(principal=member)  # her own scopes: nothing there
    assert report.memories == 0


# ---------------------------------------------------------------------------- bad input


def test_bad_input_is_rejected_and_writes_nothing(
    make_memory: Callable[..., Memory], db_rows: Rows
) -> None:
    mem = make_memory(extractor=Names(), settings=quiet())
    a, b = mem.remember_many([{"content": "Alpha"}, {"content": "Beta"}])
    t = mem.remember("Team thing", scope="team:red")
    secret = mem.remember("Hidden", scope="user:zoe")
    o1, o2 = mem.remember_many(
        [
            {"content": "Org one", "scope": "org:default"},
            {"content": "Org two", "scope": "org:default"},
        ]
    )
    mia = Principal.member("mia", teams={"red": "member"})
    before = graph_rows(db_rows, mem)
    g = mem.graph
    cases: list[tuple[type[Exception], Callable[[], Any]]] = [
        (NotFound, lambda: g.neighbours("nope")),
        (NotFound, lambda: g.neighbours(secret.id, principal=mia)),
        (NotFound, lambda: g.paths(t.id, secret.id, principal=mia)),
        (NotFound, lambda: g.link(t.id, secret.id, "causes", principal=mia)),
        (NotFound, lambda: g.entity("Nobody")),
        (InvalidInput, lambda: g.neighbours()),
        (InvalidInput, lambda: g.neighbours(a.id, entity="Alpha")),
        (InvalidInput, lambda: g.neighbours(a.id, relations=["friend_of"])),
        (InvalidInput, lambda: g.neighbours(a.id, limit=0)),
        (InvalidInput, lambda: g.neighbours(entity="")),
        (InvalidInput, lambda: g.link(a.id, b.id, "befriends")),
        (InvalidInput, lambda: g.link(a.id, b.id, "causes", 0)),
        (InvalidInput, lambda: g.link(a.id, b.id, "causes", 1.5)),
        (InvalidInput, lambda: g.link(a.id, b.id, "causes", math.nan)),
        (InvalidInput, lambda: g.link(a.id, b.id, "causes", True)),
        (InvalidInput, lambda: g.link(a.id, a.id, "causes")),
        (InvalidInput, lambda: g.link(a.id, t.id, "causes")),  # two scopes
        (
            PermissionDenied,
            lambda: g.link(o1.id, o2.id, "causes", principal=mia),
        ),
        (InvalidInput, lambda: g.paths(a.id, b.id, max_hops=0)),
        (InvalidInput, lambda: g.paths(a.id, b.id, max_hops=7)),
        (InvalidInput, lambda: g.paths(a.id, b.id, max_hops="3")),  # type: ignore[arg-type]
        (InvalidInput, lambda: g.paths(a.id, a.id)),
        (InvalidInput, lambda: g.paths(a.id, b.id, limit=-1)),
        (InvalidInput, lambda: g.rebuild(clear_first="yes")),  # type: ignore[arg-type]
        (InvalidInput, lambda: g.alias("Alpha", "!!!")),
    ]
    for kind, call in cases:
        with pytest.raises(kind):
            call()
    assert graph_rows(db_rows, mem) == before


# ---------------------------------------------------------------------------- async parity


def test_async_graph_mirrors_the_sync_graph(make_memory: Callable[..., Memory]) -> None:
    import inspect

    mem = make_memory(extractor=Names(), settings=quiet(graph_co_occurs_max=2))
    amem = AsyncMemory(memory=mem)
    for name in GRAPH_METHODS:
        assert inspect.signature(getattr(type(amem.graph), name)) == inspect.signature(
            getattr(Graph, name)
        )
        assert getattr(type(amem.graph), name).__doc__ == getattr(Graph, name).__doc__
    public = {n for n, v in vars(Graph).items() if not n.startswith("_") and callable(v)}
    assert public == set(GRAPH_METHODS)
    a, b = mem.remember_many([{"content": "Xena one"}, {"content": "Xena two"}])

    async def run() -> tuple[Any, ...]:
        return (
            await amem.graph.neighbours(a.id),
            await amem.graph.entity("Xena"),
            await amem.graph.paths(a.id, b.id),
        )

    got = asyncio.run(run())
    assert got == (
        mem.graph.neighbours(a.id),
        mem.graph.entity("Xena"),
        mem.graph.paths(a.id, b.id),
    )


def pairs(edges: list[GraphEdge]) -> set[frozenset[str]]:
    return {frozenset((e.src, e.dst)) for e in edges}


def pairs_of(*ends: tuple[Any, Any]) -> set[frozenset[str]]:
    return {frozenset((x.id, y.id)) for x, y in ends}


def test_edges_within_a_set_are_the_links_between_its_members(
    make_memory: Callable[..., Memory],
) -> None:
    mem = make_memory(extractor=Names(), settings=quiet(graph_co_occurs_max=4))
    a, b, c, d = mem.remember_many([{"content": f"Zed note {i}"} for i in range(4)])
    view = mem.policy.readable(mem.principal)
    inner = mem.store.graph_edges([a.id, b.id, c.id], view, within=True)
    assert pairs(inner) == pairs_of((a, b), (a, c), (b, c))
    touching = mem.store.graph_edges([a.id, b.id, c.id], view)
    assert pairs(touching) - pairs(inner) == pairs_of((b, d), (c, d))
    mem.archive(b.id)  # an archived end drops out of both
    kept = mem.store.graph_edges([a.id, b.id, c.id], view, within=True)
    assert pairs(kept) == pairs_of((a, c))
    other = Principal.member("stranger")
    assert mem.store.graph_edges([a.id, c.id], mem.policy.readable(other), within=True) == []


def test_recall_expansion_and_paths_reach_only_the_readers_memories(
    make_memory: Callable[..., Memory],
) -> None:
    wide_open = Settings(
        candidates_dense=1,
        candidates_keyword=1,
        graph_co_occurs_max=0,
        graph_semantic_max=0,
        graph={"relax_gamma": 0.3, "seed_floor": 0.0, "seed_sim_delta": 2.0},  # type: ignore[arg-type]
    )
    mem = make_memory(extractor=Names(), settings=wide_open)
    ann, bob = Principal.member("ann"), Principal.member("bob")
    chain = ["Ann packed for the sailing trip", "the ferry left at dawn", "we reached the island"]
    mine = mem.remember_many([{"content": t, "session_id": "trip"} for t in chain], principal=ann)
    theirs = mem.remember_many([{"content": t, "session_id": "trip"} for t in chain], principal=bob)
    result = mem.recall("sailing trip", k=1, principal=ann, explain=True)  # one candidate a side
    reached = {r.memory.id for h in result for r in h.related}
    assert reached and reached <= {m.id for m in mine}
    assert result.graph["admitted"] >= 1
    shown = {h.memory.id for h in result} | reached
    assert not shown & {m.id for m in theirs}
    assert all(set(p.nodes) <= {m.id for m in mine} for p in result.paths)


def test_recall_is_fail_open_when_the_graph_breaks(
    make_memory: Callable[..., Memory], caplog: pytest.LogCaptureFixture
) -> None:
    mem = make_memory(extractor=Names(), settings=quiet(graph_co_occurs_max=4))
    mem.remember_many([{"content": f"Zed sailing note {i}"} for i in range(4)])
    before = [h.memory.id for h in mem.recall("sailing note", k=4)]
    no_graph = mem.settings.model_copy(
        update={"graph": mem.settings.graph.model_copy(update={"rerank_enabled": False})}
    )

    def broken(*args: Any, **kwargs: Any) -> list[GraphEdge]:
        raise RuntimeError("graph store down")

    mem.store.graph_edges = broken  # type: ignore[method-assign]
    with caplog.at_level("ERROR", logger="kenning.recall"):
        result = mem.recall("sailing note", k=4, explain=True)
    assert "graph post-processing failed" in caplog.text
    assert result.graph == {"error": 1.0}
    full = mem.settings
    mem.settings = no_graph
    try:
        plain = [h.memory.id for h in mem.recall("sailing note", k=4)]
    finally:
        mem.settings = full
    assert [h.memory.id for h in result] == plain  # the pre-graph order
    assert sorted(before) == sorted(plain)


class Breaks(Names):
    """Extracts on a worker thread beside the embedding, then fails."""

    def __init__(self) -> None:
        self.threads: list[str] = []

    def extract_batch(self, texts: Sequence[str]) -> list[list[EntityMention]]:
        self.threads.append(threading.current_thread().name)
        if any("boom" in t for t in texts):
            raise RuntimeError("extractor down")
        return super().extract_batch(texts)


def test_extraction_beside_the_embedding_feeds_the_graph_and_its_failure_writes_nothing(
    make_memory: Callable[..., Memory], db_counts: Callable[[Memory], dict[str, int]]
) -> None:
    extractor = Breaks()
    mem = make_memory(extractor=extractor, settings=quiet())
    first = mem.remember_many([{"content": "Caroline met Melanie"}, {"content": "Melanie paints"}])
    assert extractor.threads and all(n.startswith("kenning-extract") for n in extractor.threads)
    names = {e.label for e in mem.graph.entities(first[0].id)}
    assert names == {"Caroline", "Melanie"}
    before = db_counts(mem)
    with pytest.raises(RuntimeError, match="extractor down"):
        mem.remember_many([{"content": "Fine text"}, {"content": "boom goes the extractor"}])
    assert db_counts(mem) == before  # all or nothing
