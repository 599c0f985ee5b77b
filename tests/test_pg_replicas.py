"""PostgreSQL read replicas (``KENNING_DATABASE_READ_URLS``) against a real streaming
standby: a throwaway primary and a ``pg_basebackup -R`` hot standby of it, started
from the same binaries as the suite's server, for this module only.

How a read is shown to come from the replica: replay is paused on the standby
(``pg_wal_replay_pause()``), another writer (a second engine without replicas,
standing in for another process) adds a memory to organization ``b``, and the
replica-reading engine does not see it, while organization ``a``'s own write,
made through the replica-reading engine, is read back at once (from the primary).
"""

from __future__ import annotations

import itertools
import logging
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import psycopg
import pytest
from psycopg_pool import PoolTimeout
from serverkit import Api, bootstrap_org

from kenning import Memory, Principal, Role
from kenning.config import Lifecycle, Settings, StoreOptions
from kenning.embeddings.base import Embedder
from kenning.errors import ConfigError, InvalidInput, NotFound
from kenning.stores.postgres.replicas import ReplicaFailed, ReplicaSet, _drops, replica_read
from kenning.stores.postgres.store import PostgresStore
from kenning.stores.postgres.throwaway import ThrowawayPostgres, free_port
from kenning.stores.postgres.txn import org_context

A = Principal(org_id="a", user_id="ann", roles=frozenset({Role.ADMIN}))
B = Principal(org_id="b", user_id="bob", roles=frozenset({Role.ADMIN}))
_names = itertools.count()


class Pair:
    """A primary and its hot standby."""

    def __init__(self, primary: ThrowawayPostgres, standby: ThrowawayPostgres) -> None:
        self.primary = primary
        self.standby = standby

    def replay(self, sql: str) -> None:
        """Run ``sql`` as the superuser on the standby (pause / resume replay)."""
        with psycopg.connect(self.standby.admin_url, autocommit=True) as conn:
            conn.execute(sql)

    def flush_primary(self) -> None:
        """Flush the primary's WAL (the server runs with ``synchronous_commit=off``)."""
        with psycopg.connect(self.primary.admin_url, autocommit=True) as conn:
            conn.execute("SET synchronous_commit = on")
            # a commit that wrote WAL is flushed, and all WAL before it with it
            conn.execute("SELECT pg_logical_emit_message(true, 'kenning-test', 'flush')")

    def caught_up(self, standby: ThrowawayPostgres | None = None, timeout: float = 30.0) -> None:
        """Wait until the standby has replayed everything the primary holds now."""
        standby = standby or self.standby
        with psycopg.connect(self.primary.admin_url, autocommit=True) as conn:
            self.flush_primary()  # then everything written so far can be sent
            row = conn.execute("SELECT pg_current_wal_flush_lsn()").fetchone()
        assert row is not None
        target = row[0]
        deadline = time.monotonic() + timeout
        with psycopg.connect(standby.admin_url, autocommit=True) as conn:
            while True:
                done = conn.execute("SELECT pg_last_wal_replay_lsn() >= %s::pg_lsn", (target,))
                if (done.fetchone() or [False])[0]:
                    return
                assert time.monotonic() < deadline, "the standby did not catch up"
                time.sleep(0.05)


@pytest.fixture(scope="module")
def pair() -> Iterator[Pair]:
    base = Path(tempfile.mkdtemp(prefix="kenning-replica-"))
    base.chmod(0o755)  # the servers run as the postgres user when the tests run as root
    primary = ThrowawayPostgres(base / "primary", free_port()).start()
    standby: ThrowawayPostgres | None = None
    try:
        standby = primary.start_standby(base / "standby", free_port())
        yield Pair(primary, standby)
    finally:
        if standby is not None:
            standby.stop()
        primary.stop()
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture
def open_pair(
    pair: Pair, embedder: Embedder
) -> Iterator[Callable[..., tuple[Memory, Memory, str]]]:
    """``open_pair(**settings)``: a fresh database; an engine reading from the replica
    and one without replicas (the "other process"); both closed after the test."""
    opened: list[Memory] = []

    def make(**kw: object) -> tuple[Memory, Memory, str]:
        name = f"kr{next(_names)}"
        pair.primary.psql("postgres", f"CREATE DATABASE {name} OWNER kenning")
        url = pair.primary.url(name)
        other = Memory(settings=Settings(database_url=url), embedder=embedder, principal=A)
        opened.append(other)
        pair.caught_up()  # the database and its schema are on the standby
        store = StoreOptions(replica_check_s=3600.0, replica_max_lag_s=5.0)
        settings = Settings(
            database_url=url,
            database_read_urls=(pair.standby.url(name),),
            store=store,
            **kw,  # type: ignore[arg-type]
        )
        mem = Memory(settings=settings, embedder=embedder, principal=A)
        opened.append(mem)
        return mem, other, name

    yield make
    for mem in opened:
        mem.close()


