"""Whole-store copies (``kenning.migrate``): SQLite → PostgreSQL → SQLite, losslessly.

The source is a real SQLite store written through the engine (several
organizations, every scope kind, keyed, updated, archived, upserted and
forgotten memories, fractional-second times); the copies are read back through
the engine and must answer list, get, history and recall as the source does.
"""

from __future__ import annotations

import base64
import itertools
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import closing
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from conftest import T0

from kenning import (
    ALL_SCOPES,
    ConfigError,
    Conflict,
    FixedClock,
    InvalidInput,
    Memory,
    NotFound,
    Principal,
    Role,
    Settings,
)
from kenning.directory.model import ApiKey, AuditEntry, DirectoryEntry
from kenning.embeddings import Embedder
from kenning.migrate import CopyReport, VerificationError, copy_store, count_memories, open_stores
from kenning.stores import Store, database_url, inspect_database, open_store
from kenning.stores.postgres.throwaway import ThrowawayPostgres
from kenning.stores.sqlite.driver import sqlite3
from kenning.stores.sqlite.store import SQLiteStore

ORGS = ("acme", "globex", "initech")
STATUSES = {"statuses": ["active", "archived", "pending_review", "superseded"]}
QUERIES = ("what does alice drink", "deploy on friday", "favourite editor")
_names = itertools.count()


def admin(org: str) -> Principal:
    """An admin of ``org`` (reads and writes every scope of it)."""
    return Principal(org_id=org, user_id="root", roles=frozenset({Role.ADMIN}))


