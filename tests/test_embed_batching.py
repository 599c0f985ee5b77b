"""Micro-batching of embedding calls (:class:`kenning.embeddings.BatchingEmbedder`)."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest
from embedkit import CountingEmbedder

from kenning import Memory
from kenning.config import Settings
from kenning.embeddings import BatchingEmbedder, Embedder, MiniLMEmbedder, WrappingEmbedder
from kenning.embeddings.base import Vectors
from kenning.errors import EmbeddingError, InvalidInput


class Gate(WrappingEmbedder):
    """Holds its first run until released, so later calls queue behind it; fails any
    batch holding the text ``"boom"``. Records every batch it ran."""

    def __init__(self, inner: Embedder) -> None:
        super().__init__(inner)
        self.entered = threading.Event()
        self.release = threading.Event()
        self.batches: list[list[str]] = []
        self._first = True

    def embed_batch(self, texts: Sequence[str]) -> Vectors:
        self.batches.append(list(texts))
        if self._first:
            self._first = False
            self.entered.set()
            assert self.release.wait(30)
        if "boom" in texts:
            raise EmbeddingError("the model refused 'boom'")
        return self.inner.embed_batch(texts)


def _queued(batcher: BatchingEmbedder, n: int) -> None:
    """Wait until ``n`` calls sit in the batcher's queue."""
    deadline = time.monotonic() + 30
    while len(batcher._queue) < n:
        assert time.monotonic() < deadline, "calls never queued"
        time.sleep(0.001)


def _run_behind_gate(batcher: BatchingEmbedder, gate: Gate, calls: list[list[str]]) -> list[object]:
    """Start one call that holds the model, queue ``calls`` behind it, release; return
    each queued call's vectors or exception, in order."""
    with ThreadPoolExecutor(len(calls) + 1) as pool:
        first = pool.submit(batcher.embed_batch, ["the first query holds the model"])
        assert gate.entered.wait(30)
        futures = []
        for i, texts in enumerate(calls):
            futures.append(pool.submit(batcher.embed_batch, texts))
            _queued(batcher, i + 1)
        gate.release.set()
        first.result(30)
        out: list[object] = []
        for f in futures:
            exc = f.exception(30)
            out.append(exc if exc is not None else f.result())
        return out


def test_calls_waiting_behind_a_run_share_the_next_one(minilm: MiniLMEmbedder) -> None:
    gate = Gate(minilm)
    batcher = BatchingEmbedder(gate)
    calls = [[f"query number {i} about Lisbon"] for i in range(6)] + [["a pair", "of texts"]]
    results = _run_behind_gate(batcher, gate, calls)
    # the first run, then one run for everything that queued behind it
    assert len(gate.batches) == 2
    assert gate.batches[1] == [t for texts in calls for t in texts]
    assert (batcher.runs, batcher.texts, batcher.largest) == (2, 9, 8)
    for texts, got in zip(calls, results, strict=True):
        assert isinstance(got, np.ndarray)
        assert got.shape == (len(texts), 384)
        # each caller gets its own rows: the same vectors as embedding its texts alone
        np.testing.assert_array_equal(got, minilm.embed_batch(texts))


def test_a_lone_call_runs_at_once(minilm: MiniLMEmbedder) -> None:
    counting = CountingEmbedder(minilm)
    batcher = BatchingEmbedder(counting, max_wait_ms=500)
    started = time.monotonic()
    vector = batcher.embed("nobody else is asking")
    # a lone call never waits for company (max_wait_ms applies only under load)
    assert time.monotonic() - started < 0.5
    assert counting.calls == [["nobody else is asking"]]
    np.testing.assert_array_equal(vector, minilm.embed("nobody else is asking"))


