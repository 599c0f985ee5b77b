"""The engine lanes of a server process: how many reads and how many writes run
at once (see :mod:`kenning.server.inflight` for why), shared by the REST routes
and the MCP door mounted beside them."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Literal

from anyio import CapacityLimiter

from .config import Settings
from .stores import store_url
from .stores.registry import backend_for

__all__ = ["EngineLanes", "Lane", "lane_size", "worker_threads"]

#: Which lane an engine call takes.
Lane = Literal["read", "write"]


def worker_threads(workers: int, cores: int | None = None) -> int:
    """The share of the cores of each of ``workers`` processes (at least one)."""
    return max(1, (cores or os.cpu_count() or 1) // workers)


def lane_size(settings: Settings, cores: int | None = None) -> int | None:
    """How many engine calls each lane of one server process runs at once:
    ``server.engine_threads`` when set; else, on a store bound by this machine's
    cores (SQLite), the process's share of the cores (``cores`` over
    ``server.workers``) plus one, so that one call may run while another waits
    on the disk or a lock; else None (the thread pool's bound only)."""
    cfg = settings.server
    if cfg.engine_threads is not None:
        return cfg.engine_threads
    if not backend_for(store_url(settings), field="database_url").bound_by_cores:
        return None
    return worker_threads(cfg.workers, cores) + 1


@dataclass(frozen=True, slots=True)
class EngineLanes:
    """A process's read and write lanes; each None when unbounded."""

    read: CapacityLimiter | None = None
    write: CapacityLimiter | None = None

    @classmethod
    def of_size(cls, size: int | None) -> EngineLanes:
        """Two lanes of ``size`` (None: no lanes). Create them on the server's event loop."""
        if not size:
            return cls()
        return cls(CapacityLimiter(size), CapacityLimiter(size))

    def __getitem__(self, lane: Lane) -> CapacityLimiter | None:
        """The limiter of ``lane``."""
        return self.read if lane == "read" else self.write