@pytest.fixture
def pg_url(pg_server: ThrowawayPostgres) -> Iterator[Callable[[], str]]:
    """``pg_url()``: a fresh, empty PostgreSQL database (no kenning schema yet)."""
    made: list[str] = []

    def make() -> str:
        name = f"mig{next(_names)}"
        pg_server.psql("postgres", f"CREATE DATABASE {name} OWNER kenning")
        made.append(name)
        return pg_server.url(name)

    yield make
    for name in made:
        pg_server.psql("postgres", f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def _fill_org(mem: Memory, clock: FixedClock, org: str) -> dict[str, str]:
    """Memories in every scope kind of ``org`` with a varied history; returns named ids."""
    who = admin(org)

    def remember(content: str, scope: str, **fields: Any) -> str:
        clock.advance(seconds=1.234567)
        return mem.remember(content, scope=scope, principal=who, **fields).id

    ids = {
        "drink": remember(
            f"Alice at {org} drinks green tea every morning",
            "user:alice",
            key="favourite drink",
            tags=["drink", "habit"],
            metadata={"n": 3, "nested": {"b": [1, 2.5], "a": None}},
        ),
        "deploy": remember(
            f"{org} never deploys on a Friday afternoon",
            "team:eng",
            memory_type="procedural",
            importance=5,
            event_at="2024-11-02T10:00:00Z",
        ),
        "editor": remember(
            "Bob's favourite editor is Helix",
            "persona_user:helper/bob",
            key="editor",
            source="mcp_tool",
            session_id="s1",
            agent_id="a1",
        ),
        "persona": remember("The helper persona answers in short sentences", "persona:helper"),
        "policy": remember(
            f"{org} policy: expenses need a receipt", f"org:{org}", confidence=0.95, tags=["policy"]
        ),
        "old": remember("An old fact, archived later", "user:alice"),
        "gone": remember(f"A secret of {org} that gets forgotten", "user:alice", key="secret"),
    }
    work = mem.create_sector(
        "Work", scope="team:eng", topics=["deploys"], decay_multiplier=1.5, principal=who
    )
    mem.create_sector("Releases", scope="team:eng", parent_id=work.id, principal=who)
    ids["sectored"] = remember(
        f"{org} deploys are announced in #releases", "team:eng", tags=["deploys"]
    )
    mem.set_policy("scope:team:eng", retention_days=365, principal=who)
    mem.set_policy(
        "layer:personal", memory_type="episodic", capacity=500, review=True, principal=who
    )
    clock.advance(seconds=61.5)
    mem.update(
        ids["deploy"], content=f"{org} never deploys on Fridays or before holidays", principal=who
    )
    mem.upsert(
        "favourite drink",
        f"Alice at {org} now drinks oolong tea",
        scope="user:alice",
        principal=who,
    )
    mem.archive(ids["old"], principal=who)
    mem.feedback(ids["policy"], "upvote", principal=who)
    mem.update(ids["editor"], tags=["tools"], metadata={"since": 2021}, principal=who)
    mem.forget(ids["gone"], principal=who)
    return ids


@pytest.fixture
def source(tmp_path: Path, embedder: Embedder) -> Iterator[tuple[str, dict[str, dict[str, str]]]]:
    """A SQLite store with three organizations; yields its URL and the ids per org."""
    path = tmp_path / "source.db"
    clock = FixedClock(T0)
    with Memory(path, embedder=embedder, clock=clock) as mem:
        ids = {org: _fill_org(mem, clock, org) for org in ORGS}
    yield f"sqlite:///{path}", ids


def snapshot(url: str, embedder: Embedder, ids: Mapping[str, Mapping[str, str]]) -> dict[str, Any]:
    """What the engine answers on ``url``: list, get, history and recall of every org."""
    out: dict[str, Any] = {}
    with Memory(url, embedder=embedder, clock=FixedClock(T0)) as mem:
        for org, named in ids.items():
            who = admin(org)
            page = mem.list(scopes=ALL_SCOPES, filters=STATUSES, limit=1000, principal=who)
            listed = [r.to_dict() for r in page.items]
            live = [i for name, i in named.items() if name != "gone"]
            out[org] = {
                "list": listed,
                "get": [mem.get(i, principal=who).to_dict() for i in live],
                "history": {i: _no_seq(mem.history(i, principal=who)) for i in live},
                "recall": {
                    q: [
                        (h.memory.id, round(h.score, 6))
                        for h in mem.recall(q, 5, scopes=ALL_SCOPES, principal=who)
                    ]
                    for q in QUERIES
                },
            }
    return out


def _no_seq(entries: Sequence[Any]) -> list[dict[str, Any]]:
    return [{k: v for k, v in e.to_dict().items() if k != "seq"} for e in entries]


def migrate(
    src: str, dst: str, *, batch_size: int = 500, progress: Callable[[int], None] | None = None
) -> CopyReport:
    with open_stores(src, dst) as (source_store, dest_store):
        return copy_store(source_store, dest_store, batch_size=batch_size, progress=progress)


def sqlite_counts(url: str) -> dict[str, int]:
    """Row counts of the tables a copy writes, read straight from the file."""
    with closing(sqlite3.connect(url.removeprefix("sqlite:///"))) as conn:
        return {
            t: conn.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0]
            for t in ("memories", "vectors", "memories_fts", "history", "scopes")
        }


# -- the round trip ---------------------------------------------------------------------


def test_sqlite_to_postgresql_to_sqlite_is_lossless(
    source: tuple[str, dict[str, dict[str, str]]],
    pg_url: Callable[[], str],
    tmp_path: Path,
    embedder: Embedder,
) -> None:
    src, ids = source
    pg, back = pg_url(), f"sqlite:///{tmp_path / 'back.db'}"
    steps: list[int] = []
    there = migrate(src, pg, batch_size=3, progress=steps.append)
    again = migrate(pg, back, batch_size=1000)

    assert [o.org_id for o in there.organizations] == sorted(ORGS)
    assert all(o.memories == 7 and o.history > 7 for o in there.organizations)
    assert all((o.sectors, o.policies) == (2, 2) for o in there.organizations)
    assert there.to_dict() == again.to_dict()  # same counts, same checksums on every hop
    assert len({o.checksum for o in there.organizations}) == len(ORGS)
    assert sum(steps) == there.memories == 3 * 7 and set(steps) == {1}

    before = snapshot(src, embedder, ids)
    assert snapshot(back, embedder, ids) == before
    on_pg = snapshot(pg, embedder, ids)
    for org in ORGS:  # BM25 differs a little between FTS5 and tsvector; the rest is exact
        assert {k: v for k, v in on_pg[org].items() if k != "recall"} == {
            k: v for k, v in before[org].items() if k != "recall"
        }
        for q in QUERIES:
            assert on_pg[org]["recall"][q][0][0] == before[org]["recall"][q][0][0]
    assert before["acme"]["recall"][QUERIES[0]][0][0] == ids["acme"]["drink"]


