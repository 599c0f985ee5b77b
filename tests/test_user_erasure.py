"""Erasing a user and exporting what is stored about them, on both stores: the engine
(``mem.directory.erase_user`` / ``export_user``), checked in the raw tables, and the
REST doors (``POST /v1/admin/users/{id}/erase``, ``GET .../export``, ``GET /v1/me/export``)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from serverkit import Api, admin_of, bootstrap_org

from kenning import (
    InvalidInput,
    Memory,
    NotFound,
    PermissionDenied,
    Unauthenticated,
)
from kenning.directory.userdata import ERASED_AUTHOR, EXPORT_FORMAT

ORG, OTHER = "acme", "globex"
Rows = Callable[..., list[Any]]


@pytest.fixture
def world(open_memory: Any, tmp_path: Path) -> dict[str, Any]:
    """Two organizations (both with a user ``alice``) and memories of every kind of
    scope: alice's own, her persona's memory of her, an admin's note in her scope,
    what she wrote in her team, and other users' memories."""
    mem: Memory = open_memory(tmp_path)
    keys = bootstrap_org(mem, ORG)
    other_keys = bootstrap_org(mem, OTHER)
    d, admin = mem.directory, admin_of(ORG)
    d.put_user(admin, "carol", name="Carol")  # acme's only: globex has no carol
    alice, bob, lena = (d.principal(ORG, u) for u in ("alice", "bob", "lena"))
    helper = d.principal(ORG, "alice", "helper")
    ids = {
        "own": mem.remember("Alice met Zorblax Quennel in Paris", principal=alice).id,
        "own2": mem.remember("Alice drinks green tea with Zorblax Quennel", principal=alice).id,
        "persona": mem.remember(
            "Alice is allergic to peanuts", scope="persona_user:helper/alice", principal=helper
        ).id,
        "by_admin": mem.remember("Review Alice in March", scope="user:alice", principal=admin).id,
        "shared": mem.remember("Deploys happen on Tuesdays", scope="team:eng", principal=alice).id,
        "bob": mem.remember("Bob prefers black coffee in Paris", principal=bob).id,
        "lena": mem.remember("The eng offsite is in Lisbon", scope="team:eng", principal=lena).id,
        "other_alice": mem.remember(
            "Globex Alice likes chess", principal=mem.directory.principal(OTHER, "alice")
        ).id,
    }
    mem.graph.link(ids["own"], ids["own2"], "related", principal=alice)
    mem.reinforce(ids["own"], principal=alice)
    mem.reinforce(ids["bob"], principal=bob)
    mem.create_sector("Travel", scope="user:alice", principal=alice)
    mem.create_sector("Drinks", scope="user:bob", principal=bob)
    mem.set_policy("scope:user:alice", retention_days=30, principal=admin)
    mem.set_policy("scope:user:bob", retention_days=30, principal=admin)
    return {"mem": mem, "keys": keys, "other_keys": other_keys, "ids": ids}


def q(mem: Memory, rows: Rows, sql: str, *params: Any) -> list[Any]:
    """Raw rows of ``sql`` (written with ``?``) on either store."""
    pg = sql.replace("%", "%%").replace("?", "%s")
    return rows(mem, {"sqlite": sql, "postgresql": pg}, params)


def count(mem: Memory, rows: Rows, sql: str, *params: Any) -> int:
    return int(q(mem, rows, sql, *params)[0][0])


def _personal_ids(mem: Memory, rows: Rows, org: str, user: str) -> set[str]:
    sql = {
        "sqlite": "SELECT m.id FROM memories m JOIN scopes s ON s.pk = m.scope_pk WHERE "
        "m.org_id = ? AND ((s.kind = 'user' AND s.owner_id = ?) OR s.user_id = ?)",
        "postgresql": "SELECT id FROM memories WHERE org_id = %s AND "
        "((scope_kind = 'user' AND scope_owner = %s) OR scope_user = %s)",
    }
    return {r[0] for r in rows(mem, sql, (org, user, user))}


