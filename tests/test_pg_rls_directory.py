"""Row-level security on PostgreSQL's directory, API keys and audit log (migration 007).

The same bypass as the memory tables' (tests/test_postgres.py): raw SQL as the
application role, or a "bug" patched into the store's own filter, with one
organization's context set. Org B's directory rows, keys and audit lines stay
invisible and unwritable. Authentication's one cross-organization path (a key
by its public id) shows that one key, read-only, and nothing else.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from conftest import T0

from kenning import FixedClock, Memory, Settings
from kenning.directory import keys
from kenning.directory.model import AuditEntry
from kenning.embeddings import Embedder
from kenning.stores.postgres import directory as pg_directory
from kenning.stores.postgres import schema as pg_schema
from kenning.stores.postgres.store import PostgresStore
from kenning.stores.postgres.throwaway import ThrowawayPostgres

pytestmark = pytest.mark.usefixtures("pg_server")

_CTX = (
    "SELECT set_config('kenning.org_id', %s, true), set_config('kenning.kinds', %s, true), "
    "set_config('kenning.scopes', %s, true)"
)
_ALL = "org,persona,persona_user,team,user"
ACME = ("acme", _ALL, "")
GLOBEX = ("globex", _ALL, "")
TABLES = ("directory", "api_keys", "audit_log")


@pytest.fixture
def pg_url(pg_server: ThrowawayPostgres, tmp_path: Path) -> Iterator[str]:
    """A fresh, empty database owned by the application role."""
    name = "rlsd_" + tmp_path.name.replace("-", "_").lower()[-40:]
    pg_server.psql("postgres", f"CREATE DATABASE {name} OWNER kenning")
    yield pg_server.url(name)
    pg_server.psql("postgres", f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def _open(url: str, embedder: Embedder) -> Memory:
    return Memory(settings=Settings(database_url=url), embedder=embedder, clock=FixedClock(T0))


@pytest.fixture
def two_orgs(pg_url: str, embedder: Embedder) -> Iterator[tuple[Memory, dict[str, str]]]:
    """acme (admin root, member bob) and globex (admin boss), each with a key and
    audit lines; yields the Memory and org -> the admin's full API key."""
    mem = _open(pg_url, embedder)
    tokens = {}
    for org, admin in (("acme", "root"), ("globex", "boss")):
        _, tokens[org] = mem.directory.bootstrap(org, admin, "first")
    root = mem.directory.authenticate(tokens["acme"])[0]
    mem.directory.put_user(root, "bob", name="Bob")
    yield mem, tokens
    mem.close()


def _raw(url: str, sql: str, context: tuple[str, str, str] | None, key_id: str = "") -> list[Any]:
    """Run ``sql`` as the application role in one transaction with ``context`` set."""
    with psycopg.connect(url) as conn:
        if context is not None:
            conn.execute(_CTX, context)
        if key_id:
            conn.execute("SELECT set_config('kenning.key_id', %s, true)", (key_id,))
        rows = conn.execute(sql).fetchall()
        conn.rollback()
    return rows


def _superuser(url: str, sql: str) -> list[Any]:
    with psycopg.connect(url.replace("//kenning@", "//postgres@")) as conn:
        return conn.execute(sql).fetchall()


def _key_id(url: str, org: str) -> str:
    return str(_superuser(url, f"SELECT id FROM api_keys WHERE org_id = '{org}'")[0][0])


def test_the_rows_exist_but_no_context_reads_none_of_them(
    two_orgs: tuple[Memory, dict[str, str]], pg_url: str
) -> None:
    counts = {t: _superuser(pg_url, f"SELECT count(*) FROM {t}")[0][0] for t in TABLES}
    assert all(n >= 2 for n in counts.values()), counts  # both orgs hold rows in each
    for table in TABLES:
        assert _raw(pg_url, f"SELECT count(*) FROM {table}", None) == [(0,)], table
        assert _raw(pg_url, f"SELECT count(*) FROM {table}", ("", "", "")) == [(0,)], table


def test_an_organizations_context_reads_only_its_own_rows(
    two_orgs: tuple[Memory, dict[str, str]], pg_url: str
) -> None:
    """No WHERE clause: the policies alone decide what comes back."""
    for table in TABLES:
        assert {r[0] for r in _raw(pg_url, f"SELECT org_id FROM {table}", ACME)} == {"acme"}
        assert {r[0] for r in _raw(pg_url, f"SELECT org_id FROM {table}", GLOBEX)} == {"globex"}
    users = _raw(pg_url, "SELECT id FROM directory WHERE kind = 'user' ORDER BY 1", ACME)
    assert users == [("bob",), ("root",)]
    # a member's scope context (not organization-wide) reads no directory row at all
    bob = ("", "", "acme|user:bob,acme|org:acme")
    for table in TABLES:
        assert _raw(pg_url, f"SELECT count(*) FROM {table}", bob) == [(0,)], table


