"""Requests in flight, and running an engine call without a thread hop when the
server is otherwise idle.

A sync route runs in a worker thread so that the event loop keeps serving other
requests while the engine works. Handing the call to a thread and the answer back
costs about a millisecond here (two thread wake-ups), which is a tenth of a recall.
When the request is the only one this process is serving, nobody is waiting for
the loop: :func:`run_engine` then calls the engine inline. A request arriving
meanwhile waits at most for that one call, then finds the server busy and is
served from a worker thread, as every request was before.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from fastapi import Request
from starlette.concurrency import run_in_threadpool

__all__ = ["InFlight", "run_engine"]

T = TypeVar("T")


class InFlight:
    """HTTP requests this process is serving. Changed only on the event loop's
    thread (by the request middleware), so it needs no lock."""

    def __init__(self) -> None:
        self.count = 0


async def run_engine(request: Request, call: Callable[[], T]) -> T:
    """``call()`` inline when ``request`` is the only request in flight, else in a
    worker thread (see the module docstring)."""
    inflight: InFlight | None = getattr(request.app.state, "inflight", None)
    if inflight is not None and inflight.count <= 1:
        return call()
    return await run_in_threadpool(call)
