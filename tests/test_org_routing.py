"""Organizations spread over two real PostgreSQL servers, and ``kenning migrate --org``.

The session's server (``pg_server``) holds the home database (directory, audit
log, routing table); a second throwaway server started here holds the other
database. Every check of *where* a row lives reads the two servers directly,
as the superuser, past kenning.
"""

from __future__ import annotations

import itertools
import json
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from conftest import T0
from serverkit import Api, bootstrap_org
from typer.testing import CliRunner

from kenning import FixedClock, Memory, Principal, Settings
from kenning.cli.app import app
from kenning.embeddings import Embedder
from kenning.errors import Conflict, InvalidInput, NotFound, StoreError
from kenning.lifecycle.model import Policy
from kenning.migrate import move_org
from kenning.models import Role
from kenning.stores.postgres import orgmove
from kenning.stores.postgres.orgcopy import ORG_TABLES
from kenning.stores.postgres.orgmove import move_organization
from kenning.stores.postgres.routes import PgRouteTable
from kenning.stores.postgres.store import PostgresStore
from kenning.stores.postgres.throwaway import ThrowawayPostgres, free_port
from kenning.stores.postgres.txn import ORG_WRITES_LOCK
from kenning.stores.routed import OrganizationMoving, Route, RoutedStore

pytestmark = pytest.mark.stores("postgresql")

_names = itertools.count()
#: Every table an organization's memory data lives in (postings derive from memories).
DATA_TABLES = [t.name for t in ORG_TABLES] + ["postings"]


@pytest.fixture(scope="module")
def far_server() -> Iterator[ThrowawayPostgres]:
    """A second PostgreSQL server, for the databases organizations move to."""
    server = ThrowawayPostgres(Path(tempfile.mkdtemp(prefix="kenning-pg2-")), free_port())
    server.start()
    try:
        yield server
    finally:
        server.stop()


def _fresh(server: ThrowawayPostgres) -> str:
    name = f"route{next(_names)}"
    server.psql("postgres", f"CREATE DATABASE {name} OWNER kenning")
    return server.url(name)


@pytest.fixture
def home(pg_server: ThrowawayPostgres) -> str:
    """A fresh home database on the session's server."""
    return _fresh(pg_server)


@pytest.fixture
def far(far_server: ThrowawayPostgres) -> str:
    """A fresh database on the second server."""
    return _fresh(far_server)


@pytest.fixture
def open_mem(home: str, embedder: Embedder) -> Iterator[Callable[[], Memory]]:
    made: list[Memory] = []

    def make() -> Memory:
        mem = Memory(settings=Settings(database_url=home), embedder=embedder, clock=FixedClock(T0))
        made.append(mem)
        return mem

    yield make
    for mem in made:
        mem.close()


def admin(org: str) -> Principal:
    return Principal(org_id=org, user_id=f"root-{org}", roles=frozenset({Role.ADMIN}))