def test_the_copy_keeps_keys_unique_and_writable(
    source: tuple[str, dict[str, dict[str, str]]], pg_url: Callable[[], str], embedder: Embedder
) -> None:
    src, ids = source
    pg = pg_url()
    migrate(src, pg)
    with Memory(pg, embedder=embedder, clock=FixedClock(T0)) as mem:
        who = admin("globex")
        updated = mem.upsert(
            "favourite drink", "Alice at globex drinks water", scope="user:alice", principal=who
        )
        assert updated.id == ids["globex"]["drink"] and updated.version == 3
        assert mem.remember("A new memory after the move", principal=who).org_id == "globex"


def test_forgotten_memories_keep_their_history(
    source: tuple[str, dict[str, dict[str, str]]], pg_url: Callable[[], str], embedder: Embedder
) -> None:
    src, ids = source
    pg = pg_url()
    migrate(src, pg)
    gone = ids["acme"]["gone"]
    trails = []
    for url in (src, pg):
        with Memory(url, embedder=embedder, clock=FixedClock(T0)) as mem:
            with pytest.raises(NotFound):
                mem.get(gone, principal=admin("acme"))
            trails.append(_no_seq(mem.history(gone, principal=admin("acme"))))
    assert trails[0][-1]["op"] == "delete" and all(h["content"] is None for h in trails[0])
    assert trails[1] == trails[0]


# -- the directory --------------------------------------------------------------------------

#: Lives only in the directory (no memory): copied all the same.
DIRECTORY_ONLY = "umbrella"


def _fill_directory(store: Store, org: str, audit_lines: int = 5) -> None:
    """Entries of every kind, two keys (one revoked) and ``audit_lines`` audit lines in ``org``."""

    def at(seconds: float) -> Any:
        return T0 + timedelta(seconds=seconds)

    docs = {
        ("org", org): {"name": org.title(), "mode": "org", "memory_enabled": True},
        ("user", "alice"): {"role": "admin", "teams": {"eng": "lead"}, "personas": ["helper"]},
        ("user", "bob"): {"role": "member", "disabled": True},
        ("team", "eng"): {"name": "Engineering", "memory_enabled": False},
        ("persona", "helper"): {"name": "Helper"},
    }
    for n, ((kind, entry_id), doc) in enumerate(docs.items()):
        store.put_entry(DirectoryEntry(org, kind, entry_id, doc, at(n + 0.123456)))
    store.put_api_key(
        ApiKey(
            f"{org}-k1", org, "alice", "laptop", f"hash-1-{org}", at(10.5), "root", persona="helper"
        )
    )
    store.put_api_key(
        ApiKey(
            f"{org}-k2", org, "bob", "ci", f"hash-2-{org}", at(11.5), "alice", revoked_at=at(99.25)
        )
    )
    store.append_audit(
        [
            AuditEntry(
                org,
                at(20 + i + 0.5),
                "alice" if i % 2 else "root",
                f"admin.step.{i}",
                target=f"t{i}",
                outcome="denied" if i == 3 else "ok",
                detail={"i": i, "nested": {"x": [1, 2.5, None]}},
                request_id=f"r{i}",
            )
            for i in range(audit_lines)
        ]
    )


