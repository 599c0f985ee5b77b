"""The engine lane: a server process runs at most ``server.engine_threads`` recalls
and single writes at once, writes in all but one of its places; the others wait
their turn. Writes waiting do not hold up every recall, and routes outside the
lane (stats, imports, exports) are never held up by it."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from pydantic import ValidationError
from serverkit import Api, bootstrap_org

from kenning import Memory
from kenning.config import Server, Settings
from kenning.lanes import lane_size, worker_threads


@pytest.mark.parametrize(
    ("cores", "workers", "size"), [(2, 1, 3), (2, 2, 2), (16, 4, 5), (1, 3, 2)]
)
def test_on_sqlite_a_process_runs_its_share_of_the_cores_plus_one(
    cores: int, workers: int, size: int
) -> None:
    settings = Settings(database_url="sqlite:///kenning.db", server=Server(workers=workers))
    assert lane_size(settings, cores=cores) == size == worker_threads(workers, cores) + 1


def test_a_database_server_gets_no_lane_unless_one_is_asked_for() -> None:
    url = "postgresql://kenning@db.example/kenning"
    assert lane_size(Settings(database_url=url), cores=2) is None
    asked = Settings(database_url=url, server=Server(engine_threads=6))
    assert lane_size(asked, cores=2) == 6
    # an explicit size wins on SQLite too
    sqlite = Settings(database_url="sqlite:///k.db", server=Server(engine_threads=9))
    assert lane_size(sqlite, cores=2) == 9


def test_the_lane_size_comes_from_the_environment_and_must_be_positive(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("KENNING_SERVER_ENGINE_THREADS", "4")
    assert Settings().server.engine_threads == 4
    monkeypatch.setenv("KENNING_SERVER_ENGINE_THREADS", "0")
    with pytest.raises(ValidationError, match="engine_threads"):
        Settings()


@pytest.fixture
def laned(make_memory: Callable[..., Memory]) -> Iterator[tuple[Api, Memory, dict[str, str]]]:
    mem = make_memory(settings=Settings(server=Server(engine_threads=2)))
    keys = bootstrap_org(mem, "acme")
    served = Api(mem)
    try:
        yield served, mem, keys
    finally:
        served.close()


class _Room:
    """The engine calls inside gated methods at once, and the most there ever were."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.inside = 0
        self.most = 0


class _Gate:
    """Wraps an engine method: counts the calls inside it and holds them until opened."""

    def __init__(self, real: Callable[..., Any], room: _Room | None = None) -> None:
        self.real = real
        self.room = room or _Room()
        self.entered = 0
        self.open = threading.Event()

    @property
    def inside(self) -> int:
        return self.room.inside

    def __call__(self, *args: Any, **kw: Any) -> Any:
        room = self.room
        with room.lock:
            room.inside += 1
            room.most = max(room.most, room.inside)
            self.entered += 1
        try:
            assert self.open.wait(30)
            return self.real(*args, **kw)
        finally:
            with room.lock:
                room.inside -= 1