def sql(url: str, query: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Run ``query`` as the superuser (no row-level security) in the database of ``url``."""
    with psycopg.connect(url.replace("postgresql://kenning@", "postgresql://postgres@")) as conn:
        return conn.execute(query, params).fetchall()


def org_rows(url: str, org: str) -> dict[str, int]:
    """Rows of ``org`` per data table in the database of ``url``."""
    return {
        t: int(sql(url, f"SELECT count(*) FROM {t} WHERE org_id = %s", (org,))[0][0])
        for t in DATA_TABLES
    }


def contents(mem: Memory, org: str) -> list[str]:
    return sorted(r.content for r in mem.list(principal=admin(org), scopes="all", limit=500).items)


def fill(mem: Memory, org: str, n: int = 6) -> list[str]:
    """Memories with history, a deletion, graph rows, a sector, a policy and accesses."""
    who = admin(org)
    ids = [
        mem.remember(f"{org} note {i}: Alice Jensen met Bob Carter in Paris", principal=who).id
        for i in range(n)
    ]
    mem.update(ids[0], content=f"{org} note 0 revised: Alice Jensen flew to Oslo", principal=who)
    mem.forget(ids[1], principal=who)
    mem.graph.link(ids[2], ids[3], "causes", 0.5, principal=who)
    mem.create_sector(f"{org} travel", scope=f"org:{org}", topics=["travel"], principal=who)
    mem.set_policy("*", retention_days=400.0, principal=who)
    mem.graph.alias("Alice Jensen", "AJ", principal=who)
    mem.reinforce(ids[4], principal=who)
    mem.recall("Alice Jensen", principal=who)
    mem.flush()
    return ids


def route_of(home: str, org: str) -> list[tuple[Any, ...]]:
    return sql(home, "SELECT database_url, state FROM org_routes WHERE org_id = %s", (org,))


def routes_version(home: str) -> int:
    return int(sql(home, "SELECT value FROM kenning_meta WHERE key = 'org_routes_version'")[0][0])


# ---------------------------------------------------------------------------- routing


def test_each_organization_lives_in_its_own_database(
    home: str, far: str, open_mem: Callable[[], Memory]
) -> None:
    mem = open_mem()
    assert isinstance(mem.store, RoutedStore)
    PgRouteTable(home).put(Route("globex", far), "globex")
    mem.store.refresh(force=True)
    acme_ids = fill(mem, "acme")
    globex_ids = fill(mem, "globex")

    at_home, far_rows = org_rows(home, "globex"), org_rows(far, "globex")
    assert set(at_home.values()) == {0}, at_home
    assert far_rows["memories"] == 5 and far_rows["history"] >= 7
    assert min(far_rows[t] for t in ("mentions", "entities", "links", "access_log")) > 0
    assert far_rows["entity_aliases"] == 1
    assert far_rows["sectors"] == 1 and far_rows["policies"] == 1
    assert org_rows(far, "acme")["memories"] == 0
    assert org_rows(home, "acme")["memories"] == 5
    # the directory and the audit log stay home, for every organization
    assert sql(far, "SELECT count(*) FROM audit_log") == [(0,)]
    assert sql(home, "SELECT count(*) FROM audit_log WHERE org_id = 'globex'")[0][0] > 0

    # isolation: no read of one organization returns the other's rows
    assert all(c.startswith("acme") for c in contents(mem, "acme"))
    assert all(c.startswith("globex") for c in contents(mem, "globex"))
    hits = mem.recall("globex note Alice Jensen", k=20, principal=admin("acme")).hits
    assert hits and all(h.memory.org_id == "acme" for h in hits)
    with pytest.raises(NotFound):
        mem.get(globex_ids[0], principal=admin("acme"))
    acme_links = mem.graph.neighbours(acme_ids[2], relations=["causes"], principal=admin("acme"))
    assert [n.memory.id for n in acme_links] == [acme_ids[3]]
    by_entity = mem.graph.neighbours(entity="Alice Jensen", principal=admin("acme"))
    assert by_entity and all(n.memory.org_id == "acme" for n in by_entity)
    with pytest.raises(NotFound):
        mem.graph.neighbours(globex_ids[2], principal=admin("acme"))
    assert mem.store.organizations() == ["acme", "globex"]
    total = mem.store.footprint()
    assert total.memories == 10
    assert total == mem.store.footprint("acme") + mem.store.footprint("globex")


def test_one_atomic_block_writes_one_database(
    home: str, far: str, open_mem: Callable[[], Memory]
) -> None:
    mem = open_mem()
    PgRouteTable(home).put(Route("globex", far), "globex")
    mem.store.refresh(force=True)
    acme = mem.remember("acme first", principal=admin("acme"))
    globex = mem.remember("globex first", principal=admin("globex"))
    store = mem.store
    with pytest.raises(InvalidInput, match="one atomic block writes one database"):
        with store.atomic():
            store.set_author("acme", [acme.id], "someone")
            store.set_author("globex", [globex.id], "someone")
    assert mem.get(acme.id, principal=admin("acme")).created_by == "root-acme"  # rolled back
    with store.atomic():  # directory calls join a home transaction of their own
        store.set_author("globex", [globex.id], "someone")
        assert store.get_entry("globex", "org", "globex") is None
    assert mem.get(globex.id, principal=admin("globex")).created_by == "someone"


def test_rest_requests_land_in_their_organizations_database(
    home: str, far: str, open_mem: Callable[[], Memory]
) -> None:
    mem = open_mem()
    keys = {org: bootstrap_org(mem, org)["root"] for org in ("acme", "globex")}
    table = PgRouteTable(home)
    table.put(Route("globex", far), "globex")
    mem.store.refresh(force=True)
    api = Api(mem)
    try:
        made = {}
        for org in ("acme", "globex"):
            body = {"content": f"{org} ships on Fridays", "scope": f"org:{org}"}
            reply = api.call("POST", "/v1/memories", key=keys[org], json=body)
            assert reply.status_code == 201, reply.text
            made[org] = reply.json()["memory"]["id"]
        where = {
            org: [db for db in (home, far) if sql(db, "SELECT 1 FROM memories WHERE id = %s", (i,))]
            for org, i in made.items()
        }
        assert where == {"acme": [home], "globex": [far]}
        listed = api.call("GET", "/v1/memories", key=keys["acme"], params={"scope": "all"})
        assert [m["id"] for m in listed.json()["items"]] == [made["acme"]]
        other = api.call("GET", f"/v1/memories/{made['globex']}", key=keys["acme"])
        assert other.status_code == 404

        table.put(Route("globex", far, "moving", home), "globex")  # as a move does
        mem.store.refresh(force=True)
        refused = api.call(
            "POST", "/v1/memories", key=keys["globex"], json={"content": "during the move"}
        )
        assert refused.status_code == 503, refused.text
        assert refused.json()["error"]["code"] == "store_unavailable"
        assert "moving to another database" in refused.json()["error"]["message"]
        read = api.call("GET", f"/v1/memories/{made['globex']}", key=keys["globex"])
        assert read.status_code == 200 and read.json()["content"] == "globex ships on Fridays"
        wrote = api.call("POST", "/v1/memories", key=keys["acme"], json={"content": "acme on"})
        assert wrote.status_code == 201
    finally:
        api.close()


def test_erasing_a_user_of_a_routed_organization(
    home: str, far: str, open_mem: Callable[[], Memory]
) -> None:
    """The directory (home) and the memories (elsewhere) of one erasure."""
    mem = open_mem()
    bootstrap_org(mem, "globex")
    PgRouteTable(home).put(Route("globex", far), "globex")
    mem.store.refresh(force=True)
    alice = Principal(org_id="globex", user_id="alice")
    mine = [
        mem.remember(f"alice private {i}", scope="user:alice", principal=alice) for i in range(3)
    ]
    shared = mem.remember("alice shared plan", scope="org:globex", principal=alice)
    assert sql(far, "SELECT count(*) FROM memories WHERE created_by = 'alice'") == [(4,)]

    done = mem.directory.erase_user(admin("globex"), "alice")

    assert (done.memories, done.shared_detached) == (3, 1)
    assert sql(far, "SELECT count(*) FROM memories WHERE created_by = 'alice'") == [(0,)]
    gone = [m.id for m in mine]
    assert sql(
        far,
        "SELECT count(*) FROM history WHERE memory_id = ANY(%s) AND content IS NOT NULL "
        "AND op <> 'delete'",
        (gone,),
    ) == [(0,)]
    assert sql(far, "SELECT id FROM memories WHERE org_id = 'globex'") == [(shared.id,)]
    user = (
        "SELECT count(*) FROM directory WHERE org_id = 'globex' AND kind = 'user' AND id = 'alice'"
    )
    assert sql(home, user) == [(0,)]
    assert sql(home, "SELECT count(*) FROM api_keys WHERE user_id = 'alice'") == [(0,)]


# ---------------------------------------------------------------------------- moving


def test_moving_an_organization_while_another_keeps_writing(
    home: str, far: str, open_mem: Callable[[], Memory]
) -> None:
    mem = open_mem()
    fill(mem, "acme")
    fill(mem, "globex")
    before = org_rows(home, "globex")
    assert min(before.values()) > 0, before
    version = routes_version(home)

    stop, written, errors = threading.Event(), [], []

    def acme_writer() -> None:
        i = 0
        while not stop.is_set():
            try:
                written.append(mem.remember(f"acme live {i}", principal=admin("acme")).id)
            except Exception as exc:  # collected: the test asserts there are none
                errors.append(exc)
            i += 1

    seen: dict[str, Any] = {}

    def during(table: str, rows: int) -> None:
        if table == "memories":  # mid-copy: globex reads work, its writes are refused
            seen["read"] = contents(mem, "globex")
            with pytest.raises(OrganizationMoving, match="retry"):
                mem.remember("globex during the move", principal=admin("globex"))
            seen["route"] = route_of(home, "globex")

    thread = threading.Thread(target=acme_writer)
    thread.start()
    try:
        report = move_organization(home, "globex", far, on_table=during)
    finally:
        stop.set()
        thread.join()

    assert errors == [] and len(written) > 0
    assert seen["route"] == [(None, "moving")]
    assert len(seen["read"]) == 5
    after = org_rows(far, "globex")
    assert after == before
    assert set(org_rows(home, "globex").values()) == {0}  # the old copy is gone
    assert {t: n for t, (n, _) in report.tables.items()} == before
    assert report.deleted == sum(before.values())
    assert route_of(home, "globex") == [(far, "active")]
    assert routes_version(home) == version + 2
    # acme: every write of the thread is there, in the home database
    stored = {r[0] for r in sql(home, "SELECT id FROM memories WHERE org_id = 'acme'")}
    assert set(written) <= stored
    # globex keeps working from its new database (this process has seen the switch)
    assert contents(mem, "globex") == seen["read"]
    new = mem.remember("globex after the move", principal=admin("globex"))
    assert sql(far, "SELECT org_id FROM memories WHERE id = %s", (new.id,)) == [("globex",)]
    assert sql(home, "SELECT count(*) FROM memories WHERE id = %s", (new.id,)) == [(0,)]

    # and back home through the CLI
    result = CliRunner().invoke(
        app, ["migrate", "--org", "globex", "--to", "home", "--from", home, "--json"]
    )
    assert result.exit_code == 0, result.output
    back = json.loads(result.stdout)
    assert back["verified"] is True and back["tables"]["memories"]["rows"] == 6
    assert route_of(home, "globex") == []
    assert org_rows(home, "globex")["memories"] == 6
    assert set(org_rows(far, "globex").values()) == {0}
    mem.store.refresh(force=True)
    assert len(contents(mem, "globex")) == 6


def still_at_home(mem: Memory, home: str, far: str, before: dict[str, int]) -> None:
    """The organization works from the home database, untouched; the target holds none of it."""
    assert route_of(home, "globex") == []
    assert org_rows(home, "globex") == before
    assert set(org_rows(far, "globex").values()) == {0}
    mem.store.refresh(force=True)
    new = mem.remember("globex after the failed move", principal=admin("globex"))
    assert sql(home, "SELECT count(*) FROM memories WHERE id = %s", (new.id,)) == [(1,)]


def test_a_target_killed_mid_copy_leaves_the_organization_where_it_was(
    home: str, open_mem: Callable[[], Memory]
) -> None:
    mem = open_mem()
    fill(mem, "globex")
    before = org_rows(home, "globex")
    doomed = ThrowawayPostgres(Path(tempfile.mkdtemp(prefix="kenning-pg3-")), free_port())
    doomed.start()
    try:
        target = _fresh(doomed)

        def kill(table: str, rows: int) -> None:
            if table == "history":
                doomed.stop(remove=False)  # immediate shutdown, mid-transaction

        with pytest.raises(StoreError, match="the move was undone"):
            move_organization(home, "globex", target, on_table=kill)
    finally:
        doomed.stop()
    assert not doomed.data_dir.exists()
    assert route_of(home, "globex") == [] and org_rows(home, "globex") == before
    mem.store.refresh(force=True)
    new = mem.remember("globex after the failed move", principal=admin("globex"))
    assert sql(home, "SELECT count(*) FROM memories WHERE id = %s", (new.id,)) == [(1,)]


def test_a_write_that_slips_into_the_copy_fails_the_verification(
    home: str, far: str, open_mem: Callable[[], Memory]
) -> None:
    """A late write to the old copy (one that began before the move): the committed
    target copy is deleted and the old copy stays authoritative."""
    mem = open_mem()
    fill(mem, "globex")

    def late_write(table: str, rows: int) -> None:
        if table == "access_log":  # after the snapshot was read: a write from elsewhere
            superuser = home.replace("postgresql://kenning@", "postgresql://postgres@")
            with psycopg.connect(superuser) as conn:
                conn.execute(
                    "UPDATE memories SET access_count = access_count + 100 WHERE id = "
                    "(SELECT min(id) FROM memories WHERE org_id = 'globex')"
                )

    with pytest.raises(StoreError, match="verification failed .* memories differs"):
        move_organization(home, "globex", far, on_table=late_write)
    still_at_home(mem, home, far, org_rows(home, "globex"))
    assert sql(home, "SELECT count(*) FROM memories WHERE access_count >= 100") == [(1,)]


class OpenWrite:
    """A write of ``org`` in an ``atomic()`` block left open on a thread of its own
    (a slow client transaction): :meth:`commit` ends the block."""

    def __init__(self, mem: Memory, org: str, content: str) -> None:
        self.begun, self.release = threading.Event(), threading.Event()
        self.ids: list[str] = []
        self.errors: list[BaseException] = []
        self._thread = threading.Thread(target=self._run, args=(mem, org, content))
        self._thread.start()
        assert self.begun.wait(60) and not self.errors, self.errors

    def _run(self, mem: Memory, org: str, content: str) -> None:
        try:
            with mem.store.atomic():
                self.ids.append(mem.remember(content, principal=admin(org)).id)
                self.begun.set()
                assert self.release.wait(60)
        except BaseException as exc:  # collected: the tests assert on them
            self.errors.append(exc)
            self.begun.set()

    def commit(self) -> None:
        self.release.set()
        self._thread.join(60)
        assert not self._thread.is_alive() and not self.errors, self.errors


class MoveThread:
    """``move_organization`` on a thread of its own; :meth:`result` joins it."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.copy_started = 0.0
        self.outcome: list[Any] = []
        self._thread = threading.Thread(target=self._run, args=args, kwargs=kwargs)
        self._thread.start()

    def _run(self, *args: Any, **kwargs: Any) -> None:
        def on_table(table: str, rows: int) -> None:
            self.copy_started = self.copy_started or time.monotonic()

        try:
            self.outcome.append(move_organization(*args, on_table=on_table, **kwargs))
        except BaseException as exc:  # the tests assert on it
            self.outcome.append(exc)

    def alive(self) -> bool:
        return self._thread.is_alive()

    def result(self) -> Any:
        self._thread.join(120)
        assert not self._thread.is_alive()
        return self.outcome[0]


def move_waiting_for_writes(url: str, org: str) -> bool:
    """True once a session waits for ``org``'s write lock in the database of ``url``."""
    waiting = (
        "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted "
        "AND classid = %s AND objid = hashtext(%s)::oid AND objsubid = 2"
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if sql(url, waiting, (ORG_WRITES_LOCK, org))[0][0] == 1:
            return True
        time.sleep(0.05)
    return False


def test_a_move_waits_for_a_write_in_flight_and_copies_it(
    home: str, far: str, open_mem: Callable[[], Memory]
) -> None:
    """A write begun before the move and still open when the copy would start: the
    move waits for it, then copies it; nothing is lost."""
    mem = open_mem()
    fill(mem, "globex")
    before = org_rows(home, "globex")
    write = OpenWrite(mem, "globex", "globex written before the move, committed during it")

    move = MoveThread(home, "globex", far, settle_s=0.2)
    try:
        assert move_waiting_for_writes(home, "globex")
        time.sleep(0.5)  # it keeps waiting: no copy while the write is open
        assert move.alive() and move.copy_started == 0.0
        assert route_of(home, "globex") == [(None, "moving")]
        assert set(org_rows(far, "globex").values()) == {0}
    finally:
        write.commit()
    report = move.result()

    assert not isinstance(report, BaseException), report
    after = org_rows(far, "globex")
    assert {t: n for t, (n, _) in report.tables.items()} == after
    assert after["memories"] == before["memories"] + 1
    assert after["history"] == before["history"] + 1
    assert sql(far, "SELECT content FROM memories WHERE id = %s", (write.ids[0],)) == [
        ("globex written before the move, committed during it",)
    ]
    assert set(org_rows(home, "globex").values()) == {0}  # the old copy is gone, write and all
    assert report.deleted == sum(after.values())
    assert route_of(home, "globex") == [(far, "active")]
    mem.store.refresh(force=True)
    assert mem.get(write.ids[0], principal=admin("globex")).content.startswith("globex written")


def test_a_write_open_past_the_wait_undoes_the_move(
    home: str, far: str, open_mem: Callable[[], Memory]
) -> None:
    """A write still open when the move's wait for writes runs out: the move is undone
    and the write then commits in the database the organization still lives in."""
    mem = open_mem()
    fill(mem, "globex")
    before, version = org_rows(home, "globex"), routes_version(home)
    write = OpenWrite(mem, "globex", "globex written by a stuck client")

    started = time.monotonic()
    try:
        with pytest.raises(StoreError) as failed:
            move_organization(home, "globex", far, settle_s=0.2, write_wait_s=0.8)
        waited = time.monotonic() - started
        assert org_rows(home, "globex") == before  # the open write is not committed yet
    finally:
        write.release.set()
    assert str(failed.value) == (
        "writes of organization 'globex' did not finish within 0.8 s (a client transaction "
        f"left open?); it stays in {home}, the move was undone: run it again"
    )
    assert 1.0 <= waited < 10
    assert route_of(home, "globex") == []
    assert routes_version(home) == version + 2  # marked moving, then restored
    assert set(org_rows(far, "globex").values()) == {0}

    write.commit()
    assert sql(home, "SELECT content FROM memories WHERE id = %s", (write.ids[0],)) == [
        ("globex written by a stuck client",)
    ]
    assert org_rows(home, "globex")["memories"] == before["memories"] + 1
    mem.store.refresh(force=True)
    assert mem.get(write.ids[0], principal=admin("globex")).content.endswith("stuck client")
    still_at_home(mem, home, far, org_rows(home, "globex"))


def test_writes_are_refused_while_the_move_holds_them_even_with_a_stale_route(
    home: str,
    far: str,
    open_mem: Callable[[], Memory],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """From before the copy until the old copy is deleted, a write of the organization
    in its old database is refused at once (not blocked), even by a process whose
    cached route still says it lives there; another organization there keeps writing."""
    mem = open_mem()
    fill(mem, "globex")
    fill(mem, "acme")
    model, dim = mem.embedder.model_id, mem.embedder.dim

    def opener(url: str) -> PostgresStore:
        return PostgresStore(url, model_id=model, dim=dim)

    # a process that never refreshes its routes: it believes globex lives at home
    stale = RoutedStore(opener(home), PgRouteTable(home), opener, refresh_s=3600)
    policies = "SELECT memory_type FROM policies WHERE org_id = %s ORDER BY 1"
    seen: dict[str, list[Any]] = {"refused": [], "acme": []}

    def try_writes(when: str) -> None:
        assert stale.route("globex") is None  # the stale view
        started = time.monotonic()
        with pytest.raises(OrganizationMoving, match="organization 'globex' is moving"):
            stale.put_policy(Policy("globex", "*", f"refused-{when}", updated_at=T0))
        with pytest.raises(OrganizationMoving):
            with stale.atomic():
                stale.put_policy(Policy("globex", "*", f"refused-in-block-{when}", updated_at=T0))
        seen["refused"].append((when, time.monotonic() - started))
        stale.put_policy(Policy("acme", "*", f"acme-{when}", updated_at=T0))
        seen["acme"].append(mem.remember(f"acme {when}", principal=admin("acme")).id)

    def during_copy(table: str, rows: int) -> None:
        if table == "memories":
            try_writes("copy")

    real_delete = orgmove.delete_org

    def delete_after_a_stale_write(conn: psycopg.Connection[Any], org_id: str) -> int:
        try_writes("switched")  # the route points at the target; the old copy is still here
        return real_delete(conn, org_id)

    monkeypatch.setattr(orgmove, "delete_org", delete_after_a_stale_write)
    try:
        report = move_organization(home, "globex", far, settle_s=0.2, on_table=during_copy)
    finally:
        stale.close()

    assert [w for w, _ in seen["refused"]] == ["copy", "switched"]
    assert all(s < 1.0 for _, s in seen["refused"]), seen  # refused at once, never waited
    # nothing of the refused writes anywhere; the move copied what was there and deleted it
    assert sql(far, policies, ("globex",)) == [("*",)]
    assert sql(home, policies, ("globex",)) == []
    assert set(org_rows(home, "globex").values()) == {0}
    assert {t: n for t, (n, _) in report.tables.items()} == org_rows(far, "globex")
    # acme, in the same database, wrote all along
    assert sql(home, policies, ("acme",)) == [("*",), ("acme-copy",), ("acme-switched",)]
    stored = {r[0] for r in sql(home, "SELECT id FROM memories WHERE org_id = 'acme'")}
    assert set(seen["acme"]) <= stored and len(seen["acme"]) == 2
    # once the move is over, the lock is gone: globex writes in its new database
    mem.store.refresh(force=True)
    new = mem.remember("globex after the move", principal=admin("globex"))
    assert sql(far, "SELECT org_id FROM memories WHERE id = %s", (new.id,)) == [("globex",)]


def test_a_move_whose_process_died_is_cleaned_up_by_the_next(
    home: str, far: str, far_server: ThrowawayPostgres, open_mem: Callable[[], Memory]
) -> None:
    mem = open_mem()
    fill(mem, "globex")
    before = org_rows(home, "globex")
    # a move that died after committing part of its copy: the route says moving
    PostgresStore(far, model_id=mem.embedder.model_id, dim=mem.embedder.dim).close()
    PgRouteTable(home).put(Route("globex", None, "moving", far), "globex")
    far_server.psql(far.rsplit("/", 1)[1], "INSERT INTO organizations VALUES ('globex')")
    mem.store.refresh(force=True)
    with pytest.raises(OrganizationMoving):
        mem.remember("refused while moving", principal=admin("globex"))
    assert len(contents(mem, "globex")) == 5  # reads still work

    report = move_org("globex", far, home)
    assert report.tables["memories"][0] == before["memories"]
    assert org_rows(far, "globex") == before
    assert route_of(home, "globex") == [(far, "active")]


#: (org, --to, home database, error, message); FAR / HOME / SQLITE stand for URLs.
BAD_MOVES = [
    ("nobody", "FAR", "HOME", NotFound, "no organization 'nobody'"),
    ("globex", "mysql://x@h/db", "HOME", InvalidInput, "no store for 'mysql' URLs"),
    ("globex", "sqlite:///tmp/x.db", "HOME", InvalidInput, "between PostgreSQL databases"),
    ("globex", "just-a-name", "HOME", InvalidInput, "give a postgresql:// URL or 'home'"),
    ("globex", "postgresql://k@h:port/db", "HOME", InvalidInput, "not a valid PostgreSQL URL"),
    ("globex", "home", "HOME", InvalidInput, "already lives in"),
    ("globex", "HOME", "HOME", InvalidInput, "already lives in"),
    ("bad org!", "FAR", "HOME", InvalidInput, "org must be"),
    ("globex", "FAR", "SQLITE", InvalidInput, "only over PostgreSQL databases"),
    ("globex", "UNREACHABLE", "HOME", StoreError, "cannot reach the target database"),
]


def test_bad_moves_are_refused_precisely_and_change_nothing(
    home: str, far: str, open_mem: Callable[[], Memory], tmp_path: Path
) -> None:
    mem = open_mem()
    fill(mem, "globex")
    before, version = org_rows(home, "globex"), routes_version(home)
    urls = {
        "FAR": far,
        "HOME": home,
        "SQLITE": f"sqlite:///{tmp_path / 'k.db'}",
        "UNREACHABLE": f"postgresql://kenning@127.0.0.1:{free_port()}/nowhere",
    }
    for org, to, where, error, message in BAD_MOVES:
        with pytest.raises(error, match=message):
            move_org(org, urls.get(to, to), urls[where])
        assert org_rows(home, "globex") == before, to
        assert routes_version(home) == version, to
        assert sql(home, "SELECT count(*) FROM org_routes") == [(0,)]
    assert len(contents(mem, "globex")) == 5
    assert sql(far, "SELECT to_regclass('memories')") == [(None,)]  # the target untouched


def test_a_target_that_already_holds_the_organization_is_refused(
    home: str, far: str, far_server: ThrowawayPostgres, open_mem: Callable[[], Memory]
) -> None:
    mem = open_mem()
    fill(mem, "globex")
    move_org("globex", far, home)
    move_org("globex", "home", home)
    far_server.psql(far.rsplit("/", 1)[1], "INSERT INTO organizations VALUES ('globex')")
    with pytest.raises(Conflict, match="already holds rows of organization 'globex'"):
        move_org("globex", far, home)
    assert route_of(home, "globex") == []


def test_the_cli_reports_a_bad_move_with_its_exit_code(
    home: str, open_mem: Callable[[], Memory]
) -> None:
    open_mem()  # the home database holds a kenning store
    result = CliRunner().invoke(app, ["migrate", "--org", "nobody", "--to", "home", "--from", home])
    assert result.exit_code == 4 and "no organization 'nobody'" in result.output
    missing = CliRunner().invoke(app, ["migrate", "--to", "x.db"])
    assert missing.exit_code == 2 and "--from is required" in missing.output


def test_the_cli_bounds_the_wait_for_writes_in_flight(
    home: str, far: str, open_mem: Callable[[], Memory]
) -> None:
    """``--write-wait``: a write open past it undoes the move and the CLI says why."""
    mem = open_mem()
    fill(mem, "globex")
    before = org_rows(home, "globex")
    bad = CliRunner().invoke(
        app, ["migrate", "--org", "globex", "--to", far, "--from", home, "--write-wait", "0"]
    )
    assert bad.exit_code == 2 and "--write-wait" in bad.output
    write = OpenWrite(mem, "globex", "globex written by a stuck client")
    try:
        result = CliRunner().invoke(
            app,
            ["migrate", "--org", "globex", "--to", far, "--from", home, "--write-wait", "0.5"],
        )
    finally:
        write.release.set()
    assert result.exit_code != 0
    assert "did not finish within 0.5 s" in result.output and "the move was undone" in result.output
    write.commit()
    assert route_of(home, "globex") == []
    assert org_rows(home, "globex")["memories"] == before["memories"] + 1
