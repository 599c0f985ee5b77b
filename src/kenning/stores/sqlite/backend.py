"""The embedded SQLite store's entry in the store registry (``sqlite:///PATH``)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import quote

from ...errors import InvalidInput
from ..registry import DatabaseInfo, StoreBackend
from ..rows import recorded_model
from .driver import sqlite3

if TYPE_CHECKING:
    from ...config import Settings
    from ..base import Store

__all__ = ["SQLiteBackend"]

_PREFIX = "sqlite:///"


class SQLiteBackend(StoreBackend):
    """``sqlite:///PATH`` (``sqlite:////abs/path`` for an absolute path), or a plain path."""

    schemes = ("sqlite",)
    example = "sqlite:///PATH"
    #: Server workers share the file: WAL readers run in parallel, writes take the
    #: database's write lock in turn, and each process's in-memory mirrors follow the
    #: ``history`` table, so a write in one worker is read by the others.
    serves_processes = True
    #: The database is a file read through this process's page cache: a call waits
    #: on the cores, not on a network.
    bound_by_cores = True

    @staticmethod
    def path(url: str) -> Path:
        """The database file a ``sqlite:///`` URL names."""
        return Path(url.removeprefix(_PREFIX)).expanduser()

    def normalise(self, url: str, field: str) -> str:
        """The URL itself, when it names a file."""
        if not url.startswith(_PREFIX):
            raise InvalidInput(
                f"{field}: {url!r} is not a SQLite URL (sqlite:///PATH)", field=field
            )
        if not url.removeprefix(_PREFIX):
            raise InvalidInput(f"{field}: {url!r} names no file (sqlite:///PATH)", field=field)
        return url

    def url_for_path(self, path: str) -> str:
        """``sqlite:///PATH``."""
        return _PREFIX + path

    def open(self, url: str, settings: Settings, model_id: str, dim: int) -> Store:
        """A :class:`~kenning.stores.sqlite.store.SQLiteStore` on the file."""
        from .store import SQLiteStore

        return SQLiteStore(self.path(url), model_id=model_id, dim=dim, options=settings.store)

    def location(self, url: str) -> str:
        """The file path."""
        return str(self.path(url))

    def inspect(self, url: str, field: str) -> DatabaseInfo:
        """Reads the file's ``meta`` table read-only; a missing file holds no store."""
        path = self.path(url)
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
        return DatabaseInfo(url, identity, recorded_model(row[0] if row else None))
