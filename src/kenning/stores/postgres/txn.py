"""The PostgreSQL store's transactions (a mixin of
:class:`~kenning.stores.postgres.store.PostgresStore`): one per call, with the
row-level security context set first, or savepoints of the calling thread's
``atomic()`` block; and bulk loads that build the search indexes once."""

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
from .bm25 import TTLCache
from .footprint import footprint
from .replicas import ReplicaSet
from .schema import BULK_INDEXES
from .sql import LIST_SEP, PAIR_SEP, context_values

__all__ = ["PostgresTransactions", "org_context", "set_context"]

#: Every scope kind: an organization-wide context.
_ALL_KINDS = ",".join(sorted(k.value for k in ScopeKind))


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
    conn.execute(
        "SELECT set_config('kenning.org_id', %s, true), "
        "set_config('kenning.kinds', %s, true), set_config('kenning.scopes', %s, true), "
        "set_config('kenning.key_id', '', true)",
        context,
    )
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
    def _tx(
        self, context: tuple[str, str, str], *, track: bool = True
    ) -> Iterator[psycopg.Connection]:
        """One transaction with the row-level-security context set (``SET LOCAL``);
        a savepoint of the thread's :meth:`atomic` block when one is open. With read
        replicas, a ``track``-ed transaction pins its organization once committed
        (read-your-writes, see :mod:`.replicas`); reads pass ``track=False``."""
        block: psycopg.Connection | None = getattr(self._block, "conn", None)
        orgs = context_orgs(context) if track and self._replicas is not None else ()
        with _translated():
            if block is not None:
                self._block.orgs.update(orgs)
                with block.transaction():
                    yield set_context(block, context)
                return
            with self._pool.connection() as conn:
                with conn.transaction():
                    yield set_context(conn, context)
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