class _Busy:
    """A request kept in flight outside the lane (a listing held at a gate), so that
    every engine call finds the server busy and takes its turn in the lane (a lone
    request runs inline on the event loop)."""

    def __init__(
        self, served: Api, mem: Memory, auth: dict[str, str], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        self.served, self.auth = served, auth
        self.gate = _Gate(mem.list)
        monkeypatch.setattr(mem, "list", self.gate)

    async def enter(self) -> None:
        self.call = asyncio.ensure_future(self.served.client.get("/v1/memories", headers=self.auth))
        await _until(lambda: self.gate.entered == 1)

    async def leave(self) -> None:
        self.gate.open.set()
        assert (await self.call).status_code == 200


async def _until(check: Callable[[], bool]) -> None:
    for _ in range(3000):
        if check():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("timed out")


def test_recalls_beyond_the_lane_wait_their_turn_and_all_answer(
    laned: tuple[Api, Memory, dict[str, str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    served, mem, keys = laned
    recall, write = _Gate(mem.recall), _Gate(mem.write)
    monkeypatch.setattr(mem, "recall", recall)
    monkeypatch.setattr(mem, "write", write)
    auth = {"Authorization": f"Bearer {keys['root']}"}
    lanes = served.app.state.engine_lanes
    busy = _Busy(served, mem, auth, monkeypatch)

    async def burst() -> tuple[list[int], int, int, dict[str, int]]:
        client = served.client
        await busy.enter()
        calls = [
            asyncio.ensure_future(client.post("/v1/recall", json={"query": f"q{i}"}, headers=auth))
            for i in range(5)
        ]
        await _until(lambda: recall.entered == 2)
        calls.append(
            asyncio.ensure_future(
                client.post("/v1/memories", json={"content": "The lane test note"}, headers=auth)
            )
        )
        # two recalls run (held at the gate); three and the write wait for a place
        await _until(lambda: lanes.engine.statistics().tasks_waiting == 4)
        running = recall.entered + write.entered
        scraped = (await client.get("/metrics", headers=auth)).text
        gauges = {
            f"{name}:{lane}": _gauge(scraped, f"kenning_engine_lane_{name}", lane)
            for name in ("size", "running", "waiting")
            for lane in ("engine", "writes")
        }
        recall.open.set()
        write.open.set()
        answers = await asyncio.gather(*calls)
        out = [a.status_code for a in answers], running, recall.room.most, gauges
        await busy.leave()
        return out

    codes, running, most, gauges = served.run(burst())
    assert codes == [200] * 5 + [201]
    assert running == 2 and most == 2 and recall.entered == 5 and write.entered == 1
    assert gauges == {
        "size:engine": 2,
        "size:writes": 1,
        "running:engine": 2,
        "running:writes": 1,  # the write has its writer's turn and waits for a place
        "waiting:engine": 4,
        "waiting:writes": 0,
    }
    assert (
        lanes.engine.statistics().borrowed_tokens == lanes.writes.statistics().borrowed_tokens == 0
    )


def test_writes_waiting_for_the_database_leave_a_place_for_recalls(
    laned: tuple[Api, Memory, dict[str, str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Writes stuck behind the database's write lock (an import in another process,
    say) take at most all but one of the lane's places; a recall still answers."""
    served, mem, keys = laned
    write = _Gate(mem.write)
    monkeypatch.setattr(mem, "write", write)
    auth = {"Authorization": f"Bearer {keys['root']}"}
    lanes = served.app.state.engine_lanes
    busy = _Busy(served, mem, auth, monkeypatch)

    async def recall_while_writes_wait() -> tuple[int, int, list[int]]:
        client = served.client
        await busy.enter()
        held = [
            asyncio.ensure_future(
                client.post("/v1/memories", json={"content": f"Held note {i}"}, headers=auth)
            )
            for i in range(3)
        ]
        await _until(lambda: write.entered == 1 and lanes.writes.statistics().tasks_waiting == 2)
        answer = await asyncio.wait_for(
            client.post("/v1/recall", json={"query": "note"}, headers=auth), 30
        )
        inside = write.inside
        write.open.set()
        out = answer.status_code, inside, [a.status_code for a in await asyncio.gather(*held)]
        await busy.leave()
        return out

    assert served.run(recall_while_writes_wait()) == (200, 1, [201, 201, 201])


def test_a_full_lane_does_not_hold_up_routes_outside_it(
    laned: tuple[Api, Memory, dict[str, str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    served, mem, keys = laned
    recall = _Gate(mem.recall)
    monkeypatch.setattr(mem, "recall", recall)
    auth = {"Authorization": f"Bearer {keys['root']}"}
    busy = _Busy(served, mem, auth, monkeypatch)

    async def stats_while_full() -> tuple[int, int, list[int]]:
        client = served.client
        await busy.enter()
        held = [
            asyncio.ensure_future(client.post("/v1/recall", json={"query": q}, headers=auth))
            for q in ("tea", "coffee", "cocoa")
        ]
        await _until(lambda: recall.entered == 2)
        stats = await asyncio.wait_for(client.get("/v1/stats", headers=auth), 30)
        inside = recall.inside
        recall.open.set()
        out = stats.status_code, inside, [a.status_code for a in await asyncio.gather(*held)]
        await busy.leave()
        return out

    assert served.run(stats_while_full()) == (200, 2, [200, 200, 200])


def _gauge(text: str, name: str, lane: str) -> int:
    """The value of gauge ``name`` for ``lane`` in a Prometheus exposition."""
    prefix = f'{name}{{lane="{lane}"}} '
    for line in text.splitlines():
        if line.startswith(prefix):
            return int(float(line.split()[1]))
    raise AssertionError(f"{prefix} not in the metrics")


def test_a_keyed_write_takes_its_turn_among_the_writes(
    laned: tuple[Api, Memory, dict[str, str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    served, mem, keys = laned
    write = _Gate(mem.write)
    monkeypatch.setattr(mem, "write", write)
    auth = {"Authorization": f"Bearer {keys['root']}"}
    lanes = served.app.state.engine_lanes
    busy = _Busy(served, mem, auth, monkeypatch)

    async def upsert_while_full() -> tuple[bool, int, list[int]]:
        client = served.client
        await busy.enter()
        held = [
            asyncio.ensure_future(
                client.post("/v1/memories", json={"content": "Held note"}, headers=auth)
            )
        ]
        await _until(lambda: write.entered == 1)
        body = {"key": "drink", "content": "Morning drink: green tea", "scope": "user:root"}
        keyed = asyncio.ensure_future(client.put("/v1/memories/by-key", json=body, headers=auth))
        await _until(lambda: lanes.writes.statistics().tasks_waiting == 1)
        waited = not keyed.done()
        write.open.set()
        answers = await asyncio.gather(*held)
        out = waited, (await keyed).status_code, [a.status_code for a in answers]
        await busy.leave()
        return out

    waited, code, codes = served.run(upsert_while_full())
    assert waited and code in (200, 201) and codes == [201]
    got = served.call("GET", "/v1/memories", key=keys["root"], params={"limit": 10}).json()
    assert "Morning drink: green tea" in [m["content"] for m in got["items"]]