def _directory_of(url: str, embedder: Embedder, orgs: Sequence[str]) -> dict[str, Any]:
    """Every org's entries, keys and audit log (without ``seq``) as ``url``'s store holds them."""
    store = open_store(Settings(database_url=url), embedder.model_id, embedder.dim)
    try:
        return {
            org: {
                "entries": [
                    e
                    for kind in ("org", "user", "team", "persona")
                    for e in store.entries(org, kind)
                ],
                "keys": store.api_keys(org),
                "audit": _no_seq(store.audit(org, limit=1000)),
            }
            for org in orgs
        }
    finally:
        store.close()


@pytest.fixture
def with_directory(
    source: tuple[str, dict[str, dict[str, str]]], embedder: Embedder
) -> tuple[str, list[str]]:
    """The source store plus a directory in every org and one directory-only org."""
    src, _ = source
    store = open_store(Settings(database_url=src), embedder.model_id, embedder.dim)
    try:
        for org in ORGS:
            _fill_directory(store, org)
        _fill_directory(store, DIRECTORY_ONLY, audit_lines=4)
    finally:
        store.close()
    return src, sorted([*ORGS, DIRECTORY_ONLY])


def _audit_lines(url: str, embedder: Embedder, orgs: Sequence[str]) -> dict[str, int]:
    store = open_store(Settings(database_url=url), embedder.model_id, embedder.dim)
    try:
        return {org: len(store.audit(org, limit=100_000)) for org in orgs}
    finally:
        store.close()