def _snapshot(mem: Memory, rows: Rows, ids: dict[str, str]) -> dict[str, Any]:
    """What must not change for anyone but alice of acme."""
    others = [ids["bob"], ids["lena"], ids["other_alice"]]
    return {
        "records": q(
            mem,
            rows,
            "SELECT id, content, created_by, version FROM memories WHERE id IN (?, ?, ?) "
            "ORDER BY id",
            *others,
        ),
        "history": q(
            mem,
            rows,
            "SELECT memory_id, op, content FROM history WHERE memory_id IN (?, ?, ?) "
            "ORDER BY memory_id, seq",
            *others,
        ),
        "access": count(
            mem, rows, "SELECT COUNT(*) FROM access_log WHERE memory_id = ?", ids["bob"]
        ),
        "keys": q(
            mem,
            rows,
            "SELECT id FROM api_keys WHERE NOT (org_id = ? AND user_id = ?)",
            ORG,
            "alice",
        ),
        "users": q(
            mem,
            rows,
            "SELECT org_id, id, doc FROM directory WHERE kind = 'user' AND "
            "NOT (org_id = ? AND id = ?) ORDER BY org_id, id",
            ORG,
            "alice",
        ),
        "policies": q(mem, rows, "SELECT target FROM policies WHERE target = 'scope:user:bob'"),
    }


# -- erasure --------------------------------------------------------------------------------


def test_erasure_removes_everything_personal_and_leaves_others_alone(
    world: dict[str, Any], db_rows: Rows
) -> None:
    mem, ids, keys = world["mem"], world["ids"], world["keys"]
    d, admin = mem.directory, admin_of(ORG)
    gone = [ids["own"], ids["own2"], ids["persona"], ids["by_admin"]]
    assert _personal_ids(mem, db_rows, ORG, "alice") == set(gone)
    mentioned = "SELECT COUNT(*) FROM entities WHERE org_id = ? AND norm LIKE '%zorblax%'"
    assert count(mem, db_rows, mentioned, ORG) >= 1  # the graph saw alice's entity
    assert count(mem, db_rows, "SELECT COUNT(*) FROM access_log WHERE memory_id = ?", ids["own"])
    if mem.store.kind == "postgresql":
        keys_of = list(gone)
        mentions = "SELECT COUNT(*) FROM mentions WHERE memory_id IN ({})"
        links = "SELECT COUNT(*) FROM links WHERE src IN ({0}) OR dst IN ({0})"
        sectors = "SELECT COUNT(*) FROM sectors WHERE owner_id = 'alice'"
    else:  # graph rows point at a memory's row number
        marks = ",".join("?" * len(gone))
        keys_of = [
            r[0] for r in q(mem, db_rows, f"SELECT pk FROM memories WHERE id IN ({marks})", *gone)
        ]
        mentions = "SELECT COUNT(*) FROM mentions WHERE memory_pk IN ({})"
        links = "SELECT COUNT(*) FROM links WHERE src_pk IN ({0}) OR dst_pk IN ({0})"
        sectors = (
            "SELECT COUNT(*) FROM sectors x JOIN scopes s ON s.pk = x.scope_pk "
            "WHERE s.owner_id = 'alice'"
        )
    marks = ",".join("?" * len(keys_of))
    graph_rows = [
        (mentions.format(marks), keys_of),
        (links.format(marks), [*keys_of, *keys_of]),
    ]
    for sql, params in graph_rows:
        assert count(mem, db_rows, sql, *params) >= 1  # her memories are in the graph
    assert count(mem, db_rows, sectors) == 1
    before = _snapshot(mem, db_rows, ids)

    done = d.erase_user(admin, "alice")

    assert (done.memories, done.shared_detached, done.shared_deleted) == (4, 1, 0)
    assert done.api_keys == 1 and done.scope_rows == 2 and not done.repeated
    assert _personal_ids(mem, db_rows, ORG, "alice") == set()
    # nobody can read them any more, not even an admin
    listed = mem.list(scopes="all", principal=admin, limit=100).items
    assert listed and not {r.id for r in listed} & set(gone)
    for mid in gone:
        with pytest.raises(NotFound):
            mem.get(mid, principal=admin)
    # graph, access log, sectors and policies of her scopes: gone
    marks = ",".join("?" * len(gone))
    assert count(mem, db_rows, mentioned, ORG) == 0
    paris = "SELECT COUNT(*) FROM entities WHERE org_id = ? AND norm LIKE '%paris%'"
    assert count(mem, db_rows, paris, ORG) == 1  # bob's memory mentions it too: it stays
    for sql, params in graph_rows:
        assert count(mem, db_rows, sql, *params) == 0
    assert count(mem, db_rows, sectors) == 0
    access = f"SELECT COUNT(*) FROM access_log WHERE memory_id IN ({marks})"
    assert count(mem, db_rows, access, *gone) == 0
    policy = "SELECT COUNT(*) FROM policies WHERE target = 'scope:user:alice'"
    assert count(mem, db_rows, policy) == 0
    # history: who and when, no content
    trail = q(
        mem,
        db_rows,
        f"SELECT memory_id, op, actor, content, changes FROM history WHERE memory_id IN ({marks})",
        *gone,
    )
    assert {r[0] for r in trail} == set(gone)
    assert {r[1] for r in trail} >= {"create", "delete"}
    assert all(r[3] is None and r[4] in ("{}", {}) for r in trail)
    assert {r[2] for r in trail if r[1] == "delete"} == {"root"}
    assert {r[2] for r in trail if r[0] == ids["own"] and r[1] == "create"} == {"alice"}
    # the directory forgets her: record, memberships, grants, keys
    with pytest.raises(NotFound):
        d.user(ORG, "alice")
    assert "alice" not in d.members(admin, "eng")
    assert (
        count(
            mem,
            db_rows,
            "SELECT COUNT(*) FROM api_keys WHERE org_id = ? AND user_id = ?",
            ORG,
            "alice",
        )
        == 0
    )
    with pytest.raises(Unauthenticated):
        d.authenticate(keys["alice"])
    # what she wrote for her team stays, detached from her
    shared = mem.get(ids["shared"], principal=d.principal(ORG, "lena"))
    assert shared.content == "Deploys happen on Tuesdays" and shared.created_by == ERASED_AUTHOR
    # the audit log says who erased whom, when, and how much
    (line,) = d.audit(admin, action="admin.user.erase")
    assert (line.actor, line.target, line.detail["memories"], line.detail["api_keys"]) == (
        "root",
        "alice",
        4,
        1,
    )
    # everyone else: untouched
    assert _snapshot(mem, db_rows, ids) == before
    assert d.user(OTHER, "alice").id == "alice"


