"""Move one organization to another PostgreSQL database while the others keep working.

:func:`move_organization` is what ``kenning migrate --org ID --to URL`` runs:

1. **Check** (nothing changes yet): the home database routes organizations;
   the organization exists; the target is a reachable PostgreSQL database
   other than the one the organization lives in now, whose vectors (if any)
   come from the same embedding model, and that holds no row of the
   organization. A second move of the same organization is refused while
   one runs (a session advisory lock in the home database). Both schemas are
   brought up to date (the target's created when new).
2. **Mark it moving** in the routing table and wait ``settle_s`` (longer than
   the routers' refresh interval): every kenning process now refuses the
   organization's writes with :class:`~kenning.stores.routed.OrganizationMoving`
   (retryable) and keeps serving its reads from the old database.
   Then **hold its writes**: take the organization's write lock exclusively
   in the old database (a session advisory lock, see
   :mod:`~kenning.stores.postgres.txn`), waiting for the writes that hold it
   shared (begun before the mark) to commit or roll back, at most
   ``write_wait_s``; past that the move is undone. From then on until the
   old copy is deleted (or the move undone), any write of the organization
   there is refused at once, also one made with a route cached from before
   the mark or the switch.
3. **Copy** its memories, history (deleted memories' trails too), sectors,
   policies, graph and access log in one transaction of the target, from
   one snapshot of the source taken after the lock.
4. **Verify**: per table, the row count and an md5 over every copied row's
   canonical text (ids, content hashes, vectors, history...) must be equal on
   both sides (:func:`~kenning.stores.postgres.orgcopy.table_digests`).
5. **Switch** the route to the target (state ``active``), wait ``settle_s``
   again (readers leave the old database), then **delete** the organization's
   rows from the old database and release the write lock.

A failure before the switch (writes that did not end within
``write_wait_s``, target unreachable, a crash, a failed verification) leaves
the old copy authoritative: the target's transaction is rolled back (or its
committed rows deleted), the write lock released and the route restored. A move
whose process died leaves the route ``moving``; the next move of that
organization (to any target, or back to where it is) cleans up first. The
directory, API keys and audit log stay in the home database.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from typing import Any

import psycopg
from psycopg import errors as pgerrors

from ...errors import ConfigError, Conflict, InvalidInput, NotFound, StoreError
from ...models import check_id
from ..moves import MoveReport
from ..registry import backend_for, mask_password
from ..routed import REFRESH_S, Route
from ..rows import recorded_model
from .orgcopy import copy_org, delete_org, holds_org, table_digests
from .routes import PgRouteTable
from .txn import ORG_WRITES_LOCK

__all__ = ["HOME", "WRITE_WAIT_S", "move_organization"]

log = logging.getLogger(__name__)

#: The ``--to`` value that moves an organization back into the home database.
HOME = "home"
#: How long (seconds) a move waits for the organization's writes in flight to end.
WRITE_WAIT_S = 30.0


def _connect(url: str, what: str) -> psycopg.Connection[Any]:
    try:
        return psycopg.connect(url, connect_timeout=10, options="-c TimeZone=UTC")
    except psycopg.Error as exc:
        raise StoreError(f"cannot reach the {what} database {mask_password(url)}: {exc}") from exc


def _identity(url: str, what: str) -> str:
    with _connect(url, what) as conn:
        row = conn.execute(
            "SELECT current_database(), pg_postmaster_start_time()::text, "
            "(SELECT oid FROM pg_database WHERE datname = current_database())::text"
        ).fetchone()
    return "|".join(str(x) for x in row or ())


def _model(url: str) -> str | None:
    with _connect(url, "target") as conn:
        if conn.execute("SELECT to_regclass('kenning_meta')").fetchone() == (None,):
            return None
        row = conn.execute("SELECT value FROM kenning_meta WHERE key = 'embedding'").fetchone()
    return None if row is None else str(row[0])


def _target_url(to: str, home_url: str) -> str:
    """The normalised target URL (``home``: the home database)."""
    if to.strip().lower() == HOME:
        return home_url
    if "://" not in to:
        raise InvalidInput(f"to: give a postgresql:// URL or {HOME!r}; got {to!r}", field="to")
    backend = backend_for(to.strip(), "to")
    if backend is not backend_for(home_url, "database_url"):
        raise InvalidInput(
            f"to: organizations move between PostgreSQL databases; got {mask_password(to)}",
            field="to",
        )
    return backend.normalise(to.strip(), "to")


@contextmanager
def _holding_writes(source: str, org_id: str, wait_s: float) -> Iterator[None]:
    """Hold ``org_id``'s write lock exclusively in the ``source`` database for the
    block (a session advisory lock on a connection of its own), once the writes
    holding it shared have ended; still running after ``wait_s``: StoreError.
    While this waits or holds, the organization's writes there are refused."""
    conn = _connect(source, "source")
    try:
        conn.autocommit = True
        conn.execute(
            "SELECT set_config('lock_timeout', %s, false)", (f"{max(1, round(wait_s * 1000))}ms",)
        )
        try:
            conn.execute("SELECT pg_advisory_lock(%s, hashtext(%s))", (ORG_WRITES_LOCK, org_id))
        except pgerrors.LockNotAvailable as exc:
            raise StoreError(
                f"writes of organization {org_id!r} did not finish within {wait_s:g} s "
                f"(a client transaction left open?); it stays in {mask_password(source)}, "
                "the move was undone: run it again"
            ) from exc
        yield
    finally:
        conn.close()  # ends the session: releases the lock


