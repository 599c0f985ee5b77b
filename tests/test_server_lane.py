"""The engine lane: a server process runs at most ``server.engine_threads`` recalls
and single writes at once, writes in all but one of its places; the others wait
their turn. Writes waiting do not hold up every recall, and routes outside the
lane (stats, imports, exports) are never held up by it. On SQLite reads run on
the event loop itself by default (``server.inline_reads``), one at a time, and
take no place of the lane."""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Awaitable, Callable, Iterator
from typing import Any, TypeVar

import pytest
from pydantic import ValidationError
from serverkit import Api, bootstrap_org

from kenning import Memory
from kenning.config import Server, Settings
from kenning.lanes import EngineLanes, lane_size, reads_inline, worker_threads

T = TypeVar("T")


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


def test_reads_run_on_the_loop_on_sqlite_and_in_threads_on_a_database_server(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert reads_inline(Settings(database_url="sqlite:///k.db"))
    assert not reads_inline(Settings(database_url="postgresql://kenning@db.example/kenning"))
    off = Settings(database_url="sqlite:///k.db", server=Server(inline_reads=False))
    assert not reads_inline(off)
    monkeypatch.setenv("KENNING_SERVER_INLINE_READS", "true")
    assert reads_inline(Settings(database_url="postgresql://kenning@db.example/kenning"))
    monkeypatch.setenv("KENNING_SERVER_INLINE_READS", "sometimes")
    with pytest.raises(ValidationError, match="inline_reads"):
        Settings()


def test_the_lane_size_comes_from_the_environment_and_must_be_positive(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("KENNING_SERVER_ENGINE_THREADS", "4")
    assert Settings().server.engine_threads == 4
    monkeypatch.setenv("KENNING_SERVER_ENGINE_THREADS", "0")
    with pytest.raises(ValidationError, match="engine_threads"):
        Settings()


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


async def _until(check: Callable[[], bool]) -> None:
    for _ in range(3000):
        if check():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("timed out")


class _Rig:
    """A server with a lane of 2 over a real store, the users' keys (the admin's by
    default), and gates on the engine's methods. :meth:`run` keeps a request in
    flight outside the lane (a listing held at a gate) while the scenario runs, so
    that every engine call finds the server busy and takes its turn (a lone request
    runs inline on the loop)."""

    def __init__(
        self, served: Api, mem: Memory, keys: dict[str, str], mp: pytest.MonkeyPatch
    ) -> None:
        self.served, self.mem, self.mp, self.keys = served, mem, mp, keys
        self.auth = {"Authorization": f"Bearer {keys['root']}"}
        self.lanes: EngineLanes = served.app.state.engine_lanes

    def gate(self, method: str, room: _Room | None = None) -> _Gate:
        """Hold the engine's ``method`` at a gate."""
        gate = _Gate(getattr(self.mem, method), room)
        self.mp.setattr(self.mem, method, gate)
        return gate

    def send(self, method: str, path: str, user: str = "root", **kw: Any) -> asyncio.Future[Any]:
        """Start a request as ``user``; its response is the future's result."""
        auth = {"Authorization": f"Bearer {self.keys[user]}"}
        call = self.served.client.request(method, path, headers=auth, **kw)
        return asyncio.ensure_future(call)

    def run(self, scenario: Callable[[], Awaitable[T]]) -> T:
        busy = self.gate("list")

        async def around() -> T:
            listing = self.send("GET", "/v1/memories")
            await _until(lambda: busy.entered == 1)
            try:
                return await scenario()
            finally:
                busy.open.set()
                assert (await listing).status_code == 200

        return self.served.run(around())


@pytest.fixture(params=[False], ids=["threaded-reads"])
def rig(
    make_memory: Callable[..., Memory], monkeypatch: pytest.MonkeyPatch, request: Any
) -> Iterator[_Rig]:
    """Reads in the lane's threads (where a recall can be held at a gate) unless the
    test asks for them inline (``@pytest.mark.parametrize("rig", [True], indirect=True)``)."""
    server = Server(engine_threads=2, inline_reads=request.param)
    mem = make_memory(settings=Settings(server=server))
    keys = bootstrap_org(mem, "acme")
    served = Api(mem)
    try:
        yield _Rig(served, mem, keys, monkeypatch)
    finally:
        served.close()


def _codes(answers: list[Any]) -> list[int]:
    return [a.status_code for a in answers]


def test_recalls_beyond_the_lane_wait_their_turn_and_all_answer(rig: _Rig) -> None:
    recall, write = rig.gate("recall"), rig.gate("write")
    lanes = rig.lanes

    async def burst() -> tuple[list[int], int, dict[str, int]]:
        calls = [rig.send("POST", "/v1/recall", json={"query": f"q{i}"}) for i in range(5)]
        await _until(lambda: recall.entered == 2)
        calls.append(rig.send("POST", "/v1/memories", json={"content": "The lane test note"}))
        # two recalls run (held at the gate); three and the write wait for a place
        await _until(lambda: lanes.engine.statistics().tasks_waiting == 4)
        running = recall.entered + write.entered
        scraped = (await rig.send("GET", "/metrics")).text
        gauges = {
            f"{name}:{lane}": _gauge(scraped, f"kenning_engine_lane_{name}", lane)
            for name in ("size", "running", "waiting")
            for lane in ("engine", "writes")
        }
        recall.open.set()
        write.open.set()
        return _codes(await asyncio.gather(*calls)), running, gauges

    codes, running, gauges = rig.run(burst)
    assert codes == [200] * 5 + [201]
    assert running == 2 and recall.room.most == 2 and recall.entered == 5 and write.entered == 1
    assert gauges == {
        "size:engine": 2,
        "size:writes": 1,
        "running:engine": 2,
        "running:writes": 1,  # the write has its writer's turn and waits for a place
        "waiting:engine": 4,
        "waiting:writes": 0,
    }
    assert lanes.engine.statistics().borrowed_tokens == 0
    assert lanes.writes.statistics().borrowed_tokens == 0


def test_writes_waiting_for_the_database_leave_a_place_for_recalls(rig: _Rig) -> None:
    """Writes stuck behind the database's write lock (an import in another process,
    say) take at most all but one of the lane's places; a recall still answers."""
    write = rig.gate("write")

    async def recall_while_writes_wait() -> tuple[int, int, list[int]]:
        held = [rig.send("POST", "/v1/memories", json={"content": f"Note {i}"}) for i in range(3)]
        await _until(
            lambda: write.entered == 1 and rig.lanes.writes.statistics().tasks_waiting == 2
        )
        answer = await asyncio.wait_for(rig.send("POST", "/v1/recall", json={"query": "x"}), 30)
        inside = write.inside
        write.open.set()
        return answer.status_code, inside, _codes(await asyncio.gather(*held))

    assert rig.run(recall_while_writes_wait) == (200, 1, [201, 201, 201])


def test_a_full_lane_does_not_hold_up_routes_outside_it(rig: _Rig) -> None:
    recall = rig.gate("recall")

    async def stats_while_full() -> tuple[int, int, list[int]]:
        held = [rig.send("POST", "/v1/recall", json={"query": q}) for q in ("tea", "cocoa", "oat")]
        await _until(lambda: recall.entered == 2)
        stats = await asyncio.wait_for(rig.send("GET", "/v1/stats"), 30)
        inside = recall.inside
        recall.open.set()
        return stats.status_code, inside, _codes(await asyncio.gather(*held))

    assert rig.run(stats_while_full) == (200, 2, [200, 200, 200])


def test_a_keyed_write_takes_its_turn_among_the_writes(rig: _Rig) -> None:
    write = rig.gate("write")

    async def upsert_while_full() -> tuple[bool, int, list[int]]:
        held = [rig.send("POST", "/v1/memories", json={"content": "Held note"})]
        await _until(lambda: write.entered == 1)
        body = {"key": "drink", "content": "Morning drink: green tea", "scope": "user:root"}
        keyed = rig.send("PUT", "/v1/memories/by-key", json=body)
        await _until(lambda: rig.lanes.writes.statistics().tasks_waiting == 1)
        waited = not keyed.done()
        write.open.set()
        answers = await asyncio.gather(*held)
        return waited, (await keyed).status_code, _codes(answers)

    waited, code, codes = rig.run(upsert_while_full)
    assert waited and code in (200, 201) and codes == [201]
    got = rig.served.call("GET", "/v1/memories", key=None, headers=rig.auth).json()
    assert "Morning drink: green tea" in [m["content"] for m in got["items"]]


class _Threads:
    """Wraps an engine method: the thread each call ran on, and for whom."""

    def __init__(self, real: Callable[..., Any]) -> None:
        self.real = real
        self.seen: list[int] = []
        self.users: list[str | None] = []

    def __call__(self, *args: Any, **kw: Any) -> Any:
        self.seen.append(threading.get_ident())
        principal = kw.get("principal")
        self.users.append(principal.user_id if principal is not None else None)
        return self.real(*args, **kw)


@pytest.mark.parametrize("rig", [True], ids=["inline-reads"], indirect=True)
def test_inline_recalls_run_on_the_loop_and_answer_while_writes_wait(rig: _Rig) -> None:
    """With reads on the loop, recalls under load run on the loop's own thread and
    take no place of the lane: writes held in every write place (a database
    write lock held elsewhere, say) leave recalls answering; writes run in threads."""
    write = rig.gate("write")
    recalls = _Threads(rig.mem.recall)
    rig.mp.setattr(rig.mem, "recall", recalls)

    async def recall_while_writes_wait() -> tuple[list[int], int, bool, int, list[int]]:
        loop_thread = threading.get_ident()
        held = [rig.send("POST", "/v1/memories", json={"content": f"Note {i}"}) for i in range(3)]
        await _until(
            lambda: write.entered == 1 and rig.lanes.writes.statistics().tasks_waiting == 2
        )
        asked = [
            rig.send("POST", "/v1/recall", "alice", json={"query": q}) for q in ("tea", "oat", "x")
        ]
        answers = await asyncio.wait_for(asyncio.gather(*asked), 30)
        inside = write.inside
        write.open.set()
        written = _codes(await asyncio.gather(*held))
        on_loop = all(t == loop_thread for t in recalls.seen)
        return _codes(answers), inside, on_loop, len(recalls.seen), written

    codes, inside, on_loop, n, written = rig.run(recall_while_writes_wait)
    assert codes == [200, 200, 200] and inside == 1 and written == [201, 201, 201]
    assert on_loop and n == 3
    assert rig.lanes.engine.statistics().borrowed_tokens == 0


@pytest.mark.parametrize("rig", [True], ids=["inline-reads"], indirect=True)
def test_an_audited_read_keeps_a_thread_with_reads_on_the_loop(rig: _Rig) -> None:
    """An admin's read of a governed organization writes its audit line with the
    read, and may wait for the database's write lock: it never runs on the loop,
    alone or under load; a member's read beside it does."""
    recalls = _Threads(rig.mem.recall)
    rig.mp.setattr(rig.mem, "recall", recalls)
    hints = _Threads(rig.mem.build_hint)
    rig.mp.setattr(rig.mem, "build_hint", hints)

    async def reads() -> tuple[list[int], list[bool], list[bool]]:
        loop_thread = threading.get_ident()
        sent = [
            rig.send("POST", "/v1/recall", "root", json={"query": "tea"}),
            rig.send("POST", "/v1/recall", "alice", json={"query": "tea"}),
            rig.send("POST", "/v1/hint", "root", json={"query": "tea"}),
            rig.send("POST", "/v1/hint", "alice", json={"query": "tea"}),
        ]
        answers = await asyncio.wait_for(asyncio.gather(*sent), 30)
        # whose read ran where (under load either may reach the engine first)
        on_loop = dict(zip(recalls.users, (t == loop_thread for t in recalls.seen), strict=True))
        hinted = dict(zip(hints.users, (t == loop_thread for t in hints.seen), strict=True))
        return _codes(answers), on_loop, hinted

    codes, on_loop, hinted = rig.run(reads)
    assert codes == [200, 200, 200, 200]
    assert on_loop == {"root": False, "alice": True} and hinted == {"root": False, "alice": True}
    # the admin's reads were audited
    lines = rig.served.call("GET", "/v1/admin/audit?action=memory.recall", key=rig.keys["root"])
    assert lines.status_code == 200, lines.text
    assert [e["actor"] for e in lines.json()] == ["root"]
    # alone on the server too
    recalls.seen.clear()
    alone = rig.served.call("POST", "/v1/recall", key=rig.keys["root"], json={"query": "x"})
    assert alone.status_code == 200 and recalls.seen[0] != rig.served._thread.ident


@pytest.mark.parametrize("rig", [True], ids=["inline-reads"], indirect=True)
def test_inline_writes_still_run_in_a_thread_of_the_lane(rig: _Rig) -> None:
    writes = _Threads(rig.mem.write)
    rig.mp.setattr(rig.mem, "write", writes)

    async def one_write() -> tuple[int, bool]:
        loop_thread = threading.get_ident()
        answer = await rig.send("POST", "/v1/memories", json={"content": "Threaded note"})
        return answer.status_code, writes.seen[0] != loop_thread

    assert rig.run(one_write) == (201, True)


def _gauge(text: str, name: str, lane: str) -> int:
    """The value of gauge ``name`` for ``lane`` in a Prometheus exposition."""
    prefix = f'{name}{{lane="{lane}"}} '
    for line in text.splitlines():
        if line.startswith(prefix):
            return int(float(line.split()[1]))
    raise AssertionError(f"{prefix} not in the metrics")


def test_serve_hands_each_worker_its_lane_size_through_the_environment(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Workers build their settings from the environment: ``serve`` puts the lane size
    there, the default for their share of the cores or one set in code."""
    from kenning.server import run

    monkeypatch.setattr(run, "balanced_workers_supported", lambda: True)
    monkeypatch.setattr(run, "run_workers", lambda *args: 0)
    monkeypatch.setattr(run.logging.config, "dictConfig", lambda _config: None)
    # what serve exports stays in this test's copy of the environment
    monkeypatch.setattr(os, "environ", {k: v for k, v in os.environ.items() if "KENNING" not in k})
    url = f"sqlite:///{tmp_path / 'k.db'}"
    run.serve(Settings(database_url=url, server=Server(workers=2)))
    assert os.environ["KENNING_SERVER_ENGINE_THREADS"] == str(worker_threads(2) + 1)
    assert "KENNING_SERVER_INLINE_READS" not in os.environ  # the default is the store's
    run.serve(Settings(database_url=url, server=Server(workers=2, engine_threads=5)))
    assert os.environ["KENNING_SERVER_ENGINE_THREADS"] == "5"
    run.serve(Settings(database_url=url, server=Server(workers=2, inline_reads=False)))
    assert os.environ["KENNING_SERVER_INLINE_READS"] == "false"