def _home(mem: Memory) -> PostgresStore:
    store = getattr(mem.store, "home", mem.store)  # the primary's store (organizations
    assert isinstance(store, PostgresStore)  # routed elsewhere have no replicas)
    return store


def _replicas(mem: Memory) -> ReplicaSet:
    store = _home(mem)
    assert isinstance(store, PostgresStore) and store.replicas is not None
    return store.replicas


def _reads(mem: Memory) -> int:
    return sum(s.reads for s in _replicas(mem).status())


# -- configuration -----------------------------------------------------------------------


def test_read_urls_need_postgresql_urls_and_a_postgresql_primary() -> None:
    with pytest.raises(ConfigError, match="entry 2 must be a PostgreSQL URL"):
        Settings(
            database_url="postgresql://k@h/db",
            database_read_urls="postgresql://k@r1/db, sqlite:///x.db",
        )
    with pytest.raises(ConfigError, match="needs a PostgreSQL primary"):
        Settings(database_url="sqlite:///x.db", database_read_urls="postgresql://k@r1/db")
    with pytest.raises(ConfigError, match="needs a PostgreSQL primary"):
        Settings(database_read_urls="postgresql://k@r1/db")  # the default: SQLite
    given = Settings(
        database_url="postgresql://k@h/db",
        database_read_urls=" postgresql://k@r1/db,postgres://k@r2/db ,",
    )
    assert given.database_read_urls == ("postgresql://k@r1/db", "postgres://k@r2/db")


def test_read_urls_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KENNING_DATABASE_URL", "postgresql://k@h/db")
    monkeypatch.setenv("KENNING_DATABASE_READ_URLS", "postgresql://k@r1/db,postgresql://k@r2/db")
    monkeypatch.setenv("KENNING_STORE_REPLICA_MAX_LAG_S", "2.5")
    settings = Settings()
    assert settings.database_read_urls == ("postgresql://k@r1/db", "postgresql://k@r2/db")
    assert settings.store.replica_max_lag_s == 2.5
    monkeypatch.setenv("KENNING_DATABASE_URL", "sqlite:///tmp/x.db")
    with pytest.raises(ConfigError, match="needs a PostgreSQL primary"):
        Settings()


def test_a_malformed_replica_url_is_refused_at_open(embedder: Embedder, pair: Pair) -> None:
    settings = Settings(
        database_url=pair.primary.url(),
        database_read_urls=("postgresql://k@127.0.0.1:notaport/db",),
    )
    with pytest.raises(InvalidInput, match="database_read_urls: not a valid PostgreSQL URL"):
        Memory(settings=settings, embedder=embedder, principal=A)


# -- routing and read-your-writes ----------------------------------------------------------


