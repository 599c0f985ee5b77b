"""Where a benchmark keeps its memories: a temporary SQLite file or a given database."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..config import Settings
from ..engine import Memory
from ..errors import ConfigError

__all__ = ["open_bench_memory"]


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
