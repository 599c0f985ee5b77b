"""Read replicas of the PostgreSQL store (``KENNING_DATABASE_READ_URLS``).

The store's read methods marked :func:`replica_read` (recall's searches, list,
get, history, stats, the graph reads) run on a hot standby when one fits; every
write, and every read inside an ``atomic()`` block, runs on the primary.

* **Rotation.** Round-robin over the healthy replicas, one connection pool
  each; a replica transaction sets the same row-level security context as the
  primary's (:func:`~kenning.stores.postgres.txn.set_context`).
* **Read-your-writes.** After a write of an organization commits in this
  process, the primary's WAL insert position is remembered for that
  organization (a *pin*). A read of that organization goes to a replica only if
  the replica has replayed past the pin (``pg_last_wal_replay_lsn()``, read in
  the same statement that sets the context: no extra round trip); otherwise it
  reads the primary. A recall's access bookkeeping (strength, access log) does
  not pin: it is not something the caller wrote.
* **Health.** A background thread checks every replica each
  ``replica_check_s``: it must accept connections, be in recovery, be no more
  than ``replica_max_lag_s`` behind (time since the primary first held WAL the
  replica has not replayed, from the primary's flush positions sampled at each
  check) and have replayed every pin dropped so far. A replica failing a
  check, or a connection failing during a read, leaves the rotation (logged
  once) and the read is retried on the primary; it comes back when a check
  passes again.
"""

from __future__ import annotations

import functools
import itertools
import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from typing import Any, Concatenate, ParamSpec, Protocol, TypeVar

import psycopg
from pgvector.psycopg import register_vector
from psycopg_pool import ConnectionPool, PoolTimeout

from ...errors import StoreError

__all__ = ["ReplicaSet", "ReplicaStatus", "replica_read"]

log = logging.getLogger("kenning.store.replicas")

#: The row-level security context (as ``set_context``) and the replay position, at once.
_ENTER_SQL = (
    "SELECT set_config('kenning.org_id', %s, true), "
    "set_config('kenning.kinds', %s, true), set_config('kenning.scopes', %s, true), "
    "set_config('kenning.key_id', '', true), pg_last_wal_replay_lsn() - '0/0'::pg_lsn"
)
#: Which cluster (``pg_basebackup`` keeps the system identifier) and database.
_ORIGIN_SQL = "(SELECT system_identifier FROM pg_control_system()), current_database()"
#: Seconds a read waits for a free replica connection before it reads the primary.
_POOL_WAIT_S = 2.0
#: Seconds a health check waits for a connection.
_CONNECT_S = 2
#: A pin whose position could not be read: resolved at the next check.
_UNKNOWN = 2**64
#: WAL page header sizes (64-bit builds): at the start of a segment, of any other page.
_LONG_HEADER, _SHORT_HEADER = 40, 24


class ReplicaFailed(StoreError):
    """A read on a replica failed; the :func:`replica_read` wrapper reruns it on the primary."""


@dataclass(frozen=True, slots=True)
class ReplicaStatus:
    """One replica as the last check and the reads since saw it."""

    url: str
    healthy: bool
    lag_s: float
    reads: int
    reason: str


@dataclass(slots=True)
class _Replica:
    url: str
    name: str
    pool: ConnectionPool | None = None
    healthy: bool | None = None  # None: not checked yet
    replay: int = -1
    lag_s: float = 0.0
    reason: str = "not checked yet"
    reads: int = 0
    monitor: psycopg.Connection | None = None


def safe_url(url: str) -> str:
    """``url`` without its user and password."""
    head, _, tail = url.rpartition("@")
    return f"postgresql://…@{tail}" if head else url


def _lsn(value: Any) -> int:
    return -1 if value is None else int(value)


def _record_end(lsn: int, block: int, segment: int) -> int:
    """``pg_current_wal_insert_lsn()`` as the end of the last record: at a page
    boundary it points past the next page's header, where no replica's replay
    position ever stops (until more WAL comes)."""
    if segment and lsn % segment == _LONG_HEADER:
        return lsn - _LONG_HEADER
    if block and lsn % block == _SHORT_HEADER:
        return lsn - _SHORT_HEADER
    return lsn


