"""Shared fixtures of the core suite: one real embedder, stores by kind, row counts.

* The MiniLM model is loaded once per session (``minilm``) and wrapped in one
  session-wide :class:`CachedEmbedder` (``embedder``) so a text seen by any test
  is embedded once; the vectors are the model's own, nothing is faked.
* Store-level tests take ``store_kind`` (``params=["sqlite"]``) and build their
  ``Memory`` through ``make_memory`` / ``open_memory``; a PostgreSQL store adds
  one parameter and one branch in :func:`_open_memory` and :func:`_counts`.
* ``db_counts(mem)`` reads the database directly (not through kenning) and
  returns the row counts of every table a write touches.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from kenning import FixedClock, Memory
from kenning.embeddings import CachedEmbedder, Embedder, MemoryCacheBackend, MiniLMEmbedder

#: The fixed "now" of the suite.
T0 = datetime(2025, 3, 1, 12, 0, 0, tzinfo=UTC)

STORE_KINDS = ["sqlite"]


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


@pytest.fixture(scope="session", params=STORE_KINDS)
def store_kind(request: pytest.FixtureRequest) -> str:
    """Which store backend the contract tests run on."""
    return str(request.param)


def _open_memory(kind: str, where: Path, embedder: Embedder, **kw: Any) -> Memory:
    """A Memory on a fresh (or existing) database of ``kind`` under directory ``where``."""
    if kind == "sqlite":
        where.mkdir(parents=True, exist_ok=True)
        return Memory(where / "kenning.db", embedder=embedder, **kw)
    raise AssertionError(f"no test database for store kind {kind!r}")


def _counts(mem: Memory) -> dict[str, int]:
    """Row counts of memories, vectors, keyword index, history and scopes, read directly."""
    path = getattr(mem.store, "path", None)
    if path is None:
        raise AssertionError(f"db_counts does not know store {type(mem.store).__name__}")
    conn = sqlite3.connect(path)
    try:
        return {
            table: int(conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0])
            for table in ("memories", "vectors", "memories_fts", "history", "scopes")
        }
    finally:
        conn.close()


@pytest.fixture(scope="session")
def open_memory(store_kind: str, embedder: Embedder) -> Callable[..., Memory]:
    """``open_memory(directory, **Memory kwargs)``: usable from hypothesis tests too."""

    def opener(where: Path, **kw: Any) -> Memory:
        kw.setdefault("clock", FixedClock(T0))
        return _open_memory(store_kind, Path(where), embedder, **kw)

    return opener


@pytest.fixture(scope="session")
def db_counts() -> Callable[[Memory], dict[str, int]]:
    """``db_counts(mem)`` -> {'memories': n, 'vectors': n, 'memories_fts': n, ...}."""
    return _counts


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
    tmp_path: Path, open_memory: Callable[..., Memory], clock: FixedClock
) -> Iterator[Callable[..., Memory]]:
    """``make_memory(name='db', settings=..., principal=..., clock=...)``; closed after the test."""
    opened: list[Memory] = []

    def make(name: str = "db", **kw: Any) -> Memory:
        kw.setdefault("clock", clock)
        mem = open_memory(tmp_path / name, **kw)
        opened.append(mem)
        return mem

    yield make
    for mem in opened:
        mem.close()


@pytest.fixture
def mem(make_memory: Callable[..., Memory]) -> Memory:
    """A fresh Memory for the default (admin) principal of org ``default``."""
    return make_memory()