@contextmanager
def _moving(table: PgRouteTable, org_id: str) -> Iterator[Any]:
    lock = table.lock_move(org_id)
    if lock is None:
        raise Conflict(f"organization {org_id!r} is already being moved by another process")
    try:
        yield lock
    finally:
        lock.close()


def _recover(table: PgRouteTable, route: Route, home_url: str) -> Route | None:
    """Undo a move whose process died (route left ``moving``): the old copy stays
    authoritative, the target's rows go. Returns the restored route."""
    current = route.database_url or home_url
    if route.target_url and _identity(route.target_url, "target") != _identity(current, "source"):
        with _connect(route.target_url, "target") as conn, conn.transaction():
            deleted = delete_org(conn, route.org_id)
        log.warning("removed %d rows of an interrupted move of %s", deleted, route.org_id)
    restored = None if route.database_url is None else Route(route.org_id, route.database_url)
    table.put(restored, route.org_id)
    return restored


def _known(home_url: str, org_id: str, current: str) -> bool:
    """The organization has directory rows at home or rows where it lives."""
    with _connect(home_url, "home") as conn:
        found = conn.execute(
            "SELECT 1 FROM directory_orgs WHERE org_id = %s "
            "UNION ALL SELECT 1 FROM organizations WHERE org_id = %s",
            (org_id, org_id),
        ).fetchone()
    if found is not None:
        return True
    with _connect(current, "source") as conn:
        return bool(holds_org(conn, org_id))


def _migrated(url: str, model: str) -> None:
    """Bring the kenning schema at ``url`` up to date (creating it when new)."""
    from ...config import StoreOptions
    from .store import PostgresStore

    model_id, dim = recorded_model(model) or ("", 0)
    PostgresStore(url, model_id=model_id, dim=dim, options=StoreOptions()).close()


def _home_model(home_url: str) -> str:
    """The home database's recorded embedding model; its schema brought up to date."""
    model = _model(home_url)
    if model is None:
        raise ConfigError(f"{mask_password(home_url)} holds no kenning store")
    _migrated(home_url, model)
    return model


def _prepare_target(target: str, home_model: str) -> None:
    """The target holds an up-to-date kenning schema for the home's embedding model."""
    target_model = _model(target)
    if target_model is not None and target_model != home_model:
        raise ConfigError(
            f"the target's vectors come from {target_model}, the home database's from "
            f"{home_model}; move organizations only between databases of one model"
        )
    _migrated(target, home_model)


