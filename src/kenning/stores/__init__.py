"""Storage backends behind one protocol; :func:`open_store` picks one from settings."""

from __future__ import annotations

from ..config import Settings
from ..errors import ConfigError
from .base import Store

__all__ = ["Store", "open_store"]


def open_store(settings: Settings, model_id: str, dim: int) -> Store:
    """Open the store ``settings.database_url`` names (the embedded SQLite file by default)."""
    url = settings.database_url or f"sqlite:///{settings.db_path()}"
    if url.startswith("sqlite:///"):
        from .sqlite.store import SQLiteStore

        return SQLiteStore(
            settings.db_path() if settings.database_url else url.removeprefix("sqlite:///"),
            model_id=model_id,
            dim=dim,
            exact_search_max=settings.exact_search_max,
            ann_min_rows=settings.ann_min_rows,
            ann_connectivity=settings.ann_connectivity,
            ann_expansion=settings.ann_expansion,
            keyword_max_df_ratio=settings.keyword_max_df_ratio,
        )
    if url.startswith(("postgresql://", "postgres://")):
        from .postgres.store import PostgresStore

        return PostgresStore(
            url,
            model_id=model_id,
            dim=dim,
            pool_size=settings.pg_pool_size,
            exact_search_max=settings.exact_search_max,
            ann_expansion=settings.ann_expansion,
            keyword_max_df_ratio=settings.keyword_max_df_ratio,
        )
    raise ConfigError(
        f"no store for {url.split(':', 1)[0]!r} URLs; use sqlite:///PATH or postgresql://…"
    )
