"""Property: nothing a principal gets back lies outside ``AccessPolicy.readable(principal)``.

Hypothesis draws principals of two organizations (random roles, team roles,
personas, persona leads, active persona and recall mode), memories written by
random principals into random scopes (refused exactly when the policy says
so), random archive/forget attempts, then checks every read door: recall
(default view, ``"all"``, named scopes), get, list, history and stats, and the
graph: edges, neighbours, entities (names, memories, counts), paths and the
graph statistics count nothing outside the reader's active readable memories.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from kenning import (
    Memory,
    NotFound,
    PermissionDenied,
    Principal,
    RecallMode,
    Role,
    Scope,
    Status,
    TeamRole,
)
from kenning.access import AccessPolicy
from kenning.config import GraphRead, Lifecycle, Settings
from kenning.graph.extract import create_extractor
from kenning.models import LAYER_OF

ORGS = ["o1", "o2"]
USERS = ["u1", "u2", "u3"]
TEAMS = ["t1", "t2"]
PERSONAS = ["p1", "p2"]
TEXTS = [
    "The quarterly budget was approved by finance",
    "Deploys happen every Thursday afternoon",
    "The office wifi password rotates monthly",
    "Customer Acme prefers email over phone calls",
    "The on-call engineer carries the pager this week",
    "Lunch is catered on Fridays",
    "The roadmap puts search improvements first",
    "Security training is due before June",
]
QUERIES = ["budget approval", "when do we deploy", "customer contact preference", "roadmap"]

UNIVERSE = (
    [Scope.user(u) for u in USERS]
    + [Scope.persona_user(p, u) for p in PERSONAS for u in USERS]
    + [Scope.team(t) for t in TEAMS]
    + [Scope.persona(p) for p in PERSONAS]
    + [Scope.org(o) for o in ORGS]
)
POLICY = AccessPolicy()


@st.composite
def principals(draw: st.DrawFn, org: str | None = None) -> Principal:
    org = org or draw(st.sampled_from(ORGS))
    user = draw(st.sampled_from(USERS))
    role = draw(st.sampled_from([Role.MEMBER, Role.MEMBER, Role.TEAM_LEAD, Role.ADMIN]))
    teams = draw(
        st.dictionaries(st.sampled_from(TEAMS), st.sampled_from(list(TeamRole)), max_size=2)
    )
    personas = draw(st.frozensets(st.sampled_from(PERSONAS)))
    leads = draw(st.frozensets(st.sampled_from(PERSONAS)))
    active = draw(st.sampled_from([None, *sorted(personas)]))
    mode = draw(st.sampled_from(list(RecallMode)))
    return Principal(
        org_id=org,
        user_id=user,
        roles=frozenset({role}),
        teams=teams,
        personas=personas,
        persona_leads=leads,
        active_persona=active,
        mode=mode,
    )


@dataclass
class Stored:
    org: str
    scope: Scope
    status: Status = Status.ACTIVE
    deleted: bool = False
    text: str = ""


@dataclass(frozen=True)
class World:
    people: list[Principal]
    writes: list[tuple[int, int, int]]  # (writer, scope index, text index)
    changes: list[tuple[int, int, str]]  # (actor, write index, "archive" | "forget")
    named: list[list[int]]  # per person: scope indices to name in a recall


@st.composite
def worlds(draw: st.DrawFn) -> World:
    # one principal of each organization, then any
    people = [draw(principals("o1")), draw(principals("o2"))]
    people += draw(st.lists(principals(), max_size=3))
    n = len(people)
    writable = [
        [
            i
            for i, s in enumerate(UNIVERSE)
            if POLICY.can_write(p, s) and not (s.kind.value == "org" and s.owner_id != p.org_id)
        ]
        for p in people
    ]
    writes = []
    for _ in range(draw(st.integers(1, 30))):
        writer = draw(st.integers(0, n - 1))
        # mostly scopes the writer may write (so there is data), sometimes any scope
        if writable[writer] and draw(st.integers(0, 3)):
            scope_i = draw(st.sampled_from(writable[writer]))
        else:
            scope_i = draw(st.integers(0, len(UNIVERSE) - 1))
        writes.append((writer, scope_i, draw(st.integers(0, len(TEXTS) - 1))))
    changes = draw(
        st.lists(
            st.tuples(
                st.integers(0, n - 1),
                st.integers(0, len(writes) - 1),
                st.sampled_from(["archive", "forget"]),
            ),
            max_size=6,
        )
    )
    named = [
        draw(st.lists(st.integers(0, len(UNIVERSE) - 1), min_size=1, max_size=3)) for _ in people
    ]
    return World(people, writes, changes, named)


def _check_reads(mem: Memory, who: Principal, stored: dict[str, Stored], named: list[int]) -> None:
    readable = POLICY.readable(who)
    visible = {i for i, s in stored.items() if not s.deleted and readable.allows(s.org, s.scope)}
    active = {i for i in visible if stored[i].status is Status.ACTIVE}

    def allowed(org: str, scope: Scope) -> bool:
        return readable.allows(org, scope)

    # recall: the default view, every readable scope, and named scopes
    query = QUERIES[len(named) % len(QUERIES)]
    default_view = POLICY.resolve(who, None)
    hits = mem.recall(query, k=100, principal=who)
    for h in hits:
        assert allowed(h.memory.org_id, h.memory.scope), (who, h.memory.scope)
        assert default_view.allows(h.memory.org_id, h.memory.scope)
        assert h.memory.status is Status.ACTIVE
    assert {h.memory.id for h in hits} == {
        i for i in active if default_view.allows(stored[i].org, stored[i].scope)
    }
    everything = mem.recall(query, k=100, scopes="all", principal=who, explain=True)
    assert {h.memory.id for h in everything} == active
    # graph expansion (on in this test) and relation paths stay inside too
    for result in (hits, everything):
        for h in result:
            for r in h.related:
                assert r.memory.id in active, (who, r.memory.scope)
                assert r.via is not None and set(r.via.nodes) <= active
    for path in everything.paths:
        assert set(path.nodes) <= active, (who, path)
    # a pool of two candidates, so expansion has memories outside it to reach
    full = mem.settings
    narrow_pool = full.retrieval.model_copy(update={"candidates_dense": 1, "candidates_keyword": 1})
    mem.settings = full.model_copy(update={"retrieval": narrow_pool})
    try:
        narrow = mem.recall(query, k=100, scopes="all", principal=who, explain=True)
    finally:
        mem.settings = full
    reached = {r.memory.id for h in narrow for r in h.related}
    assert {h.memory.id for h in narrow} | reached <= active
    assert all(set(p.nodes) <= active for p in narrow.paths)
    scopes = [UNIVERSE[i] for i in named]
    if all(POLICY.can_read(who, s) for s in scopes):
        named_hits = mem.recall(query, k=100, scopes=scopes, principal=who)
        want = {i for i in active if stored[i].org == who.org_id and stored[i].scope in scopes}
        assert {h.memory.id for h in named_hits} == want
        named_stats = mem.stats(scopes=scopes, principal=who)
        assert sum(s.total_memories for s in named_stats) == len(
            {i for i in visible if stored[i].org == who.org_id and stored[i].scope in scopes}
        )
    else:
        try:
            mem.recall(query, scopes=scopes, principal=who)
        except PermissionDenied:
            pass
        else:
            raise AssertionError(f"{who.user_id} recalled unreadable scopes {scopes}")
    # list: every status, every page
    listed: list[Any] = []
    cursor = None
    while True:
        page = mem.list(
            scopes="all",
            limit=7,
            cursor=cursor,
            principal=who,
            filters={"statuses": [s.value for s in Status]},
        )
        listed.extend(page.items)
        cursor = page.next_cursor
        if cursor is None:
            break
    assert all(allowed(r.org_id, r.scope) for r in listed)
    assert [r.id for r in listed] == sorted(
        {r.id for r in listed}, key=[r.id for r in listed].index
    )
    assert {r.id for r in listed} == visible
    # get and history of every memory ever written
    for mid, s in stored.items():
        may = allowed(s.org, s.scope)
        if may and not s.deleted:
            got = mem.get(mid, principal=who)
            assert (got.org_id, got.scope) == (s.org, s.scope)
        else:
            try:
                mem.get(mid, principal=who)
            except NotFound:
                pass
            else:
                raise AssertionError(f"{who} read {s}")
        if may:
            trail = mem.history(mid, principal=who)
            assert trail[0].op == "create" and (trail[-1].op == "delete") is s.deleted
        else:
            try:
                mem.history(mid, principal=who)
            except NotFound:
                pass
            else:
                raise AssertionError(f"{who} read the history of {s}")
    # stats count exactly what may be read
    stats = mem.stats(principal=who)
    assert sum(s.total_memories for s in stats) == len(visible)
    assert sum(s.by_status.get("archived", 0) for s in stats) == len(visible - active)
    _check_graph(mem, who, stored, active, stats)


_NAMES = [[m.norm for m in ms] for ms in create_extractor("spacy").extract_batch(TEXTS)]


def _check_lifecycle(mem: Memory, who: Principal, stored: dict[str, Stored]) -> None:
    """Hints, sectors and access logs show nothing outside the readable set; reconcile
    (on for this test) only ever answered a write with a memory of the written scope,
    which the write loop checks."""
    readable = POLICY.readable(who)
    texts = {
        s.text
        for s in stored.values()
        if not s.deleted and s.status is Status.ACTIVE and readable.allows(s.org, s.scope)
    }
    for hint in (mem.build_hint(principal=who), mem.build_hint(query="budget", principal=who)):
        shown = {t for t in TEXTS if t in hint}
        assert shown <= texts, (who, shown - texts)
    for sector in mem.sectors(principal=who):
        assert readable.allows(sector.org_id, sector.scope)
    mem.flush()
    for mid, s in stored.items():
        if s.deleted:
            continue
        try:
            mem.access_log(mid, principal=who)
        except NotFound:
            assert not readable.allows(s.org, s.scope)
        else:
            assert readable.allows(s.org, s.scope)


def _check_graph(
    mem: Memory, who: Principal, stored: dict[str, Stored], active: set[str], stats: list[Any]
) -> None:
    """Graph reads stay inside the reader's active readable memories, counts too."""
    readable = POLICY.readable(who)
    edges = mem.store.graph_edges(list(stored), readable)
    assert all(e.src in active and e.dst in active for e in edges)
    assert all(stored[e.src].scope == stored[e.dst].scope for e in edges)
    for mid in sorted(active)[:4]:
        for n in mem.graph.neighbours(mid, principal=who):
            assert n.memory.id in active and n.edge is not None
    ordered = sorted(active)
    for a, b in zip(ordered[:3], ordered[1:4], strict=False):
        for path in mem.graph.paths(a, b, max_hops=4, principal=who):
            assert set(path.nodes) <= active
    # entities: names, memories and counts from active readable memories only
    text_of = {i: TEXTS.index(s.text) for i, s in stored.items()}
    for norm in sorted({n for names in _NAMES for n in names}):
        mine = {i for i in active if norm in _NAMES[text_of[i]]}
        try:
            view = mem.graph.entity(norm, principal=who)
        except NotFound:
            assert not mine, (norm, mine)
            continue
        assert view.entity.mentions == len(mine), norm
        assert {m.id for m in view.memories} == mine
        for _other, count in view.related:
            assert 0 < count <= len(mine)
        got = {n.memory.id for n in mem.graph.neighbours(entity=norm, limit=100, principal=who)}
        assert got == mine
    for layer in stats:
        in_layer = {i for i in active if LAYER_OF[stored[i].scope.kind].value == layer.layer}
        assert layer.entities_count == len({n for i in in_layer for n in _NAMES[text_of[i]]})
        assert layer.relationships_count == len(
            [e for e in edges if LAYER_OF[stored[e.src].scope.kind].value == layer.layer]
        )