def move_organization(
    home_url: str,
    org_id: str,
    to: str,
    *,
    settle_s: float = 1.5 * REFRESH_S,
    write_wait_s: float = WRITE_WAIT_S,
    on_table: Callable[[str, int], None] | None = None,
) -> MoveReport:
    """Move ``org_id`` from the database it lives in to ``to`` (a PostgreSQL URL, or
    ``"home"``), verified; see the module docs. ``on_table(name, rows)`` is called
    as each table is copied."""
    check_id(org_id, "org")
    home_url = backend_for(home_url, "database_url").normalise(home_url, "database_url")
    target = _target_url(to, home_url)
    home_model = _home_model(home_url)
    table = PgRouteTable(home_url)
    try:
        with _moving(table, org_id):
            route = table.route(org_id)
            if route is not None and route.moving:
                route = _recover(table, route, home_url)
            source = (route.database_url if route is not None else None) or home_url
            if not _known(home_url, org_id, source):
                raise NotFound(f"no organization {org_id!r}")
            if _identity(target, "target") == _identity(source, "source"):
                raise InvalidInput(
                    f"organization {org_id!r} already lives in {mask_password(target)}",
                    field="to",
                )
            _prepare_target(target, home_model)
            with _connect(target, "target") as conn:
                held = holds_org(conn, org_id)
            if held:
                rows = ", ".join(f"{n} {t}" for t, n in sorted(held.items()))
                raise Conflict(
                    f"the target already holds rows of organization {org_id!r} ({rows}); "
                    "it must hold none"
                )
            return _move(
                table, route, org_id, source, target, home_url, settle_s, write_wait_s, on_table
            )
    finally:
        table.close()


def _move(
    table: PgRouteTable,
    route: Route | None,
    org_id: str,
    source: str,
    target: str,
    home_url: str,
    settle_s: float,
    write_wait_s: float,
    on_table: Callable[[str, int], None] | None,
) -> MoveReport:
    """Steps 2-5 of the module docs (the checks passed)."""
    current = None if source == home_url else source
    table.put(Route(org_id, current, "moving", target), org_id)
    paused = time.monotonic()
    committed = False
    with ExitStack() as held:  # the organization's write lock in the source, once taken
        try:
            time.sleep(settle_s)
            held.enter_context(_holding_writes(source, org_id, write_wait_s))
            with _connect(source, "source") as src, _connect(target, "target") as dst:
                src.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ  # one snapshot
                src.read_only = True
                started = time.monotonic()
                with src.transaction(), dst.transaction():
                    copy_org(src, dst, org_id, on_table)
                committed = True
                copied = time.monotonic()
                with src.transaction():  # re-read: a late write would show here
                    before = table_digests(src, org_id)
                with dst.transaction():
                    after = table_digests(dst, org_id)
            _verify(org_id, before, after)
            copy_s, verify_s = copied - started, time.monotonic() - copied
        except psycopg.Error as exc:
            _undo(table, route, org_id, target, committed)
            raise StoreError(
                f"moving organization {org_id!r} failed ({exc}); it stays in "
                f"{mask_password(source)}, the move was undone"
            ) from exc
        except BaseException:
            _undo(table, route, org_id, target, committed)
            raise
        table.put(None if target == home_url else Route(org_id, target), org_id)
        paused_s = time.monotonic() - paused
        time.sleep(settle_s)
        with _connect(source, "source") as src, src.transaction():
            deleted = delete_org(src, org_id)
    return MoveReport(
        org_id,
        mask_password(source),
        mask_password(target),
        after,
        deleted,
        paused_s,
        copy_s,
        verify_s,
    )


def _verify(
    org_id: str, source: dict[str, tuple[int, str]], target: dict[str, tuple[int, str]]
) -> None:
    """Raise StoreError naming the first table whose count or checksum differs."""
    for name, (rows, digest) in source.items():
        got_rows, got_digest = target.get(name, (0, ""))
        if rows != got_rows:
            raise StoreError(
                f"verification failed for organization {org_id!r}: {name} has {rows} rows "
                f"in the source, {got_rows} in the target; the move was undone"
            )
        if digest != got_digest:
            raise StoreError(
                f"verification failed for organization {org_id!r}: {name} differs "
                f"(md5 {digest} in the source, {got_digest} in the target); the move was undone"
            )


def _undo(
    table: PgRouteTable, route: Route | None, org_id: str, target: str, committed: bool
) -> None:
    """Before the switch: drop the target's committed copy (if any), restore the route."""
    if committed:
        try:
            with _connect(target, "target") as dst, dst.transaction():
                delete_org(dst, org_id)
        except Exception:  # the route still says moving: the next move cleans up
            log.exception("could not remove the partial copy of %s", org_id)
            raise
    table.put(route, org_id)
