"""Micro-batching: embedding calls that wait at the same moment share one model run.

A server answers many recalls at once, and each wants its query embedded. Run
side by side, every query starts its own model run, and the runs fight over the
cores (a local model's run of one text already keeps every core busy). The
:class:`BatchingEmbedder` lets one run go at a time: a call that arrives while a
run is in flight waits for it, and when it ends, every call waiting by then is
embedded together in one ``inner.embed_batch``. No call waits longer than the
run ahead of it plus its own (and ``max_wait_ms`` when set, see below); a call
that finds the model idle runs at once, so a lone request pays nothing.

The first caller of a run (the *leader*) runs it on its own thread and hands
each other caller its rows; when its own call is answered and others are still
queued, the next of them leads. A batch that fails is run again call by call,
so one caller's bad text never fails another's.

``max_wait_ms`` (default 0) makes a leader wait that long for more calls before
a run when other calls already wait beside its own: under load a few
milliseconds gather a fuller batch, which pays for an endpoint with a cost per
request; a lone request never waits.

Whether the vectors depend on the batch is the inner embedder's affair: the
local MiniLM (int8) runs every text on its own, so a text gets the same vector
alone or batched.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from ..errors import InvalidInput
from .base import Embedder, Vectors, WrappingEmbedder, check_texts

__all__ = ["BatchingEmbedder"]


@dataclass(slots=True, eq=False)
class _Call:
    """One caller's texts, and its answer once a run has produced it."""

    texts: list[str]
    vectors: Vectors | None = None
    error: BaseException | None = None
    done: bool = False
    queued_at: float = field(default_factory=time.monotonic)


class BatchingEmbedder(WrappingEmbedder):
    """Wraps ``inner`` so concurrent calls are embedded together (see the module docstring).

    ``max_batch``: the most texts one run takes (a single call larger than that
    runs alone). ``max_wait_ms``: how long a leader waits for a fuller batch
    under load (0: never). :attr:`runs` and :attr:`texts` count the model runs
    made and the texts they embedded; :attr:`largest` is the largest run.
    """

    def __init__(self, inner: Embedder, *, max_batch: int = 64, max_wait_ms: float = 0.0) -> None:
        """Wrap ``inner``; :class:`InvalidInput` for a bad ``max_batch`` or ``max_wait_ms``."""
        super().__init__(inner)
        if isinstance(max_batch, bool) or not isinstance(max_batch, int) or max_batch < 1:
            raise InvalidInput(
                f"max_batch must be a positive int, got {max_batch!r}", field="max_batch"
            )
        if isinstance(max_wait_ms, bool) or not 0.0 <= float(max_wait_ms) <= 1000.0:
            raise InvalidInput(
                f"max_wait_ms must be between 0 and 1000, got {max_wait_ms!r}",
                field="max_wait_ms",
            )
        self._max_batch = max_batch
        self._max_wait_s = float(max_wait_ms) / 1000.0
        self._cond = threading.Condition()
        self._queue: list[_Call] = []
        self._leading = False  # a leader is running batches
        self.runs = 0
        self.texts = 0
        self.largest = 0

    def embed_batch(self, texts: Sequence[str]) -> Vectors:
        """Embed ``texts`` (order preserved), in one run with whatever else is waiting."""
        items = check_texts(texts)
        if not items:
            return np.zeros((0, self.dim), dtype=np.float32)
        call = _Call(items)
        with self._cond:
            self._queue.append(call)
            while not call.done and self._leading:
                self._cond.wait()
            if not call.done:
                self._leading = True
        if not call.done:
            self._lead(call)
        if call.error is not None:
            raise call.error
        assert call.vectors is not None
        return call.vectors

    def _lead(self, own: _Call) -> None:
        """Run batches from the queue until ``own`` is answered, then hand over."""
        try:
            while not own.done:
                batch = self._take()
                self._run(batch)
        finally:
            with self._cond:
                self._leading = False
                self._cond.notify_all()

    def _take(self) -> list[_Call]:
        """The next batch: queued calls in order, up to ``max_batch`` texts (at least one
        call); under load (others queued beside the leader's own call), first wait up
        to ``max_wait_ms`` for a fuller one."""
        with self._cond:
            if self._max_wait_s > 0 and len(self._queue) > 1:
                deadline = self._queue[0].queued_at + self._max_wait_s
                while sum(len(c.texts) for c in self._queue) < self._max_batch:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        break
                    self._cond.wait(left)
            batch: list[_Call] = []
            size = 0
            while self._queue and (
                not batch or size + len(self._queue[0].texts) <= self._max_batch
            ):
                call = self._queue.pop(0)
                batch.append(call)
                size += len(call.texts)
            return batch

    def _run(self, batch: list[_Call]) -> None:
        """Embed ``batch`` in one run (call by call if that run fails); answer its calls."""
        texts = [t for call in batch for t in call.texts]
        try:
            vectors = self.inner.embed_batch(texts)
        except Exception as exc:
            if len(batch) == 1:
                self._answer(batch[0], None, exc)
                return
            for call in batch:
                self._run([call])
            return
        except BaseException as exc:  # an interrupt: nobody in the batch may wait forever
            for call in batch:
                self._answer(call, None, exc)
            raise
        self._count(len(texts))
        start = 0
        for call in batch:
            end = start + len(call.texts)
            self._answer(call, vectors[start:end], None)
            start = end

    def _count(self, n: int) -> None:
        with self._cond:
            self.runs += 1
            self.texts += n
            self.largest = max(self.largest, n)

    def _answer(self, call: _Call, vectors: Vectors | None, error: BaseException | None) -> None:
        with self._cond:
            call.vectors, call.error, call.done = vectors, error, True
            self._cond.notify_all()

    def __repr__(self) -> str:
        """Describe the wrapper and what it wraps."""
        return f"BatchingEmbedder({self.inner!r}, max_batch={self._max_batch})"
