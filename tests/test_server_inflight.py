"""The server calls the engine inline while it serves a single request, and from a
worker thread when others are in flight (the loop must keep serving them) unless
reads run on the loop (``server.inline_reads``, SQLite's default); the in-flight
count returns to zero whatever a request's outcome."""

from __future__ import annotations

import asyncio
import dataclasses
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from serverkit import Api, bootstrap_org

from kenning import Memory
from kenning.lanes import reads_inline
from kenning.server.inflight import InFlight, run_engine


@pytest.fixture
def api(mem: Memory) -> Iterator[tuple[Api, dict[str, str]]]:
    keys = bootstrap_org(mem, "acme")
    served = Api(mem)
    try:
        yield served, keys
    finally:
        served.close()


def _thread_of_each(
    mem: Memory, monkeypatch: pytest.MonkeyPatch, method: str = "recall"
) -> list[int]:
    """The threads the engine's ``method`` runs on, call by call."""
    seen: list[int] = []
    real = getattr(mem, method)

    def tracked(*args: Any, **kw: Any) -> Any:
        seen.append(threading.get_ident())
        return real(*args, **kw)

    monkeypatch.setattr(mem, method, tracked)
    return seen


def test_a_lone_recall_runs_on_the_loop_and_concurrent_ones_in_threads(
    api: tuple[Api, dict[str, str]], mem: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    served, keys = api
    seen = _thread_of_each(mem, monkeypatch)
    answer = served.call("POST", "/v1/recall", key=keys["alice"], json={"query": "tea"})
    assert answer.status_code == 200
    loop_thread = served._thread.ident
    assert seen == [loop_thread]
    assert served.app.state.inflight.count == 0
    # an admin's read is audited as it happens (a write): never on the loop
    seen.clear()
    answer = served.call("POST", "/v1/recall", key=keys["root"], json={"query": "tea"})
    assert answer.status_code == 200 and len(seen) == 1 and seen[0] != loop_thread

    # a slow request in flight (served from a worker thread): the recall finds the
    # server busy and leaves the loop free
    entered, gate = threading.Event(), threading.Event()
    real_stats = mem.stats

    def slow_stats(*args: Any, **kw: Any) -> Any:
        entered.set()
        assert gate.wait(30)
        return real_stats(*args, **kw)

    monkeypatch.setattr(mem, "stats", slow_stats)
    auth = {"Authorization": f"Bearer {keys['root']}"}
    member = {"Authorization": f"Bearer {keys['alice']}"}

    async def recall_while_busy() -> tuple[int, int]:
        slow = asyncio.ensure_future(served.client.get("/v1/stats", headers=auth))
        while not entered.is_set():
            await asyncio.sleep(0.01)
        busy = served.app.state.inflight.count
        answer = await served.client.post("/v1/recall", json={"query": "tea"}, headers=member)
        gate.set()
        assert (await slow).status_code == 200
        return busy, answer.status_code

    lanes = served.app.state.engine_lanes
    assert lanes.inline_reads == reads_inline(mem.settings)
    for inline in (False, True):
        served.app.state.engine_lanes = dataclasses.replace(lanes, inline_reads=inline)
        seen.clear()
        entered.clear()
        gate.clear()
        assert served.run(recall_while_busy()) == (1, 200)
        # reads on the loop run there under load too; else a worker thread serves them
        assert len(seen) == 1 and (seen[0] == loop_thread) is inline
        assert served.app.state.inflight.count == 0


def test_a_failing_request_leaves_the_count_at_zero(api: tuple[Api, dict[str, str]]) -> None:
    served, keys = api
    bad = served.call("POST", "/v1/recall", key=keys["root"], content=b'{"query": ')
    assert bad.status_code == 400
    missing = served.call("POST", "/v1/recall", key=keys["root"], json={"k": 3})
    assert missing.status_code in (400, 422)
    assert served.app.state.inflight.count == 0


def test_run_engine_hops_to_a_thread_only_when_busy() -> None:
    class _Request:
        class app:  # noqa: N801 - the shape of starlette's request.app.state
            class state:  # noqa: N801
                inflight = InFlight()

    request: Any = _Request()

    async def where(count: int) -> int:
        request.app.state.inflight.count = count
        return await run_engine(request, threading.get_ident)

    here = threading.get_ident()
    assert asyncio.run(where(1)) == here
    assert asyncio.run(where(2)) != here


def test_a_lone_write_still_runs_in_a_worker_thread(
    api: tuple[Api, dict[str, str]], mem: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A write may wait for the database's write lock (an import in another process):
    the event loop must not wait with it, even when nothing else is in flight."""
    served, keys = api
    seen = _thread_of_each(mem, monkeypatch, "write")
    made = served.call("POST", "/v1/memories", key=keys["root"], json={"content": "Tea at 4"})
    assert made.status_code == 201, made.text
    assert len(seen) == 1 and seen[0] != served._thread.ident
    assert served.app.state.inflight.count == 0


def test_a_recall_spreads_over_helper_threads_only_while_it_is_the_only_request(
    mem: Memory,
) -> None:
    """The engine's helper threads watch the requests in flight while the server
    runs (requests waiting for their turn mean no core to spare), and stop
    watching when it stops."""
    helpers = mem.core.helpers
    served = Api(mem)
    try:
        inflight = served.app.state.inflight
        assert helpers.alone()
        inflight.count = 1  # the calling request
        assert helpers.alone()
        inflight.count = 3  # and two more
        assert not helpers.alone()
        inflight.count = 0
    finally:
        served.close()
    served.app.state.inflight.count = 3
    assert helpers.alone()  # the server is gone: engine calls only
