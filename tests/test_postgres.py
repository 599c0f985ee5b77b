"""What only the PostgreSQL store has: row-level security, its set-up checks, BM25 parity.

Row-level security is the second wall of seed 000: even when the query-level
scope filter is bypassed on purpose (raw SQL as the application role, or a
"bug" patched into the store's filter), a transaction carrying one
principal's context reads and writes nothing of anyone else's.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from conftest import T0

from kenning import (
    ConfigError,
    FixedClock,
    Memory,
    MemoryFilter,
    NotFound,
    Principal,
    Role,
    Settings,
    StoreError,
)
from kenning.config import StoreOptions
from kenning.embeddings import Embedder
from kenning.stores.postgres import store as pg_store_module
from kenning.stores.postgres.schema import MIGRATIONS
from kenning.stores.postgres.store import PostgresStore
from kenning.stores.postgres.throwaway import ThrowawayPostgres

pytestmark = pytest.mark.usefixtures("pg_server")

_CTX = (
    "SELECT set_config('kenning.org_id', %s, true), set_config('kenning.kinds', %s, true), "
    "set_config('kenning.scopes', %s, true)"
)


@pytest.fixture
def pg_url(pg_server: ThrowawayPostgres, tmp_path: Path) -> Iterator[str]:
    """A fresh, empty database owned by the application role."""
    name = "rls_" + tmp_path.name.replace("-", "_").lower()[-40:]
    pg_server.psql("postgres", f"CREATE DATABASE {name} OWNER kenning")
    yield pg_server.url(name)
    pg_server.psql("postgres", f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


@pytest.fixture
def two_orgs(pg_url: str, embedder: Embedder) -> Iterator[Memory]:
    """acme (alice's personal note, a team note, an org note) and globex (one note)."""
    mem = Memory(settings=Settings(database_url=pg_url), embedder=embedder, clock=FixedClock(T0))
    admin = _admin("root", "acme")
    mem.remember("Alice's locker code is 4711", scope="user:alice", principal=admin)
    mem.remember("The red team ships on Fridays", scope="team:red", principal=admin)
    mem.remember("Acme's office closes at six", scope="org:acme", principal=admin)
    mem.remember(
        "Globex is secretly merging with Initech",
        scope="org:globex",
        principal=_admin("boss", "globex"),
    )
    yield mem
    mem.close()


def _admin(user: str, org: str) -> Principal:
    return Principal(org_id=org, user_id=user, roles=frozenset({Role.ADMIN}))


def _as_app_role(url: str, sql: str, context: tuple[str, str, str] | None) -> list[Any]:
    """Run ``sql`` as the application role, in one transaction with ``context`` set."""
    with psycopg.connect(url) as conn:
        if context is not None:
            conn.execute(_CTX, context)
        rows = conn.execute(sql).fetchall()
        conn.rollback()
    return rows


# ---------------------------------------------------------------------------- RLS


def test_raw_sql_without_context_reads_nothing(two_orgs: Memory, pg_url: str) -> None:
    for table in ("memories", "history"):
        assert _as_app_role(pg_url, f"SELECT * FROM {table}", None) == []
        assert _as_app_role(pg_url, f"SELECT count(*) FROM {table}", None) == [(0,)]


def test_raw_sql_with_another_principals_context_reads_only_theirs(
    two_orgs: Memory, pg_url: str
) -> None:
    """No WHERE clause at all: the policies alone decide what comes back."""
    bob = ("", "", "acme|user:bob,acme|org:acme")  # bob: his own scope and acme's org layer
    assert _as_app_role(pg_url, "SELECT content FROM memories ORDER BY 1", bob) == [
        ("Acme's office closes at six",)
    ]
    assert _as_app_role(pg_url, "SELECT count(*) FROM history", bob) == [(1,)]
    # globex's admin context (every kind in globex) sees none of acme
    globex = ("globex", "org,persona,persona_user,team,user", "")
    assert _as_app_role(pg_url, "SELECT content FROM memories", globex) == [
        ("Globex is secretly merging with Initech",)
    ]
    # an acme admin's wildcard never reaches globex
    acme = ("acme", "org,persona,persona_user,team,user", "")
    assert len(_as_app_role(pg_url, "SELECT id FROM memories", acme)) == 3
    assert _as_app_role(pg_url, "SELECT id FROM memories WHERE org_id = 'globex'", acme) == []


def test_raw_writes_outside_the_context_are_refused_or_touch_nothing(
    two_orgs: Memory, pg_url: str
) -> None:
    bob = ("", "", "acme|user:bob")
    with psycopg.connect(pg_url) as conn:
        conn.execute(_CTX, bob)
        assert conn.execute("UPDATE memories SET content = 'pwned'").rowcount == 0
        assert conn.execute("DELETE FROM memories").rowcount == 0
        assert conn.execute("UPDATE history SET content = NULL").rowcount == 0
        conn.commit()
    with psycopg.connect(pg_url) as conn:
        conn.execute(_CTX, bob)
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="row-level security"):
            conn.execute(
                "INSERT INTO history (memory_id, org_id, scope_kind, scope_key, op, at) "
                "VALUES ('x', 'globex', 'org', 'org:globex', 'create', now())"
            )
    admin = _admin("root", "acme")
    contents = {r.content for r in two_orgs.list(principal=admin, limit=10, scopes="all").items}
    assert len(contents) == 3 and "pwned" not in contents


