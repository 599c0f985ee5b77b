"""The directory service on both stores: principals from the directory (roles,
teams, personas, switches, modes), API keys, admin checks, the audit log and
the review switches."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from serverkit import admin_of, bootstrap_org

from kenning import (
    InvalidInput,
    Memory,
    NotFound,
    PermissionDenied,
    RecallMode,
    Role,
    TeamRole,
    Unauthenticated,
)

ORG = "acme"


@pytest.fixture
def mem(open_memory: Any, tmp_path: Path) -> Memory:
    m: Memory = open_memory(tmp_path)
    bootstrap_org(m, ORG)
    return m


def test_principals_come_from_the_directory(mem: Memory) -> None:
    d = mem.directory
    alice = d.principal(ORG, "alice")
    assert alice.roles == frozenset({Role.MEMBER}) and alice.teams == {"eng": TeamRole.MEMBER}
    assert alice.personas == frozenset({"helper"}) and alice.mode is RecallMode.ORG_GLOBAL_ON
    lena = d.principal(ORG, "lena")
    assert Role.TEAM_LEAD in lena.roles and lena.teams == {"eng": TeamRole.LEAD}
    assert d.principal(ORG, "root").is_admin
    assert d.principal(ORG, "alice", "helper").active_persona == "helper"
    with pytest.raises(InvalidInput, match="persona"):
        d.principal(ORG, "bob", "helper")  # bob may not use it
    with pytest.raises(Unauthenticated):
        d.principal(ORG, "nobody")
    with pytest.raises(Unauthenticated):
        d.principal("other-org", "alice")  # users belong to one organization


def test_switches_drop_teams_and_personas_and_stop_members(mem: Memory) -> None:
    d, admin = mem.directory, admin_of(ORG)
    d.put_team(admin, "eng", memory_enabled=False)
    d.put_persona(admin, "helper", memory_enabled=False)
    alice = d.principal(ORG, "alice")
    assert alice.teams == {} and alice.personas == frozenset()
    with pytest.raises(PermissionDenied, match="persona 'helper'"):
        d.principal(ORG, "alice", "helper")
    assert d.principal(ORG, "root").is_admin  # admins keep everything, to govern
    d.set_org(admin, memory_enabled=False, mode="personal")
    with pytest.raises(PermissionDenied, match="switched off"):
        d.principal(ORG, "bob")
    assert d.principal(ORG, "root").mode is RecallMode.PERSONAL


def test_only_admins_change_the_directory_and_nothing_changes_on_refusal(mem: Memory) -> None:
    d = mem.directory
    alice = d.principal(ORG, "alice")
    before = [u.to_dict() for u in d.users(admin_of(ORG))]
    for attempt in (
        lambda: d.put_user(alice, "mallory", role="admin"),
        lambda: d.put_user(alice, "alice", role="admin"),
        lambda: d.put_team(alice, "eng", memory_enabled=False),
        lambda: d.set_member(alice, "ops", "alice", "lead"),
        lambda: d.put_persona(alice, "spy"),
        lambda: d.grant_persona(alice, "helper", "bob"),
        lambda: d.set_org(alice, mode="personal"),
        lambda: d.audit(alice),
        lambda: d.create_key(alice, "bob", "x"),
        lambda: d.keys(alice, "bob"),
    ):
        with pytest.raises(PermissionDenied):
            attempt()
    assert [u.to_dict() for u in d.users(admin_of(ORG))] == before
    assert [u.id for u in d.users(alice)] == ["alice"]  # members see themselves
    assert [t.id for t in d.teams(alice)] == ["eng"]


def test_bad_directory_input_is_refused_precisely(mem: Memory) -> None:
    d, admin = mem.directory, admin_of(ORG)
    with pytest.raises(InvalidInput, match="role must be one of"):
        d.put_user(admin, "zed", role="overlord")
    with pytest.raises(InvalidInput, match="user id"):
        d.put_user(admin, "bad id!")
    with pytest.raises(InvalidInput, match="memory_enabled must be true or false"):
        d.put_team(admin, "eng", memory_enabled="yes")  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match="mode must be one of"):
        d.set_org(admin, mode="anarchy")
    with pytest.raises(NotFound):
        d.set_member(admin, "no-such-team", "alice", "member")
    with pytest.raises(NotFound):
        d.grant_persona(admin, "no-such-persona", "alice")
    with pytest.raises(InvalidInput, match="at least one admin"):
        d.put_user(admin, "root", role="member")
    with pytest.raises(InvalidInput, match="yourself"):
        d.put_user(admin_of(ORG, "root"), "root", disabled=True)
    assert d.principal(ORG, "root").is_admin


def test_api_keys_authenticate_until_revoked(mem: Memory) -> None:
    d, admin = mem.directory, admin_of(ORG)
    key, secret = d.create_key(admin, "alice", "agent", persona="helper")
    who, used = d.authenticate(secret)
    assert who.user_id == "alice" and who.active_persona == "helper" and used.id == key.id
    assert d.authenticate(secret, "helper")[0].active_persona == "helper"
    tampered = secret[:-1] + ("A" if secret[-1] != "A" else "B")
    for bad in (tampered, "kn_short", "", "Bearer " + secret):
        with pytest.raises(Unauthenticated):
            d.authenticate(bad)
    with pytest.raises(InvalidInput, match="persona"):
        d.create_key(admin, "bob", "agent", persona="helper")
    d.revoke_key(d.principal(ORG, "alice"), key.id)  # users revoke their own
    with pytest.raises(Unauthenticated, match="revoked"):
        d.authenticate(secret)
    assert d.revoke_key(admin, key.id).revoked_at is not None  # twice: no change
    stored = mem.store.get_api_key(key.id)
    body = secret.split("_", 2)[2]  # kn_<id>_<secret>; the secret may hold "_" itself
    assert len(body) == 43 and stored is not None and body not in stored.secret_hash


def test_bootstrap_rotates_its_own_key(mem: Memory) -> None:
    d = mem.directory
    _, first = d.bootstrap(ORG, "root", "local")
    _, second = d.bootstrap(ORG, "root", "local")
    with pytest.raises(Unauthenticated, match="revoked"):
        d.authenticate(first)
    assert d.authenticate(second)[0].is_admin


def test_audit_lines_of_directory_changes(mem: Memory) -> None:
    d, admin = mem.directory, admin_of(ORG)
    d.put_team(admin, "design", name="Design")
    d.set_member(admin, "design", "bob", "lead")
    lines = d.audit(admin, action="admin.team")
    assert [(a.action, a.target) for a in lines[:2]] == [
        ("admin.team.member", "design/bob"),
        ("admin.team.create", "design"),
    ]
    assert lines[1].detail["name"] == [None, "Design"]
    assert d.members(admin, "design") == {"bob": TeamRole.LEAD}
    assert d.audit(admin, user="nobody") == []


def test_review_switches_hold_new_memories(mem: Memory) -> None:
    d, admin = mem.directory, admin_of(ORG)
    d.put_team(admin, "eng", review=True)
    alice, lena = d.principal(ORG, "alice"), d.principal(ORG, "lena")
    held = mem.remember("Eng release freeze starts on the 20th", scope="team:eng", principal=alice)
    direct = mem.remember("Eng demo day is Thursday", scope="team:eng", principal=lena)
    own = mem.remember("Alice's desk is by the window", principal=alice)
    assert held.status.value == "pending_review" and direct.status.value == "active"
    assert own.status.value == "active"
    assert [m.id for m in mem.review_queue(principal=lena).items] == [held.id]
    assert mem.review_queue(principal=alice).items == []
    with pytest.raises(PermissionDenied):
        mem.approve(held.id, principal=alice)
    approved = mem.approve(held.id, changes={"tags": ["release"]}, principal=lena)
    assert approved.status.value == "active" and approved.tags == ("release",)
    a = mem.remember("Eng uses squash merges", scope="team:eng", principal=alice)
    done, failed = mem.review_many([a.id, a.id, "nope"], "approve", principal=lena)
    assert done == {a.id: "approved"} and set(failed) == {"nope"}
    with pytest.raises(InvalidInput, match="approve or reject"):
        mem.review_many([a.id], "ignore", principal=lena)
    d.set_org(admin, review=True)
    org_fact = mem.remember(
        "Holidays follow the Berlin calendar",
        scope=f"org:{ORG}",
        principal=d.principal(ORG, "root"),
    )
    assert org_fact.status.value == "pending_review"  # even an admin's org write waits
    mem.reject(org_fact.id, reason="wrong city", principal=d.principal(ORG, "root"))
    with pytest.raises(NotFound):
        mem.get(org_fact.id, principal=admin)
