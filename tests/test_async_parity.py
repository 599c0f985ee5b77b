"""``AsyncMemory`` mirrors ``Memory``: same methods, same signatures, same results."""

from __future__ import annotations

import asyncio
import inspect
import io
import os
import subprocess
import sys
import threading
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from typekit import type_hints

import kenning
from kenning import (
    AsyncDirectory,
    AsyncGraph,
    AsyncMemory,
    Directory,
    FixedClock,
    Graph,
    InvalidInput,
    Memory,
    NotFound,
    Page,
    Principal,
)
from kenning.aio import DIRECTORY_METHODS, GRAPH_METHODS, PUBLIC_METHODS


def _public_methods(cls: type) -> set[str]:
    """Public methods defined on ``cls`` or a base it mixes in (not ``object``'s)."""
    return {
        name
        for klass in cls.__mro__[:-1]
        for name, value in vars(klass).items()
        if not name.startswith("_") and callable(value) and not isinstance(value, staticmethod)
    }


#: (sync class, async class, the mirrored method names)
PAIRS = [
    (Memory, AsyncMemory, PUBLIC_METHODS),
    (Graph, AsyncGraph, GRAPH_METHODS),
    (Directory, AsyncDirectory, DIRECTORY_METHODS),
]
ALL_MIRRORED = [(s, a, name) for s, a, names in PAIRS for name in names]


def test_public_methods_are_all_mirrored() -> None:
    assert _public_methods(Memory) - {"close"} == set(PUBLIC_METHODS)
    assert _public_methods(AsyncMemory) == set(PUBLIC_METHODS) | {"close"}
    for sync_cls, async_cls, names in PAIRS:
        assert len(names) == len(set(names))
        if sync_cls is not Memory:
            assert _public_methods(sync_cls) == set(names), sync_cls
            assert _public_methods(async_cls) == set(names), async_cls


@pytest.mark.parametrize(
    ("sync_cls", "async_cls", "name"),
    ALL_MIRRORED,
    ids=[f"{s.__name__}.{n}" for s, _, n in ALL_MIRRORED],
)
def test_signature_and_docs_are_identical(sync_cls: type, async_cls: type, name: str) -> None:
    """Same parameters (names, kinds, defaults, types); the coroutine returns the sync type."""
    sync = getattr(sync_cls, name)
    amethod = getattr(async_cls, name)
    assert inspect.iscoroutinefunction(amethod)
    assert amethod.__doc__ == sync.__doc__ and amethod.__name__ == name
    sync_sig, async_sig = inspect.signature(sync), inspect.signature(amethod)
    assert [(p.name, p.kind, p.default) for p in async_sig.parameters.values()] == [
        (p.name, p.kind, p.default) for p in sync_sig.parameters.values()
    ]
    sync_hints, async_hints = type_hints(sync), type_hints(amethod)
    assert set(sync_hints) == set(async_hints) and "return" in sync_hints
    for param in sync_hints:  # "return": ``async def ... -> T`` is a Coroutine[Any, Any, T]
        assert async_hints[param] == sync_hints[param], param


def test_async_forms_are_reached_like_the_sync_ones(tmp_path: Path, embedder: Any) -> None:
    amem = AsyncMemory(tmp_path / "forms.db", embedder=embedder)
    assert isinstance(amem.graph, AsyncGraph) and amem.graph.sync is amem.sync.graph
    assert isinstance(amem.directory, AsyncDirectory)
    assert amem.directory.sync is amem.sync.directory
    asyncio.run(amem.close())


def test_async_directory_gives_the_sync_results(tmp_path: Path, embedder: Any) -> None:
    mem = Memory(tmp_path / "dir.db", embedder=embedder)
    amem = AsyncMemory(memory=mem)
    admin = mem.principal

    async def run() -> list[Any]:
        await amem.directory.put_user(admin, "ana", name="Ana")
        await amem.directory.put_team(admin, "eng", name="Engineering")
        await amem.directory.set_member(admin, "eng", "ana", "member")
        return [
            await amem.directory.org(admin.org_id),
            await amem.directory.users(admin),
            await amem.directory.teams(admin),
            await amem.directory.members(admin, "eng"),
        ]

    got = asyncio.run(run())
    want = [
        mem.directory.org(admin.org_id),
        mem.directory.users(admin),
        mem.directory.teams(admin),
        mem.directory.members(admin, "eng"),
    ]
    assert got == want
    assert "ana" in got[3]  # the team has its member
    asyncio.run(amem.close())