def _drops(exc: BaseException) -> bool:
    """Whether a failed read says the replica itself is unusable (not just this query:
    a recovery conflict or a cancel, 40xxx/57014, or a busy pool, keeps it)."""
    if isinstance(exc, PoolTimeout):
        return False
    state = getattr(exc, "sqlstate", None) or ""
    if state.startswith("40") or state == "57014":
        return False
    return isinstance(exc, psycopg.OperationalError)


class ReplicaSet:
    """The replicas of one store: rotation, pins, health checks (see the module)."""

    def __init__(
        self,
        urls: Sequence[str],
        primary_url: str,
        *,
        max_lag_s: float,
        check_s: float,
        pool_size: int,
    ) -> None:
        """Check every replica once, then keep checking every ``check_s`` seconds."""
        self._primary_url = primary_url
        self._primary: psycopg.Connection | None = None
        self._replicas = [_Replica(u, safe_url(u)) for u in urls]
        self.max_lag_s = max_lag_s
        self.check_s = check_s
        self._pool_size = pool_size
        self._ticks: deque[tuple[float, int]] = deque()
        self._pins: dict[str, int] = {}
        self._floor = -1
        self._pin_lock = threading.Lock()
        self._check_lock = threading.Lock()
        self._local = threading.local()
        self._turn = itertools.count()
        self._stop = threading.Event()
        self._wal = (8192, 16 << 20)  # WAL block and segment size, read at the first check
        self._origin: tuple[Any, str] | None = None  # the primary's (system id, database)
        self.check()
        self._thread = threading.Thread(target=self._watch, name="kenning-replicas", daemon=True)
        self._thread.start()

    # -- routing ---------------------------------------------------------------------

    @property
    def mode(self) -> bool | None:
        """This thread's routing: None outside a replica read, True on replicas, False
        when the read is being rerun on the primary."""
        value: bool | None = getattr(self._local, "mode", None)
        return value

    @contextmanager
    def routed(self, on: bool) -> Iterator[None]:
        """Reads of this thread go to replicas (``on``) or the primary, inside the block."""
        self._local.mode = on
        try:
            yield
        finally:
            self._local.mode = None

    def _pick(self) -> tuple[_Replica, ConnectionPool] | None:
        live = [(r, r.pool) for r in self._replicas if r.healthy and r.pool is not None]
        if not live:
            return None
        replica, pool = live[next(self._turn) % len(live)]
        assert pool is not None
        return replica, pool

    @contextmanager
    def read(
        self,
        context: tuple[str, str, str],
        org_id: str,
        primary: Callable[[tuple[str, str, str]], AbstractContextManager[psycopg.Connection]],
    ) -> Iterator[psycopg.Connection]:
        """One read transaction with ``context`` set: on a replica that has replayed
        ``org_id``'s pin, else on the ``primary`` transaction. A replica failing after
        the transaction began raises :class:`ReplicaFailed` (the caller reruns)."""
        picked = self._pick() if self.mode else None
        if picked is not None:
            replica, pool = picked
            entered = False
            try:
                with pool.connection(timeout=_POOL_WAIT_S) as conn, conn.transaction():
                    row = conn.execute(_ENTER_SQL, context).fetchone()
                    replay = _lsn(row[4] if row else None)
                    if replay >= self._pins.get(org_id, -1) and replay >= self._floor:
                        entered = True
                        replica.reads += 1
                        yield conn
                        return
            except psycopg.Error as exc:
                self._failed(replica, exc)
                if entered:
                    raise ReplicaFailed(f"read replica {replica.name} failed: {exc}") from exc
        with primary(context) as conn:
            yield conn

    def _failed(self, replica: _Replica, exc: BaseException) -> None:
        if _drops(exc):
            self._drop(replica, f"a read failed: {_first_line(exc)}")

    # -- read-your-writes ------------------------------------------------------------

    def wrote(self, org_ids: Iterable[str], conn: psycopg.Connection) -> None:
        """Pin ``org_ids`` at the primary's WAL insert position, read on ``conn`` right
        after their write committed (an idle connection of the primary)."""
        orgs = [o for o in org_ids if o]
        if not orgs:
            return
        lsn = _UNKNOWN
        autocommit = conn.autocommit
        try:
            conn.autocommit = True
            row = conn.execute("SELECT pg_current_wal_insert_lsn() - '0/0'::pg_lsn").fetchone()
            lsn = _record_end(_lsn(row[0] if row else None), *self._wal)
        except psycopg.Error as exc:  # the write is committed: pin, resolve later
            log.warning("cannot read the primary's WAL position after a write: %s", exc)
        finally:
            try:
                conn.autocommit = autocommit
            except psycopg.Error:
                pass
        with self._pin_lock:
            for org in orgs:
                if self._pins.get(org, -1) < lsn:
                    self._pins[org] = lsn

    # -- health ------------------------------------------------------------------------

    def check(self, now: float | None = None) -> None:
        """Check every replica now (``now``: a :func:`time.monotonic` reading)."""
        with self._check_lock:
            at = time.monotonic() if now is None else now
            flushed = self._primary_position()
            if flushed is not None:
                self._ticks.append((at, flushed[0]))
                keep = self.max_lag_s + 2 * self.check_s
                while len(self._ticks) > 1 and self._ticks[0][0] < at - keep:
                    self._ticks.popleft()
            for replica in self._replicas:
                self._check_one(replica, at)
            self._prune(None if flushed is None else flushed[1])

    def _primary_position(self) -> tuple[int, int] | None:
        """(flushed, inserted) WAL positions of the primary, or None when unreachable."""
        try:
            if self._primary is None or self._primary.closed:
                self._primary = psycopg.connect(
                    self._primary_url, autocommit=True, connect_timeout=_CONNECT_S
                )
                sizes = self._primary.execute(
                    "SELECT current_setting('wal_block_size')::int, "
                    "(SELECT setting::bigint FROM pg_settings WHERE name = 'wal_segment_size'), "
                    f"{_ORIGIN_SQL}"
                ).fetchone()
                if sizes is not None:
                    self._wal = (int(sizes[0]), int(sizes[1]))
                    self._origin = (sizes[2], str(sizes[3]))
            row = self._primary.execute(
                "SELECT pg_current_wal_flush_lsn() - '0/0'::pg_lsn, "
                "pg_current_wal_insert_lsn() - '0/0'::pg_lsn"
            ).fetchone()
        except psycopg.Error:
            self._close_primary()
            return None
        return (_lsn(row[0]), _record_end(_lsn(row[1]), *self._wal)) if row else None

    def _lag(self, replay: int, at: float) -> float:
        """Seconds since the primary first held WAL past ``replay`` (0 when caught up)."""
        if not self._ticks or replay >= self._ticks[-1][1]:
            return 0.0
        for when, flushed in self._ticks:
            if flushed > replay:
                return max(0.0, at - when)
        return 0.0

    def _check_one(self, replica: _Replica, at: float) -> None:
        try:
            if replica.monitor is None or replica.monitor.closed:
                replica.monitor = psycopg.connect(
                    replica.url, autocommit=True, connect_timeout=_CONNECT_S
                )
            row = replica.monitor.execute(
                "SELECT pg_is_in_recovery(), pg_last_wal_replay_lsn() - '0/0'::pg_lsn, "
                f"{_ORIGIN_SQL}"
            ).fetchone()
        except psycopg.Error as exc:
            if replica.monitor is not None:
                replica.monitor.close()
                replica.monitor = None
            self._drop(replica, f"unreachable: {_first_line(exc)}")
            return
        if row is None or not row[0]:
            self._drop(replica, "not a standby (pg_is_in_recovery() is false)")
            return
        if self._origin is not None and (row[2], str(row[3])) != self._origin:
            self._drop(
                replica,
                "not this database on a standby of this primary (system identifier "
                f"{row[2]} database {row[3]!r}, the primary's {self._origin[0]} "
                f"{self._origin[1]!r})",
            )
            return
        replica.replay = _lsn(row[1])
        replica.lag_s = self._lag(replica.replay, at)
        if replica.lag_s > self.max_lag_s:
            self._drop(
                replica,
                f"lagging {replica.lag_s:.1f} s behind the primary "
                f"(bound {self.max_lag_s:g} s, KENNING_STORE_REPLICA_MAX_LAG_S)",
            )
        elif replica.replay < self._floor:
            self._drop(replica, "has not replayed this process's earlier writes yet")
        else:
            self._admit(replica)

    def _admit(self, replica: _Replica) -> None:
        if replica.healthy and replica.pool is not None:
            replica.reason = "healthy"
            return
        pool = ConnectionPool(
            replica.url,
            min_size=1,
            max_size=self._pool_size,
            kwargs={"options": "-c TimeZone=UTC"},
            configure=register_vector,
            open=False,
            name="kenning-replica",
        )
        try:
            pool.open(wait=True, timeout=_CONNECT_S * 2)
        except Exception as exc:  # PoolTimeout and friends: not back yet
            _close_later(pool)
            self._drop(replica, f"no connection pool: {_first_line(exc)}")
            return
        replica.pool = pool
        replica.healthy = True
        replica.reason = "healthy"
        log.info("read replica %s in rotation (lag %.1f s)", replica.name, replica.lag_s)

    def _drop(self, replica: _Replica, reason: str) -> None:
        was = replica.healthy
        pool, replica.pool = replica.pool, None
        replica.healthy = False
        replica.reason = reason
        if pool is not None:
            _close_later(pool)
        if was is not False:  # a change of state (or the first check): say it once
            log.warning(
                "read replica %s out of rotation, its reads go to the primary: %s",
                replica.name,
                reason,
            )

    def _prune(self, inserted: int | None) -> None:
        """Forget the pins every healthy replica has replayed (raising the floor a
        returning replica must reach); give unknown pins the primary's position."""
        replays = [r.replay for r in self._replicas if r.healthy]
        with self._pin_lock:
            if inserted is not None:
                for org, lsn in self._pins.items():
                    if lsn == _UNKNOWN:
                        self._pins[org] = inserted
            if not replays:
                return
            low = min(replays)
            done = [org for org, lsn in self._pins.items() if lsn <= low]
            for org in done:
                self._floor = max(self._floor, self._pins.pop(org))

    def _watch(self) -> None:
        while not self._stop.wait(self.check_s):
            try:
                self.check()
            except Exception:  # never let the checker die
                log.exception("read replica check failed")

    # -- reporting and shutdown --------------------------------------------------------

    def status(self) -> list[ReplicaStatus]:
        """Each replica: in rotation or not (and why), its lag, the reads it served."""
        return [
            ReplicaStatus(r.name, bool(r.healthy), r.lag_s, r.reads, r.reason)
            for r in self._replicas
        ]

    def pinned(self, org_id: str) -> bool:
        """Whether ``org_id`` has a write of this process no healthy replica has replayed
        for sure (its reads need a replica past that write)."""
        return org_id in self._pins

    def close(self) -> None:
        """Stop checking; close every pool and connection."""
        self._stop.set()
        self._thread.join(timeout=10)
        with self._check_lock:
            for replica in self._replicas:
                if replica.pool is not None:
                    replica.pool.close(timeout=5)
                    replica.pool = None
                replica.healthy = False
                if replica.monitor is not None:
                    replica.monitor.close()
                    replica.monitor = None
            self._close_primary()

    def _close_primary(self) -> None:
        if self._primary is not None:
            self._primary.close()
            self._primary = None


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


def _close_later(pool: ConnectionPool) -> None:
    """Close ``pool`` off the caller's thread (its workers may wait on a dead host)."""
    threading.Thread(
        target=pool.close, kwargs={"timeout": 5}, name="kenning-replica-close", daemon=True
    ).start()


class _Routed(Protocol):
    _replicas: ReplicaSet | None


S = TypeVar("S", bound=_Routed)
P = ParamSpec("P")
R = TypeVar("R")


def replica_read(method: Callable[Concatenate[S, P], R]) -> Callable[Concatenate[S, P], R]:
    """Mark a store read that may run on a replica: its transactions go to the
    rotation; if a replica fails mid-read, the whole method reruns on the primary."""

    @functools.wraps(method)
    def routed(self: S, /, *args: P.args, **kwargs: P.kwargs) -> R:
        replicas = self._replicas
        if replicas is None or replicas.mode is not None:  # none, or inside a routed read
            return method(self, *args, **kwargs)
        try:
            with replicas.routed(True):
                return method(self, *args, **kwargs)
        except ReplicaFailed as exc:
            log.info("rerunning %s on the primary: %s", method.__name__, exc)
        with replicas.routed(False):
            return method(self, *args, **kwargs)

    return routed
