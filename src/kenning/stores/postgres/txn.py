"""The PostgreSQL store's transactions (a mixin of
:class:`~kenning.stores.postgres.store.PostgresStore`): one per call, with the
row-level security context set first, or savepoints of the calling thread's
``atomic()`` block; and bulk loads that build the search indexes once.

**An organization's writes and its moves.** Every transaction of a call made
inside :meth:`~PostgresTransactions.org_writes` (the routed store's write
calls) holds the organization's write lock *shared* (a transaction-level
advisory lock, :data:`ORG_WRITES_LOCK` and ``hashtext(org_id)``), taken in
the statement that sets its row-level security context, before it writes.
A move holds that lock *exclusively* in the organization's old database
from before its copy until the old copy is deleted
(:mod:`~kenning.stores.postgres.orgmove`): it waits for the writes holding
it to end, and meanwhile a write is refused with
:class:`~kenning.stores.routed.OrganizationMoving` at once (never waits,
writes nothing)."""

from __future__ import annotations

import functools
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
from psycopg import errors as pgerrors
from psycopg_pool import ConnectionPool

from ...access import ScopeFilter
from ...errors import Conflict, StoreError
from ...models import ScopeKind
from ..base import Footprint
from ..routed import OrganizationMoving
from .bm25 import TTLCache
from .footprint import footprint
from .replicas import ReplicaSet
from .schema import BULK_INDEXES
from .sql import LIST_SEP, PAIR_SEP, context_values

__all__ = ["ORG_WRITES_LOCK", "PostgresTransactions", "enter_write", "org_context", "set_context"]

#: Every scope kind: an organization-wide context.
_ALL_KINDS = ",".join(sorted(k.value for k in ScopeKind))

#: Advisory-lock namespace (first int4 key; the second is ``hashtext(org_id)``) of an
#: organization's writes in the database it lives in: held shared by each write
#: transaction, exclusively by a move (see the module docs).
ORG_WRITES_LOCK = 0x6B777274

_SET_CONTEXT = (
    "SELECT set_config('kenning.org_id', %s, true), "
    "set_config('kenning.kinds', %s, true), set_config('kenning.scopes', %s, true), "
    "set_config('kenning.key_id', '', true)"
)
#: The context and the organization's shared write lock, in one statement.
_SET_CONTEXT_FOR_WRITE = _SET_CONTEXT + ", pg_try_advisory_xact_lock_shared(%s, hashtext(%s))"


@contextmanager
def _translated() -> Iterator[None]:
    """psycopg errors as kenning's: a unique violation is a Conflict."""
    try:
        yield
    except pgerrors.UniqueViolation as exc:
        raise Conflict(f"already exists: {exc.diag.message_detail or exc}") from exc
    except psycopg.OperationalError as exc:
        raise StoreError(f"PostgreSQL error: {exc}") from exc


def set_context(conn: psycopg.Connection, context: tuple[str, str, str]) -> psycopg.Connection:
    """Set the (org, kinds, scopes) context the row-level security policies read,
    for the rest of the transaction; it also clears the one-key lookup context
    (``kenning.key_id``, see :mod:`.directory`), which a savepoint of an
    :meth:`~PostgresTransactions.atomic` block would otherwise keep."""
    conn.execute(_SET_CONTEXT, context)
    return conn


def enter_write(
    conn: psycopg.Connection, context: tuple[str, str, str], org_id: str
) -> psycopg.Connection:
    """:func:`set_context`, and take ``org_id``'s write lock shared for the rest of
    the transaction, in one statement; a move holding (or waiting for) it
    exclusively: :class:`~kenning.stores.routed.OrganizationMoving`, nothing
    written (the caller's transaction or savepoint rolls back)."""
    row = conn.execute(_SET_CONTEXT_FOR_WRITE, (*context, ORG_WRITES_LOCK, org_id)).fetchone()
    if row is None or not row[-1]:
        raise OrganizationMoving(org_id)
    return conn


def org_context(org_id: str) -> tuple[str, str, str]:
    """The organization-wide context of ``org_id`` (every scope kind of it)."""
    return (org_id, _ALL_KINDS, "")


def context_orgs(context: tuple[str, str, str]) -> frozenset[str]:
    """The organizations a context lets a transaction touch (its org, or the orgs of
    a write context's ``org|scope`` pairs)."""
    if context[0]:
        return frozenset({context[0]})
    pairs = context[2].split(LIST_SEP) if context[2] else []
    return frozenset(p.split(PAIR_SEP, 1)[0] for p in pairs if PAIR_SEP in p)


