"""The access matrix (``kenning.access``), checked on the policy *and* through the engine.

Organization ``acme``: team ``eng`` (mia member, lee lead, rex reader), team
``sales`` (otto), persona ``helpdesk`` (used by mia and lee, led by lee) and
persona ``secret`` (nobody but admins); ada is the org admin. A second
organization ``globex`` lives in the same database.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from kenning import (
    Memory,
    NotFound,
    PermissionDenied,
    Principal,
    Role,
    Scope,
    TeamRole,
)
from kenning.access import AccessPolicy

PRINCIPALS: dict[str, Principal] = {
    "mia": Principal.member("mia", "acme", teams={"eng": TeamRole.MEMBER}, personas={"helpdesk"}),
    "lee": Principal(
        org_id="acme",
        user_id="lee",
        roles=frozenset({Role.TEAM_LEAD}),
        teams={"eng": TeamRole.LEAD},
        personas=frozenset({"helpdesk"}),
        persona_leads=frozenset({"helpdesk"}),
    ),
    "rex": Principal.member("rex", "acme", teams={"eng": TeamRole.READER}),
    "otto": Principal.member("otto", "acme", teams={"sales": TeamRole.MEMBER}),
    "ada": Principal(org_id="acme", user_id="ada", roles=frozenset({Role.ADMIN})),
}

SCOPES = [
    "user:mia",
    "user:zoe",
    "persona_user:helpdesk/mia",
    "persona_user:helpdesk/zoe",
    "team:eng",
    "team:sales",
    "persona:helpdesk",
    "persona:secret",
    "org:acme",
]

# (principal, scope) -> (can read, can write); every pair of PRINCIPALS x SCOPES is listed.
MATRIX: dict[str, dict[str, tuple[bool, bool]]] = {
    "mia": {
        "user:mia": (True, True),
        "user:zoe": (False, False),
        "persona_user:helpdesk/mia": (True, True),
        "persona_user:helpdesk/zoe": (False, False),
        "team:eng": (True, True),
        "team:sales": (False, False),
        "persona:helpdesk": (True, False),
        "persona:secret": (False, False),
        "org:acme": (True, False),
    },
    "lee": {
        "user:mia": (False, False),
        "user:zoe": (False, False),
        "persona_user:helpdesk/mia": (False, False),
        "persona_user:helpdesk/zoe": (False, False),
        "team:eng": (True, True),
        "team:sales": (False, False),
        "persona:helpdesk": (True, True),
        "persona:secret": (False, False),
        "org:acme": (True, False),
    },
    "rex": {
        "user:mia": (False, False),
        "user:zoe": (False, False),
        "persona_user:helpdesk/mia": (False, False),
        "persona_user:helpdesk/zoe": (False, False),
        "team:eng": (True, False),
        "team:sales": (False, False),
        "persona:helpdesk": (False, False),
        "persona:secret": (False, False),
        "org:acme": (True, False),
    },
    "otto": {
        "user:mia": (False, False),
        "user:zoe": (False, False),
        "persona_user:helpdesk/mia": (False, False),
        "persona_user:helpdesk/zoe": (False, False),
        "team:eng": (False, False),
        "team:sales": (True, True),
        "persona:helpdesk": (False, False),
        "persona:secret": (False, False),
        "org:acme": (True, False),
    },
    "ada": {scope: (True, True) for scope in SCOPES},
}

# Scopes relative to the principal itself.
OWN: dict[str, list[tuple[str, tuple[bool, bool]]]] = {
    "lee": [("user:lee", (True, True)), ("persona_user:helpdesk/lee", (True, True))],
    "rex": [("user:rex", (True, True)), ("persona_user:helpdesk/rex", (False, False))],
    "otto": [("user:otto", (True, True)), ("persona_user:helpdesk/otto", (False, False))],
    "ada": [("user:ada", (True, True)), ("org:globex", (True, False))],
}

CASES = [(who, scope, rw) for who, row in MATRIX.items() for scope, rw in row.items()] + [
    (who, scope, rw) for who, rows in OWN.items() for scope, rw in rows
]
CASE_IDS = [f"{who}-{scope}" for who, scope, _ in CASES]


def test_matrix_is_complete() -> None:
    assert all(set(row) == set(SCOPES) for row in MATRIX.values())
    assert set(MATRIX) == set(PRINCIPALS)


@pytest.mark.parametrize(("who", "scope", "rw"), CASES, ids=CASE_IDS)
def test_policy_matrix(who: str, scope: str, rw: tuple[bool, bool]) -> None:
    policy = AccessPolicy()
    p = PRINCIPALS[who]
    s = Scope.parse(scope)
    can_read, can_write = rw
    assert policy.can_read(p, s) is can_read
    assert policy.can_write(p, s) is can_write
    assert policy.readable(p).allows(p.org_id, s) is can_read
    if can_write:
        policy.check_write(p, s)
    else:
        with pytest.raises(PermissionDenied):
            policy.check_write(p, s)


# ---------------------------------------------------------------------------- engine


@pytest.fixture(scope="module")
def acme(
    tmp_path_factory: pytest.TempPathFactory,
    open_memory: Callable[..., Memory],
    module_doors: Callable[[Memory], Memory],
) -> Iterator[tuple[Memory, dict[str, str]]]:
    """One memory per scope of acme (written by the admin) plus globex's own memories,
    through the door of this parametrisation (tests/doorkit.py)."""
    mem = module_doors(open_memory(tmp_path_factory.mktemp("acme")))
    ada = PRINCIPALS["ada"]
    seeded = {
        scope: mem.remember(
            f"Quarterly planning note stored in {scope}", scope=scope, principal=ada
        ).id
        for scope in SCOPES
        + [
            "user:lee",
            "persona_user:helpdesk/lee",
            "user:rex",
            "user:otto",
            "user:ada",
        ]
    }
    yield mem, seeded
    mem.close()


@pytest.mark.parametrize(("who", "scope", "rw"), CASES, ids=CASE_IDS)
def test_engine_enforces_the_matrix(
    acme: tuple[Memory, dict[str, str]],
    db_counts: Callable[[Memory], dict[str, int]],
    who: str,
    scope: str,
    rw: tuple[bool, bool],
) -> None:
    mem, seeded = acme
    p = PRINCIPALS[who]
    can_read, can_write = rw
    # write
    before = db_counts(mem)
    if can_write:
        rec = mem.remember(f"Written by {who} into {scope}", scope=scope, principal=p)
        assert rec.scope == Scope.parse(scope) and rec.created_by == who
        assert db_counts(mem)["memories"] == before["memories"] + 1
        mem.forget(rec.id, principal=p)
    else:
        with pytest.raises(PermissionDenied):
            mem.remember(f"Written by {who} into {scope}", scope=scope, principal=p)
        assert db_counts(mem) == before
        with pytest.raises(PermissionDenied):
            mem.upsert("planning", f"Upserted by {who}", scope=scope, principal=p)
        assert db_counts(mem) == before
    # read
    mid = seeded.get(scope)
    if mid is None:  # org:globex holds nothing of acme
        return
    if can_read:
        assert mem.get(mid, principal=p).scope == Scope.parse(scope)
        assert mem.history(mid, principal=p)[0].op == "create"
        hits = mem.recall("quarterly planning note", k=50, scopes=[scope], principal=p)
        assert [h.memory.id for h in hits] == [mid]
        assert mid in {r.id for r in mem.list(scopes="all", principal=p, limit=100).items}
    else:
        with pytest.raises(NotFound):
            mem.get(mid, principal=p)
        with pytest.raises(NotFound):
            mem.history(mid, principal=p)
        with pytest.raises(PermissionDenied):
            mem.recall("quarterly planning note", scopes=[scope], principal=p)
        with pytest.raises(PermissionDenied):
            mem.list(scopes=[scope], principal=p)
        assert mid not in {r.id for r in mem.list(scopes="all", principal=p, limit=100).items}
        assert mid not in {
            h.memory.id
            for h in mem.recall("quarterly planning note", k=100, scopes="all", principal=p)
        }
    # changing an existing memory needs write access (and read access to find it)
    before = db_counts(mem)
    version = mem.get(mid, principal=PRINCIPALS["ada"]).version
    if can_write:
        assert mem.update(mid, importance=4, principal=p).importance == 4
        mem.update(mid, importance=3, principal=p)
    else:
        expected = PermissionDenied if can_read else NotFound
        for change in (
            lambda: mem.update(mid, importance=4, principal=p),
            lambda: mem.archive(mid, principal=p),
            lambda: mem.forget(mid, principal=p),
            lambda: mem.feedback(mid, "validate", principal=p),
            lambda: mem.feedback(mid, "contradict", principal=p),
        ):
            with pytest.raises(expected):
                change()
        assert db_counts(mem) == before
        assert mem.get(mid, principal=PRINCIPALS["ada"]).version == version


def test_readers_may_vote_but_not_validate(
    tmp_path: Path, open_memory: Callable[..., Memory], as_door: Callable[[Memory], Memory]
) -> None:
    mem = as_door(open_memory(tmp_path))
    ada, rex = PRINCIPALS["ada"], PRINCIPALS["rex"]
    rec = mem.remember(
        "Eng on-call rotation is weekly", scope="team:eng", principal=ada, confidence=0.5
    )
    assert mem.feedback(rec.id, "upvote", principal=rex).confidence == pytest.approx(0.55)
    with pytest.raises(PermissionDenied):
        mem.feedback(rec.id, "validate", principal=rex)
    assert mem.get(rec.id, principal=ada).confidence == pytest.approx(0.55)
    mem.close()


# ---------------------------------------------------------------------------- two organizations


def test_nobody_reads_another_organization(
    tmp_path: Path, open_memory: Callable[..., Memory], as_door: Callable[[Memory], Memory]
) -> None:
    mem = as_door(open_memory(tmp_path))
    a_admin = Principal(org_id="acme", user_id="ada", roles=frozenset({Role.ADMIN}))
    b_admin = Principal(org_id="globex", user_id="bob", roles=frozenset({Role.ADMIN}))
    b_member = Principal.member(
        "mia", "globex", teams={"eng": TeamRole.MEMBER}
    )  # same names as acme
    a_ids = [
        mem.remember(f"Acme secret roadmap item {i}", scope=scope, principal=a_admin).id
        for i, scope in enumerate(
            ["user:mia", "team:eng", "org:acme", "persona:helpdesk", "persona_user:helpdesk/mia"]
        )
    ]
    b_own = mem.remember("Globex roadmap item", scope="org:globex", principal=b_admin)
    with pytest.raises(PermissionDenied):  # an admin writes only its own org scope
        mem.remember("Globex writes into acme", scope="org:acme", principal=b_admin)
    for who in (b_admin, b_member):
        for scopes in (None, "all", ["user:mia", "team:eng"]):
            hits = mem.recall("acme secret roadmap item", k=100, scopes=scopes, principal=who)
            assert {h.memory.org_id for h in hits} <= {"globex"}
            assert not set(a_ids) & {h.memory.id for h in hits}
        listed = mem.list(scopes="all", principal=who, filters={"statuses": ["active", "archived"]})
        assert {r.id for r in listed.items} <= {b_own.id}
        for mid in a_ids:
            with pytest.raises(NotFound):
                mem.get(mid, principal=who)
            with pytest.raises(NotFound):
                mem.history(mid, principal=who)
            with pytest.raises(NotFound):
                mem.update(mid, content="overwritten", principal=who)
            with pytest.raises(NotFound):
                mem.forget(mid, principal=who)
        totals = sum(s.total_memories for s in mem.stats(principal=who))
        assert totals == 1  # globex's one org memory
    assert sum(s.total_memories for s in mem.stats(principal=a_admin)) == 5
    mem.close()


# ---------------------------------------------------------------------------- default views


@pytest.fixture
def views(
    tmp_path: Path, open_memory: Callable[..., Memory], as_door: Callable[[Memory], Memory]
) -> Iterator[tuple[Memory, dict[str, str]]]:
    mem = as_door(open_memory(tmp_path))
    ada = PRINCIPALS["ada"]
    ids = {
        scope: mem.remember(f"Budget memo kept in {scope}", scope=scope, principal=ada).id
        for scope in [
            "user:mia",
            "user:zoe",
            "team:eng",
            "team:sales",
            "org:acme",
            "persona:helpdesk",
            "persona_user:helpdesk/mia",
            "user:ada",
        ]
    }
    yield mem, ids
    mem.close()


@pytest.mark.parametrize(
    ("mode", "persona", "expected"),
    [
        ("personal", None, {"user:mia"}),
        ("org", None, {"user:mia", "team:eng", "org:acme"}),
        ("org_no_global", None, {"team:eng", "org:acme"}),
        ("personal", "helpdesk", {"user:mia", "persona_user:helpdesk/mia", "persona:helpdesk"}),
        (
            "org",
            "helpdesk",
            {"user:mia", "persona_user:helpdesk/mia", "persona:helpdesk", "team:eng", "org:acme"},
        ),
        ("org_no_global", "helpdesk", {"persona:helpdesk", "team:eng", "org:acme"}),
    ],
)
def test_default_recall_view_per_mode(
    views: tuple[Memory, dict[str, str]], mode: str, persona: str | None, expected: set[str]
) -> None:
    mem, ids = views
    mia = Principal.member(
        "mia",
        "acme",
        teams={"eng": "member"},
        personas={"helpdesk"},
        active_persona=persona,
        mode=mode,
    )
    hits = mem.recall("budget memo", k=50, principal=mia)
    assert {h.memory.scope.key for h in hits} == expected
    assert {r.scope.key for r in mem.list(principal=mia).items} == expected
    everything = {
        h.memory.scope.key for h in mem.recall("budget memo", k=50, scopes="all", principal=mia)
    }
    assert everything == {
        "user:mia",
        "team:eng",
        "org:acme",
        "persona:helpdesk",
        "persona_user:helpdesk/mia",
    }


def test_admin_default_view_is_its_own(views: tuple[Memory, dict[str, str]]) -> None:
    mem, ids = views
    ada = PRINCIPALS["ada"]
    assert {h.memory.scope.key for h in mem.recall("budget memo", k=50, principal=ada)} == {
        "user:ada",
        "org:acme",
    }
    assert len(mem.recall("budget memo", k=50, scopes="all", principal=ada)) == len(ids)
    named = mem.recall("budget memo", k=50, scopes=["user:zoe", "team:sales"], principal=ada)
    assert {h.memory.scope.key for h in named} == {"user:zoe", "team:sales"}


def test_layers_restrict_the_view(views: tuple[Memory, dict[str, str]]) -> None:
    mem, _ = views
    ada = PRINCIPALS["ada"]
    for layers, kinds in (
        (["personal"], {"user", "persona_user"}),
        (["shared"], {"team", "persona"}),
        (["organization"], {"org"}),
    ):
        hits = mem.recall("budget memo", k=50, scopes="all", layers=layers, principal=ada)
        assert hits and {h.memory.scope.kind.value for h in hits} == kinds
    assert sum(s.total_memories for s in mem.stats(principal=ada)) == 8


# ---------------------------------------------------------------------------- persona priority


@pytest.mark.parametrize("mode", ["org", "personal"])
def test_persona_priority_for_equal_relevance(
    tmp_path: Path,
    open_memory: Callable[..., Memory],
    as_door: Callable[[Memory], Memory],
    mode: str,
) -> None:
    """persona_user > persona > user when a persona is active (seed 001)."""
    mem = as_door(open_memory(tmp_path))
    writer = Principal(org_id="acme", user_id="ada", roles=frozenset({Role.ADMIN}))
    text = "The helpdesk ticket queue closes at five"
    ids = {
        s: mem.remember(text, scope=s, principal=writer, confidence=0.8).id
        for s in ("persona_user:helpdesk/mia", "persona:helpdesk", "user:mia")
    }
    mia = Principal.member(
        "mia", "acme", personas={"helpdesk"}, active_persona="helpdesk", mode=mode
    )
    hits = mem.recall("helpdesk ticket queue", k=10, explain=True, principal=mia)
    by_scope = {h.memory.scope.key: h for h in hits}
    assert set(by_scope) == set(ids)
    ex = {k: h.explain for k, h in by_scope.items() if h.explain is not None}
    assert ex["persona_user:helpdesk/mia"].scope_boost > ex["persona:helpdesk"].scope_boost
    assert ex["persona:helpdesk"].scope_boost > ex["user:mia"].scope_boost == 0.0
    # the total boost, layer boost included, must keep that order
    total = {k: e.layer_boost + e.scope_boost for k, e in ex.items()}
    assert total["persona_user:helpdesk/mia"] > total["persona:helpdesk"] > total["user:mia"], total
    assert len({e.relevance for e in ex.values()}) == 1  # the same content: equal relevance
    assert [h.memory.scope.key for h in hits] == [
        "persona_user:helpdesk/mia",
        "persona:helpdesk",
        "user:mia",
    ]
    mem.close()
