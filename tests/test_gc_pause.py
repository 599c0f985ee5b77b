"""The cycle collector pauses while a big write batch runs, and only then."""

from __future__ import annotations

import gc
import threading
from collections.abc import Callable, Iterator

import pytest

from kenning import Memory
from kenning._gc import PAUSE_AT, collector_paused


@pytest.fixture(autouse=True)
def _collector_on() -> Iterator[None]:
    was = gc.isenabled()
    gc.enable()
    yield
    if not was:
        gc.disable()


def test_a_big_batch_pauses_the_collector_and_resumes_it() -> None:
    with collector_paused(PAUSE_AT):
        assert not gc.isenabled()
    assert gc.isenabled()


def test_a_small_batch_leaves_the_collector_alone() -> None:
    with collector_paused(PAUSE_AT - 1):
        assert gc.isenabled()
    assert gc.isenabled()


def test_the_collector_resumes_when_the_batch_fails() -> None:
    with pytest.raises(ValueError), collector_paused(PAUSE_AT):
        raise ValueError("boom")
    assert gc.isenabled()


def test_overlapping_batches_resume_only_when_the_last_ends() -> None:
    first_in, second_done, states = threading.Event(), threading.Event(), []

    def first() -> None:
        with collector_paused(PAUSE_AT):
            first_in.set()
            second_done.wait(5)
            states.append(("first, after the second ended", gc.isenabled()))

    t = threading.Thread(target=first)
    t.start()
    assert first_in.wait(5)
    collected: list[int] = []

    def note(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            collected.append(info["generation"])

    gc.callbacks.append(note)
    try:
        with collector_paused(PAUSE_AT):
            pass
    finally:
        gc.callbacks.remove(note)
    assert collected == [1]  # the second batch's young cycles, collected as it ended
    second_done.set()
    t.join(5)
    assert states == [("first, after the second ended", False)]
    assert gc.isenabled()


def test_a_collector_the_application_disabled_stays_disabled() -> None:
    gc.disable()
    with collector_paused(PAUSE_AT):
        assert not gc.isenabled()
    assert not gc.isenabled()


def test_the_write_pipeline_pauses_for_big_batches(
    make_memory: Callable[..., Memory],
) -> None:
    """The store's insert runs with the collector running for a small batch and
    paused for a big one; the collector is on afterwards. (The small batch goes
    first: it loads the entity extractor, whose loader switches the collector
    back on by itself.)"""
    mem = make_memory()
    store = mem.core.store
    seen: list[bool] = []
    insert = store.insert

    def spy(*args: object, **kwargs: object) -> object:
        seen.append(gc.isenabled())
        return insert(*args, **kwargs)

    store.insert = spy  # type: ignore[method-assign]
    mem.remember("a first note")
    mem.remember_many(
        [{"content": f"note number {i} about topic {i % 7}"} for i in range(PAUSE_AT)]
    )
    assert seen == [True, False]
    assert gc.isenabled()
    assert len(mem.list(limit=PAUSE_AT + 5).items) == PAUSE_AT + 1