def test_max_batch_splits_the_queue_in_order(minilm: MiniLMEmbedder) -> None:
    gate = Gate(minilm)
    batcher = BatchingEmbedder(gate, max_batch=3)
    calls = [[f"text {i}"] for i in range(5)] + [["one", "call", "of", "four"]]
    results = _run_behind_gate(batcher, gate, calls)
    assert gate.batches[1:] == [
        ["text 0", "text 1", "text 2"],
        ["text 3", "text 4"],
        ["one", "call", "of", "four"],  # larger than max_batch: runs alone, whole
    ]
    assert all(isinstance(r, np.ndarray) for r in results)


def test_one_callers_failure_is_not_anothers(minilm: MiniLMEmbedder) -> None:
    gate = Gate(minilm)
    batcher = BatchingEmbedder(gate)
    calls = [["fine one"], ["boom"], ["fine two"]]
    results = _run_behind_gate(batcher, gate, calls)
    assert isinstance(results[1], EmbeddingError)
    assert "boom" in str(results[1])
    for i in (0, 2):
        got = results[i]
        assert isinstance(got, np.ndarray)
        np.testing.assert_array_equal(got, minilm.embed_batch(calls[i]))
    # the shared run failed, so each call ran again on its own
    assert gate.batches[1] == ["fine one", "boom", "fine two"]
    assert gate.batches[2:] == [["fine one"], ["boom"], ["fine two"]]


def test_under_load_a_run_waits_for_a_fuller_batch(minilm: MiniLMEmbedder) -> None:
    gate = Gate(minilm)
    batcher = BatchingEmbedder(gate, max_batch=4, max_wait_ms=300)
    calls = [["a"], ["b"], ["c"], ["d"], ["e"]]
    results = _run_behind_gate(batcher, gate, calls)
    assert all(isinstance(r, np.ndarray) for r in results)
    # behind a busy run: the next takes a full batch, the rest follows
    assert gate.batches[1:] == [["a", "b", "c", "d"], ["e"]]


def test_many_threads_each_get_their_own_vectors(minilm: MiniLMEmbedder) -> None:
    batcher = BatchingEmbedder(minilm, max_batch=5)
    texts = [f"memory {i}: the team meets on day {i % 7}" for i in range(40)]
    with ThreadPoolExecutor(16) as pool:
        got = list(pool.map(batcher.embed, texts))
    np.testing.assert_array_equal(np.stack(got), minilm.embed_batch(texts))
    assert batcher.texts == 40
    assert batcher.largest <= 5


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"max_batch": 0}, "max_batch"),
        ({"max_batch": True}, "max_batch"),
        ({"max_batch": 2.5}, "max_batch"),
        ({"max_wait_ms": -1}, "max_wait_ms"),
        ({"max_wait_ms": 5000}, "max_wait_ms"),
    ],
)
def test_bad_settings_are_refused(
    minilm: MiniLMEmbedder, kwargs: dict[str, object], field: str
) -> None:
    with pytest.raises(InvalidInput) as err:
        BatchingEmbedder(minilm, **kwargs)  # type: ignore[arg-type]
    assert err.value.field == field


def test_bad_texts_are_refused_before_queueing(minilm: MiniLMEmbedder) -> None:
    batcher = BatchingEmbedder(minilm)
    with pytest.raises(InvalidInput):
        batcher.embed_batch(["fine", 3])  # type: ignore[list-item]
    assert batcher.runs == 0 and not batcher._queue


def test_the_engine_batches_by_default_and_can_be_told_not_to(
    tmp_path: Path, embedder: Embedder
) -> None:
    on = Memory(tmp_path / "on.db", embedder=embedder)
    off = Memory(tmp_path / "off.db", embedder=embedder, settings=Settings(embed_batching=False))
    try:
        assert isinstance(on.core.batcher, BatchingEmbedder)
        assert on.core.query_embedder.inner is on.core.batcher
        assert on.core.embedder.inner is on.core.batcher
        assert off.core.batcher is None
        assert not isinstance(off.core.query_embedder.inner, BatchingEmbedder)
        on.remember("The deploy window is Tuesday afternoon")
        assert on.recall("when do we deploy?")[0].memory.content.startswith("The deploy")
    finally:
        on.close()
        off.close()