def test_include_shared_deletes_what_she_wrote_elsewhere(
    world: dict[str, Any], db_rows: Rows
) -> None:
    mem, ids = world["mem"], world["ids"]
    done = mem.directory.erase_user(admin_of(ORG), "alice", include_shared=True)
    assert (done.memories, done.shared_deleted, done.shared_detached) == (4, 1, 0)
    assert count(mem, db_rows, "SELECT COUNT(*) FROM memories WHERE id = ?", ids["shared"]) == 0
    assert count(mem, db_rows, "SELECT COUNT(*) FROM memories WHERE id = ?", ids["lena"]) == 1


def test_erasing_again_is_a_no_op_that_answers_the_same(
    world: dict[str, Any], db_rows: Rows
) -> None:
    mem = world["mem"]
    d, admin = mem.directory, admin_of(ORG)
    first = d.erase_user(admin, "alice")
    footprint = mem.store.footprint()
    again = d.erase_user(admin, "alice")
    assert again.repeated and again.to_dict() | {"repeated": False} == first.to_dict()
    assert mem.store.footprint() == footprint
    assert len(d.audit(admin, action="admin.user.erase")) == 1


def test_erasure_is_all_or_nothing(
    world: dict[str, Any], db_rows: Rows, monkeypatch: pytest.MonkeyPatch
) -> None:
    mem, ids = world["mem"], world["ids"]
    before = (mem.store.footprint(), _personal_ids(mem, db_rows, ORG, "alice"))

    def broken(org_id: str, user_id: str) -> int:
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(mem.store, "delete_api_keys", broken)
    with pytest.raises(RuntimeError, match="disk on fire"):
        mem.directory.erase_user(admin_of(ORG), "alice")
    assert (mem.store.footprint(), _personal_ids(mem, db_rows, ORG, "alice")) == before
    assert mem.directory.user(ORG, "alice").teams
    assert mem.get(ids["shared"], principal=admin_of(ORG)).created_by == "alice"
    assert not mem.directory.audit(admin_of(ORG), action="admin.user.erase")


def test_erasure_is_refused_precisely_and_changes_nothing(world: dict[str, Any]) -> None:
    mem = world["mem"]
    d, admin = mem.directory, admin_of(ORG)
    footprint = mem.store.footprint()
    with pytest.raises(PermissionDenied, match="not an admin"):
        d.erase_user(d.principal(ORG, "bob"), "alice")
    with pytest.raises(NotFound, match="no user 'nobody' in 'acme'"):
        d.erase_user(admin, "nobody")
    with pytest.raises(InvalidInput, match="user id"):
        d.erase_user(admin, "not an id!")
    with pytest.raises(InvalidInput, match="yourself"):
        d.erase_user(admin, "root")
    with pytest.raises(InvalidInput, match="include_shared"):
        d.erase_user(admin, "alice", include_shared="yes")  # type: ignore[arg-type]
    # an admin of another organization learns nothing about acme's users
    globex = admin_of(OTHER)
    with pytest.raises(NotFound) as known:
        d.erase_user(globex, "carol")  # carol exists in acme only
    with pytest.raises(NotFound) as unknown:
        d.erase_user(globex, "nobody")
    assert str(known.value).replace("carol", "X") == str(unknown.value).replace("nobody", "X")
    assert mem.store.footprint() == footprint
    assert d.user(ORG, "alice").id == "alice" and d.user(ORG, "carol").id == "carol"


