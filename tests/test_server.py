"""The REST door on both stores, in-process through ``httpx.ASGITransport``:
authentication, seed 000's access matrix as a table, cross-tenant isolation,
review, switches, audit, errors and metrics."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jwt
import pytest
from fastapi.routing import APIRoute
from serverkit import Api, admin_of, bootstrap_org

from kenning import Memory, Settings
from kenning.config import Server

ACME = "acme"


@pytest.fixture(scope="module")
def env(open_memory: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """One server per store kind for the module, with the acme organization set up."""
    mem: Memory = open_memory(tmp_path_factory.mktemp("server"))
    keys = bootstrap_org(mem, ACME)
    api = Api(mem)
    try:
        yield {"api": api, "keys": keys, "mem": mem}
    finally:
        api.close()
        mem.close()


def _write(
    env: dict[str, Any], who: str, content: str, scope: str | None = None, **fields: Any
) -> Any:
    body = {"content": content, **({"scope": scope} if scope else {}), **fields}
    return env["api"].call("POST", "/v1/memories", key=env["keys"][who], json=body)


def _count(mem: Memory) -> int:
    return sum(s.total_memories for s in mem.stats(principal=admin_of(ACME), scopes="all"))


# -- authentication --------------------------------------------------------------------


def _routes(env: dict[str, Any]) -> list[APIRoute]:
    """Every API route (included routers are kept whole by FastAPI; open them)."""
    found: list[APIRoute] = []
    for r in env["api"].app.routes:
        inner = getattr(r, "original_router", None)
        found.extend(x for x in (inner.routes if inner else [r]) if isinstance(x, APIRoute))
    return found


def test_every_route_but_health_and_ready_needs_credentials(env: dict[str, Any]) -> None:
    api = env["api"]
    assert api.call("GET", "/v1/health").json() == {"status": "ok"}
    assert api.call("GET", "/v1/ready").json()["status"] == "ready"
    checked = 0
    for route in _routes(env):
        if route.name in ("health", "ready"):
            continue
        path = route.path.replace("{", "").replace("}", "")
        for method in route.methods - {"HEAD"}:
            for key in (None, "kn_000000000000_" + "x" * 43, "not-a-key"):
                r = api.call(method, path, key=key, json={})
                assert r.status_code == 401, (method, path, key, r.text)
                assert r.json()["error"]["code"] == "unauthenticated"
                checked += 1
    assert checked >= 3 * 40


def test_keys_are_shown_once_hashed_and_revocable(env: dict[str, Any]) -> None:
    api, keys, mem = env["api"], env["keys"], env["mem"]
    made = api.call("POST", "/v1/keys", key=keys["alice"], json={"name": "laptop"})
    assert made.status_code == 201
    secret, key_id = made.json()["secret"], made.json()["id"]
    assert secret.startswith(f"kn_{key_id}_")
    listed = api.call("GET", "/v1/keys", key=keys["alice"]).json()
    assert key_id in {k["id"] for k in listed} and all("secret" not in k for k in listed)
    stored = mem.store.get_api_key(key_id)
    assert stored is not None and secret.split("_", 2)[2] not in stored.secret_hash
    assert api.call("GET", "/v1/me", key=secret).json()["user"]["id"] == "alice"
    # a member may not mint keys for someone else, nor revoke theirs
    other = api.call("POST", "/v1/keys", key=keys["alice"], json={"name": "x", "user_id": "bob"})
    assert other.status_code == 403
    bob_keys = mem.directory.keys(admin_of(ACME), "bob")
    assert api.call("DELETE", f"/v1/keys/{bob_keys[0].id}", key=keys["alice"]).status_code == 403
    assert api.call("DELETE", f"/v1/keys/{key_id}", key=keys["alice"]).status_code == 200
    gone = api.call("GET", "/v1/me", key=secret)
    assert gone.status_code == 401 and "revoked" in gone.json()["error"]["message"]


def test_a_disabled_user_cannot_authenticate(env: dict[str, Any]) -> None:
    api, mem = env["api"], env["mem"]
    mem.directory.put_user(admin_of(ACME), "carol", role="member")
    _, key = mem.directory.create_key(admin_of(ACME), "carol", "k")
    assert api.call("GET", "/v1/me", key=key).status_code == 200
    r = api.call("PUT", "/v1/admin/users/carol", key=env["keys"]["root"], json={"disabled": True})
    assert r.status_code == 200
    assert api.call("GET", "/v1/me", key=key).status_code == 401


def test_bearer_jwt_with_a_configured_key(env: dict[str, Any], tmp_path: Path) -> None:
    mem: Memory = env["mem"]
    secret = "s3cret-for-tests-only-0123456789abcdef"
    settings = mem.settings.model_copy(update={"server": Server(jwt_key=secret)})
    jwt_mem = Memory(settings=settings, store=mem.store, embedder=mem.embedder, clock=mem.clock)
    api = Api(jwt_mem)
    try:
        exp = dt.datetime.now(dt.UTC) + dt.timedelta(minutes=5)
        good = jwt.encode({"sub": "alice", "org": ACME, "exp": exp}, secret, "HS256")
        me = api.call("GET", "/v1/me", key=good).json()
        assert me["user"]["id"] == "alice" and me["key_id"] is None
        expired = jwt.encode(
            {"sub": "alice", "org": ACME, "exp": exp - dt.timedelta(hours=1)}, secret, "HS256"
        )
        forged = jwt.encode(
            {"sub": "root", "org": ACME, "exp": exp},
            "wrong-key-0123456789abcdef0123456789",
            "HS256",
        )
        stranger = jwt.encode({"sub": "mallory", "org": ACME, "exp": exp}, secret, "HS256")
        for token in (expired, forged, stranger):
            assert api.call("GET", "/v1/me", key=token).status_code == 401
    finally:
        api.close()


# -- seed 000's access matrix ---------------------------------------------------------

#: Seed 000: regular user / team lead / admin / anonymous x personal / shared /
#: organization. "own" personal is the caller's, "other" is another user's;
#: "team" is the caller's team (eng), "foreign team" one they are not in (ops).
MATRIX = [
    # role,      target,          read,  write
    ("alice", "own personal", True, True),
    ("alice", "other personal", False, False),
    ("alice", "team", True, True),
    ("alice", "foreign team", False, False),
    ("alice", "organization", True, False),
    ("lena", "own personal", True, True),
    ("lena", "other personal", False, False),
    ("lena", "team", True, True),
    ("lena", "foreign team", False, False),
    ("lena", "organization", True, False),
    ("root", "own personal", True, True),
    ("root", "other personal", True, True),
    ("root", "team", True, True),
    ("root", "foreign team", True, True),
    ("root", "organization", True, True),
    (None, "own personal", False, False),
    (None, "team", False, False),
    (None, "organization", False, False),
]


def _scope_of(who: str | None, target: str) -> str:
    me = who or "alice"
    return {
        "own personal": f"user:{me}",
        "other personal": "user:bob",
        "team": "team:eng",
        "foreign team": "team:ops",
        "organization": f"org:{ACME}",
    }[target]


@pytest.mark.parametrize(("who", "target", "can_read", "can_write"), MATRIX)
def test_access_matrix(
    env: dict[str, Any], who: str | None, target: str, can_read: bool, can_write: bool
) -> None:
    api, mem = env["api"], env["mem"]
    scope = _scope_of(who, target)
    seeded = mem.remember(
        f"matrix fact for {who} in {target}", scope=scope, principal=admin_of(ACME)
    )
    key = env["keys"][who] if who else None
    read = api.call("GET", f"/v1/memories/{seeded.id}", key=key)
    listed = api.call("GET", "/v1/memories", key=key, params={"scope": scope})
    assert (read.status_code == 200) is can_read, read.text
    if can_read:
        assert seeded.id in {m["id"] for m in listed.json()["items"]}
    else:
        assert read.status_code in (401, 404) and listed.status_code in (401, 403)
        assert "matrix fact" not in read.text + listed.text
    before = _count(mem)
    body = {"content": f"written by {who} into {target}", "scope": scope}
    wrote = api.call("POST", "/v1/memories", key=key, json=body)
    changed = api.call(
        "PATCH", f"/v1/memories/{seeded.id}", key=key, json={"content": f"changed by {who}"}
    )
    assert (wrote.status_code == 201) is can_write, wrote.text
    assert (changed.status_code == 200) is can_write, changed.text
    if not can_write:
        assert wrote.status_code in (401, 403) and changed.status_code in (401, 403, 404)
        assert _count(mem) == before
        assert mem.get(seeded.id, principal=admin_of(ACME)).content == seeded.content


# -- cross-tenant ----------------------------------------------------------------------

_BODIES: dict[str, dict[str, Any]] = {
    "memory.update": {"content": "x"},
    "memory.feedback": {"kind": "upvote"},
    "review.approve": {},
    "review.reject": {},
    "session.ingest": {"messages": ["hello"]},
}


def test_cross_tenant_attempts_on_every_route_reveal_nothing(env: dict[str, Any]) -> None:
    api, mem = env["api"], env["mem"]
    secret = mem.remember(
        "acme launch code is TANGERINE",
        scope="user:alice",
        principal=admin_of(ACME),
        session_id="acme-s1",
    )
    pending = mem.remember(
        "acme pending rumour TANGERINE",
        scope=f"org:{ACME}",
        status="pending_review",
        principal=admin_of(ACME),
    )
    _, evil = mem.directory.bootstrap("globex", "eve", "test")
    before = _count(mem)
    stats = api.call("GET", "/v1/stats", key=evil).json()  # globex holds nothing yet
    assert sum(s["total_memories"] for s in stats) == 0
    ids = {
        "memory_id": secret.id,
        "session_id": "acme-s1",
        "name": "TANGERINE",
        "key_id": mem.directory.keys(admin_of(ACME), "alice")[0].id,
    }
    tried = 0
    for route in _routes(env):
        params = [
            p for p in ("memory_id", "session_id", "name", "key_id") if f"{{{p}}}" in route.path
        ]
        if not params:
            continue
        for method in route.methods - {"HEAD"}:
            path = route.path
            for p in params:
                value = pending.id if route.name.startswith("review.") else ids[p]
                path = path.replace(f"{{{p}}}", value)
            r = api.call(method, path, key=evil, json=_BODIES.get(route.name, {}))
            tried += 1
            body = r.text  # the probe name may be echoed in an error; the content never
            assert "launch code" not in body and "rumour" not in body, (route.name, body)
            # session ids are the caller's own namespace: eve's "acme-s1" is hers
            if route.name not in ("session.context", "session.ingest"):
                assert r.status_code in (403, 404), (route.name, r.status_code, body)
    assert tried >= 12
    # listings, recall, stats, graph, audit of the other tenant show none of acme
    for method, path, kw in (
        ("GET", "/v1/memories", {"params": {"scope": "all"}}),
        ("POST", "/v1/recall", {"json": {"query": "launch code TANGERINE", "scopes": "all"}}),
        ("GET", "/v1/review", {}),
        ("GET", "/v1/admin/audit", {}),
        ("GET", "/v1/admin/users", {}),
        ("GET", "/v1/keys", {}),
        ("GET", "/v1/graph/neighbours", {"params": {"entity": "alice"}}),
    ):
        r = api.call(method, path, key=evil, **kw)
        leak = ("launch code", "rumour", '"alice"', '"user:alice"')
        assert r.status_code in (200, 404) and not any(x in r.text for x in leak), (path, r.text)
    for scope in ("user:alice", f"org:{ACME}", "team:eng"):
        r = api.call("POST", "/v1/recall", key=evil, json={"query": "launch", "scopes": [scope]})
        assert r.status_code in (200, 403) and "launch code" not in r.text
    assert _count(mem) == before
    assert mem.get(secret.id, principal=admin_of(ACME)).content == secret.content


# -- users manage their own memories -----------------------------------------------------


def test_users_see_edit_and_delete_their_own_memories(env: dict[str, Any]) -> None:
    api, keys = env["api"], env["keys"]
    mine = _write(env, "bob", "Bob keeps his bike in the garage").json()["memory"]
    assert mine["scope"] == "user:bob"
    edited = api.call(
        "PATCH",
        f"/v1/memories/{mine['id']}",
        key=keys["bob"],
        json={"content": "Bob keeps his bike in the shed", "expected_version": 1},
    )
    assert edited.status_code == 200 and edited.json()["version"] == 2
    stale = api.call(
        "PATCH",
        f"/v1/memories/{mine['id']}",
        key=keys["bob"],
        json={"content": "stale", "expected_version": 1},
    )
    assert stale.status_code == 409
    history = api.call("GET", f"/v1/memories/{mine['id']}/history", key=keys["bob"]).json()
    assert [h["op"] for h in history] == ["create", "update"]
    assert api.call("DELETE", f"/v1/memories/{mine['id']}", key=keys["alice"]).status_code == 404
    assert api.call("DELETE", f"/v1/memories/{mine['id']}", key=keys["bob"]).status_code == 204
    assert api.call("GET", f"/v1/memories/{mine['id']}", key=keys["bob"]).status_code == 404
    r = api.call("POST", "/v1/recall", key=keys["bob"], json={"query": "where is the bike"})
    assert mine["id"] not in {h["memory"]["id"] for h in r.json()["hits"]}


def test_recall_and_upsert_and_batch_round_trip(env: dict[str, Any]) -> None:
    api, key = env["api"], env["keys"]["alice"]
    put = api.call(
        "PUT",
        "/v1/memories/by-key",
        key=key,
        json={"key": "favourite tea", "content": "Alice drinks oolong"},
    )
    again = api.call(
        "PUT",
        "/v1/memories/by-key",
        key=key,
        json={"key": "favourite tea", "content": "Alice drinks sencha"},
    )
    assert put.status_code == again.status_code == 200
    assert put.json()["id"] == again.json()["id"] and again.json()["content"].endswith("sencha")
    batch = api.call(
        "POST",
        "/v1/memories/batch",
        key=key,
        json={
            "items": [
                {"content": "The eng standup is at 9:30", "scope": "team:eng"},
                {"content": "Alice's laptop is a ThinkPad"},
            ]
        },
    )
    assert batch.status_code == 201 and [w["action"] for w in batch.json()] == ["add", "add"]
    hits = api.call(
        "POST",
        "/v1/recall",
        key=key,
        json={"query": "what tea does Alice drink?", "k": 3, "explain": True},
    ).json()
    assert hits["hits"][0]["memory"]["content"] == "Alice drinks sencha"
    first = hits["hits"][0]
    assert first["explain"]["final"] == first["explain"]["priority"]
    assert 0 <= first["score"] <= 1 and set(first["explain"]["calibration"]["inputs"])
    hint = api.call("POST", "/v1/hint", key=key, json={"query": "tea"}).json()["hint"]
    assert "sencha" in hint


# -- review ---------------------------------------------------------------------------------


def test_team_review_queue_for_leads(env: dict[str, Any]) -> None:
    api, keys, mem = env["api"], env["keys"], env["mem"]
    r = api.call("PUT", "/v1/admin/teams/eng", key=keys["root"], json={"review": True})
    assert r.status_code == 200 and r.json()["review"] is True
    try:
        held = _write(env, "alice", "The eng on-call rotation changes on Mondays", "team:eng")
        assert held.json()["memory"]["status"] == "pending_review"
        direct = _write(env, "lena", "Eng retro is every other Friday", "team:eng")
        assert direct.json()["memory"]["status"] == "active"  # the lead's own write
        mid = held.json()["memory"]["id"]
        assert mid in {
            m["id"] for m in api.call("GET", "/v1/review", key=keys["lena"]).json()["items"]
        }
        for outsider in ("bob", "alice"):
            queue = api.call("GET", "/v1/review", key=keys[outsider]).json()["items"]
            assert mid not in {m["id"] for m in queue}
            denied = api.call("POST", f"/v1/review/{mid}/approve", key=keys[outsider], json={})
            assert denied.status_code in (403, 404)
        recall = api.call(
            "POST",
            "/v1/recall",
            key=keys["alice"],
            json={"query": "on-call rotation", "scopes": ["team:eng"]},
        ).json()
        assert mid not in {h["memory"]["id"] for h in recall["hits"]}  # pending: not recalled
        ok = api.call(
            "POST",
            f"/v1/review/{mid}/approve",
            key=keys["lena"],
            json={"changes": {"content": "The eng on-call rotation changes on Monday at 10:00"}},
        )
        assert ok.status_code == 200 and ok.json()["status"] == "active"
        assert ok.json()["content"].endswith("10:00")
        ops = [h.op for h in mem.history(mid, principal=admin_of(ACME))]
        assert ops[-1] == "approve"
        again = api.call("POST", f"/v1/review/{mid}/approve", key=keys["lena"], json={})
        assert again.status_code == 409
        a = _write(env, "alice", "Eng uses trunk-based development", "team:eng").json()
        b = _write(env, "alice", "Eng deploys from the release branch", "team:eng").json()
        bulk = api.call(
            "POST",
            "/v1/review/bulk",
            key=keys["lena"],
            json={
                "ids": [a["memory"]["id"], b["memory"]["id"], "nope"],
                "action": "reject",
                "reason": "not agreed",
            },
        )
        assert set(bulk.json()["done"]) == {a["memory"]["id"], b["memory"]["id"]}
        assert set(bulk.json()["failed"]) == {"nope"}
        assert (
            api.call("GET", f"/v1/memories/{a['memory']['id']}", key=keys["lena"]).status_code
            == 404
        )
    finally:
        api.call("PUT", "/v1/admin/teams/eng", key=keys["root"], json={"review": False})


def test_org_layer_writes_wait_for_approval_when_review_is_on(env: dict[str, Any]) -> None:
    api, keys = env["api"], env["keys"]
    assert (
        api.call("PATCH", "/v1/admin/org", key=keys["root"], json={"review": True}).status_code
        == 200
    )
    try:
        held = _write(env, "root", "Expense reports are due on the 5th", f"org:{ACME}").json()
        assert held["memory"]["status"] == "pending_review"
        assert api.call(
            "POST", f"/v1/review/{held['memory']['id']}/approve", key=keys["lena"], json={}
        ).status_code in (403, 404)
        ok = api.call(
            "POST", f"/v1/review/{held['memory']['id']}/approve", key=keys["root"], json={}
        )
        assert ok.json()["status"] == "active"
        seen = api.call("GET", f"/v1/memories/{held['memory']['id']}", key=keys["alice"])
        assert seen.status_code == 200
    finally:
        api.call("PATCH", "/v1/admin/org", key=keys["root"], json={"review": False})


# -- switches and modes -------------------------------------------------------------------


def test_memory_switches_for_org_team_and_persona(env: dict[str, Any]) -> None:
    api, keys = env["api"], env["keys"]
    persona = {"X-Kenning-Persona": "helper"}
    saved = api.call(
        "POST",
        "/v1/memories",
        key=keys["alice"],
        headers=persona,
        json={"content": "Alice asked the helper to use metric units"},
    )
    assert saved.json()["memory"]["scope"] == "persona_user:helper/alice"
    api.call("PUT", "/v1/admin/personas/helper", key=keys["root"], json={"memory_enabled": False})
    api.call("PUT", "/v1/admin/teams/eng", key=keys["root"], json={"memory_enabled": False})
    try:
        off = api.call(
            "POST", "/v1/recall", key=keys["alice"], headers=persona, json={"query": "units"}
        )
        assert off.status_code == 403 and "persona" in off.json()["error"]["message"]
        team = _write(env, "alice", "Eng note while switched off", "team:eng")
        assert team.status_code == 403
        assert _write(env, "alice", "Alice's own note still works").status_code == 201
    finally:
        on = {"memory_enabled": True}
        api.call("PUT", "/v1/admin/personas/helper", key=keys["root"], json=on)
        api.call("PUT", "/v1/admin/teams/eng", key=keys["root"], json=on)
    api.call("PATCH", "/v1/admin/org", key=keys["root"], json={"memory_enabled": False})
    try:
        assert api.call("GET", "/v1/memories", key=keys["alice"]).status_code == 403
        assert api.call("GET", "/v1/memories", key=keys["root"]).status_code == 200
    finally:
        api.call("PATCH", "/v1/admin/org", key=keys["root"], json={"memory_enabled": True})
    assert api.call("GET", "/v1/memories", key=keys["alice"]).status_code == 200


def test_org_modes_decide_the_default_recall(env: dict[str, Any]) -> None:
    api, keys, mem = env["api"], env["keys"], env["mem"]
    mem.remember(
        "The office wifi password rotates monthly", scope=f"org:{ACME}", principal=admin_of(ACME)
    )
    ask = {"query": "office wifi password"}

    def scopes() -> set[str]:
        hits = api.call("POST", "/v1/recall", key=keys["alice"], json=ask).json()["hits"]
        return {h["memory"]["scope"] for h in hits}

    assert f"org:{ACME}" in scopes()
    api.call("PATCH", "/v1/admin/org", key=keys["root"], json={"mode": "personal"})
    try:
        assert f"org:{ACME}" not in scopes()
        assert api.call("GET", "/v1/me", key=keys["alice"]).json()["mode"] == "personal"
    finally:
        api.call("PATCH", "/v1/admin/org", key=keys["root"], json={"mode": "org"})


# -- audit, errors, metrics ----------------------------------------------------------------


def test_audit_log_records_writes_and_admin_actions(env: dict[str, Any]) -> None:
    api, keys = env["api"], env["keys"]
    wrote = _write(env, "bob", "Bob's audit probe").json()["memory"]["id"]
    api.call("PUT", "/v1/admin/users/dave", key=keys["root"], json={"role": "member"})
    api.call("GET", f"/v1/memories/{wrote}", key=keys["root"])  # an admin read
    lines = api.call("GET", "/v1/admin/audit", key=keys["root"], params={"limit": 50}).json()
    by_action = {(a["actor"], a["action"], a["target"]) for a in lines}
    assert ("bob", "memory.remember", wrote) in by_action
    assert ("root", "admin.user.create", "dave") in by_action
    assert ("root", "memory.get", wrote) in by_action
    only = api.call(
        "GET", "/v1/admin/audit", key=keys["root"], params={"action": "admin.", "user": "root"}
    ).json()
    assert only and all(a["action"].startswith("admin.") and a["actor"] == "root" for a in only)
    assert [a["seq"] for a in lines] == sorted((a["seq"] for a in lines), reverse=True)
    assert api.call("GET", "/v1/admin/audit", key=keys["alice"]).status_code == 403


def test_bad_input_gets_one_error_schema_and_writes_nothing(env: dict[str, Any]) -> None:
    api, key, mem = env["api"], env["keys"]["alice"], env["mem"]
    before = _count(mem)
    cases = [
        ("POST", "/v1/memories", {"content": ""}, 422),
        ("POST", "/v1/memories", {"content": "x", "confidence": 2}, 422),
        ("POST", "/v1/memories", {"content": "x", "scope": "planet:mars"}, 400),
        ("POST", "/v1/memories", {"content": "x", "bogus": 1}, 422),
        ("POST", "/v1/memories", {"content": "x" * 30_000}, 400),
        (
            "POST",
            "/v1/memories/batch",
            {"items": [{"content": "ok"}, {"content": "x", "scope": "nope"}]},
            400,
        ),
        ("POST", "/v1/recall", {"query": "x", "k": 100_000}, 400),
        ("POST", "/v1/recall", {"query": "x", "filters": {"colour": "red"}}, 400),
        ("GET", "/v1/memories?limit=0", None, 422),
    ]
    for method, path, body, status in cases:
        r = api.call(method, path, key=key, json=body, headers={"X-Request-Id": "req-42"})
        assert r.status_code == status, (path, body, r.text)
        err = r.json()["error"]
        assert err["message"] and err["code"] and err["request_id"] == "req-42"
        assert r.headers["x-request-id"] == "req-42"
    big = api.call(
        "POST",
        "/v1/memories",
        key=key,
        content=b"{" + b" " * 5_000_000 + b"}",
        headers={"Content-Type": "application/json"},
    )
    assert big.status_code == 413 and big.json()["error"]["code"] == "too_large"
    bad_utf8 = api.call(
        "POST",
        "/v1/memories",
        key=key,
        content=b'{"content": "\xff\xfe"}',
        headers={"Content-Type": "application/json"},
    )
    assert bad_utf8.status_code in (400, 422)
    assert _count(mem) == before


def test_metrics_for_admins(env: dict[str, Any]) -> None:
    api, keys = env["api"], env["keys"]
    api.call("POST", "/v1/recall", key=keys["alice"], json={"query": "anything"})
    text = api.call("GET", "/metrics", key=keys["root"]).text
    assert 'kenning_http_requests_total{method="POST",route="memory.recall",status="200"}' in text
    assert "kenning_recall_stage_seconds_bucket" in text and 'stage="total"' in text
    assert 'kenning_memories{layer="personal",status="active"}' in text
    assert "kenning_replica_up" not in text  # no read replicas configured
    runs = next(line for line in text.splitlines() if line.startswith("kenning_embed_runs_total "))
    texts = next(
        line for line in text.splitlines() if line.startswith("kenning_embed_texts_total ")
    )
    assert 0 < float(runs.split()[1]) <= float(texts.split()[1])
    size = next(line for line in text.splitlines() if line.startswith("kenning_store_bytes "))
    assert float(size.split()[1]) > 0  # the file(s), or the PostgreSQL database
    assert api.call("GET", "/metrics", key=keys["alice"]).status_code == 403


def test_openapi_documents_every_route_with_the_error_schema(env: dict[str, Any]) -> None:
    doc = env["api"].call("GET", "/openapi.json").json()
    assert doc["info"]["title"] == "kenning"
    ops = [(p, m, o) for p, item in doc["paths"].items() for m, o in item.items()]
    assert len(ops) >= 40
    for path, method, op in ops:
        if path in ("/v1/health",):
            continue
        assert "401" in op["responses"] or path == "/v1/ready", (method, path)
    assert "ErrorResponse" in doc["components"]["schemas"]


def test_mcp_over_http_on_the_server_uses_the_api_key(env: dict[str, Any]) -> None:
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    api, keys = env["api"], env["keys"]

    async def as_caller(api_key: str, tool: str, **args: Any) -> Any:
        async with httpx2.AsyncClient(
            transport=httpx2.ASGITransport(app=api.app),
            base_url="http://127.0.0.1:8765",
            headers={"Authorization": f"Bearer {api_key}"},
        ) as http:
            transport = streamable_http_client("http://127.0.0.1:8765/mcp/", http_client=http)
            async with Client(transport) as client:
                return await client.call_tool(tool, args)

    saved = api.run(as_caller(keys["bob"], "memory_save", key="bob mcp", value="Bob's MCP note"))
    assert not saved.is_error, saved
    mine = api.run(as_caller(keys["bob"], "memory_recall", query="MCP note"))
    theirs = api.run(as_caller(keys["alice"], "memory_recall", query="MCP note"))

    def text(result: Any) -> str:
        return " ".join(c.text for c in result.content)

    assert "Bob's MCP note" in text(mine) and "Bob's MCP note" not in text(theirs)
    bad = api.run(as_caller("kn_000000000000_" + "x" * 43, "memory_recall", query="MCP"))
    assert bad.is_error and "unknown API key" in text(bad)


def test_insight_traffic_curves_entities_and_access_log(env: dict[str, Any]) -> None:
    api, key = env["api"], env["keys"]["bob"]
    made = _write(env, "bob", "Bob met Priya Raman in Lisbon about the Falcon project").json()
    mid = made["memory"]["id"]
    assert (
        api.call(
            "POST", f"/v1/memories/{mid}/feedback", key=key, json={"kind": "upvote"}
        ).status_code
        == 200
    )
    env["mem"].reinforce(mid, principal=env["mem"].directory.principal(ACME, "bob"))
    env["mem"].flush()
    days = api.call("GET", "/v1/insight/traffic", key=key, params={"days": 7}).json()
    assert len(days) == 7 and sum(d.get("reinforce", 0) for d in days) == 1
    other = api.call("GET", "/v1/insight/traffic", key=env["keys"]["alice"]).json()
    assert sum(d.get("reinforce", 0) for d in other) == 0  # bob's memory is not alice's
    log = api.call("GET", f"/v1/memories/{mid}/access-log", key=key).json()
    assert [a["access_type"] for a in log] == ["reinforce"]
    assert (
        api.call("GET", f"/v1/memories/{mid}/access-log", key=env["keys"]["alice"]).status_code
        == 404
    )
    names = {e["label"] for e in api.call("GET", f"/v1/memories/{mid}/entities", key=key).json()}
    assert {"Priya Raman", "Lisbon"} <= names
    curves = api.call(
        "GET", "/v1/insight/strength-curves", key=key, params={"days": 100, "points": 5}
    ).json()
    semantic = [s for _, s in curves["semantic"]]
    assert semantic == sorted(semantic, reverse=True) and semantic[0] > semantic[-1]
    assert curves["semantic, important"][-1][1] > curves["semantic, trivial"][-1][1]
    assert api.call("GET", "/v1/sectors", key=key).status_code == 200


def test_settings_of_the_server_come_from_the_environment(monkeypatch: Any) -> None:
    monkeypatch.setenv("KENNING_SERVER_PORT", "9911")
    monkeypatch.setenv("KENNING_SERVER_MAX_K", "50")
    s = Settings()
    assert s.server.port == 9911 and s.server.max_k == 50