def test_reads_come_from_the_replica_and_a_writer_reads_its_own_writes(
    pair: Pair, open_pair: Callable[..., tuple[Memory, Memory, str]]
) -> None:
    mem, other, _ = open_pair()
    a1 = mem.remember("Ann keeps the boat keys in the blue drawer", principal=A)
    b1 = other.remember("Bob parks the van behind the bakery", principal=B)
    pair.caught_up()
    _replicas(mem).check()
    assert [s.healthy for s in _replicas(mem).status()] == [True]
    before = _reads(mem)
    assert mem.get(b1.id, principal=B).content == b1.content
    assert _reads(mem) > before  # served by the replica

    pair.replay("SELECT pg_wal_replay_pause()")
    try:
        b2 = other.remember("Bob moved the van to the station car park", principal=B)
        a2 = mem.remember("Ann lent the boat keys to her cousin", principal=A)
        # the writer's own organization: its write at once, whatever the replica holds
        assert mem.get(a2.id, principal=A).content == a2.content
        listed = {r.id for r in mem.list(principal=A).items}
        assert {a1.id, a2.id} <= listed
        hits = mem.recall("who has the boat keys now?", k=5, principal=A)
        assert a2.id in {h.memory.id for h in hits.hits}
        assert _replicas(mem).pinned("a") and not _replicas(mem).pinned("b")
        # another writer's organization: the replica's older view (replay is paused)
        before = _reads(mem)
        seen = {r.id for r in mem.list(principal=B).items}
        assert b1.id in seen and b2.id not in seen
        with pytest.raises(NotFound):
            mem.get(b2.id, principal=B)
        assert _reads(mem) >= before + 2
    finally:
        pair.replay("SELECT pg_wal_replay_resume()")
    pair.caught_up()
    assert b2.id in {r.id for r in mem.list(principal=B).items}
    _replicas(mem).check()
    assert not _replicas(mem).pinned("a")  # replayed: a's reads go back to the replica
    before = _reads(mem)
    assert mem.get(a2.id, principal=A).content == a2.content
    assert _reads(mem) == before + 1


def test_recall_with_access_logging_reads_the_replica_and_writes_the_primary(
    pair: Pair, open_pair: Callable[..., tuple[Memory, Memory, str]]
) -> None:
    mem, other, _ = open_pair(lifecycle=Lifecycle(reinforce_on_recall=True, reconcile="off"))
    rec = other.remember("The office plants are watered on Fridays", principal=A)
    pair.caught_up()
    _replicas(mem).check()
    before = _reads(mem)
    hits = mem.recall("when are the plants watered?", k=3, principal=A)
    mem.flush()  # the access writes of the recall (to the primary: a standby refuses them)
    assert rec.id in {h.memory.id for h in hits.hits}
    assert _reads(mem) > before
    log = other.access_log(rec.id, principal=A)
    assert [e.access_type for e in log] == ["recall"]
    assert not _replicas(mem).pinned("a")  # bookkeeping does not pin


def test_graph_and_stats_reads_use_the_replica(
    pair: Pair, open_pair: Callable[..., tuple[Memory, Memory, str]]
) -> None:
    mem, other, _ = open_pair()
    other.remember("Chen teaches river fishing in Portland", principal=A)
    other.remember("Chen moved to Portland last spring", principal=A)
    pair.caught_up()
    _replicas(mem).check()
    before = _reads(mem)
    stats = mem.stats(principal=A)
    assert sum(layer.total_memories for layer in stats) == 2
    assert mem.graph.entity("Chen", principal=A) is not None
    assert _reads(mem) >= before + 2


def test_reads_inside_a_write_block_stay_on_the_primary(
    pair: Pair, open_pair: Callable[..., tuple[Memory, Memory, str]]
) -> None:
    mem, _, _ = open_pair()
    pair.caught_up()
    _replicas(mem).check()
    store = _home(mem)
    view = mem.policy.readable(A)
    before = _reads(mem)
    with store.atomic():
        rec = mem.remember("Written and read inside one transaction", principal=A)
        assert [r.id for r in store.get([rec.id], view)] == [rec.id]
    assert _reads(mem) == before


# -- isolation -----------------------------------------------------------------------------


