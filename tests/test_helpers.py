"""Helper threads a recall spreads its work over only while it has the process to
itself: beside another engine call (a write in progress, say) its parts run one
after the other on the calling thread."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from contextlib import ExitStack

import pytest
from embedkit import CountingEmbedder

from kenning import Memory
from kenning.embeddings import Embedder
from kenning.graph.extractor import EntityMention, Extractor
from kenning.helpers import Helpers


def _thread() -> str:
    return threading.current_thread().name


def test_alone_a_call_spreads_its_work_over_a_helper_thread() -> None:
    helpers = Helpers(name="kenning-test")
    try:
        with helpers.call():
            assert helpers.calls == 1
            assert helpers.submit(_thread).result().startswith("kenning-test")
        assert helpers.calls == 0
    finally:
        helpers.shutdown()


def test_beside_another_call_the_work_runs_in_place() -> None:
    helpers = Helpers(name="kenning-test")
    try:
        with helpers.call(), helpers.call():
            job = helpers.submit(_thread)
            assert job.done() and job.result() == _thread()
    finally:
        helpers.shutdown()


@pytest.mark.parametrize("others", [0, 1])
def test_an_error_reaches_the_caller_either_way_and_the_count_recovers(others: int) -> None:
    helpers = Helpers()

    def fail() -> None:
        raise ValueError("bad query")

    try:
        with pytest.raises(RuntimeError), ExitStack() as calls:
            for _ in range(1 + others):  # this call, and another in progress
                calls.enter_context(helpers.call())
            with pytest.raises(ValueError, match="bad query"):
                helpers.submit(fail).result()
            raise RuntimeError("the call fails")
        assert helpers.calls == 0
    finally:
        helpers.shutdown()


class _Held(Extractor):
    """Finds no entities; a text containing ``HOLD`` waits until :attr:`go` is set
    (a write in progress, for as long as the test wants)."""

    name = "held"

    def __init__(self) -> None:
        self.holding = threading.Event()
        self.go = threading.Event()

    def extract_batch(self, texts: Sequence[str]) -> list[list[EntityMention]]:
        if any("HOLD" in t for t in texts):
            self.holding.set()
            assert self.go.wait(30)
        return [[] for _ in texts]


def test_a_recall_beside_a_write_in_progress_embeds_on_its_own_thread(
    make_memory: Callable[..., Memory], embedder: Embedder
) -> None:
    noting, held = CountingEmbedder(embedder, parallel=False), _Held()
    mem = make_memory(embedder=noting, extractor=held)
    mem.remember("Sven teaches sailing on the lake every summer")
    mem.remember("Ada bakes rye bread on Sundays")

    noting.calls.clear()
    noting.threads.clear()
    assert mem.recall("sailing lessons on the lake").hits
    assert noting.threads and noting.threads[-1] != threading.get_ident()  # alone: a helper

    writer = threading.Thread(target=mem.remember, args=("HOLD the lake is frozen now",))
    writer.start()
    try:
        assert held.holding.wait(30)
        hits = mem.recall("who bakes bread on Sundays").hits
        assert hits and "rye bread" in hits[0].memory.content
    finally:
        held.go.set()
        writer.join(30)
    assert not writer.is_alive()
    asked = [t for c, t in zip(noting.calls, noting.threads, strict=True) if "bread" in c[0]]
    assert asked == [threading.get_ident()]  # beside the write: in place
    assert mem.core.helpers.calls == 0
    assert any("frozen" in h.memory.content for h in mem.recall("is the lake frozen").hits)
