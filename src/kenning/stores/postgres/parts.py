"""What :class:`~kenning.stores.postgres.store.PostgresStore` gives the mixins it is
built from (graph, lifecycle): its transaction helpers, declared once."""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Any

import psycopg

from ...access import ScopeFilter
from .replicas import ReplicaSet

__all__ = ["StoreParts"]


class StoreParts:
    """The store's own helpers, as its mixins call them (implemented by the store)."""

    _replicas: ReplicaSet | None

    def _tx(
        self, context: tuple[str, str, str], *, track: bool = True
    ) -> AbstractContextManager[psycopg.Connection]:
        raise NotImplementedError

    def _read(self, scopes: ScopeFilter) -> Any:
        raise NotImplementedError

    def _org_write(self, org_id: str, *, track: bool = True) -> Any:
        raise NotImplementedError