def test_writes_into_another_organization_are_refused_or_touch_nothing(
    two_orgs: tuple[Memory, dict[str, str]], pg_url: str
) -> None:
    before = {t: _superuser(pg_url, f"SELECT count(*) FROM {t}") for t in TABLES}
    with psycopg.connect(pg_url) as conn:
        conn.execute(_CTX, ACME)
        revoke = "UPDATE api_keys SET revoked_at = now() WHERE org_id = 'globex'"
        assert conn.execute(revoke).rowcount == 0
        for table in TABLES:
            assert conn.execute(f"DELETE FROM {table} WHERE org_id = 'globex'").rowcount == 0
        assert conn.execute("UPDATE directory SET doc = '{}' WHERE org_id = 'globex'").rowcount == 0
        conn.commit()
    inserts = (
        "INSERT INTO directory (org_id, kind, id, updated_at) "
        "VALUES ('globex', 'user', 'x', now())",
        "INSERT INTO api_keys (id, org_id, user_id, name, secret_hash, created_at, created_by) "
        "VALUES ('aaaaaaaaaaaa', 'globex', 'x', 'x', 'h', now(), 'x')",
        "INSERT INTO audit_log (org_id, at, actor, action, outcome) "
        "VALUES ('globex', now(), 'x', 'x', 'ok')",
    )
    for sql in inserts:
        with psycopg.connect(pg_url) as conn:
            conn.execute(_CTX, ACME)
            with pytest.raises(psycopg.errors.InsufficientPrivilege, match="row-level security"):
                conn.execute(sql)
    after = {t: _superuser(pg_url, f"SELECT count(*) FROM {t}") for t in TABLES}
    assert after == before
    revoked = _superuser(pg_url, "SELECT count(*) FROM api_keys WHERE revoked_at IS NOT NULL")
    assert revoked == [(0,)]


def test_the_key_lookup_context_shows_that_one_key_read_only(
    two_orgs: tuple[Memory, dict[str, str]], pg_url: str
) -> None:
    globex_key = _key_id(pg_url, "globex")
    lookup = ("", "", "")
    assert _raw(pg_url, "SELECT id, org_id FROM api_keys", lookup, globex_key) == [
        (globex_key, "globex")
    ]
    for table in ("directory", "audit_log"):
        assert _raw(pg_url, f"SELECT count(*) FROM {table}", lookup, globex_key) == [(0,)]
    with psycopg.connect(pg_url) as conn:
        conn.execute("SELECT set_config('kenning.key_id', %s, true)", (globex_key,))
        assert conn.execute("UPDATE api_keys SET revoked_at = now()").rowcount == 0
        assert conn.execute("DELETE FROM api_keys").rowcount == 0
        conn.commit()
    assert _superuser(pg_url, "SELECT count(*) FROM api_keys WHERE revoked_at IS NULL") == [(2,)]


def test_authentication_and_admin_work_through_the_wall(
    two_orgs: tuple[Memory, dict[str, str]], pg_url: str
) -> None:
    mem, tokens = two_orgs
    for org, admin in (("acme", "root"), ("globex", "boss")):
        principal, key = mem.directory.authenticate(tokens[org])
        assert (principal.org_id, principal.user_id, key.org_id) == (org, admin, org)
    root = mem.directory.authenticate(tokens["acme"])[0]
    assert [u.id for u in mem.directory.users(root)] == ["bob", "root"]
    assert {e.org_id for e in mem.directory.audit(root)} == {"acme"}
    assert mem.store.directory_orgs() == ["acme", "globex"]
    # an acme admin cannot revoke globex's key: the service says not found, the key stays
    with pytest.raises(Exception, match="no API key"):
        mem.directory.revoke_key(root, _key_id(pg_url, "globex"))
    assert mem.directory.authenticate(tokens["globex"])[0].org_id == "globex"