def test_the_last_admin_is_not_erased(world: dict[str, Any]) -> None:
    d = world["mem"].directory
    with pytest.raises(InvalidInput, match="at least one admin"):
        d.erase_user(admin_of(ORG, "zed"), "root")  # root is acme's only admin
    assert d.user(ORG, "root").id == "root"


# -- export ---------------------------------------------------------------------------------


def _export(mem: Memory, actor: Any, user: str) -> list[dict[str, Any]]:
    lines = [json.loads(json.dumps(line)) for line in mem.directory.export_user(actor, user)]
    assert lines[0]["type"] == "export" and lines[-1]["type"] == "end"
    counts: dict[str, int] = {}
    for line in lines[1:-1]:
        counts[line["type"]] = counts.get(line["type"], 0) + 1
    assert lines[-1]["counts"] == counts
    return lines


def test_a_user_exports_what_is_stored_about_them(world: dict[str, Any]) -> None:
    mem, ids = world["mem"], world["ids"]
    alice = mem.directory.principal(ORG, "alice")
    lines = _export(mem, alice, "alice")
    head = lines[0]
    assert head["format"] == EXPORT_FORMAT and (head["org_id"], head["user_id"]) == (ORG, "alice")
    by_type: dict[str, list[dict[str, Any]]] = {}
    for line in lines:
        by_type.setdefault(line["type"], []).append(line)
    (user,) = by_type["user"]
    assert user["data"]["teams"] == {"eng": "member"} and user["data"]["personas"] == ["helper"]
    (key,) = by_type["api_key"]
    assert key["data"]["user_id"] == "alice" and "secret_hash" not in key["data"]
    memories = {m["data"]["id"]: m["relation"] for m in by_type["memory"]}
    assert memories == {
        ids["own"]: "personal",
        ids["own2"]: "personal",
        ids["persona"]: "personal",
        ids["by_admin"]: "personal",
        ids["shared"]: "authored",
    }
    assert {h["data"]["memory_id"] for h in by_type["history"]} == set(memories)
    assert [a["data"]["memory_id"] for a in by_type["access"]] == [ids["own"]]
    assert any(a["data"]["action"] == "memory.remember" for a in by_type["audit"])
    assert all(a["data"]["actor"] == "alice" for a in by_type["audit"])
    text = "\n".join(json.dumps(line) for line in lines)
    for foreign in ("Bob prefers", "Lisbon", "chess", "bob"):
        assert foreign not in text


def test_who_may_export_whom(world: dict[str, Any]) -> None:
    mem, ids = world["mem"], world["ids"]
    d = mem.directory
    bob = d.principal(ORG, "bob")
    with pytest.raises(PermissionDenied, match="their own"):
        d.export_user(bob, "alice")
    with pytest.raises(NotFound, match="no user 'carol' in 'globex'"):
        d.export_user(admin_of(OTHER), "carol")
    with pytest.raises(InvalidInput):
        d.export_user(admin_of(ORG), "not an id!")
    # a user sees what they wrote where they can still read; an admin sees all of it
    d.set_member(admin_of(ORG), "eng", "alice", None)
    mine = _export(mem, d.principal(ORG, "alice"), "alice")
    assert ids["shared"] not in {m["data"]["id"] for m in mine if m["type"] == "memory"}
    theirs = _export(mem, admin_of(ORG), "alice")
    assert ids["shared"] in {m["data"]["id"] for m in theirs if m["type"] == "memory"}
    assert d.audit(admin_of(ORG), action="user.export")[0].target == "alice"


def test_after_erasure_an_export_finds_nothing(world: dict[str, Any]) -> None:
    mem = world["mem"]
    admin = admin_of(ORG)
    mem.directory.erase_user(admin, "alice")
    with pytest.raises(NotFound):
        mem.directory.export_user(admin, "alice")


# -- REST -------------------------------------------------------------------------------------


@pytest.fixture
def api(world: dict[str, Any]) -> Any:
    server = Api(world["mem"])
    yield server
    server.close()


def _jsonl(response: Any) -> list[dict[str, Any]]:
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("application/x-ndjson")
    return [json.loads(line) for line in response.text.splitlines()]


