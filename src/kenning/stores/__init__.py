"""Storage backends behind one protocol; :func:`open_store` picks one from settings.

Database URLs are ``sqlite:///PATH`` (``sqlite:////abs/path`` for an absolute
path) or ``postgresql://USER@HOST:PORT/DB``; :func:`database_url` also takes a
plain file path. :func:`inspect_database` reads what a database records about
itself (which embedding model its vectors come from) without opening a store,
so tools that move data (``kenning migrate``) never load the model.
"""

from __future__ import annotations

import json
import os
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote, urlsplit, urlunsplit

from ..config import Settings
from ..errors import ConfigError, InvalidInput, StoreError
from .base import Replacement, Store

__all__ = [
    "Store",
    "Replacement",
    "DatabaseInfo",
    "open_store",
    "database_url",
    "inspect_database",
    "display_url",
    "location",
]

_SQLITE = "sqlite:///"
_PG = "postgresql://"


def open_store(settings: Settings, model_id: str, dim: int) -> Store:
    """Open the store ``settings.database_url`` names (the embedded SQLite file by default)."""
    url = settings.database_url or f"{_SQLITE}{settings.db_path()}"
    if url.startswith(_SQLITE):
        from .sqlite.store import SQLiteStore

        return SQLiteStore(
            settings.db_path(),
            model_id=model_id,
            dim=dim,
            exact_search_max=settings.exact_search_max,
            ann_min_rows=settings.ann_min_rows,
            ann_connectivity=settings.ann_connectivity,
            ann_expansion=settings.ann_expansion,
            keyword_max_df_ratio=settings.keyword_max_df_ratio,
            keyword_in_process=settings.keyword_in_process,
        )
    if url.startswith(_PG):
        from .postgres.store import PostgresStore

        return PostgresStore(
            url,
            model_id=model_id,
            dim=dim,
            pool_size=settings.pg_pool_size,
            exact_search_max=settings.pg_exact_search_max,
            ann_expansion=settings.ann_expansion,
            keyword_max_df_ratio=settings.keyword_max_df_ratio,
            keyword_postings_budget=settings.keyword_postings_budget,
        )
    raise ConfigError(
        f"no store for {url.split(':', 1)[0]!r} URLs; use sqlite:///PATH or postgresql://…"
    )


def database_url(value: str, *, field: str = "database_url") -> str:
    """A store URL from ``value``: a ``sqlite:///`` or ``postgresql://`` URL, or a file path.

    ``postgres://`` is accepted as ``postgresql://``. Anything else with a
    ``://`` is :class:`~kenning.errors.InvalidInput` naming ``field``.
    """
    text = value.strip()
    if not text:
        raise InvalidInput(f"{field} is empty; give a file path or a database URL", field=field)
    if "://" not in text:
        return _SQLITE + str(Path(text).expanduser())
    if text.startswith("postgres://"):
        text = _PG + text.removeprefix("postgres://")
    if text.startswith(_SQLITE):
        if not text.removeprefix(_SQLITE):
            raise InvalidInput(f"{field}: {text!r} names no file (sqlite:///PATH)", field=field)
        return text
    if text.startswith(_PG):
        import psycopg.conninfo

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
    scheme = text.split("://", 1)[0]
    raise InvalidInput(
        f"{field}: no store for {scheme!r} URLs; use sqlite:///PATH, "
        "postgresql://USER@HOST/DB or a file path",
        field=field,
    )


def location(settings: Settings) -> str:
    """Where ``settings`` keep memories, for people: the SQLite file, or the masked URL."""
    url = settings.database_url
    if url is None or url.startswith(_SQLITE):
        return str(settings.db_path())
    return display_url(url)


def display_url(url: str) -> str:
    """``url`` fit for messages: a PostgreSQL password is masked."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit(parts._replace(netloc=f"{parts.username or ''}:***@{host}"))


@dataclass(frozen=True, slots=True)
class DatabaseInfo:
    """What a database says about itself, read without opening a store.

    ``identity`` is equal for two URLs exactly when they reach the same
    database; ``model`` is the recorded embedding model ``(model_id, dim)``,
    None when the database holds no kenning store (yet).
    """

    url: str
    identity: str
    model: tuple[str, int] | None


def _model(value: str | None) -> tuple[str, int] | None:
    if value is None:
        return None
    recorded = json.loads(value)
    return str(recorded["model_id"]), int(recorded["dim"])


def _inspect_sqlite(url: str, field: str) -> DatabaseInfo:
    path = Path(url.removeprefix(_SQLITE)).expanduser()
    identity = "sqlite:" + os.path.realpath(path)
    if not path.exists():
        return DatabaseInfo(url, identity, None)
    try:
        conn = sqlite3.connect(f"file:{quote(str(path))}?mode=ro", uri=True)
        try:
            row = None
            if conn.execute(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'"
            ).fetchone():
                row = conn.execute("SELECT value FROM meta WHERE key = 'embedding'").fetchone()
        finally:
            conn.close()
    except sqlite3.DatabaseError as exc:
        raise InvalidInput(
            f"{field}: {path} is not a SQLite database ({exc})", field=field
        ) from None
    return DatabaseInfo(url, identity, _model(row[0] if row else None))


def _inspect_postgres(url: str) -> DatabaseInfo:
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
        msg = f"cannot read PostgreSQL database {display_url(url)}: {exc}"
        raise StoreError(msg) from exc
    identity = "postgresql:" + "|".join(str(x) for x in ident[:3])
    return DatabaseInfo(url, identity, _model(row[0] if row else None))


def inspect_database(url: str, *, field: str = "database_url") -> DatabaseInfo:
    """Identity and recorded embedding model of the database at ``url`` (writes nothing)."""
    url = database_url(url, field=field)
    if url.startswith(_SQLITE):
        return _inspect_sqlite(url, field)
    return _inspect_postgres(url)
