"""The PostgreSQL store's entry in the store registry (``postgresql://USER@HOST/DB``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..._extras import require_extra
from ...errors import InvalidInput, StoreError
from ..registry import DatabaseInfo, StoreBackend
from ..rows import recorded_model

if TYPE_CHECKING:
    from ...config import Settings
    from ..base import Store
    from ..moves import MoveReport
    from ..routed import RouteTable

__all__ = ["PostgresBackend"]


def _require() -> None:
    """:class:`~kenning._extras.MissingExtra` unless psycopg, psycopg-pool and pgvector are in."""
    require_extra("postgres", "a postgresql:// store")


class PostgresBackend(StoreBackend):
    """Any libpq URL (``postgres://`` is taken as ``postgresql://``)."""

    schemes = ("postgresql", "postgres")
    example = "postgresql://USER@HOST/DB"
    serves_processes = True

    def normalise(self, url: str, field: str) -> str:
        """``postgresql://...``, checked by libpq's own parser (a port must be a number)."""
        _require()
        import psycopg.conninfo

        text = super().normalise(url, field)
        try:
            port = str(psycopg.conninfo.conninfo_to_dict(text).get("port") or "0")
        except psycopg.Error as exc:
            raise InvalidInput(
                f"{field}: not a valid PostgreSQL URL ({exc})", field=field
            ) from None
        if not all(p.isdigit() for p in port.split(",")):
            raise InvalidInput(
                f"{field}: not a valid PostgreSQL URL (port {port!r} is not a number)", field=field
            )
        return text

    def open(self, url: str, settings: Settings, model_id: str, dim: int) -> Store:
        """A :class:`~kenning.stores.postgres.store.PostgresStore` (migrates the schema)."""
        _require()
        from .store import PostgresStore

        # the read replicas stream from the configured database_url, not another one
        primary = settings.database_url and self.normalise(settings.database_url, "database_url")
        reads = settings.database_read_urls if primary == url else ()
        read_urls = [self.normalise(u, "database_read_urls") for u in reads]
        return PostgresStore(
            url, model_id=model_id, dim=dim, options=settings.store, read_urls=read_urls
        )

    def route_table(self, url: str) -> RouteTable:
        """The ``org_routes`` table of this (home) database."""
        from .routes import PgRouteTable

        return PgRouteTable(url)

    def move_organization(
        self, home_url: str, org_id: str, to: str, *, write_wait_s: float | None = None
    ) -> MoveReport:
        """Copy, verify, switch the route, delete the old copy (:mod:`.orgmove`)."""
        from .orgmove import WRITE_WAIT_S, move_organization

        wait = WRITE_WAIT_S if write_wait_s is None else write_wait_s
        return move_organization(home_url, org_id, to, write_wait_s=wait)

    def inspect(self, url: str, field: str) -> DatabaseInfo:
        """Identity: database name, server start time and database oid."""
        _require()
        import psycopg

        try:
            with psycopg.connect(url, autocommit=True, connect_timeout=10) as conn:
                ident = conn.execute(
                    "SELECT current_database(), pg_postmaster_start_time()::text, "
                    "(SELECT oid FROM pg_database WHERE datname = current_database())::text, "
                    "to_regclass('kenning_meta') IS NOT NULL"
                ).fetchone()
                assert ident is not None
                row = None
                if ident[3]:
                    row = conn.execute(
                        "SELECT value FROM kenning_meta WHERE key = 'embedding'"
                    ).fetchone()
        except psycopg.Error as exc:
            msg = f"cannot read PostgreSQL database {self.display(url)}: {exc}"
            raise StoreError(msg) from exc
        identity = "postgresql:" + "|".join(str(x) for x in ident[:3])
        return DatabaseInfo(url, identity, recorded_model(row[0] if row else None))