def test_rest_export_and_erase(world: dict[str, Any], api: Any) -> None:
    keys, ids = world["keys"], world["ids"]
    mine = _jsonl(api.call("GET", "/v1/me/export", key=keys["alice"]))
    assert mine[0]["user_id"] == "alice" and mine[-1]["type"] == "end"
    assert ids["own"] in {m["data"]["id"] for m in mine if m["type"] == "memory"}
    theirs = _jsonl(api.call("GET", "/v1/admin/users/alice/export", key=keys["root"]))
    assert {m["data"]["id"] for m in theirs if m["type"] == "memory"} >= {ids["own"], ids["shared"]}
    assert "attachment" in api.call("GET", "/v1/me/export", key=keys["alice"]).headers.get(
        "content-disposition", ""
    )
    # refusals: a member, another organization's admin, an unknown user, bad input
    assert api.call("GET", "/v1/admin/users/alice/export", key=keys["bob"]).status_code == 403
    assert (
        api.call("POST", "/v1/admin/users/alice/erase", key=keys["bob"], json={}).status_code == 403
    )
    other = world["other_keys"]["root"]
    assert api.call("POST", "/v1/admin/users/carol/erase", key=other, json={}).status_code == 404
    assert api.call("GET", "/v1/admin/users/carol/export", key=other).status_code == 404
    bad = api.call(
        "POST", "/v1/admin/users/alice/erase", key=keys["root"], json={"include_shared": "maybe"}
    )
    assert bad.status_code in (400, 422)
    assert api.call("GET", "/v1/me", key=keys["alice"]).status_code == 200
    # erase
    done = api.call("POST", "/v1/admin/users/alice/erase", key=keys["root"], json={})
    assert done.status_code == 200, done.text
    body = done.json()
    assert (body["user_id"], body["memories"], body["shared_detached"], body["repeated"]) == (
        "alice",
        4,
        1,
        False,
    )
    assert api.call("GET", "/v1/me", key=keys["alice"]).status_code == 401
    again = api.call("POST", "/v1/admin/users/alice/erase", key=keys["root"], json={})
    assert again.status_code == 200 and again.json()["repeated"] is True
    assert api.call("GET", "/v1/admin/users/alice/export", key=keys["root"]).status_code == 404
    assert (
        api.call("POST", "/v1/admin/users/nobody/erase", key=keys["root"], json={}).status_code
        == 404
    )


# -- CLI ----------------------------------------------------------------------------------------


def test_cli_export_and_erase(tmp_path: Path, minilm: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from typer.testing import CliRunner

    from kenning import core
    from kenning.cli import app

    monkeypatch.setattr(core, "create_embedder", lambda name, **options: minilm)
    db = str(tmp_path / "cli.db")

    def run(*args: str) -> Any:
        return CliRunner().invoke(app, ["--db", db, *args], env={"COLUMNS": "200"})

    alice, bob = ["--user", "alice", "--team", "eng"], ["--user", "bob"]
    assert run("init").exit_code == 0
    assert run(*alice, "remember", "Alice takes green tea").exit_code == 0
    assert run(*alice, "remember", "Deploys on Tuesdays", "--scope", "team:eng").exit_code == 0
    assert run(*bob, "remember", "Bob takes black coffee").exit_code == 0
    # export: your own to stdout, anyone's (admins) to a file
    mine = run(*alice, "admin", "export")
    assert mine.exit_code == 0, mine.output
    lines = [json.loads(line) for line in mine.stdout.splitlines()]
    assert lines[0]["user_id"] == "alice" and lines[-1]["counts"]["memory"] == 2
    assert "Bob" not in mine.stdout
    out = tmp_path / "alice.jsonl"
    assert run("admin", "export", "alice", "-o", str(out)).exit_code == 0
    assert [json.loads(x)["type"] for x in out.read_text().splitlines()][0] == "export"
    assert run(*bob, "admin", "export", "alice").exit_code == 3  # PermissionDenied
    # erase: confirmation, permission, unknown user, then for real
    refused = run("admin", "erase", "alice")
    assert refused.exit_code == 2 and "--yes" in refused.output
    assert run(*bob, "admin", "erase", "alice", "--yes").exit_code == 3
    assert run("admin", "erase", "nobody", "--yes").exit_code == 4
    done = run("admin", "erase", "alice", "--yes", "--json")
    assert done.exit_code == 0, done.output
    report = json.loads(done.stdout)
    assert (report["memories"], report["shared_detached"]) == (1, 1)
    listed = run("list", "--all-scopes", "--json")
    contents = {m["content"]: m["created_by"] for m in json.loads(listed.stdout)["items"]}
    assert contents == {"Deploys on Tuesdays": ERASED_AUTHOR, "Bob takes black coffee": "bob"}
