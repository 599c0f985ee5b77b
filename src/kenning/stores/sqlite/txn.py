"""The SQLite store's connections and transactions (a mixin of
:class:`~kenning.stores.sqlite.store.SQLiteStore`).

One write connection, serialised by the store's lock, runs every write block
(``atomic()``: ``BEGIN IMMEDIATE``, nested blocks as savepoints; writers in
other processes take turns first, :mod:`.turns`); reads on
other threads take a snapshot from the read pool (WAL). The in-process mirrors
follow committed state; a read inside a write block shows them the block's own
rows and holds them until the block ends (:mod:`.follow`), and a rollback puts
them, and the term and scope caches, back.

Every connection deletes securely (``PRAGMA secure_delete=ON``: freed cells and
pages are overwritten with zeros). A write block that erased content (a
``delete``) ends with a ``TRUNCATE`` checkpoint, so the write-ahead log no longer
holds the erased rows' old page images; when readers still hold a snapshot the
checkpoint cannot finish, and it is tried again at the end of each later write
block and when the store closes (see "Erasure" in ``docs/operations.md``).
"""

from __future__ import annotations

import builtins
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from typing import Any

from ...access import ScopeFilter
from ...errors import StoreError
from .driver import sqlite3
from .follow import HistoryMirror
from .postings import TEMP_TOKENIZER
from .readers import ReadPool
from .terms import TermStats
from .turns import WriterTurns

__all__ = ["SQLiteTransactions", "Transaction", "BUSY_WAIT_S"]

BUSY_WAIT_S = 60.0
#: How long the checkpoint after an erasure waits for readers to leave their
#: snapshots (later retries do not wait).
SCRUB_WAIT_S = 0.25
#: A scratch FTS5 table with the index's tokenizer: inserting the query's words
#: and reading its vocabulary back gives their Porter stems.
_TEMP_STEMMER = """
CREATE VIRTUAL TABLE IF NOT EXISTS temp.stemmer USING fts5(
    t, tokenize = 'porter unicode61 remove_diacritics 2');
CREATE VIRTUAL TABLE IF NOT EXISTS temp.stemmer_vocab USING fts5vocab(temp, stemmer, instance);
"""


@dataclass(slots=True)
class Transaction:
    """The outermost write block: the mirrors it read (held until it ends) and the
    steps that wait for its end."""

    held: ExitStack = field(default_factory=ExitStack)
    mirrors: builtins.list[HistoryMirror] = field(default_factory=list)
    at_end: builtins.list[Callable[[], None]] = field(default_factory=list)
    erased: bool = False  # the block deleted content (see SQLiteTransactions._erased)
    #: A block without a savepoint failed part-way: the transaction can only roll back.
    spoilt: bool = False