def test_replica_transactions_carry_the_row_level_security_context(
    pair: Pair, open_pair: Callable[..., tuple[Memory, Memory, str]]
) -> None:
    mem, other, _ = open_pair()
    other.remember("Org a's secret recipe uses saffron", principal=A)
    other.remember("Org b's secret recipe uses cardamom", principal=B)
    pair.caught_up()
    replicas = _replicas(mem)
    replicas.check()

    def primary(context: tuple[str, str, str]) -> Iterator[psycopg.Connection]:
        raise AssertionError("the replica should serve this read")

    with replicas.routed(True), replicas.read(org_context("a"), "a", primary) as conn:  # type: ignore[arg-type]
        # no WHERE clause: only the policies keep org b's rows out
        rows = conn.execute("SELECT DISTINCT org_id FROM memories").fetchall()
        standby = conn.execute("SELECT pg_is_in_recovery()").fetchone()
    assert rows == [("a",)] and standby == (True,)
    found = mem.recall("secret recipe", k=5, principal=B)
    assert {h.memory.content for h in found.hits} == {"Org b's secret recipe uses cardamom"}


# -- failure -------------------------------------------------------------------------------


def test_a_lagging_replica_leaves_the_rotation_and_comes_back(
    pair: Pair,
    open_pair: Callable[..., tuple[Memory, Memory, str]],
    caplog: pytest.LogCaptureFixture,
) -> None:
    mem, other, _ = open_pair()
    rec = other.remember("The ferry leaves at seven", principal=A)
    pair.caught_up()
    replicas = _replicas(mem)
    t0 = time.monotonic() + 1000.0  # the checks' own clock, ahead of every real check
    replicas.check(now=t0)
    pair.replay("SELECT pg_wal_replay_pause()")
    try:
        newer = other.remember("The ferry now leaves at eight", principal=A)
        pair.flush_primary()
        replicas.check(now=t0 + 1.0)  # behind since this check
        assert replicas.status()[0].healthy
        with caplog.at_level(logging.WARNING, logger="kenning.store.replicas"):
            replicas.check(now=t0 + 7.0)  # 6 s behind: past the 5 s bound
            replicas.check(now=t0 + 8.0)
        (state,) = replicas.status()
        assert not state.healthy and "lagging" in state.reason
        assert len([r for r in caplog.records if "out of rotation" in r.getMessage()]) == 1
        before = _reads(mem)
        assert mem.get(newer.id, principal=A).content == newer.content  # from the primary
        assert rec.id in {r.id for r in mem.list(principal=A).items}
        assert _reads(mem) == before
    finally:
        pair.replay("SELECT pg_wal_replay_resume()")
    pair.caught_up()
    replicas.check(now=t0 + 9.0)
    assert replicas.status()[0].healthy
    before = _reads(mem)
    assert mem.get(newer.id, principal=A).content == newer.content
    assert _reads(mem) == before + 1


def test_metrics_show_each_replica_in_or_out_of_rotation(
    pair: Pair, open_pair: Callable[..., tuple[Memory, Memory, str]]
) -> None:
    mem, other, _ = open_pair()
    keys = bootstrap_org(mem, "watch")
    api = Api(mem)
    try:
        rec = other.remember("The harbour light is green", principal=A)
        pair.caught_up()
        replicas = _replicas(mem)
        replicas.check()
        assert mem.get(rec.id, principal=A).content == rec.content  # read on the replica
        (state,) = replicas.status()
        label = f'{{replica="{state.url}"}}'
        assert "@" in state.url and "kenning:" not in state.url  # no credentials

        def scrape() -> dict[str, float]:
            text = api.call("GET", "/metrics", key=keys["root"]).text
            return {
                line.split("{")[0]: float(line.rsplit(" ", 1)[1])
                for line in text.splitlines()
                if line.startswith("kenning_replica_") and label in line
            }

        seen = scrape()
        assert seen["kenning_replica_up"] == 1.0
        # (the scrape's own stats read may go to the replica too)
        assert 1 <= state.reads <= seen["kenning_replica_reads_total"]
        assert seen["kenning_replica_reads_total"] <= replicas.status()[0].reads
        assert seen["kenning_replica_lag_seconds"] < 5.0
        t0 = time.monotonic() + 1000.0  # the checks' own clock, ahead of every real check
        replicas.check(now=t0)
        pair.replay("SELECT pg_wal_replay_pause()")
        try:
            other.remember("The harbour light is red now", principal=A)
            pair.flush_primary()
            replicas.check(now=t0 + 1.0)
            replicas.check(now=t0 + 7.0)  # 6 s behind: past the 5 s bound
            lagging = scrape()
            assert lagging["kenning_replica_up"] == 0.0
            assert lagging["kenning_replica_lag_seconds"] >= 5.0
        finally:
            pair.replay("SELECT pg_wal_replay_resume()")
        pair.caught_up()
        replicas.check(now=t0 + 8.0)
        assert scrape()["kenning_replica_up"] == 1.0
    finally:
        api.close()