def test_a_bug_in_the_query_level_filter_still_leaks_nothing(
    two_orgs: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Patch the store's scope filter to 'everything': the policies still hold."""
    monkeypatch.setattr(pg_store_module, "scope_clause", lambda scopes, alias="m": ("TRUE", []))
    bob = Principal.member("bob", org_id="acme")
    everything = "locker code office team Globex merging Initech Fridays"
    assert [h.memory.content for h in two_orgs.recall(everything, k=10, principal=bob)] == [
        "Acme's office closes at six"
    ]
    assert [r.content for r in two_orgs.list(principal=bob, limit=10).items] == [
        "Acme's office closes at six"
    ]
    assert sum(s.total_memories for s in two_orgs.stats(principal=bob)) == 1
    store = two_orgs.store.home  # the home store behind the organization router
    assert isinstance(store, PostgresStore)
    acme = two_orgs.list(principal=_admin("root", "acme"), scopes="all").items
    every_id = [r.id for r in acme]
    hidden = [r.id for r in acme if r.scope.key != "org:acme"]
    assert len(every_id) == 3 and len(hidden) == 2
    view = two_orgs.policy.readable(bob)
    assert [r.content for r in store.get(every_id, view)] == ["Acme's office closes at six"]
    q = two_orgs.embedder.embed("locker code")
    assert len(store.vector_search(q, view, MemoryFilter(), 10)) == 1
    assert len(store.keyword_search("locker code merging", view, MemoryFilter(), 10)) == 0
    assert all(store.history(i, view) == [] for i in hidden)


# ---------------------------------------------------------------------------- set-up checks


def test_superuser_connections_are_refused(
    pg_server: ThrowawayPostgres, pg_url: str, embedder: Embedder
) -> None:
    superuser = pg_url.replace("postgresql://kenning@", "postgresql://postgres@")
    with pytest.raises(ConfigError, match="superuser or a BYPASSRLS role"):
        PostgresStore(superuser, model_id=embedder.model_id, dim=embedder.dim)


def test_missing_pgvector_gets_a_clear_error(
    pg_server: ThrowawayPostgres, embedder: Embedder
) -> None:
    pg_server.psql("postgres", "CREATE DATABASE novector OWNER kenning TEMPLATE template0")
    try:
        with pytest.raises(ConfigError, match="CREATE EXTENSION vector"):
            PostgresStore(pg_server.url("novector"), model_id=embedder.model_id, dim=embedder.dim)
    finally:
        pg_server.psql("postgres", "DROP DATABASE novector WITH (FORCE)")


def test_unreachable_server_is_a_store_error(embedder: Embedder) -> None:
    with pytest.raises(StoreError, match="cannot connect"):
        PostgresStore(
            "postgresql://kenning@127.0.0.1:1/nope", model_id=embedder.model_id, dim=embedder.dim
        )


def test_migrations_apply_once_and_reopen_cleanly(pg_url: str, embedder: Embedder) -> None:
    for _ in range(3):
        PostgresStore(pg_url, model_id=embedder.model_id, dim=embedder.dim).close()
    with psycopg.connect(pg_url) as conn:
        names = [r[0] for r in conn.execute("SELECT name FROM kenning_migrations ORDER BY 1")]
    assert names == [name for name, _ in MIGRATIONS]


def test_a_different_vector_size_is_refused(pg_url: str, embedder: Embedder) -> None:
    PostgresStore(pg_url, model_id=embedder.model_id, dim=embedder.dim).close()
    with pytest.raises(ConfigError, match="re-embed"):
        PostgresStore(pg_url, model_id="other-model", dim=embedder.dim + 1)


def test_database_url_setting_selects_the_store(
    pg_url: str, embedder: Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KENNING_DATABASE_URL", pg_url)
    mem = Memory(embedder=embedder)
    try:
        assert isinstance(mem.store.home, PostgresStore)  # behind the organization router
        assert mem.get(mem.remember("Stored on the server").id).content == "Stored on the server"
    finally:
        mem.close()


# ---------------------------------------------------------------------------- ranking parity


def test_keyword_ranking_matches_the_sqlite_store(
    tmp_path: Path,
    embedder: Embedder,
    pg_url: str,
    make_sentences: Callable[..., list[str]],
) -> None:
    """The same corpus ranked by FTS5 bm25() and by the tsvector BM25: same top hits."""
    texts = make_sentences(300) + [
        "Rosa keeps bees on the roof of the library",
        "The library roof was repaired after the storm",
        "Storm warnings closed the harbour for two days",
    ]
    sqlite_mem = Memory(tmp_path / "parity.db", embedder=embedder)
    pg_mem = Memory(settings=Settings(database_url=pg_url), embedder=embedder)
    try:
        for mem in (sqlite_mem, pg_mem):
            mem.remember_many([{"content": t} for t in texts])
        queries = [
            "library roof",
            "storm harbour",
            "bees library",
            "jazz music teaches",
            "Chen chess openings",
            "volcano geology",
        ]
        for query in queries:
            results = []
            for mem in (sqlite_mem, pg_mem):
                view = mem.policy.readable(mem.principal)
                hits = mem.store.keyword_search(query, view, MemoryFilter(), 10)
                ids = {r.id: r.content for r in mem.list(limit=1000).items}
                results.append({ids[i]: s for i, s in hits})
            sqlite_hits, pg_hits = results
            # the same scores in the same order (ties may break differently) ...
            assert sorted(pg_hits.values(), reverse=True) == pytest.approx(
                sorted(sqlite_hits.values(), reverse=True), rel=0.02
            ), query
            # ... and a memory found by both scores the same on both
            both = pg_hits.keys() & sqlite_hits.keys()
            assert len(both) >= min(3, len(sqlite_hits)), query
            for content in both:
                assert pg_hits[content] == pytest.approx(sqlite_hits[content], rel=0.02), content
    finally:
        sqlite_mem.close()
        pg_mem.close()


def test_filtered_search_on_the_hnsw_path_returns_the_true_top(
    pg_url: str, embedder: Embedder, make_sentences: Callable[..., list[str]]
) -> None:
    """A large readable set takes the HNSW walk; a narrow filter still gets every match."""
    mem = Memory(
        settings=Settings(database_url=pg_url, store=StoreOptions(pg_exact_search_max=50)),
        embedder=embedder,
    )
    try:
        texts = make_sentences(400)
        items = [{"content": t, "scope": "team:big"} for t in texts]
        for i in (7, 150, 333):
            items[i]["tags"] = ["rare"]
        mem.remember_many(items)
        store = mem.store.home  # the home store behind the organization router
        assert isinstance(store, PostgresStore)
        view = mem.policy.readable(mem.principal)
        q = embedder.embed("Who likes jazz music?")
        plain = store.vector_search(q, view, MemoryFilter(), 5)
        assert store.last_plan.method == "hnsw" and len(plain) == 5
        rare = store.vector_search(q, view, MemoryFilter(tags_all=frozenset({"rare"})), 5)
        tagged = {r.id for r in mem.list(limit=500, scopes="all").items if "rare" in r.tags}
        assert {i for i, _ in rare} == tagged and len(tagged) == 3
        sims = [s for _, s in rare]
        assert sims == sorted(sims, reverse=True)
    finally:
        mem.close()


def test_bulk_load_builds_the_search_indexes_once_at_the_end(
    pg_url: str, embedder: Embedder, make_sentences: Callable[..., list[str]]
) -> None:
    mem = Memory(
        settings=Settings(database_url=pg_url, store=StoreOptions(pg_exact_search_max=50)),
        embedder=embedder,
    )
    store = mem.store.home  # the home store behind the organization router
    assert isinstance(store, PostgresStore)

    def indexes() -> set[str]:
        with psycopg.connect(pg_url) as conn:
            rows = conn.execute(
                "SELECT indexname FROM pg_indexes WHERE indexname IN "
                "('memories_embedding', 'postings_lookup')"
            ).fetchall()
        return {r[0] for r in rows}

    try:
        assert indexes() == {"memories_embedding", "postings_lookup"}
        texts = make_sentences(300)
        with store.bulk_load():
            mem.remember_many([{"content": t, "scope": "team:big"} for t in texts])
            assert indexes() == set()
            # still correct without them, just slower
            assert mem.recall(texts[42], k=1, scopes="all")[0].memory.content == texts[42]
        assert indexes() == {"memories_embedding", "postings_lookup"}
        hits = mem.recall(texts[42], k=3, scopes="all")
        assert hits[0].memory.content == texts[42]
        assert store.last_plan.method == "hnsw"
        view = mem.policy.readable(mem.principal)
        found = store.keyword_search("chess openings", view, MemoryFilter(), 50)
        assert len(found) == sum("chess openings" in t for t in texts)
    finally:
        mem.close()


# ---------------------------------------------------------------------------- graph RLS


@pytest.fixture
def graph_orgs(two_orgs: Memory) -> Iterator[Memory]:
    """two_orgs plus linked pairs in user:alice and org:acme, and an alias on Alice."""
    admin = _admin("root", "acme")
    mem = two_orgs
    a1, a2 = mem.remember_many(
        [
            {"content": "Alice hides the Zurich key", "scope": "user:alice"},
            {"content": "Alice flies to Zurich", "scope": "user:alice"},
        ],
        principal=admin,
    )
    o1, o2 = mem.remember_many(
        [
            {"content": "Acme opens a Lisbon office", "scope": "org:acme"},
            {"content": "Lisbon office hires", "scope": "org:acme"},
        ],
        principal=admin,
    )
    mem.graph.link(a1.id, a2.id, "causes", principal=admin)
    mem.graph.link(o1.id, o2.id, "elaborates", principal=admin)
    mem.graph.alias("Zurich", "ZRH", principal=admin)
    yield mem


def test_graph_tables_without_context_read_nothing(graph_orgs: Memory, pg_url: str) -> None:
    for table in ("links", "mentions", "entities", "entity_aliases"):
        assert _as_app_role(pg_url, f"SELECT count(*) FROM {table}", None) == [(0,)], table


def test_graph_rows_are_visible_only_through_visible_memories(
    graph_orgs: Memory, pg_url: str
) -> None:
    """No WHERE clause: the policies alone hide alice's links, mentions, entities, aliases."""
    bob = ("", "", "acme|user:bob,acme|org:acme")
    org_ids = {
        r.id for r in graph_orgs.list(principal=_admin("root", "acme"), scopes="org:acme").items
    }
    links = _as_app_role(pg_url, "SELECT src, dst, relation FROM links", bob)
    assert links and all(s in org_ids and d in org_ids for s, d, _ in links)
    assert "causes" not in {r for _, _, r in links}
    mentions = _as_app_role(pg_url, "SELECT memory_id FROM mentions", bob)
    assert mentions and {m for (m,) in mentions} <= org_ids
    norms = {n for (n,) in _as_app_role(pg_url, "SELECT norm FROM entities", bob)}
    assert "lisbon" in norms and "zurich" not in norms and "alice" not in norms
    assert "globex" not in norms and "initech" not in norms
    assert _as_app_role(pg_url, "SELECT * FROM entity_aliases", bob) == []
    alice = ("", "", "acme|user:alice")
    assert _as_app_role(pg_url, "SELECT alias_norm FROM entity_aliases", alice) == [("zrh",)]
    globex = ("globex", "org,persona,persona_user,team,user", "")
    norms = {n for (n,) in _as_app_role(pg_url, "SELECT norm FROM entities", globex)}
    assert "lisbon" not in norms and "zurich" not in norms and norms


def test_raw_graph_writes_outside_the_context_are_refused(graph_orgs: Memory, pg_url: str) -> None:
    bob = ("", "", "acme|user:bob")
    with psycopg.connect(pg_url) as conn:
        conn.execute(_CTX, bob)
        for table in ("links", "mentions", "entities", "entity_aliases"):
            assert conn.execute(f"DELETE FROM {table}").rowcount == 0, table
        conn.rollback()
    alice_ids = [
        r.id for r in graph_orgs.list(principal=_admin("root", "acme"), scopes="user:alice").items
    ]
    with psycopg.connect(pg_url) as conn:
        conn.execute(_CTX, bob)
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="row-level security"):
            conn.execute(
                "INSERT INTO links (src, dst, relation, weight, org_id, scope_kind, scope_key, "
                "origin, created_at) VALUES (%s, %s, 'related', 1, 'acme', 'user', "
                "'user:alice', 'api', now())",
                alice_ids[:2],
            )
    org_id = graph_orgs.list(principal=_admin("root", "acme"), scopes="org:acme").items[0].id
    acme_admin = ("acme", "org,persona,persona_user,team,user", "")
    with psycopg.connect(pg_url) as conn:  # a link across two scopes cannot even be stored
        conn.execute(_CTX, acme_admin)
        with pytest.raises(psycopg.errors.ForeignKeyViolation):
            conn.execute(
                "INSERT INTO links (src, dst, relation, weight, org_id, scope_kind, scope_key, "
                "origin, created_at) VALUES (%s, %s, 'related', 1, 'acme', 'org', "
                "'org:acme', 'api', now())",
                (alice_ids[0], org_id),
            )


def test_a_bug_in_the_graph_query_filter_still_leaks_nothing(
    graph_orgs: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    from kenning.stores.postgres import graph as pg_graph_module

    every = graph_orgs.list(principal=_admin("root", "acme"), scopes="all").items
    every_id = [r.id for r in every]
    monkeypatch.setattr(pg_graph_module, "scope_clause", lambda scopes, alias="m": ("TRUE", []))
    bob = Principal.member("bob", org_id="acme")
    store = graph_orgs.store
    view = graph_orgs.policy.readable(bob)
    org_ids = {r.id for r in every if r.scope.key == "org:acme"}
    edges = store.graph_edges(every_id, view)
    assert edges and all(e.src in org_ids and e.dst in org_ids for e in edges)
    assert {m for m in store.graph_mentions(every_id, view)} <= org_ids
    assert store.find_entities("acme", ["Zurich", "ZRH", "Alice"], view) == []
    assert [e.norm for e in store.find_entities("acme", ["Lisbon"], view)] == ["lisbon"]
    assert store.graph_counts(view)[1] == len(edges) == 2  # co_occurs + elaborates
    with pytest.raises(NotFound):
        graph_orgs.graph.entity("Zurich", principal=bob)


# ---------------------------------------------------------------------------- lifecycle RLS


@pytest.fixture
def lifecycle_orgs(two_orgs: Memory) -> Iterator[Memory]:
    """two_orgs plus an access on alice's note, a sector in team:red and an acme policy."""
    admin = _admin("root", "acme")
    mem = two_orgs
    alice_note = mem.list(principal=admin, scopes="user:alice").items[0]
    mem.reinforce(alice_note.id, principal=admin)
    mem.create_sector("Red work", scope="team:red", topics=["red"], principal=admin)
    mem.set_policy("scope:team:red", retention_days=90, principal=admin)
    yield mem


def test_lifecycle_tables_without_context_read_nothing(lifecycle_orgs: Memory, pg_url: str) -> None:
    for table in ("access_log", "sectors", "policies"):
        assert _as_app_role(pg_url, f"SELECT count(*) FROM {table}", None) == [(0,)], table


def test_lifecycle_rows_follow_the_scope_wall(lifecycle_orgs: Memory, pg_url: str) -> None:
    bob = ("", "", "acme|user:bob,acme|org:acme")
    assert _as_app_role(pg_url, "SELECT * FROM access_log", bob) == []  # alice's access
    assert _as_app_role(pg_url, "SELECT * FROM sectors", bob) == []  # team:red's sector
    # policies are organization settings: any acme context reads them, globex never
    assert len(_as_app_role(pg_url, "SELECT * FROM policies", bob)) == 1
    globex = ("globex", "org,persona,persona_user,team,user", "")
    assert _as_app_role(pg_url, "SELECT * FROM policies", globex) == []
    alice = ("", "", "acme|user:alice")
    assert _as_app_role(pg_url, "SELECT access_type FROM access_log", alice) == [("reinforce",)]
    red = ("", "", "acme|team:red")
    assert _as_app_role(pg_url, "SELECT name FROM sectors", red) == [("Red work",)]


def test_raw_lifecycle_writes_outside_the_context_are_refused(
    lifecycle_orgs: Memory, pg_url: str
) -> None:
    bob = ("", "", "acme|user:bob,acme|org:acme")
    with psycopg.connect(pg_url) as conn:
        conn.execute(_CTX, bob)
        for table in ("access_log", "sectors", "policies"):
            assert conn.execute(f"DELETE FROM {table}").rowcount == 0, table
        conn.rollback()
    with psycopg.connect(pg_url) as conn:  # a member context cannot write policies
        conn.execute(_CTX, bob)
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="row-level security"):
            conn.execute(
                "INSERT INTO policies (org_id, target, memory_type, review, updated_at) "
                "VALUES ('acme', '*', '*', true, now())"
            )
    with psycopg.connect(pg_url) as conn:
        conn.execute(_CTX, bob)
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="row-level security"):
            conn.execute(
                "INSERT INTO sectors (id, org_id, scope_kind, scope_key, owner_id, name, "
                "decay_multiplier, max_size, created_at, updated_at) VALUES ('s', 'acme', "
                "'team', 'team:red', 'red', 'x', 1, 10, now(), now())"
            )