class SQLiteTransactions:
    """Connections, write blocks and read snapshots of the SQLite store."""

    path: str
    _lock: threading.RLock
    _depth: int
    _writer: int | None
    _txn: Transaction | None
    _conn: sqlite3.Connection
    _readers: ReadPool | None
    _terms: TermStats
    _scope_cache: dict[ScopeFilter, tuple[int, builtins.list[int]]]
    _turns: WriterTurns
    #: Content was erased and the write-ahead log may still hold it (see :meth:`_scrub_wal`).
    _scrub_pending: bool = False

    @staticmethod
    def _connect(path: str) -> sqlite3.Connection:
        """A connection with the store's pragmas and its scratch stemmer table."""
        try:
            conn = sqlite3.connect(
                path, isolation_level=None, check_same_thread=False, timeout=BUSY_WAIT_S
            )
        except sqlite3.Error as exc:
            raise StoreError(f"cannot open SQLite database {path}: {exc}") from exc
        for pragma in (
            "journal_mode=WAL",
            "synchronous=NORMAL",
            "foreign_keys=ON",
            "secure_delete=ON",
            f"busy_timeout={int(BUSY_WAIT_S * 1000)}",
            "temp_store=MEMORY",
            "cache_size=-65536",
        ):
            conn.execute(f"PRAGMA {pragma}")
        conn.executescript(_TEMP_STEMMER + TEMP_TOKENIZER)
        return conn

    def _retry_busy(self, fn: Any) -> Any:
        deadline = time.monotonic() + BUSY_WAIT_S
        delay = 0.005
        while True:
            try:
                return fn()
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) and "busy" not in str(exc):
                    raise StoreError(f"SQLite error: {exc}") from exc
                if time.monotonic() > deadline:
                    raise StoreError(f"database stayed locked for {BUSY_WAIT_S:.0f}s") from exc
                time.sleep(delay)
                delay = min(delay * 2, 0.2)

    @contextmanager
    def atomic(self, *, savepoint: bool = True) -> Iterator[sqlite3.Connection]:
        """One write transaction; nested calls become savepoints (see :class:`Store`).

        The block holds the store's lock (the one write connection) and the
        database's write lock (``BEGIN IMMEDIATE``) until it exits; a mirror it
        reads stays with it until then and is put back if the block rolls back.

        ``savepoint=False`` joins an enclosing block without a savepoint (for a
        large batch: SQLite keeps a savepoint's page images in memory and walks
        them at the end of every statement inside it, so a batch of thousands of
        rows in a savepoint slows down as the database grows). Such a block
        cannot be undone on its own: if it fails after it changed a row, the
        whole transaction rolls back at its end, even when a caller caught the
        error (:class:`StoreError` then says so); one that fails before changing
        anything fails alone. Outermost, the flag changes nothing.
        """
        with self._lock:
            joined = self._depth > 0 and not savepoint
            changes = self._conn.total_changes
            if self._depth == 0:
                self._turns.take()  # other processes' writers first (see .turns)
                try:
                    self._retry_busy(lambda: self._conn.execute("BEGIN IMMEDIATE"))
                except BaseException:
                    self._turns.give()
                    raise
                self._writer = threading.get_ident()
                self._txn = Transaction()
            elif not joined:
                self._conn.execute(f"SAVEPOINT sp{self._depth}")
            self._depth += 1
            try:
                yield self._conn
            except BaseException:
                self._depth -= 1
                if self._depth == 0:
                    self._conn.execute("ROLLBACK")
                    self._end_write(committed=False)
                elif joined:
                    assert self._txn is not None
                    if self._conn.total_changes != changes:
                        self._txn.spoilt = True
                else:
                    self._conn.execute(f"ROLLBACK TO sp{self._depth}")
                    self._conn.execute(f"RELEASE sp{self._depth}")
                    self._forget_uncommitted(self._conn)
                raise
            self._depth -= 1
            if joined:
                return
            if self._depth > 0:
                self._conn.execute(f"RELEASE sp{self._depth}")
                return
            if self._txn is not None and self._txn.spoilt:
                self._conn.execute("ROLLBACK")
                self._end_write(committed=False)
                raise StoreError(
                    "a batch in this transaction failed part-way (its error was caught); "
                    "the transaction was rolled back"
                )
            try:
                self._retry_busy(lambda: self._conn.execute("COMMIT"))
            except BaseException:
                if self._conn.in_transaction:
                    self._conn.execute("ROLLBACK")
                self._end_write(committed=False)
                raise
            self._end_write(committed=True)

    def _end_write(self, *, committed: bool) -> None:
        """After the outermost block: put the mirrors back if it rolled back, run
        what waited for its end, let other threads read the mirrors again."""
        txn, self._txn = self._txn, None
        self._writer = None
        self._turns.give()  # the transaction has ended: the next writer may begin
        if txn is None:
            return
        with txn.held:
            if not committed:
                self._begin(self._conn)  # the mirrors re-read committed rows, consistently
                try:
                    self._forget_uncommitted(self._conn, txn)
                finally:
                    self._conn.execute("COMMIT")
            for step in txn.at_end:
                step()
        if self._scrub_pending:
            self._scrub_wal(wait=txn.erased)

    def _forget_uncommitted(self, conn: sqlite3.Connection, txn: Transaction | None = None) -> None:
        """A block (or a savepoint in it) rolled back: drop what its reads cached."""
        txn = txn or self._txn
        self._scope_cache.clear()
        self._terms.forget()
        for mirror in txn.mirrors if txn else ():
            mirror.undo(conn)

    def _erased(self) -> None:
        """The current write block deletes content: when it ends, checkpoint the
        write-ahead log and truncate it (:meth:`_scrub_wal`)."""
        self._scrub_pending = True
        if self._txn is not None:
            self._txn.erased = True

    def _scrub_wal(self, *, wait: bool) -> bool:
        """Copy the write-ahead log into the database and truncate it to zero bytes,
        so no page image of erased content stays in it; outside a transaction.

        Readers (here or in another process) that hold a snapshot stop the
        checkpoint; it then stays pending and is tried again at the end of the
        next write block and at :meth:`close`. ``wait`` gives readers
        :data:`SCRUB_WAIT_S` to finish first. Returns whether the log is empty.
        """
        if self.path == ":memory:":
            self._scrub_pending = False
            return True
        conn = self._conn
        conn.execute(f"PRAGMA busy_timeout={int(SCRUB_WAIT_S * 1000) if wait else 0}")
        try:
            busy = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]
        except sqlite3.Error:  # the deletion is committed: a failed checkpoint stays pending
            busy = 1
        finally:
            conn.execute(f"PRAGMA busy_timeout={int(BUSY_WAIT_S * 1000)}")
        self._scrub_pending = bool(busy)
        return not busy

    def _follow(self, conn: sqlite3.Connection, mirror: HistoryMirror) -> None:
        """Bring ``mirror`` up to what ``conn`` sees: the committed state, or, on the
        writing thread inside its block, the block's own (held until the block ends)."""
        txn = self._txn
        if txn is not None and self._writer == threading.get_ident():
            if mirror not in txn.mirrors:
                txn.mirrors.append(mirror)
            mirror.refresh_uncommitted(conn, txn.held)
        else:
            mirror.refresh(conn)

    def _at_end(self, step: Callable[[], None]) -> None:
        """Run ``step`` when the current write block ends (now, outside one)."""
        if self._txn is not None and self._writer == threading.get_ident():
            self._txn.at_end.append(step)
        else:
            step()

    @contextmanager
    def _read(self) -> Iterator[sqlite3.Connection]:
        """A consistent read snapshot (or the enclosing write transaction).

        On a file database the snapshot comes from the read pool, so reads on
        other threads run in parallel; inside this thread's own write
        transaction the write connection is used, so the writes are visible.
        """
        if self._readers is not None and self._writer != threading.get_ident():
            with self._readers.snapshot(self._begin) as conn:
                yield conn
            return
        with self._lock:
            if self._depth > 0:
                yield self._conn
                return
            self._begin(self._conn)
            self._depth += 1
            try:
                yield self._conn
            finally:
                self._depth -= 1
                self._conn.execute("COMMIT")

    def _begin(self, conn: sqlite3.Connection) -> None:
        self._retry_busy(lambda: conn.execute("BEGIN"))