class PostgresTransactions:
    """Transactions, savepoints and bulk loads of the PostgreSQL store."""

    _pool: ConnectionPool
    _block: threading.local
    _counts: TTLCache
    _replicas: ReplicaSet | None

    def organizations(self) -> list[str]:
        """(the store's)"""
        raise NotImplementedError

    @contextmanager
    def atomic(self) -> Iterator[psycopg.Connection]:
        """One transaction around a block (see :class:`~kenning.stores.base.Store`).

        The block keeps one pooled connection for this thread; every store call
        on the thread inside it runs on that connection in a savepoint (so a
        failed write, caught, leaves the block usable), with its own row-level
        security context. Other threads use other connections and never see
        the block's rows before the commit.
        """
        conn: psycopg.Connection | None = getattr(self._block, "conn", None)
        if conn is not None:
            with _translated(), conn.transaction():
                yield conn
            return
        try:
            with _translated(), self._pool.connection() as conn:
                with conn.transaction():
                    self._block.conn, self._block.orgs = conn, set()
                    try:
                        yield conn
                    finally:
                        self._block.conn = None
                if self._replicas is not None:  # read-your-writes (see .replicas)
                    self._replicas.wrote(self._block.orgs, conn)
        finally:
            self._counts.clear()  # counts read inside the block may have rolled back

    @contextmanager
    def org_writes(self, org_id: str) -> Iterator[None]:
        """The calls this thread makes inside the block write ``org_id``: each of
        their transactions (or savepoints) first takes the organization's write
        lock shared, with its context (:func:`enter_write`; taken again by every
        call, as a savepoint rolled back releases it, at no extra round trip).
        Refused with :class:`~kenning.stores.routed.OrganizationMoving` while a
        move holds it (see the module docs)."""
        outer: str | None = getattr(self._block, "writes", None)
        self._block.writes = org_id
        try:
            yield
        finally:
            self._block.writes = outer

    def _enter(self, conn: psycopg.Connection, context: tuple[str, str, str]) -> psycopg.Connection:
        """Set ``context`` (and take the write lock inside :meth:`org_writes`)."""
        writes: str | None = getattr(self._block, "writes", None)
        if writes is None:
            return set_context(conn, context)
        return enter_write(conn, context, writes)

    @contextmanager
    def _tx(
        self, context: tuple[str, str, str], *, track: bool = True
    ) -> Iterator[psycopg.Connection]:
        """One transaction with the row-level-security context set (``SET LOCAL``);
        a savepoint of the thread's :meth:`atomic` block when one is open. With read
        replicas, a ``track``-ed transaction pins its organization once committed
        (read-your-writes, see :mod:`.replicas`); reads pass ``track=False``.
        Inside :meth:`org_writes`, it holds the organization's write lock."""
        block: psycopg.Connection | None = getattr(self._block, "conn", None)
        orgs = context_orgs(context) if track and self._replicas is not None else ()
        with _translated():
            if block is not None:
                self._block.orgs.update(orgs)
                with block.transaction():
                    yield self._enter(block, context)
                return
            with self._pool.connection() as conn:
                with conn.transaction():
                    yield self._enter(conn, context)
                if orgs and self._replicas is not None:
                    self._replicas.wrote(orgs, conn)

    def footprint(self, org_id: str | None = None) -> Footprint:
        """Rows per kind (see :class:`~kenning.stores.base.Footprint`), counted inside
        each organization's own context (summed over all of them for ``None``)."""
        if org_id is None:
            return sum((self.footprint(org) for org in self.organizations()), Footprint())
        with self._org_write(org_id, track=False) as conn:
            return footprint(conn, org_id)

    def _read(self, scopes: ScopeFilter) -> Any:
        """A read transaction: on a replica inside a :func:`~.replicas.replica_read`
        method (outside ``atomic()``), else on the primary."""
        context = context_values(scopes)
        replicas = self._replicas
        if replicas is not None and replicas.mode and getattr(self._block, "conn", None) is None:
            return replicas.read(context, scopes.org_id, functools.partial(self._tx, track=False))
        return self._tx(context, track=False)

    def _org_write(self, org_id: str, *, track: bool = True) -> Any:
        """Writes by id: the engine has checked the right; the wall keeps them in the org
        (``track=False``: not a write the caller must read back, see :meth:`_tx`)."""
        return self._tx(org_context(org_id), track=track)

    @contextmanager
    def bulk_load(self, build_memory: str = "4GB") -> Iterator[None]:
        """Load many memories fast: drop the search indexes, build them once at the end.

        pgvector inserts into an HNSW graph one vector at a time, which costs
        milliseconds per row at scale; one ``CREATE INDEX`` after the load
        builds the same graph in memory (``build_memory``) with parallel
        workers, far faster (likewise the postings' B-tree). Meant for first
        loads and migrations: meanwhile other clients' searches run without
        these indexes (correct, slower).
        """
        with self._pool.connection() as conn:
            conn.autocommit = True
            try:
                for name, _ in BULK_INDEXES:
                    conn.execute(f"DROP INDEX IF EXISTS {name}")
            finally:
                conn.autocommit = False
        try:
            yield
        finally:
            with self._pool.connection() as conn:
                conn.autocommit = True
                try:
                    conn.execute(
                        "SELECT set_config('maintenance_work_mem', %s, false), "
                        "set_config('max_parallel_maintenance_workers', '2', false)",
                        (build_memory,),
                    )
                    for _, create in BULK_INDEXES:
                        conn.execute(create)
                    # statistics for the planner, and the visibility map for index-only scans
                    conn.execute("VACUUM ANALYZE memories, postings, history")
                finally:
                    conn.execute("RESET maintenance_work_mem")
                    conn.execute("RESET max_parallel_maintenance_workers")
                    conn.autocommit = False
