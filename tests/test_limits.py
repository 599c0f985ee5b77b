"""Abuse limits: the server's per-key request rate (token buckets, 429 with
``Retry-After``, an injected clock instead of sleeps) and the per-organization
memory quota (engine-level, on both stores, through every door)."""

from __future__ import annotations

import io
import threading
from collections.abc import Callable, Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from doorkit import DoorServer
from serverkit import Api, admin_of, bootstrap_org
from typer.testing import CliRunner

from kenning import Client, Memory, PermissionDenied, QuotaExceeded, RateLimited, Settings
from kenning import core as kenning_core
from kenning.cli.app import app as cli_app
from kenning.config import Server
from kenning.embeddings import Embedder
from kenning.server import create_app
from kenning.server.ratelimit import RateLimiter
from kenning.stores.sqlite.driver import sqlite3

ACME = "acme"
#: Facts no reconciler takes for one another (each write adds a memory).
FACTS = [
    "Alice drinks green tea every morning",
    "The Porto office opens at nine",
    "Deploys go out on Tuesdays",
    "The cat is called Miso",
    "Bob plays the cello in an orchestra",
    "The staging database runs PostgreSQL 16",
]


class FakeClock:
    """Monotonic seconds that move only when told."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


# -- the token bucket ----------------------------------------------------------------------


def test_a_bucket_allows_its_burst_then_refills_at_its_rate() -> None:
    clock = FakeClock()
    limiter = RateLimiter(2.0, 3, clock=clock)
    assert [limiter.wait_s("a") for _ in range(3)] == [0.0, 0.0, 0.0]
    assert limiter.wait_s("a") == pytest.approx(0.5)  # one token comes every 0.5 s
    assert limiter.wait_s("b") == 0.0  # another caller has its own bucket
    clock.now += 0.5
    assert limiter.wait_s("a") == 0.0
    assert limiter.wait_s("a") > 0
    clock.now += 60  # a long pause refills to the burst, not beyond
    assert [limiter.wait_s("a") for _ in range(4)] == [0.0, 0.0, 0.0, pytest.approx(0.5)]


def test_a_refusal_names_whole_seconds_of_at_least_one() -> None:
    clock = FakeClock()
    slow = RateLimiter(0.1, 1, clock=clock)
    slow.check("k")
    with pytest.raises(RateLimited, match="retry in 10 s") as info:
        slow.check("k")
    assert info.value.retry_after_s == 10
    fast = RateLimiter(50.0, 1, clock=clock)
    fast.check("k")
    with pytest.raises(RateLimited) as info:
        fast.check("k")
    assert info.value.retry_after_s == 1  # 0.02 s rounds up to the header's minimum


def test_the_bucket_table_stays_bounded() -> None:
    clock = FakeClock()
    limiter = RateLimiter(1.0, 2, clock=clock, max_buckets=10)
    for i in range(10):
        limiter.check(f"k{i}")
    clock.now += 5  # every bucket has refilled: they are forgotten to make room
    limiter.check("new")
    assert len(limiter._buckets) == 1
    for i in range(25):  # none refilled: the table is cleared rather than grown
        limiter.check(f"x{i}")
    assert len(limiter._buckets) <= 10


def test_bad_limiter_settings_are_refused() -> None:
    with pytest.raises(ValueError):
        RateLimiter(0, 5)
    with pytest.raises(ValueError):
        RateLimiter(1, 0)


# -- the rate limit over HTTP ----------------------------------------------------------------


@pytest.fixture(scope="module")
def env(open_memory: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    mem: Memory = open_memory(tmp_path_factory.mktemp("limits"))
    keys = bootstrap_org(mem, ACME)
    api = Api(mem)
    try:
        yield {"api": api, "keys": keys, "mem": mem}
    finally:
        api.close()
        mem.close()


@pytest.fixture
def limited(env: dict[str, Any]) -> Iterator[FakeClock]:
    """The server of ``env`` limited to 1 request a second in bursts of 3, on a fake clock."""
    clock = FakeClock()
    app = env["api"].app
    app.state.rate_limiter = RateLimiter(1.0, 3, clock=clock)
    try:
        yield clock
    finally:
        app.state.rate_limiter = None


def _me(env: dict[str, Any], who: str) -> Any:
    return env["api"].call("GET", "/v1/me", key=env["keys"][who])


def test_the_limit_is_off_unless_configured(env: dict[str, Any]) -> None:
    assert env["api"].app.state.rate_limiter is None  # the default
    assert all(_me(env, "alice").status_code == 200 for _ in range(20))
    on = create_app(settings=Settings(server=Server(rate_limit_per_s=5, rate_limit_burst=7)))
    assert isinstance(on.state.rate_limiter, RateLimiter)
    assert (on.state.rate_limiter.rate, on.state.rate_limiter.burst) == (5.0, 7)


def test_a_key_past_its_rate_gets_429_with_retry_after(
    env: dict[str, Any], limited: FakeClock
) -> None:
    assert [_me(env, "alice").status_code for _ in range(3)] == [200, 200, 200]
    r = _me(env, "alice")
    assert r.status_code == 429
    assert r.headers["retry-after"] == "1"
    error = r.json()["error"]
    assert error["code"] == "rate_limited" and "at most 1 a second" in error["message"]
    assert error["request_id"] == r.headers["x-request-id"]
    # other keys are not slowed by alice's
    assert [_me(env, "bob").status_code for _ in range(3)] == [200, 200, 200]
    assert _me(env, "alice").status_code == 429
    limited.now += 1.0  # one token back
    assert _me(env, "alice").status_code == 200
    assert _me(env, "alice").status_code == 429


def test_a_refused_request_does_not_reach_the_engine(
    env: dict[str, Any], limited: FakeClock
) -> None:
    api, key = env["api"], env["keys"]["lena"]
    for _ in range(3):
        assert _me(env, "lena").status_code == 200
    before = env["mem"].store.footprint(ACME).memories
    body = {"content": "Lena's note past the rate limit"}
    r = api.call("POST", "/v1/memories", key=key, json=body)
    assert r.status_code == 429
    assert env["mem"].store.footprint(ACME).memories == before


def test_unauthenticated_requests_are_refused_as_before(
    env: dict[str, Any], limited: FakeClock
) -> None:
    bad = "kn_000000000000_" + "x" * 43
    statuses = {env["api"].call("GET", "/v1/me", key=bad).status_code for _ in range(5)}
    assert statuses == {401}
    assert env["api"].call("GET", "/v1/health").status_code == 200


def test_the_mcp_endpoint_shares_the_key_buckets(env: dict[str, Any], limited: FakeClock) -> None:
    api, key = env["api"], env["keys"]["root"]
    for _ in range(3):
        assert _me(env, "root").status_code == 200
    rpc = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    headers = {"Accept": "application/json, text/event-stream", "Host": "127.0.0.1:8765"}
    r = api.call("POST", "/mcp/", key=key, json=rpc, headers=headers)
    assert r.status_code == 429 and r.headers["retry-after"] == "1"
    assert r.json()["error"]["code"] == "rate_limited"
    limited.now += 1.0
    r = api.call("POST", "/mcp/", key=key, json=rpc, headers=headers)
    assert r.status_code == 200, r.text
    assert "memory_save" in r.text


# -- quotas --------------------------------------------------------------------------------


def _count(mem: Memory, org: str = "default") -> int:
    return mem.store.footprint(org).memories


@pytest.fixture
def quota_mem(make_memory: Callable[..., Memory]) -> Memory:
    return make_memory(settings=Settings(max_memories_per_org=4))


def test_no_quota_by_default(mem: Memory) -> None:
    assert mem.settings.max_memories_per_org is None
    mem.remember_many([{"content": fact} for fact in FACTS])
    assert _count(mem) == 6


def test_a_write_past_the_quota_is_refused_precisely(quota_mem: Memory) -> None:
    quota_mem.remember_many(
        [{"content": "Alice drinks green tea"}, {"content": "The office is in Porto"}]
    )
    with pytest.raises(QuotaExceeded) as info:
        quota_mem.remember_many(
            [
                {"content": "Deploys go out on Tuesdays"},
                {"content": "The cat is called Miso"},
                {"content": "Bob plays the cello"},
            ]
        )
    error = info.value
    assert isinstance(error, PermissionDenied)
    assert (error.limit, error.count, error.adding) == (4, 2, 3)
    assert "at most 4 memories" in str(error) and "holds 2" in str(error)
    assert "would add 3" in str(error)
    assert _count(quota_mem) == 2  # the batch was refused whole
    quota_mem.remember("Deploys go out on Tuesdays")
    quota_mem.remember("The cat is called Miso")
    assert _count(quota_mem) == 4
    with pytest.raises(QuotaExceeded, match="holds 4, and this write would add 1"):
        quota_mem.remember("Bob plays the cello")
    assert _count(quota_mem) == 4


def test_archived_memories_count_and_deleting_frees_room(quota_mem: Memory) -> None:
    made = quota_mem.remember_many([{"content": fact} for fact in FACTS[:4]])
    quota_mem.archive(made[0].id)
    with pytest.raises(QuotaExceeded):
        quota_mem.remember(FACTS[4])
    quota_mem.forget(made[1].id)
    quota_mem.remember(FACTS[4])
    assert _count(quota_mem) == 4


def test_the_quota_is_per_organization(make_memory: Callable[..., Memory]) -> None:
    mem = make_memory(settings=Settings(max_memories_per_org=2))
    other = admin_of("globex")
    mem.remember_many([{"content": "Acme note one"}, {"content": "Acme note two"}])
    mem.remember_many(
        [{"content": "Globex note one"}, {"content": "Globex note two"}], principal=other
    )
    with pytest.raises(QuotaExceeded, match="'globex'"):
        mem.remember("Globex note three", principal=other)
    assert (_count(mem), _count(mem, "globex")) == (2, 2)


def test_imports_are_held_to_the_quota(make_memory: Callable[..., Memory]) -> None:
    source = make_memory("source")
    source.remember_many([{"content": fact} for fact in FACTS[:3]])
    out = io.StringIO()
    assert source.export_jsonl(out) == 3
    target = make_memory("target", settings=Settings(max_memories_per_org=4))
    target.remember_many([{"content": fact} for fact in FACTS[3:5]])
    with pytest.raises(QuotaExceeded, match="holds 2, and this write would add 3"):
        target.import_jsonl(out.getvalue().splitlines())
    assert _count(target) == 2


def test_concurrent_writers_never_pass_the_quota(make_memory: Callable[..., Memory]) -> None:
    mem = make_memory(settings=Settings(max_memories_per_org=3))
    mem.remember_many([{"content": fact} for fact in FACTS[:2]])
    outcomes: list[str] = []
    start = threading.Barrier(4)

    def write(i: int) -> None:
        start.wait()
        try:
            mem.remember(FACTS[2 + i])
            outcomes.append("ok")
        except QuotaExceeded:
            outcomes.append("refused")

    threads = [threading.Thread(target=write, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert sorted(outcomes) == ["ok", "refused", "refused", "refused"]
    assert _count(mem) == 3


def test_the_client_raises_the_same_quota_error(make_door: Callable[..., Any]) -> None:
    door = make_door(settings=Settings(max_memories_per_org=2))
    door.remember("Client quota note one")
    door.remember("Client quota note two")
    with pytest.raises(QuotaExceeded, match="at most 2 memories"):
        door.remember("Client quota note three")
    with pytest.raises(QuotaExceeded):
        door.remember_many([{"content": fact} for fact in FACTS[:2]])


def test_the_rest_error_body_of_a_full_quota(make_memory: Callable[..., Memory]) -> None:
    mem = make_memory(settings=Settings(max_memories_per_org=1))
    keys = bootstrap_org(mem, ACME)
    api = Api(mem)
    try:
        first = api.call("POST", "/v1/memories", key=keys["bob"], json={"content": "Bob's one"})
        assert first.status_code == 201, first.text
        r = api.call("POST", "/v1/memories", key=keys["alice"], json={"content": "Alice's one"})
        assert r.status_code == 403
        error = r.json()["error"]
        assert error["code"] == "quota_exceeded"
        assert error["message"] == (
            "organization 'acme' may hold at most 1 memories: it holds 1, and this write "
            "would add 1; nothing was written"
        )
        assert error["request_id"] == r.headers["x-request-id"]
    finally:
        api.close()


def test_the_cli_says_why_a_write_is_refused(
    tmp_path: Path, minilm: Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(kenning_core, "create_embedder", lambda name, **options: minilm)
    runner = CliRunner()
    db = str(tmp_path / "kenning.db")
    env = {"COLUMNS": "220", "KENNING_MAX_MEMORIES_PER_ORG": "1"}

    def run(*args: str) -> Any:
        return runner.invoke(cli_app, ["--db", db, *args], env=env)

    assert run("init").exit_code == 0
    assert run("remember", "The first and only note").exit_code == 0
    refused = run("remember", "One note too many")
    assert refused.exit_code == 3
    assert refused.stderr == (
        "error: organization 'default' may hold at most 1 memories: it holds 1, and this "
        "write would add 1; nothing was written\n"
    )


@pytest.mark.stores("sqlite")
def test_sqlite_keeps_each_orgs_count_and_rebuilds_it(
    make_memory: Callable[..., Memory], store_kind: str, tmp_path: Path
) -> None:
    mem = make_memory("counted")
    made = mem.remember_many([{"content": fact} for fact in FACTS[:3]])
    mem.remember(FACTS[3], principal=admin_of("globex"))
    mem.forget(made[0].id)

    def kept(db: Path) -> dict[str, int]:
        with closing(sqlite3.connect(db)) as conn:
            return dict(conn.execute("SELECT org_id, n FROM org_memory_counts").fetchall())

    db = tmp_path / "counted" / "kenning.db"
    assert kept(db) == {"default": 2, "globex": 1}
    assert mem.store.count_memories("default", 1) == 2  # exact, whatever the cap
    mem.close()
    with closing(sqlite3.connect(db)) as conn:  # a database from before the counts
        conn.execute("DROP TRIGGER org_memory_counts_insert")
        conn.execute("DROP TRIGGER org_memory_counts_delete")
        conn.execute("DROP TABLE org_memory_counts")
        conn.execute("DELETE FROM memories WHERE id = ?", (made[1].id,))
        conn.commit()
    again = make_memory("counted")
    assert kept(db) == {"default": 1, "globex": 1}
    assert again.store.count_memories("globex", 10) == 1


def test_the_client_raises_rate_limited_with_the_wait(
    env: dict[str, Any], door_server: DoorServer
) -> None:
    url = door_server.mount(env["mem"])
    try:
        app = door_server.mux.apps[url.rsplit("/", 1)[-1]]
        app.state.rate_limiter = RateLimiter(0.25, 1, clock=FakeClock())
        with Client(url, env["keys"]["bob"]) as client:
            client.stats()
            with pytest.raises(RateLimited, match="retry in 4 s") as info:
                client.stats()
        assert info.value.retry_after_s == 4  # from the Retry-After header
    finally:
        door_server.unmount(url)
