"""The catch-up loop shared by the SQLite store's in-process mirrors.

A mirror (the vectors, the keyword postings) copies part of the database into
memory and follows the ``history`` table to stay current: every write that
changes a memory's text, vector, scope, status or existence appends a history
row in the same transaction, also in other processes. :meth:`refresh` loads
everything the first time, then re-reads the memories named since, or loads
everything again when that would be more rows than a fresh load is worth.

A read inside the store's own write block (``atomic()``) sees the block's
uncommitted rows, and so must the mirror it searches; other threads must not.
:meth:`HistoryMirror.refresh_uncommitted` therefore holds the mirror alone
until the block ends and remembers where it stood; when the block (or a
savepoint in it) rolls back, :meth:`HistoryMirror.undo` puts it back and
re-reads what the block had shown it, before any other thread looks. (History
sequence numbers are reused after a rollback, so the mirror cannot simply
wait for the next write to notice.)
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field

from .driver import sqlite3
from .rwlock import RWLock

__all__ = ["HistoryMirror"]


@dataclass(slots=True)
class _Hold:
    """A write block's view of one mirror: where it stood and what the block re-read."""

    seq: int
    ids: set[str] = field(default_factory=set)
    full: bool = False  # the block reloaded everything


class HistoryMirror(ABC):
    """Base of a mirror that follows ``history``; searches take ``_lock.read()``."""

    def __init__(self) -> None:
        self._lock = RWLock()
        self._seq = -1  # the history row the mirror has caught up with (-1: never loaded)
        self._redo: set[str] = set()  # memories to re-read whatever the history says
        self._held: _Hold | None = None  # set while a write block holds the mirror

    def refresh(self, conn: sqlite3.Connection) -> None:
        """Catch up with the database (full load the first time, then deltas).

        Must be called inside a read transaction so the history watermark and
        the rows read agree. Nothing new (the common case) takes no lock.
        """
        (top,) = conn.execute("SELECT COALESCE(MAX(seq), 0) FROM history").fetchone()
        if 0 <= top <= self._seq and not self._redo:
            return
        with self._lock.write():
            self._catch_up(conn, int(top))

    def refresh_uncommitted(self, conn: sqlite3.Connection, block: ExitStack) -> None:
        """Catch up with the calling thread's open write transaction on ``conn``.

        The first call in a block takes the mirror's write lock until ``block``
        closes (the transaction's end), so no other thread reads rows that may
        yet roll back; the writing thread itself may read meanwhile.
        """
        if self._held is None:
            block.enter_context(self._lock.write())
            self._held = _Hold(self._seq)
            block.callback(self._release)
        (top,) = conn.execute("SELECT COALESCE(MAX(seq), 0) FROM history").fetchone()
        if 0 <= top <= self._seq and not self._redo:
            return
        self._note(self._catch_up(conn, int(top)))

    def undo(self, conn: sqlite3.Connection) -> None:
        """The write block rolled back (all of it, or to a savepoint): put the mirror
        back where it stood and re-read, from ``conn`` as it is now, what the block
        had shown it. Nothing to do when the block never refreshed the mirror."""
        hold = self._held
        if hold is None:
            return
        with self._lock.write():
            if hold.full or hold.seq < 0:
                self._seq = -1
            else:
                self._seq = hold.seq
                self._redo |= hold.ids
            hold.ids, hold.full = set(), False
            (top,) = conn.execute("SELECT COALESCE(MAX(seq), 0) FROM history").fetchone()
            self._note(self._catch_up(conn, int(top)))

    def _note(self, touched: set[str] | None) -> None:
        """Record what a catch-up inside a write block re-read (None: everything)."""
        if self._held is None:
            return
        if touched is None:
            self._held.full = True
        else:
            self._held.ids |= touched

    def _release(self) -> None:
        self._held = None

    def _catch_up(self, conn: sqlite3.Connection, top: int) -> set[str] | None:
        """Bring the mirror to ``top`` (under the write lock); returns the memories
        re-read, None after a full load."""
        touched: set[str] | None = set()
        if self._seq < 0:
            self._load_all(conn)
            touched = None
        else:
            ids = set(self._redo)
            if top > self._seq:
                # no DISTINCT: with it SQLite reads the whole (memory_id, seq) index
                # instead of the rows past ``seq`` (a scan of all history, every time)
                changed = conn.execute("SELECT memory_id FROM history WHERE seq > ?", (self._seq,))
                ids.update(r[0] for r in changed)
            if ids and self._reload_all_instead(len(ids)):
                self._load_all(conn)
                touched = None
            elif ids:
                self._reload(conn, sorted(ids))
                touched = ids
        self._redo.clear()
        self._seq = max(self._seq, top)
        return touched

    @abstractmethod
    def _load_all(self, conn: sqlite3.Connection) -> None:
        """Replace the mirror's contents with the database's (under the write lock)."""

    @abstractmethod
    def _reload(self, conn: sqlite3.Connection, ids: Sequence[str]) -> None:
        """Re-read these memories; those gone drop out (under the write lock)."""

    @abstractmethod
    def _reload_all_instead(self, changed: int) -> bool:
        """Whether ``changed`` memories are better served by a full load."""
