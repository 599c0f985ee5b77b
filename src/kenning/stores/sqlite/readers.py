"""A small pool of read connections to one WAL database.

In WAL mode readers never block each other nor the writer, but one
``sqlite3.Connection`` runs one statement at a time. The store therefore keeps
its single write connection (serialised by its lock) and hands out these
connections for reads, each inside its own snapshot (``BEGIN`` ... ``COMMIT``),
so a recall's keyword search and vector search can run on two threads at once
and a slow read never waits behind a write transaction.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from .driver import sqlite3

__all__ = ["ReadPool"]


class ReadPool:
    """Up to ``size`` read connections, opened on demand and reused."""

    def __init__(self, path: str, size: int, opener: Callable[[str], sqlite3.Connection]) -> None:
        self._path = path
        self._size = size
        self._opener = opener
        self._idle: list[sqlite3.Connection] = []
        self._open = 0
        self._closed = False
        self._cond = threading.Condition()
        self._local = threading.local()

    def _acquire(self) -> sqlite3.Connection:
        with self._cond:
            while True:
                if self._closed:
                    raise sqlite3.ProgrammingError("the read pool is closed")
                if self._idle:
                    return self._idle.pop()
                if self._open < self._size:
                    self._open += 1
                    break
                self._cond.wait()
        try:
            return self._opener(self._path)
        except BaseException:
            with self._cond:
                self._open -= 1
                self._cond.notify()
            raise

    def _release(self, conn: sqlite3.Connection, broken: bool) -> None:
        with self._cond:
            if broken or self._closed:
                self._open -= 1
                conn.close()
            else:
                self._idle.append(conn)
            self._cond.notify()

    @contextmanager
    def snapshot(self, begin: Callable[[sqlite3.Connection], None]) -> Iterator[sqlite3.Connection]:
        """A connection inside one read transaction; nested calls on a thread share it.

        ``begin`` starts the transaction (the store passes its busy-retrying
        ``BEGIN``); the transaction ends (``COMMIT``) when the outermost block exits.
        """
        current: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if current is not None:
            yield current
            return
        conn = self._acquire()
        broken = False
        try:
            begin(conn)
            self._local.conn = conn
            try:
                yield conn
            finally:
                self._local.conn = None
                conn.execute("COMMIT")
        except sqlite3.Error:
            broken = True
            raise
        finally:
            self._release(conn, broken)

    def close(self) -> None:
        """Close the idle connections now and the busy ones when they come back."""
        with self._cond:
            self._closed = True
            for conn in self._idle:
                conn.close()
            self._open -= len(self._idle)
            self._idle.clear()
            self._cond.notify_all()
