"""The catch-up loop shared by the SQLite store's in-process mirrors.

A mirror (the vectors, the keyword postings) copies part of the database into
memory and follows the ``history`` table to stay current: every write that
changes a memory's text, vector, scope, status or existence appends a history
row in the same transaction, also in other processes. :meth:`refresh` loads
everything the first time, then re-reads the memories named since, or loads
everything again when that would be more rows than a fresh load is worth.
"""

from __future__ import annotations

import sqlite3
from abc import ABC, abstractmethod
from collections.abc import Sequence

from .rwlock import RWLock

__all__ = ["HistoryMirror"]


class HistoryMirror(ABC):
    """Base of a mirror that follows ``history``; searches take ``_lock.read()``."""

    def __init__(self) -> None:
        self._lock = RWLock()
        self._seq = -1  # the history row the mirror has caught up with (-1: never loaded)

    def refresh(self, conn: sqlite3.Connection) -> None:
        """Catch up with the database (full load the first time, then deltas).

        Must be called inside a read transaction so the history watermark and
        the rows read agree. Nothing new (the common case) takes no lock.
        """
        (top,) = conn.execute("SELECT COALESCE(MAX(seq), 0) FROM history").fetchone()
        if 0 <= top <= self._seq:
            return
        with self._lock.write():
            if self._seq < 0:
                self._load_all(conn)
            elif top > self._seq:
                changed = conn.execute(
                    "SELECT DISTINCT memory_id FROM history WHERE seq > ?", (self._seq,)
                )
                ids = [r[0] for r in changed]
                if self._reload_all_instead(len(ids)):
                    self._load_all(conn)
                else:
                    self._reload(conn, ids)
            self._seq = max(self._seq, int(top))

    @abstractmethod
    def _load_all(self, conn: sqlite3.Connection) -> None:
        """Replace the mirror's contents with the database's (under the write lock)."""

    @abstractmethod
    def _reload(self, conn: sqlite3.Connection, ids: Sequence[str]) -> None:
        """Re-read these memories; those gone drop out (under the write lock)."""

    @abstractmethod
    def _reload_all_instead(self, changed: int) -> bool:
        """Whether ``changed`` memories are better served by a full load."""
