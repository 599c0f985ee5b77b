"""Helper threads one engine call may spread its work over, while it has the
process to itself.

A recall runs its keyword search on the calling thread and, meanwhile, its
query embedding and vector search on a helper thread: with a core to spare
that shortens the recall. With other engine calls running in the same process
(a server under load: a write in one thread, the next recall on the event loop)
there is no core to spare. The helper then only waits for the interpreter lock
and a core like everyone else, and every hand-over costs thread wake-ups the
calls needed: measured with 16 clients on 2 cores, 20% writes, the server
answered 3-13% more requests with each recall's parts run one after the other,
and one client was no slower (BENCHMARKS.md, "Server under load"). So
:meth:`Helpers.submit` runs the work on a helper only while the calling
engine call is the only one in progress (:meth:`Helpers.call`) and the
process serves nothing else (a server :meth:`~Helpers.watch`-es its requests
in flight: those waiting for their turn count too), and runs it in place
otherwise.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from typing import TypeVar

__all__ = ["Helpers"]

T = TypeVar("T")


class Helpers:
    """Helper threads (``threads`` of them, named ``name``) and the count of the
    engine calls in progress in this process that may use them (thread-safe)."""

    def __init__(self, threads: int = 2, name: str = "kenning-recall") -> None:
        self._pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix=name)
        self._lock = threading.Lock()
        self._calls = 0
        self._gauge: Callable[[], int] | None = None

    @property
    def calls(self) -> int:
        """Engine calls in progress (inside :meth:`call`)."""
        return self._calls

    @contextmanager
    def call(self) -> Iterator[None]:
        """Count an engine call in progress for as long as the block runs."""
        with self._lock:
            self._calls += 1
        try:
            yield
        finally:
            with self._lock:
                self._calls -= 1

    def watch(self, gauge: Callable[[], int] | None) -> None:
        """Count the work ``gauge()`` reports too (a server's requests in flight, the
        calling one included); None: engine calls only."""
        self._gauge = gauge

    def alone(self) -> bool:
        """Whether the calling engine call has the process to itself."""
        gauge = self._gauge
        return self._calls <= 1 and (gauge is None or gauge() <= 1)

    def submit(self, fn: Callable[..., T], *args: object) -> Future[T]:
        """``fn(*args)`` on a helper thread when the caller has the process to itself
        (:meth:`alone`), else on the calling thread before returning; either way a
        future of its result (or of the exception it raised)."""
        if self.alone():
            return self._pool.submit(fn, *args)
        done: Future[T] = Future()
        try:
            done.set_result(fn(*args))
        except Exception as exc:  # the future carries it, as a helper's would
            done.set_exception(exc)
        return done

    def shutdown(self, wait: bool = True) -> None:
        """Stop the helper threads (after the work in progress when ``wait``)."""
        self._pool.shutdown(wait=wait)