def test_directory_keys_and_audit_are_copied(
    with_directory: tuple[str, list[str]],
    pg_url: Callable[[], str],
    tmp_path: Path,
    embedder: Embedder,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    src, orgs = with_directory
    monkeypatch.setattr("kenning.migrate._AUDIT_PAGE", 2)  # several pages, a partial and an empty
    pg, back = pg_url(), f"sqlite:///{tmp_path / 'back.db'}"
    there = migrate(src, pg)
    again = migrate(pg, back)

    assert [o.org_id for o in there.organizations] == orgs
    assert there.to_dict() == again.to_dict()
    counts = {o.org_id: (o.memories, o.entries, o.api_keys, o.audit) for o in there.organizations}
    # the engine audits the writes that filled each org, beside the 5 lines put there
    written = _audit_lines(src, embedder, ORGS)
    assert all(n > 5 for n in written.values())
    assert counts == {
        **{org: (7, 5, 2, written[org]) for org in ORGS},
        DIRECTORY_ONLY: (0, 5, 2, 4),
    }
    before = _directory_of(src, embedder, orgs)
    assert before["acme"]["audit"][0]["action"] == "admin.step.4"  # newest first
    assert before["acme"]["keys"][1].revoked_at is not None
    assert _directory_of(pg, embedder, orgs) == before
    assert _directory_of(back, embedder, orgs) == before


def test_refuses_a_destination_holding_a_directory_only_org(
    with_directory: tuple[str, list[str]], tmp_path: Path, embedder: Embedder
) -> None:
    src, _ = with_directory
    dst = f"sqlite:///{tmp_path / 'taken.db'}"
    store = open_store(Settings(database_url=dst), embedder.model_id, embedder.dim)
    try:
        store.put_entry(DirectoryEntry(DIRECTORY_ONLY, "org", DIRECTORY_ONLY, {}, T0))
    finally:
        store.close()
    with pytest.raises(Conflict, match=rf"organization\(s\) '{DIRECTORY_ONLY}' \(0 memories\)"):
        migrate(src, dst)
    assert sqlite_counts(dst)["memories"] == 0


# -- refusals -----------------------------------------------------------------------------


def test_refuses_a_destination_holding_a_copied_org_and_writes_nothing(
    source: tuple[str, dict[str, dict[str, str]]], tmp_path: Path, embedder: Embedder
) -> None:
    src, _ = source
    dst = f"sqlite:///{tmp_path / 'busy.db'}"
    with Memory(dst, embedder=embedder, clock=FixedClock(T0)) as mem:
        mem.remember("Globex already lives here", principal=admin("globex"))
    before = sqlite_counts(dst)
    with pytest.raises(Conflict, match=r"organization\(s\) 'globex' \(1 memories\)"):
        migrate(src, dst)
    assert sqlite_counts(dst) == before


def test_refuses_a_postgresql_destination_holding_a_copied_org(
    source: tuple[str, dict[str, dict[str, str]]], pg_url: Callable[[], str], tmp_path: Path
) -> None:
    src, _ = source
    pg = pg_url()
    migrate(src, pg)
    with open_stores(pg, src) as (_, sqlite_side):
        assert count_memories(sqlite_side) == 21
    again = f"sqlite:///{tmp_path / 'again.db'}"
    migrate(pg, again)
    with pytest.raises(Conflict, match="'acme', 'globex', 'initech'"):
        migrate(again, pg)
    with open_stores(src, pg) as (_, dest):
        assert count_memories(dest) == 21


def test_other_organizations_in_the_destination_are_kept(
    source: tuple[str, dict[str, dict[str, str]]], tmp_path: Path, embedder: Embedder
) -> None:
    src, _ = source
    dst = f"sqlite:///{tmp_path / 'shared.db'}"
    with Memory(dst, embedder=embedder, clock=FixedClock(T0)) as mem:
        mem.remember("Umbrella's own memory", principal=admin("umbrella"))
    report = migrate(src, dst)
    assert [o.org_id for o in report.organizations] == sorted(ORGS)
    with open_stores(src, dst) as (_, dest):
        assert dest.organizations() == sorted([*ORGS, "umbrella"])
        assert count_memories(dest) == 22


def test_refuses_the_same_database(
    source: tuple[str, dict[str, dict[str, str]]],
    pg_url: Callable[[], str],
    pg_server: ThrowawayPostgres,
) -> None:
    src, _ = source
    path = src.removeprefix("sqlite:///")
    for other in (src, path, f"sqlite:///{Path(path).parent}/./{Path(path).name}"):
        with pytest.raises(InvalidInput, match="same database") as err:
            migrate(src, other)
        assert err.value.field == "to"
    pg = pg_url()
    migrate(src, pg)
    name = pg.rsplit("/", 1)[1]
    aliases = (pg, pg.replace("127.0.0.1", "localhost"), pg.replace("postgresql:", "postgres:"))
    for alias in aliases:
        with pytest.raises(InvalidInput, match="same database"):
            migrate(pg, alias)
    assert inspect_database(pg).identity != inspect_database(pg_server.url("postgres")).identity
    assert name in inspect_database(pg).identity
    with open_stores(src, pg) as (store, _):
        with pytest.raises(InvalidInput, match="same store"):
            copy_store(store, store)


@pytest.mark.parametrize(
    ("src", "dst", "field", "message"),
    [
        ("mysql://u@h/db", "sqlite:///x.db", "from", "no store for 'mysql' URLs"),
        ("{tmp}/missing.db", "{tmp}/out.db", "from", "holds no kenning store"),
        ("{tmp}/junk.txt", "{tmp}/out.db", "from", "is not a SQLite database"),
        ("{src}", "sqlite:///", "to", "names no file"),
        ("{src}", "postgresql://u@h:port/db", "to", "not a valid PostgreSQL URL"),
        ("{src}", " ", "to", "to is empty"),
    ],
)
def test_bad_urls_are_precise_invalid_input(
    source: tuple[str, dict[str, dict[str, str]]],
    tmp_path: Path,
    src: str,
    dst: str,
    field: str,
    message: str,
) -> None:
    (tmp_path / "junk.txt").write_text("not a database, just some text " * 100)
    fill = {"tmp": str(tmp_path), "src": source[0]}
    with pytest.raises(InvalidInput, match=message) as err:
        migrate(src.format(**fill), dst.format(**fill))
    assert err.value.field == field
    assert not (tmp_path / "out.db").exists()


def test_plain_paths_and_urls_name_the_same_file(tmp_path: Path) -> None:
    assert database_url(str(tmp_path / "a.db")) == f"sqlite:///{tmp_path}/a.db"
    assert database_url("postgres://u@h/db") == "postgresql://u@h/db"
    assert database_url("sqlite:///rel.db") == "sqlite:///rel.db"


def test_refuses_a_destination_with_another_embedding_model(
    source: tuple[str, dict[str, dict[str, str]]], tmp_path: Path
) -> None:
    dst = tmp_path / "other-model.db"
    SQLiteStore(dst, model_id="another-model", dim=8).close()
    with pytest.raises(ConfigError, match=r"another-model \(8-d\)"):
        migrate(source[0], str(dst))


# -- verification -------------------------------------------------------------------------


class _Lossy:
    """A real store whose imports lose something (what verification must catch)."""

    def __init__(self, inner: Store, damage: Callable[[dict[str, Any]], None]) -> None:
        self._inner, self._damage = inner, damage

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def import_rows(
        self, rows: Sequence[Mapping[str, Any]], progress: Callable[[int], None] | None = None
    ) -> int:
        damaged = [dict(r) for r in rows]
        if damaged:
            self._damage(damaged[0])
        return self._inner.import_rows(damaged, progress)


def _drop_history(row: dict[str, Any]) -> None:
    row["history"] = row["history"][:-1]


def _flip_vector(row: dict[str, Any]) -> None:
    raw = bytearray(base64.b64decode(row["vector"]))
    raw[0] ^= 1
    row["vector"] = base64.b64encode(bytes(raw)).decode()


@pytest.mark.parametrize(
    ("damage", "detail"),
    [(_drop_history, "history entries in the source"), (_flip_vector, "differs")],
)
def test_verification_names_the_org_and_the_difference(
    source: tuple[str, dict[str, dict[str, str]]],
    tmp_path: Path,
    damage: Callable[[dict[str, Any]], None],
    detail: str,
) -> None:
    src, ids = source
    with open_stores(src, str(tmp_path / "lossy.db")) as (store, dest):
        with pytest.raises(VerificationError, match=detail) as err:
            copy_store(store, _Lossy(dest, damage), batch_size=100)  # type: ignore[arg-type]
    assert err.value.org_id == "acme" and "organization 'acme'" in str(err.value)
    if damage is _flip_vector:
        assert any(f"memory {i!r} differs" in str(err.value) for i in ids["acme"].values())


class _NoPolicies(_Lossy):
    """A real store that drops every policy it is given."""

    def put_policy(self, policy: Any) -> None:
        return None


def test_verification_catches_lost_policies(
    source: tuple[str, dict[str, dict[str, str]]], tmp_path: Path
) -> None:
    src, _ = source
    with open_stores(src, str(tmp_path / "lossy.db")) as (store, dest):
        with pytest.raises(VerificationError, match="policies differ: 2 in the source, 0"):
            copy_store(store, _NoPolicies(dest, lambda row: None), batch_size=100)  # type: ignore[arg-type]


class _NoAudit(_Lossy):
    """A real store that drops every audit line it is given."""

    def append_audit(self, entries: Any) -> None:
        return None


def test_verification_catches_a_lost_audit_log(
    with_directory: tuple[str, list[str]], tmp_path: Path, embedder: Embedder
) -> None:
    src, _ = with_directory
    lines = _audit_lines(src, embedder, ["acme"])["acme"]
    with open_stores(src, str(tmp_path / "lossy.db")) as (store, dest):
        with pytest.raises(
            VerificationError, match=f"audit lines differ: {lines} in the source"
        ) as err:
            copy_store(store, _NoAudit(dest, lambda row: None), batch_size=100)  # type: ignore[arg-type]
    assert err.value.org_id == "acme" and "0 in the destination" in str(err.value)
