"""The engine lane of a server process: how many engine calls run at once, how
many of them may be writes, and whether reads run on the event loop itself (see
:mod:`kenning.server.inflight` for why); shared by the REST routes and the MCP
door mounted beside them."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, TypeVar

import anyio.to_thread
from anyio import CapacityLimiter

from .config import Settings
from .models import Principal
from .stores import store_url
from .stores.registry import backend_for

if TYPE_CHECKING:
    from .facade import Facade

__all__ = ["EngineLanes", "Lane", "lane_size", "reads_inline", "worker_threads", "writes_on_read"]

T = TypeVar("T")

#: What an engine call of the lane does: read, or write (writes take at most all
#: but one of the lane's places).
Lane = Literal["read", "write"]


def worker_threads(workers: int, cores: int | None = None) -> int:
    """The share of the cores of each of ``workers`` processes (at least one)."""
    return max(1, (cores or os.cpu_count() or 1) // workers)


def lane_size(settings: Settings, cores: int | None = None) -> int | None:
    """How many engine calls of the lane one server process runs at once:
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


def reads_inline(settings: Settings) -> bool:
    """Whether a server process runs its reads on the event loop:
    ``server.inline_reads`` when set; else on a store bound by this machine's
    cores (SQLite), whose reads never wait on a network or on a writer."""
    cfg = settings.server
    if cfg.inline_reads is not None:
        return cfg.inline_reads
    return backend_for(store_url(settings), field="database_url").bound_by_cores


def writes_on_read(mem: Facade, who: Principal) -> bool:
    """Whether a read by ``who`` on ``mem`` (a :class:`~kenning.Memory`) writes: the
    audit log records reads by admins of governed organizations
    (``server.audit_admin_reads``) as they happen, so such a read may wait for
    the database's write lock and keeps a thread."""
    return mem.core.auditor.wants(who, read=True)


@dataclass(frozen=True, slots=True)
class EngineLanes:
    """A process's engine lane: ``engine`` bounds every engine call of the lanes
    that runs in a thread, ``writes`` the single writes among them, one fewer, so
    that a slot always remains for a recall while writes wait for the database's
    write lock. None when unbounded. With ``inline_reads`` a read runs on the
    event loop's own thread, one at a time, and takes no place of the lane."""

    engine: CapacityLimiter | None = None
    writes: CapacityLimiter | None = None
    inline_reads: bool = False

    @classmethod
    def of_size(cls, size: int | None, inline_reads: bool = False) -> EngineLanes:
        """A lane of ``size`` calls, at most ``size - 1`` (and at least one) of them
        writes (None: no lane), reads on the loop with ``inline_reads``. Create it
        on the server's event loop."""
        if not size:
            return cls(inline_reads=inline_reads)
        return cls(CapacityLimiter(size), CapacityLimiter(max(1, size - 1)), inline_reads)

    async def run(self, call: Callable[[], T], lane: Lane, *, inline: bool = True) -> T:
        """``call()``: a read on the loop with ``inline_reads`` (unless ``inline`` is
        False: a read that writes, such as one the audit log records, may wait for
        the database's write lock), else in a worker thread after its turn in the lane."""
        if lane == "read" and self.inline_reads and inline:
            return call()
        if lane == "write" and self.writes is not None:
            async with self.writes:
                return await anyio.to_thread.run_sync(call, limiter=self.engine)
        return await anyio.to_thread.run_sync(call, limiter=self.engine)
