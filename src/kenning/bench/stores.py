"""Where a benchmark keeps its memories: a temporary SQLite file or a given database."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..config import Settings
from ..engine import Memory
from ..errors import ConfigError
from ..stores.sqlite.driver import sqlite3

__all__ = ["copy_sqlite", "open_bench_memory"]


def open_bench_memory(
    store: str | None,
    default_path: Path,
    settings: Settings | None,
    *,
    require_empty: bool = True,
    **kw: Any,
) -> Memory:
    """A Memory on ``store`` (``postgresql://…`` or ``sqlite:///…``), else on ``default_path``.

    A benchmark measures a store it filled itself, so a given database must be
    empty (``require_empty``): the figures would otherwise mix in whatever it
    held. The scale benchmark checks a reused database itself.
    """
    if not store:
        return Memory(default_path, settings=settings, **kw)
    base = settings or Settings()
    mem = Memory(settings=base.model_copy(update={"database_url": store}), **kw)
    if require_empty and mem.store.organizations():
        mem.close()
        raise ConfigError(f"the benchmark needs an empty database; {store} already holds memories")
    return mem


def copy_sqlite(source: Path | str, target: Path | str) -> None:
    """Copy the SQLite database ``source`` (opened read-only, so it may be in use)
    to ``target`` with SQLite's backup API: the A/B scripts in ``bench/`` give
    each side its own copy of one database."""
    src = sqlite3.connect(f"file:{source}?mode=ro", uri=True)
    out = sqlite3.connect(str(target))
    try:
        src.backup(out)
    finally:
        out.close()
        src.close()
