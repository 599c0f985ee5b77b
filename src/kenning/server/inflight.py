"""Requests in flight, and where an engine call runs: inline when the server is
otherwise idle, else in a worker thread of the process's engine lane.

A sync route runs in a worker thread so that the event loop keeps serving other
requests while the engine works. Handing the call to a thread and the answer back
costs about a millisecond here (two thread wake-ups), which is a tenth of a recall.
When the request is the only one this process is serving, nobody is waiting for
the loop: :func:`run_engine` then calls the engine inline. A request arriving
meanwhile waits at most for that one call, then finds the server busy and is
served from a worker thread, as every request was before.

**The engine lane.** Recalls and single writes (``POST /v1/memories``, ``PUT
/v1/memories/by-key``, and every tool call of the MCP door mounted at ``/mcp``:
the calls agents make on every turn) run at most
:func:`lane_size` at a time in one process; the others wait their turn in
arrival order, on the event loop, holding no thread. On a store whose calls
spend their time on this machine's cores (SQLite), running more of them at
once than the process has cores for only adds thread switches: each sits
waiting for the interpreter lock and the cores, and every switch costs CPU the
calls needed (measured with 16 clients on 2 cores: a third of the thread
switches, 6% more requests served with two workers and 40% more with one;
BENCHMARKS.md, "Server under load"). A store behind a network (PostgreSQL)
has no such bound by default: its calls spend part of their time waiting on
round-trips, while other calls use the cores. Slow routes (imports, exports,
batches) keep the server's large thread pool, so they never hold up the lane.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TypeVar

import anyio.to_thread
from anyio import CapacityLimiter
from fastapi import Request

from ..config import Settings
from ..stores import store_url
from ..stores.registry import backend_for

__all__ = ["InFlight", "engine_lane", "lane_size", "run_engine", "worker_threads"]

T = TypeVar("T")


class InFlight:
    """HTTP requests this process is serving. Changed only on the event loop's
    thread (by the request middleware), so it needs no lock."""

    def __init__(self) -> None:
        self.count = 0


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


def engine_lane(size: int | None) -> CapacityLimiter | None:
    """The lane's limiter (create it on the server's event loop); None for no lane."""
    return CapacityLimiter(size) if size else None


async def run_engine(request: Request, call: Callable[[], T]) -> T:
    """``call()`` inline when ``request`` is the only request in flight, else in a
    worker thread of the process's engine lane (see the module docstring)."""
    state = request.app.state
    inflight: InFlight | None = getattr(state, "inflight", None)
    if inflight is not None and inflight.count <= 1:
        return call()
    lane: CapacityLimiter | None = getattr(state, "engine_lane", None)
    return await anyio.to_thread.run_sync(call, limiter=lane)