@pytest.mark.slow
def test_mypy_sees_real_async_types() -> None:
    """mypy checks tests/typing/async_types.py against kenning's annotations.

    With the cache ``mypy src/kenning`` leaves (``make test`` runs it first) this
    takes a few seconds; cold, about half a minute.
    """
    pytest.importorskip("mypy")
    root = Path(__file__).resolve().parent.parent
    env = {**os.environ, "MYPYPATH": str(Path(kenning.__file__).resolve().parent.parent)}
    out = subprocess.run(
        [sys.executable, "-m", "mypy", str(root / "tests" / "typing" / "async_types.py")],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stdout + out.stderr


def _normal(value: Any) -> Any:
    """A comparable form of a result with the random ids replaced by their order of appearance."""
    if isinstance(value, Page):  # items of one batch share created_at; their order is by random id
        items = sorted(
            ({k: v for k, v in r.to_dict().items() if k != "id"} for r in value.items),
            key=lambda d: d["content"],
        )
        return {"items": items, "more": value.next_cursor is not None}
    ids: dict[str, str] = {}

    def walk(v: Any) -> Any:
        if hasattr(v, "to_dict"):
            v = v.to_dict()
        if isinstance(v, dict):
            out = {}
            for k, x in v.items():
                if k in ("id", "memory_id") and isinstance(x, str):
                    x = ids.setdefault(x, f"#{len(ids)}")
                if k in ("timings_ms", "seq"):
                    continue
                out[k] = walk(x)
            return out
        if isinstance(v, list | tuple):
            return [walk(x) for x in v]
        return v

    return walk(value)


def _script() -> list[tuple[str, Callable[[Any, dict[str, Any]], Any]]]:
    """The same sequence of calls for both façades; ``ctx`` carries ids between steps."""
    member = Principal.member("mia", teams={"eng": "member"})

    def remember(m: Any, ctx: dict[str, Any]) -> Any:
        return m.remember("Mia prefers the night shift", principal=member, tags=["shift"])

    def batch(m: Any, ctx: dict[str, Any]) -> Any:
        return m.remember_many(
            [
                {"content": "The eng team deploys on Thursdays", "scope": "team:eng"},
                {"content": "Company all-hands is on the first Monday", "scope": "org:default"},
                {"content": "Mia's laptop is a ThinkPad", "key": "laptop"},
            ],
            principal=None,
        )

    return [
        ("remember", remember),
        ("remember_many", batch),
        ("upsert", lambda m, c: m.upsert("laptop", "Mia's laptop is a MacBook")),
        ("update", lambda m, c: m.update(c["first"], importance=5, principal=member)),
        ("feedback", lambda m, c: m.feedback(c["first"], "validate", principal=member)),
        ("archive", lambda m, c: m.archive(c["deploy"])),
        ("restore", lambda m, c: m.restore(c["deploy"])),
        ("get", lambda m, c: m.get(c["first"], principal=member)),
        (
            "recall",
            lambda m, c: m.recall("when does eng deploy?", k=5, explain=True, principal=member),
        ),
        (
            "recall all",
            lambda m, c: m.recall("laptop", scopes="all", filters={"types": ["semantic"]}),
        ),
        ("list", lambda m, c: m.list(scopes="all", limit=3)),
        ("list rest", lambda m, c: m.list(scopes="all", limit=3, cursor=_cursor(c))),
        ("history", lambda m, c: m.history(c["first"], principal=member)),
        ("stats", lambda m, c: m.stats()),
        ("stats member", lambda m, c: m.stats(principal=member)),
        ("forget", lambda m, c: m.forget(c["deploy"])),
        (
            "list after forget",
            lambda m, c: m.list(scopes="all", filters={"statuses": ["active", "archived"]}),
        ),
    ]


def _cursor(ctx: dict[str, Any]) -> str:
    return str(ctx["cursor"])


def _record_ctx(step: str, result: Any, ctx: dict[str, Any]) -> None:
    if step == "remember":
        ctx["first"] = result.id
    elif step == "remember_many":
        ctx["deploy"] = result[0].id
    elif step == "list":
        ctx["cursor"] = result.next_cursor


def test_same_calls_give_same_results(tmp_path: Path, embedder: Any, clock: FixedClock) -> None:
    sync_clock = FixedClock(clock.now())
    async_clock = FixedClock(clock.now())
    sync_mem = Memory(tmp_path / "sync.db", embedder=embedder, clock=sync_clock)
    sync_ctx: dict[str, Any] = {}
    sync_results = []
    for step, call in _script():
        sync_clock.advance(minutes=1)
        result = call(sync_mem, sync_ctx)
        _record_ctx(step, result, sync_ctx)
        sync_results.append((step, _normal(result)))
    sync_mem.close()

    async def run() -> list[tuple[str, Any]]:
        out = []
        ctx: dict[str, Any] = {}
        async with AsyncMemory(tmp_path / "async.db", embedder=embedder, clock=async_clock) as amem:
            for step, call in _script():
                async_clock.advance(minutes=1)
                result = await call(amem, ctx)
                _record_ctx(step, result, ctx)
                out.append((step, _normal(result)))
        return out

    async_results = asyncio.run(run())
    assert [s for s, _ in async_results] == [s for s, _ in sync_results]
    for (step, a), (_, s) in zip(async_results, sync_results, strict=True):
        assert a == s, step


def test_reads_of_one_database_agree(tmp_path: Path, embedder: Any, clock: FixedClock) -> None:
    mem = Memory(tmp_path / "one.db", embedder=embedder, clock=clock)
    amem = AsyncMemory(memory=mem)
    recs = mem.remember_many(
        [{"content": f"Shared fact number {i} about the harbour"} for i in range(6)]
    )
    mem.update(recs[0].id, content="The harbour opens at dawn")

    async def reads() -> list[Any]:
        return list(
            await asyncio.gather(
                amem.get(recs[0].id),
                amem.recall("harbour opening time", k=3, explain=True),
                amem.list(limit=4),
                amem.history(recs[0].id),
                amem.stats(),
            )
        )

    got = asyncio.run(reads())
    want = [
        mem.get(recs[0].id),
        mem.recall("harbour opening time", k=3, explain=True),
        mem.list(limit=4),
        mem.history(recs[0].id),
        mem.stats(),
    ]
    assert [_normal(g) for g in got] == [_normal(w) for w in want]
    out_a, out_s = io.StringIO(), io.StringIO()
    assert asyncio.run(amem.export_jsonl(out_a)) == mem.export_jsonl(out_s) == 6
    assert out_a.getvalue() == out_s.getvalue()
    asyncio.run(amem.close())


def test_errors_are_the_same(tmp_path: Path, embedder: Any) -> None:
    async def run() -> None:
        async with AsyncMemory(tmp_path / "err.db", embedder=embedder) as amem:
            with pytest.raises(InvalidInput, match="content must not be empty"):
                await amem.remember("  ")
            with pytest.raises(NotFound):
                await amem.get("0" * 32)
            with pytest.raises(TypeError):
                await amem.recall()  # type: ignore[call-arg]

    asyncio.run(run())


class _ThreadClock:
    """A clock (an injected dependency) that records which thread asked for the time."""

    def __init__(self, at: datetime) -> None:
        self.at = at
        self.threads: set[int] = set()

    def now(self) -> datetime:
        self.threads.add(threading.get_ident())
        self.at += timedelta(seconds=1)
        return self.at


def test_work_runs_off_the_event_loop_thread(
    tmp_path: Path, embedder: Any, clock: FixedClock
) -> None:
    spy = _ThreadClock(clock.now())
    loop_thread: list[int] = []

    async def run() -> None:
        loop_thread.append(threading.get_ident())
        async with AsyncMemory(tmp_path / "t.db", embedder=embedder, clock=spy) as amem:
            rec = await amem.remember("Off-loop write")
            await amem.update(rec.id, importance=2)
            assert (await amem.get(rec.id)).importance == 2

    asyncio.run(run())
    assert spy.threads and loop_thread[0] not in spy.threads
