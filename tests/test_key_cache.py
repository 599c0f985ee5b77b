"""The server's cache of verified API keys (``kenning.server.auth.KeyCache``): a key
seen a moment ago skips the store, and any change to the directory in this process
(a revoked key, a disabled user, a demoted admin) applies to the very next request."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from serverkit import Api, admin_of, bootstrap_org

from kenning import Memory, Principal
from kenning.server import auth
from kenning.server.auth import Caller, KeyCache

ORG = "cacheco"


@pytest.fixture()
def env(open_memory: Any, tmp_path: Path) -> Iterator[dict[str, Any]]:
    mem: Memory = open_memory(tmp_path / "server")
    keys = bootstrap_org(mem, ORG)
    api = Api(mem)
    try:
        yield {"api": api, "keys": keys, "mem": mem}
    finally:
        api.close()
        mem.close()


def _count_key_reads(mem: Memory, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The key ids the store is asked for from now on."""
    asked: list[str] = []
    real = mem.store.get_api_key

    def counting(key_id: str) -> Any:
        asked.append(key_id)
        return real(key_id)

    monkeypatch.setattr(mem.store, "get_api_key", counting)
    return asked


def test_a_verified_key_skips_the_store_until_it_is_revoked(
    env: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    api, mem = env["api"], env["mem"]
    _, key = mem.directory.create_key(admin_of(ORG), "alice", "laptop")
    asked = _count_key_reads(mem, monkeypatch)
    for _ in range(3):
        assert api.call("GET", "/v1/me", key=key).json()["user"]["id"] == "alice"
    assert len(asked) == 1  # verified once, then served from the cache
    key_id = key.split("_")[1]
    mem.directory.revoke_key(admin_of(ORG), key_id)  # not through REST: same process
    before = len(asked)
    gone = api.call("GET", "/v1/me", key=key)
    assert gone.status_code == 401 and "revoked" in gone.json()["error"]["message"]
    assert len(asked) == before + 1  # checked again, not answered from the cache
    # and it stays out: failures are never cached
    assert api.call("POST", "/v1/recall", key=key, json={"query": "x"}).status_code == 401


def test_revoking_through_rest_applies_to_the_next_request(env: dict[str, Any]) -> None:
    api, keys = env["api"], env["keys"]
    made = api.call("POST", "/v1/keys", key=keys["alice"], json={"name": "phone"}).json()
    assert api.call("GET", "/v1/me", key=made["secret"]).status_code == 200
    assert api.call("DELETE", f"/v1/keys/{made['id']}", key=keys["alice"]).status_code == 200
    assert api.call("GET", "/v1/me", key=made["secret"]).status_code == 401


def test_directory_changes_apply_at_once_to_cached_keys(env: dict[str, Any]) -> None:
    api, keys, mem = env["api"], env["keys"], env["mem"]
    admin = admin_of(ORG)
    # a demoted admin loses the admin routes on the next request
    mem.directory.put_user(admin, "ann", role="admin")
    _, ann = mem.directory.create_key(admin, "ann", "k")
    assert "admin" in api.call("GET", "/v1/me", key=ann).json()["roles"]
    assert api.call("GET", "/v1/admin/audit", key=ann).status_code == 200
    mem.directory.put_user(admin, "ann", role="member")
    assert "admin" not in api.call("GET", "/v1/me", key=ann).json()["roles"]
    assert api.call("GET", "/v1/admin/audit", key=ann).status_code == 403
    # a disabled user is refused on the next request
    assert api.call("GET", "/v1/me", key=keys["bob"]).status_code == 200
    mem.directory.put_user(admin, "bob", disabled=True)
    assert api.call("GET", "/v1/me", key=keys["bob"]).status_code == 401
    # a persona switched off is refused though the key (without it) was cached
    helper = {"X-Kenning-Persona": "helper"}
    assert api.call("GET", "/v1/me", key=keys["alice"], headers=helper).status_code == 200
    mem.directory.put_persona(admin, "helper", memory_enabled=False)
    off = api.call("POST", "/v1/recall", key=keys["alice"], headers=helper, json={"query": "x"})
    assert off.status_code == 403


def test_the_cache_holds_the_exact_key_and_persona(env: dict[str, Any]) -> None:
    api, keys = env["api"], env["keys"]
    alice = keys["alice"]
    assert api.call("GET", "/v1/me", key=alice).status_code == 200
    # same key id, another secret: not served from alice's entry
    forged = alice[: -len("x")] + ("A" if alice[-1] != "A" else "B")
    assert api.call("GET", "/v1/me", key=forged).status_code == 401
    # a persona she may not use is checked, not taken from the cached entry
    other = {"X-Kenning-Persona": "nobody"}
    assert api.call("GET", "/v1/me", key=alice, headers=other).status_code == 400
    me = api.call("GET", "/v1/me", key=alice, headers={"X-Kenning-Persona": "helper"})
    assert me.status_code == 200
    assert api.call("GET", "/v1/me", key=alice).status_code == 200


def test_entries_expire_and_follow_the_directory_generation(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    now = [100.0]
    monkeypatch.setattr(auth.time, "monotonic", lambda: now[0])
    cache = KeyCache(ttl_s=2.0, max_entries=2)
    caller = Caller(Principal(org_id="o", user_id="u"), "abc")
    cache.put("kn_token", None, 7, caller)
    assert cache.get("kn_token", None, 7) is caller
    assert cache.get("kn_token", "helper", 7) is None  # another persona: another entry
    assert cache.get("kn_other", None, 7) is None
    assert cache.get("kn_token", None, 8) is None  # the directory changed: dropped
    assert cache.get("kn_token", None, 7) is None
    cache.put("kn_token", None, 7, caller)
    now[0] += 2.0  # another process's change is seen this late at most
    assert cache.get("kn_token", None, 7) is None
    for i in range(5):  # bounded
        cache.put(f"kn_{i}", None, 7, caller)
        assert len(cache._entries) <= 2
