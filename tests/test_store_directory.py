"""The Store contract, directory part (``kenning.stores.base``): entries, API keys, audit log.

Every test takes ``store_kind`` (via ``make_memory``), so it runs on SQLite and
on a real PostgreSQL, and calls the store directly.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import replace
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from conftest import T0

from kenning import Memory, Settings
from kenning.directory.model import ApiKey, AuditEntry, DirectoryEntry
from kenning.embeddings import Embedder
from kenning.stores import Store, open_store
from kenning.stores.postgres import schema as pg_schema
from kenning.stores.sqlite import migrations as sqlite_migrations


@pytest.fixture
def store(mem: Memory) -> Store:
    """The store of a fresh Memory (SQLite or PostgreSQL)."""
    return mem.store


def at(seconds: float) -> Any:
    """``T0`` plus ``seconds`` (fractions of a second survive a round trip)."""
    return T0 + timedelta(seconds=seconds)


def entry(org: str, kind: str, entry_id: str, seconds: float = 0.5, **doc: Any) -> DirectoryEntry:
    return DirectoryEntry(org, kind, entry_id, doc, at(seconds))


def key(
    key_id: str, org: str = "acme", user: str = "alice", seconds: float = 1.25, **fields: Any
) -> ApiKey:
    return ApiKey(
        key_id, org, user, f"{key_id} laptop", f"sha256-of-{key_id}", at(seconds), "root", **fields
    )


def line(
    action: str, org: str = "acme", actor: str = "alice", seconds: float = 0.0, **fields: Any
) -> AuditEntry:
    return AuditEntry(org, at(seconds), actor, action, **fields)


def _no_seq(entries: list[AuditEntry]) -> list[dict[str, Any]]:
    return [{k: v for k, v in e.to_dict().items() if k != "seq"} for e in entries]


# -- entries ------------------------------------------------------------------------------


def test_entries_put_get_replace_list_and_delete(store: Store) -> None:
    org = entry("acme", "org", "acme", name="Acme", mode="org", memory_enabled=True)
    bob = entry("acme", "user", "bob", role="member", teams={"eng": "lead"}, personas=["helper"])
    alice = entry("acme", "user", "alice", 1.234567, role="admin", nested={"a": [1, 2.5, None]})
    team = entry("acme", "team", "eng", name="Engineering")
    for e in (org, bob, alice, team):
        store.put_entry(e)
    assert store.get_entry("acme", "user", "alice") == alice
    assert store.get_entry("acme", "org", "acme") == org
    assert store.get_entry("acme", "team", "alice") is None  # kind is part of the key
    assert store.entries("acme", "user") == [alice, bob]  # by id
    assert store.entries("acme", "team") == [team]
    assert store.entries("acme", "persona") == []

    renamed = entry("acme", "user", "bob", 9.75, role="admin", disabled=True)
    store.put_entry(renamed)
    assert store.get_entry("acme", "user", "bob") == renamed
    assert store.entries("acme", "user") == [alice, renamed]

    assert store.delete_entry("acme", "user", "alice") is True
    assert store.delete_entry("acme", "user", "alice") is False
    assert store.get_entry("acme", "user", "alice") is None
    assert store.entries("acme", "user") == [renamed]


def test_entries_of_two_organizations_are_distinct(store: Store) -> None:
    ours, theirs = (
        entry("acme", "user", "sam", name="Sam A"),
        entry("globex", "user", "sam", name="Sam G"),
    )
    store.put_entry(ours)
    store.put_entry(theirs)
    assert store.get_entry("acme", "user", "sam") == ours
    assert store.get_entry("globex", "user", "sam") == theirs
    assert store.entries("acme", "user") == [ours]
    assert store.delete_entry("globex", "user", "sam") is True
    assert store.get_entry("acme", "user", "sam") == ours
    assert store.entries("globex", "user") == []


def test_directory_orgs_lists_organizations_without_memories(store: Store) -> None:
    assert store.directory_orgs() == []
    store.put_entry(entry("umbrella", "org", "umbrella", name="Umbrella"))
    store.put_api_key(key("k1", org="initech"))
    store.append_audit([line("auth.denied", org="globex")])
    store.put_entry(entry("acme", "user", "alice"))
    assert store.directory_orgs() == ["acme", "globex", "initech", "umbrella"]
    assert store.organizations() == []  # none of them held a memory


# -- API keys -----------------------------------------------------------------------------


def test_api_key_insert_lookup_and_revoke_keeps_the_hash(store: Store) -> None:
    k = key("k1", persona="helper")
    store.put_api_key(k)
    assert store.get_api_key("k1") == k
    assert store.get_api_key("k1").active  # type: ignore[union-attr]
    assert store.get_api_key("nope") is None

    revoked_at = at(3600.5)
    tampered = replace(k, secret_hash="another-hash", name="renamed", revoked_at=revoked_at)
    store.put_api_key(tampered)
    got = store.get_api_key("k1")
    assert got == replace(k, revoked_at=revoked_at)
    assert got is not None and got.secret_hash == "sha256-of-k1" and not got.active


def test_api_keys_are_listed_per_org_and_user_oldest_first(store: Store) -> None:
    newest = key("k-new", seconds=50)
    b, a = key("k-b", seconds=10), key("k-a", seconds=10)  # same time: by id
    bobs = key("k-bob", user="bob", seconds=20)
    foreign = key("k-globex", org="globex", user="alice", seconds=5)
    for k in (newest, b, bobs, foreign, a):
        store.put_api_key(k)
    assert store.api_keys("acme") == [a, b, bobs, newest]
    assert store.api_keys("acme", "alice") == [a, b, newest]
    assert store.api_keys("acme", "bob") == [bobs]
    assert store.api_keys("acme", "carol") == []
    assert store.api_keys("globex") == [foreign]
    assert store.api_keys("initech") == []
    assert store.get_api_key("k-globex") == foreign  # found by id, whatever the org


# -- audit log ----------------------------------------------------------------------------


def test_audit_assigns_increasing_seq_and_reads_newest_first(store: Store) -> None:
    first = [
        line("memory.remember", seconds=1, seq=999, target="m1", detail={"n": 1}),
        line("memory.recall", seconds=2, seq=999, request_id="r-2"),
        line(
            "admin.key.create",
            seconds=2,
            seq=0,
            target="k1",
            outcome="denied",
            detail={"why": "not admin", "nested": {"a": [1, None]}},
        ),
    ]
    store.append_audit(first)
    store.append_audit([])
    store.append_audit([line("memory.forget", seconds=3, target="m1")])
    got = store.audit("acme")
    seqs = [e.seq for e in got]
    assert seqs == sorted(seqs, reverse=True) and len(set(seqs)) == 4 and 999 not in seqs
    assert _no_seq(got) == _no_seq(
        [line("memory.forget", seconds=3, target="m1"), *reversed(first)]
    )
    store.append_audit([line("memory.recall", seconds=4)])
    assert store.audit("acme", limit=1)[0].seq > seqs[0]


@pytest.fixture
def audited(store: Store) -> Store:
    """A store with a varied audit log in acme and a little of it in globex."""
    store.append_audit(
        [
            line("memory.remember", actor="alice", seconds=1),
            line("admin.key.create", actor="root", seconds=2, target="k1"),
            line("admin_key.create", actor="root", seconds=3),
            line("adminXkey.create", actor="root", seconds=4),
            line("administer", actor="root", seconds=5),
            line("50%.off", actor="bob", seconds=6),
            line("500.off", actor="bob", seconds=7),
            line("admin.user.put", actor="root", seconds=8, target="bob"),
            line("admin.key.create", org="globex", actor="root", seconds=9),
            line("memory.recall", actor="alice", seconds=10),
        ]
    )
    return store


def _actions(entries: list[AuditEntry]) -> list[str]:
    return [e.action for e in entries]


def test_audit_filters_by_actor_and_action_prefix(audited: Store) -> None:
    assert _actions(audited.audit("acme", actor="alice")) == ["memory.recall", "memory.remember"]
    assert _actions(audited.audit("acme", action="admin.")) == [
        "admin.user.put",
        "admin.key.create",
    ]
    assert _actions(audited.audit("acme", action="admin.key.create")) == ["admin.key.create"]
    assert _actions(audited.audit("acme", actor="root", action="admin")) == [
        "admin.user.put",
        "administer",
        "adminXkey.create",
        "admin_key.create",
        "admin.key.create",
    ]
    assert audited.audit("acme", actor="carol") == []
    assert audited.audit("acme", action="memory.remember.") == []


def test_audit_action_filter_has_no_wildcards(audited: Store) -> None:
    assert _actions(audited.audit("acme", action="admin_")) == ["admin_key.create"]
    assert audited.audit("acme", action="%") == []
    assert audited.audit("acme", action="_") == []
    assert _actions(audited.audit("acme", action="50%")) == ["50%.off"]
    assert audited.audit("acme", action="ADMIN.") == []  # case matters
    assert len(audited.audit("acme", action="")) == 9


def test_audit_since_before_seq_and_limit(audited: Store) -> None:
    everything = audited.audit("acme")
    assert len(everything) == 9
    assert _actions(audited.audit("acme", since=at(8))) == ["memory.recall", "admin.user.put"]
    assert audited.audit("acme", since=at(10.000001)) == []
    assert _actions(audited.audit("acme", limit=3)) == _actions(everything[:3])
    assert audited.audit("acme", limit=0) == []
    pages: list[AuditEntry] = []
    before: int | None = None
    while page := audited.audit("acme", before_seq=before, limit=4):
        pages.extend(page)
        before = page[-1].seq
    assert pages == everything
    cut = everything[2].seq
    assert audited.audit("acme", before_seq=cut) == everything[3:]
    assert audited.audit("acme", actor="bob", before_seq=cut, since=at(5.5)) == [everything[3]]


def test_audit_of_one_organization_only(audited: Store) -> None:
    theirs = audited.audit("globex")
    assert _no_seq(theirs) == _no_seq(
        [line("admin.key.create", org="globex", actor="root", seconds=9)]
    )
    assert theirs[0].seq not in {e.seq for e in audited.audit("acme")}
    assert audited.audit("initech") == []


# -- migrations ---------------------------------------------------------------------------


@pytest.fixture
def older_database(
    tmp_path: Path,
    database_url: Callable[..., str],
    embedder: Embedder,
    monkeypatch: pytest.MonkeyPatch,
) -> Iterator[str]:
    """The URL of a database migrated up to ``005`` (before the directory) that holds a memory."""
    url = database_url(tmp_path / "older", migrated=False)
    with monkeypatch.context() as patch:
        for module in (sqlite_migrations, pg_schema):
            names = [name for name, _ in module.MIGRATIONS]
            patch.setattr(module, "MIGRATIONS", module.MIGRATIONS[: names.index("006_directory")])
        with Memory(url, embedder=embedder) as mem:
            # a memory as a store of that release held it (the engine of this one reads
            # the directory on every write, so the record goes in through the store)
            old = mem.writes.build(
                mem.principal, {"content": "Written before the directory existed"}, mem.clock.now()
            )
            mem.store.insert([(old, mem.embedder.embed(old.content))], mem.principal.user_id)
            with pytest.raises(Exception, match="directory"):  # no such table yet
                mem.store.get_entry("default", "org", "default")
    yield url


def _open(url: str, embedder: Embedder) -> Store:
    return open_store(Settings(database_url=url), embedder.model_id, embedder.dim)


def test_directory_migration_applies_to_an_existing_database(
    older_database: str, embedder: Embedder
) -> None:
    store = _open(older_database, embedder)
    try:
        assert store.organizations() == ["default"]  # the old data is still there
        assert store.directory_orgs() == []
        store.put_entry(entry("default", "org", "default", name="Default"))
        store.put_api_key(key("k1", org="default"))
        store.append_audit([line("admin.key.create", org="default", target="k1")])
    finally:
        store.close()
    reopened = _open(older_database, embedder)  # nothing left to migrate; the rows stay
    try:
        assert reopened.get_entry("default", "org", "default") == entry(
            "default", "org", "default", name="Default"
        )
        assert reopened.get_api_key("k1") == key("k1", org="default")
        assert _actions(reopened.audit("default")) == ["admin.key.create"]
        assert reopened.directory_orgs() == ["default"]
    finally:
        reopened.close()
