"""The store seam's plumbing: backends by URL scheme, and the stores' options.

A third-party store plugs in through :func:`kenning.stores.register_store` (the
route the ``kenning.stores`` entry points take too) and is opened by URL like
a built-in; the built-ins resolve even where the installed metadata lacks
their entry points. ``StoreOptions`` (``Settings.store``) owns every store
default; the flat names of earlier releases still set it.
"""

from __future__ import annotations

from collections.abc import Iterator
from importlib.metadata import EntryPoint
from pathlib import Path

import pytest

from kenning import ConfigError, InvalidInput, Memory, Settings
from kenning.config import StoreOptions
from kenning.embeddings import Embedder
from kenning.stores import (
    DatabaseInfo,
    Store,
    StoreBackend,
    database_url,
    display_url,
    location,
    open_store,
    register_store,
)
from kenning.stores import registry as store_registry
from kenning.stores.sqlite.store import SQLiteStore


class MemtestStore(SQLiteStore):
    """A "third-party" store: the SQLite store in memory, under its own name."""

    kind = "memtest"


class MemtestBackend(StoreBackend):
    """``memtest://NAME``: a throwaway in-memory store per URL opened."""

    schemes = ("memtest",)
    example = "memtest://NAME"

    def open(self, url: str, settings: Settings, model_id: str, dim: int) -> Store:
        """A fresh in-memory store."""
        return MemtestStore(":memory:", model_id=model_id, dim=dim, options=settings.store)

    def inspect(self, url: str, field: str) -> DatabaseInfo:
        """Nothing is recorded anywhere."""
        return DatabaseInfo(url, url, None)


@pytest.fixture
def memtest() -> Iterator[None]:
    """``memtest://`` registered for one test."""
    register_store(MemtestBackend)
    try:
        yield
    finally:
        store_registry.unregister_store("memtest")


def test_a_third_party_store_opens_by_its_scheme(memtest: None, embedder: Embedder) -> None:
    mem = Memory("memtest://scratch", embedder=embedder)
    try:
        assert isinstance(mem.store, MemtestStore) and mem.store.kind == "memtest"
        rec = mem.remember("The memtest store keeps a note about otters")
        assert mem.recall("otters")[0].memory.id == rec.id
        assert mem.store.footprint().memories == 1
        assert location(mem.settings) == "memtest://scratch"
    finally:
        mem.close()
    with pytest.raises(InvalidInput) as err:
        database_url("mysql://me@db/kenning", field="db")
    assert str(err.value) == (
        "db: no store for 'mysql' URLs; use sqlite:///PATH, postgresql://USER@HOST/DB, "
        "memtest://NAME or a file path"
    )


def test_an_entry_point_names_a_store(monkeypatch: pytest.MonkeyPatch, embedder: Embedder) -> None:
    """The entry-point route: ``kenning.stores`` entries load to a backend class."""
    here = EntryPoint("memtest", f"{__name__}:MemtestBackend", store_registry.ENTRY_POINT_GROUP)

    def entry_points(group: str, name: str | None = None) -> list[EntryPoint]:
        found = [here] if group == store_registry.ENTRY_POINT_GROUP else []
        return [ep for ep in found if name in (None, ep.name)]

    monkeypatch.setattr(store_registry, "entry_points", entry_points)
    try:
        assert "memtest" in store_registry.available_schemes()
        store = open_store(Settings(database_url="memtest://x"), embedder.model_id, embedder.dim)
        assert isinstance(store, MemtestStore)
        store.close()
    finally:
        store_registry.unregister_store("memtest")


def test_built_ins_resolve_without_installed_entry_points(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(store_registry, "entry_points", lambda **_: [])
    for scheme in ("sqlite", "postgresql", "postgres"):
        monkeypatch.delitem(store_registry._backends, scheme, raising=False)
    assert database_url(str(tmp_path / "a.db")) == f"sqlite:///{tmp_path / 'a.db'}"
    assert database_url("postgres://u@h:5432/db") == "postgresql://u@h:5432/db"
    assert display_url("postgresql://u:secret@h/db") == "postgresql://u:***@h/db"
    assert store_registry.available_schemes() == ["postgres", "postgresql", "sqlite"]
    with pytest.raises(ConfigError, match="no store for 'mysql' URLs"):
        open_store(Settings(database_url="mysql://u@h/db"), "m", 4)


def test_store_options_own_the_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    opts = StoreOptions()
    assert (opts.exact_search_max, opts.pg_exact_search_max, opts.pg_pool_size) == (20_000, 2000, 4)
    assert Settings().store == opts
    # the flat names of earlier releases, as keyword arguments and as environment variables
    old = Settings(exact_search_max=50, pg_exact_search_max=60, keyword_in_process=False)
    assert old.store.exact_search_max == 50 and old.store.pg_exact_search_max == 60
    assert old.store.keyword_in_process is False
    merged = Settings(store=StoreOptions(ann_min_rows=7), pg_pool_size=9)
    assert (merged.store.ann_min_rows, merged.store.pg_pool_size) == (7, 9)
    monkeypatch.setenv("KENNING_PG_POOL_SIZE", "6")
    monkeypatch.setenv("KENNING_ANN_EXPANSION", "99")
    monkeypatch.setenv("KENNING_STORE_ANN_EXPANSION", "77")  # the new name wins
    env = Settings().store
    assert (env.pg_pool_size, env.ann_expansion) == (6, 77)
    with pytest.raises(Exception, match="exact_search_max"):
        StoreOptions(exact_search_max=0)


def test_a_store_takes_its_knobs_from_the_options(tmp_path: Path, embedder: Embedder) -> None:
    opts = StoreOptions(exact_search_max=11, ann_min_rows=12, keyword_in_process=False)
    store = open_store(
        Settings(database_url=f"sqlite:///{tmp_path / 's.db'}", store=opts),
        embedder.model_id,
        embedder.dim,
    )
    try:
        assert isinstance(store, SQLiteStore)
        assert (store.vectors.exact_max, store.vectors.ann_min_rows) == (11, 12)
        assert store.keyword_in_process is False
    finally:
        store.close()


def test_several_workers_need_a_store_processes_share(memtest: None) -> None:
    from kenning.server.run import serve

    # an in-memory store lives in one process: a second worker would see another store
    settings = Settings(database_url="memtest://scratch")
    settings.server.workers = 2
    with pytest.raises(ConfigError, match="several workers need a store that processes share"):
        serve(settings)
