"""Requests in flight, and where an engine call runs: inline when the server is
otherwise idle or the call is a read on a store bound by this machine's cores,
else in a worker thread of the process's engine lane.

A sync route runs in a worker thread so that the event loop keeps serving other
requests while the engine works. Handing the call to a thread and the answer back
costs about a millisecond here (two thread wake-ups), which is a tenth of a recall.
When the request is the only one this process is serving, nobody is waiting for
the loop: :func:`run_engine` then calls a read inline. A request arriving
meanwhile waits at most for that one call, then finds the server busy and is
served from a worker thread, as every request was before. A write never runs
inline: it may wait for the database's write lock (an import in another
process holds it for as long as the import takes), and the loop must not
wait with it.

**The engine lane.** Recalls, hints and single writes (``POST /v1/memories``,
``PUT /v1/memories/by-key``, and every tool call of the MCP door mounted at
``/mcp``: the calls agents make on every turn) run at most
:func:`~kenning.lanes.lane_size` at a time in one process; the others wait
their turn in arrival order, on the event loop, holding no thread. On a store
whose calls spend their time on this machine's cores (SQLite), running more of
them at once than the process has cores for only adds thread switches: each
sits waiting for the interpreter lock and the cores, and every switch costs
CPU the calls needed (measured with 16 clients on 2 cores: a third of the
thread switches; with one worker 36% more requests served, with two 3-6%,
and recall p99 halved in both; BENCHMARKS.md, "Server under load"). Writes
take at most all but one of the lane's places, so writes waiting for the
database's write lock never hold up every recall: readers do not wait for
writers, as the store promises. (A lane each for reads and writes
would double the threads, and gave back the gain.) A store behind a network
(PostgreSQL) has no lane by default: its calls spend part of their time
waiting on round-trips, while other calls use the cores. Slow routes
(imports, exports, batches) keep the server's large thread pool, so they never
hold up the lane.

**Reads on the loop.** On such a store (``server.inline_reads``, on by default
for SQLite) recalls and hints run on the event loop itself even under load, one
at a time, and take no place of the lane; writes keep the lane's threads. A
SQLite read never waits for a writer (WAL) nor on a network, so the loop waits
for nothing but the read's own work, which the process's share of the cores
does one call at a time anyway; the two thread wake-ups per read and the
threads taking the interpreter lock from each other go. Measured with 16
clients on 2 cores, 20% writes: recall p50 about halved, requests per second up
a few percent with two workers and a fifth with one; writes wait a little
longer for their place (BENCHMARKS.md, "Server under load"). A read that
blocked would hold up the process's other requests: on a database server
(PostgreSQL) reads keep their threads, and so does a read that writes: an
audited admin's (the audit line is written with the read, and may wait for the
database's write lock like any write).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from fastapi import Request

from ..lanes import EngineLanes, Lane, writes_on_read
from ..models import Principal

__all__ = ["InFlight", "run_engine"]

T = TypeVar("T")


class InFlight:
    """HTTP requests this process is serving. Changed only on the event loop's
    thread (by the request middleware), so it needs no lock."""

    def __init__(self) -> None:
        self.count = 0


async def run_engine(
    request: Request, call: Callable[[], T], lane: Lane = "read", *, reader: Principal | None = None
) -> T:
    """``call()`` inline when it reads and ``request`` is the only request in
    flight or the lane runs reads on the loop, else in a worker thread, in its
    turn in the process's lane (see the module docstring). ``reader``: whom a
    read is for; a read that writes for them (:func:`~kenning.lanes.writes_on_read`)
    never runs on the loop."""
    state = request.app.state
    mem = getattr(state, "memory", None)
    inline = reader is None or mem is None or not writes_on_read(mem, reader)
    inflight: InFlight | None = getattr(state, "inflight", None)
    if lane == "read" and inline and inflight is not None and inflight.count <= 1:
        return call()
    lanes: EngineLanes = getattr(state, "engine_lanes", None) or EngineLanes()
    return await lanes.run(call, lane, inline=inline)
