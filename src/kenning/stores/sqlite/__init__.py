"""The embedded SQLite store."""

from .store import SQLiteStore

__all__ = ["SQLiteStore"]