def test_a_stopped_replica_costs_no_error(
    pair: Pair, open_pair: Callable[..., tuple[Memory, Memory, str]]
) -> None:
    mem, other, _ = open_pair()
    rec = other.remember("The spare key hangs by the door", principal=A)
    pair.caught_up()
    replicas = _replicas(mem)
    replicas.check()
    assert mem.get(rec.id, principal=A).content == rec.content
    assert _reads(mem) == 1
    pair.standby.stop(remove=False)  # mid-run: the pool's connections die with it
    try:
        assert mem.get(rec.id, principal=A).content == rec.content
        assert rec.id in {r.id for r in mem.list(principal=A).items}
        hits = mem.recall("where is the spare key?", k=3, principal=A)
        assert rec.id in {h.memory.id for h in hits.hits}
        (state,) = replicas.status()
        assert not state.healthy and state.reads == 1 and "a read failed" in state.reason
        replicas.check()  # still down: stays out
        (state,) = replicas.status()
        assert not state.healthy and "unreachable" in state.reason
    finally:
        pair.standby.launch()
    pair.caught_up()
    replicas.check()  # back
    assert replicas.status()[0].healthy
    assert mem.get(rec.id, principal=A).content == rec.content
    assert _reads(mem) == 2


def test_a_replica_that_is_not_a_standby_of_this_database_stays_out(
    pair: Pair, open_pair: Callable[..., tuple[Memory, Memory, str]], embedder: Embedder
) -> None:
    _, other, name = open_pair()
    rec = other.remember("The meeting moved to Thursday", principal=A)
    settings = Settings(
        database_url=pair.primary.url(name),
        database_read_urls=(pair.primary.url(name),),  # the primary itself: not a standby
        store=StoreOptions(replica_check_s=3600.0),
    )
    with Memory(settings=settings, embedder=embedder, principal=A) as mem:
        (state,) = _replicas(mem).status()
        assert not state.healthy and "not a standby" in state.reason
        assert mem.get(rec.id, principal=A).content == rec.content
        assert _reads(mem) == 0
    settings = settings.model_copy(  # a standby of this primary, another database
        update={"database_read_urls": (pair.standby.url("kenning"),)}
    )
    with Memory(settings=settings, embedder=embedder, principal=A) as mem:
        (state,) = _replicas(mem).status()
        assert not state.healthy and "database 'kenning'" in state.reason
        assert mem.get(rec.id, principal=A).content == rec.content


def test_a_read_failing_mid_way_reruns_whole_on_the_primary(pair: Pair) -> None:
    replicas = ReplicaSet([], pair.primary.url(), max_lag_s=5.0, check_s=3600.0, pool_size=2)

    class Reader:
        def __init__(self) -> None:
            self._replicas: ReplicaSet | None = replicas
            self.calls: list[bool | None] = []

        @replica_read
        def outer(self) -> str:
            self.calls.append(replicas.mode)
            return self.inner()

        @replica_read
        def inner(self) -> str:
            if replicas.mode:
                raise ReplicaFailed("the replica went away mid-read")
            return "primary"

    try:
        reader = Reader()
        assert reader.outer() == "primary"
        assert reader.calls == [True, False]  # the outer call reran, on the primary
        assert replicas.mode is None
    finally:
        replicas.close()


def test_which_failures_drop_a_replica() -> None:
    assert _drops(psycopg.OperationalError("server closed the connection unexpectedly"))
    assert not _drops(PoolTimeout("all connections busy"))
    conflict = psycopg.errors.SerializationFailure("canceling statement due to conflict")
    assert not _drops(conflict)  # a recovery conflict: this query only
    assert not _drops(psycopg.errors.QueryCanceled("canceling statement"))
    assert not _drops(psycopg.errors.UndefinedTable("relation does not exist"))