def test_a_bug_in_the_audit_filter_still_leaks_nothing(
    two_orgs: tuple[Memory, dict[str, str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Patch the store's audit WHERE clause to 'everything': the policy still holds."""
    mem, _ = two_orgs
    everything = mem.store.audit("acme", limit=1000)
    assert everything and {e.org_id for e in everything} == {"acme"}
    monkeypatch.setattr(pg_directory, "audit_where", lambda *a, **k: ("TRUE", []))
    assert {e.org_id for e in mem.store.audit("acme", limit=1000)} == {"acme"}
    assert {e.org_id for e in mem.store.audit("globex", limit=1000)} == {"globex"}


def test_an_atomic_block_drops_the_key_lookup_after_the_lookup(
    two_orgs: tuple[Memory, dict[str, str]], pg_url: str
) -> None:
    """SET LOCAL survives a released savepoint: the next call's context must clear it."""
    mem, _ = two_orgs
    store = mem.store.home  # the home store behind the organization router
    assert isinstance(store, PostgresStore)
    globex_key = _key_id(pg_url, "globex")
    with store.atomic():
        key = store.get_api_key(globex_key)
        assert key is not None and key.org_id == "globex"
        with store._tx(("", "", "")) as conn:
            assert conn.execute("SELECT count(*) FROM api_keys").fetchone() == (0,)
        assert [k.org_id for k in store.api_keys("acme")] == ["acme"]


def test_an_audit_batch_across_organizations_lands_in_each(
    two_orgs: tuple[Memory, dict[str, str]], pg_url: str
) -> None:
    mem, _ = two_orgs
    acme = mem.store.audit("acme", limit=1000)
    globex = mem.store.audit("globex", limit=1000)
    lines = [*acme[:1], *globex[:1], *acme[:1]]
    mem.store.append_audit([*lines, *[e for e in globex[:1]]])
    assert len(mem.store.audit("acme", limit=1000)) == len(acme) + 2
    assert len(mem.store.audit("globex", limit=1000)) == len(globex) + 2


def test_an_older_database_gains_the_wall_and_keeps_its_rows(
    pg_url: str, embedder: Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    names = [name for name, _ in pg_schema.MIGRATIONS]
    with monkeypatch.context() as patch:
        patch.setattr(
            pg_schema, "MIGRATIONS", pg_schema.MIGRATIONS[: names.index("007_directory_rls")]
        )
        _open(pg_url, embedder).close()
    # rows as a release before 007 wrote them (open to any context then)
    key_id, token, digest = keys.mint()
    with psycopg.connect(pg_url) as conn:
        for org, user in (("acme", "root"), ("globex", "boss")):
            conn.execute(
                "INSERT INTO directory (org_id, kind, id, doc, updated_at) VALUES "
                "(%s, 'org', %s, '{}', now()), (%s, 'user', %s, %s, now())",
                (org, org, org, user, '{"role": "admin"}'),
            )
            conn.execute(
                "INSERT INTO audit_log (org_id, at, actor, action, outcome) "
                "VALUES (%s, now(), %s, 'admin.key.create', 'ok')",
                (org, user),
            )
        conn.execute(
            "INSERT INTO api_keys (id, org_id, user_id, name, secret_hash, created_at, "
            "created_by) VALUES (%s, 'acme', 'root', 'first', %s, now(), 'root')",
            (key_id, digest),
        )
    assert _raw(pg_url, "SELECT count(*) FROM directory", None) == [(4,)]
    mem = _open(pg_url, embedder)
    try:
        for table in TABLES:
            assert _raw(pg_url, f"SELECT count(*) FROM {table}", None) == [(0,)], table
        assert _raw(pg_url, "SELECT count(*) FROM directory", ACME) == [(2,)]
        assert mem.store.directory_orgs() == ["acme", "globex"]
        principal, _ = mem.directory.authenticate(token)
        assert (principal.org_id, principal.user_id) == ("acme", "root")
        assert [e.actor for e in mem.store.audit("globex")] == ["boss"]
    finally:
        mem.close()


def test_an_organization_recorded_in_a_rolled_back_block_is_recorded_again(
    two_orgs: tuple[Memory, dict[str, str]],
) -> None:
    """The store skips re-recording an organization it committed; a block that rolls
    back committed nothing, so the next write records it after all."""
    mem, _ = two_orgs
    store = mem.store
    line = mem.store.audit("acme", limit=1)[0]
    initech = AuditEntry("initech", line.at, "eve", "auth.denied", None, "denied", {}, None)
    with pytest.raises(RuntimeError), store.atomic():
        store.append_audit([initech])
        raise RuntimeError("roll the block back")
    assert store.directory_orgs() == ["acme", "globex"]
    store.append_audit([initech])
    assert store.directory_orgs() == ["acme", "globex", "initech"]
    assert [e.actor for e in store.audit("initech")] == ["eve"]
