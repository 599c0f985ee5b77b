"""The routing table of organizations spread over several PostgreSQL databases.

It lives in the home database (``org_routes``, schema migration
``008_org_routes``): one row per organization that does not simply live in
the home database, with the URL of the database holding its memories (NULL:
the home database, while it moves out) and its state (``active``, or
``moving`` while ``kenning migrate --org`` copies it, with ``target_url``).
Every change bumps ``kenning_meta.org_routes_version`` in the same
transaction, so a reader polls one small row to learn whether to reload.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

import psycopg

from ...errors import StoreError
from ..registry import mask_password
from ..routed import Route

__all__ = ["PgRouteTable", "ROUTES_VERSION_KEY"]

log = logging.getLogger(__name__)

ROUTES_VERSION_KEY = "org_routes_version"
#: Session advisory-lock namespace of organization moves (one move per org at a time).
_MOVE_LOCK = 0x6B6D6F76


class PgRouteTable:
    """Reads and changes ``org_routes`` in the home database at ``url``.

    Reads share one autocommit connection (reopened after an error); each
    change is its own transaction on a fresh connection.
    """

    def __init__(self, url: str) -> None:
        self.url = url
        self._conn: psycopg.Connection[Any] | None = None
        self._lock = threading.Lock()

    def _connect(self) -> psycopg.Connection[Any]:
        try:
            return psycopg.connect(
                self.url, autocommit=True, connect_timeout=10, options="-c TimeZone=UTC"
            )
        except psycopg.Error as exc:
            msg = f"cannot reach the home database {mask_password(self.url)}: {exc}"
            raise StoreError(msg) from exc

    def _query(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        with self._lock:
            if self._conn is None or self._conn.closed:
                self._conn = self._connect()
            try:
                return self._conn.execute(sql, params).fetchall()
            except psycopg.Error as exc:
                self._conn.close()
                self._conn = None
                raise StoreError(f"cannot read the routing table: {exc}") from exc

    def version(self) -> int:
        """The routing table's version (0 before the first change)."""
        rows = self._query("SELECT value FROM kenning_meta WHERE key = %s", (ROUTES_VERSION_KEY,))
        return int(rows[0][0]) if rows else 0

    def routes(self) -> tuple[int, dict[str, Route]]:
        """``(version, org id -> route)``, read in one snapshot (none in a database
        whose schema predates the routing table)."""
        if self._query("SELECT to_regclass('org_routes') IS NULL")[0][0]:
            return 0, {}
        rows = self._query(
            "SELECT r.org_id, r.database_url, r.state, r.target_url, m.value "
            "FROM kenning_meta m LEFT JOIN org_routes r ON true WHERE m.key = %s",
            (ROUTES_VERSION_KEY,),
        )
        version = int(rows[0][4]) if rows else 0
        return version, {r[0]: Route(r[0], r[1], r[2], r[3]) for r in rows if r[0] is not None}

    def route(self, org_id: str) -> Route | None:
        """The row of ``org_id``, or None (it lives in the home database)."""
        return self.routes()[1].get(org_id)

    def put(self, route: Route | None, org_id: str) -> None:
        """Set ``org_id``'s row to ``route`` (None: delete it, the org lives at home)
        and bump the version, in one transaction."""
        with self._connect() as conn, conn.transaction():
            if route is None:
                conn.execute("DELETE FROM org_routes WHERE org_id = %s", (org_id,))
            else:
                conn.execute(
                    "INSERT INTO org_routes (org_id, database_url, state, target_url, updated_at) "
                    "VALUES (%s, %s, %s, %s, now()) ON CONFLICT (org_id) DO UPDATE SET "
                    "database_url = EXCLUDED.database_url, state = EXCLUDED.state, "
                    "target_url = EXCLUDED.target_url, updated_at = now()",
                    (org_id, route.database_url, route.state, route.target_url),
                )
            conn.execute(
                "UPDATE kenning_meta SET value = (value::bigint + 1)::text WHERE key = %s",
                (ROUTES_VERSION_KEY,),
            )

    def lock_move(self, org_id: str) -> psycopg.Connection[Any] | None:
        """A connection holding the move lock of ``org_id`` (close it to release), or
        None when another move of that organization holds it."""
        conn = self._connect()
        row = conn.execute(
            "SELECT pg_try_advisory_lock(%s, hashtext(%s))", (_MOVE_LOCK, org_id)
        ).fetchone()
        if row is None or not row[0]:
            conn.close()
            return None
        return conn

    def close(self) -> None:
        """Close the shared read connection."""
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None