@settings(
    max_examples=40,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(world=worlds())
def test_reads_never_leave_the_readable_set(
    open_memory: Callable[..., Memory], world: World
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        # every graph read on: expansion, co-mention support, low semantic threshold
        graph_on = Settings(
            graph_semantic_min=0.3,
            graph=GraphRead(relax_gamma=0.3, mention_support=0.2, seed_floor=0.0),
            lifecycle=Lifecycle(reconcile="rules", reinforce_on_recall=True),
        )
        mem = open_memory(Path(tmp), settings=graph_on)
        try:
            stored: dict[str, Stored] = {}
            written: list[str | None] = []
            for writer, scope_i, text_i in world.writes:
                who, scope = world.people[writer], UNIVERSE[scope_i]
                may = POLICY.can_write(who, scope) and not (
                    scope.kind.value == "org" and scope.owner_id != who.org_id
                )
                try:
                    rec = mem.remember(TEXTS[text_i], scope=scope, principal=who, episode_id="ep")
                except PermissionDenied:
                    assert not may, (who, scope)
                    written.append(None)
                    continue
                assert may, (who, scope)
                assert (rec.org_id, rec.scope) == (who.org_id, scope)
                stored[rec.id] = Stored(rec.org_id, rec.scope, text=TEXTS[text_i])
                written.append(rec.id)
            for actor_i, write_i, op in world.changes:
                mid = written[write_i]
                if mid is None:
                    continue
                who, s = world.people[actor_i], stored[mid]
                readable = POLICY.readable(who).allows(s.org, s.scope) and not s.deleted
                writable = readable and POLICY.can_write(who, s.scope)
                try:
                    if op == "archive":
                        mem.archive(mid, principal=who)
                        s.status = Status.ARCHIVED
                    else:
                        mem.forget(mid, principal=who)
                        s.deleted = True
                except NotFound:
                    assert not readable
                except PermissionDenied:
                    assert readable and not writable
                else:
                    assert writable
            event(f"memories stored: {min(len(stored) // 5 * 5, 20)}+")
            event(f"orgs with memories: {len({s.org for s in stored.values()})}")
            for who, named in zip(world.people, world.named, strict=True):
                _check_reads(mem, who, stored, named)
                _check_lifecycle(mem, who, stored)
        finally:
            mem.close()
