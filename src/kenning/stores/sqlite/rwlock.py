"""A readers-writer lock for the in-process mirrors.

A recall searches the vector mirror on one thread while its keyword search
checks rows in the same mirror on another; with one plain lock the keyword
search waited for the whole vector search. Searches only read, so they share
the lock; catching up with the database changes the mirror and takes it
alone. A waiting writer keeps new readers out, so a stream of searches cannot
starve it. Both sides are reentrant, and the writer may read; a reader must
not ask for the write side (it would wait for itself).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["RWLock"]


class RWLock:
    """Many readers or one writer; writers are preferred."""

    def __init__(self) -> None:
        self._cond = threading.Condition(threading.Lock())
        self._readers = 0
        self._writer: int | None = None  # thread id of the writer
        self._waiting_writers = 0
        self._held = threading.local()  # this thread's read depth

    @contextmanager
    def read(self) -> Iterator[None]:
        """Shared access (a thread that holds the write side may read too)."""
        depth = getattr(self._held, "depth", 0)
        if depth or self._writer == threading.get_ident():
            self._held.depth = depth + 1  # already inside: a waiting writer must not block us
            try:
                yield
            finally:
                self._held.depth = depth
            return
        with self._cond:
            while self._writer is not None or self._waiting_writers:
                self._cond.wait()
            self._readers += 1
        self._held.depth = 1
        try:
            yield
        finally:
            self._held.depth = 0
            with self._cond:
                self._readers -= 1
                if self._readers == 0:
                    self._cond.notify_all()

    @contextmanager
    def write(self) -> Iterator[None]:
        """Exclusive access (reentrant for the writing thread)."""
        me = threading.get_ident()
        if self._writer == me:
            yield
            return
        with self._cond:
            self._waiting_writers += 1
            try:
                while self._writer is not None or self._readers:
                    self._cond.wait()
            finally:
                self._waiting_writers -= 1
            self._writer = me
        try:
            yield
        finally:
            with self._cond:
                self._writer = None
                self._cond.notify_all()
