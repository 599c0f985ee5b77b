"""What :class:`~kenning.stores.sqlite.store.SQLiteStore` gives the mixins it is built
from (graph, lifecycle): its transaction helpers, declared once."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from contextlib import AbstractContextManager

from ...access import ScopeFilter
from ...models import Scope, Status
from .driver import sqlite3

__all__ = ["StoreParts"]


class StoreParts:
    """The store's own helpers, as its mixins call them (implemented by the store)."""

    def atomic(self, *, savepoint: bool = True) -> AbstractContextManager[sqlite3.Connection]:
        """One write transaction (nested calls become savepoints unless ``savepoint``
        is False)."""
        raise NotImplementedError

    def _read(self) -> AbstractContextManager[sqlite3.Connection]:
        raise NotImplementedError

    def _scope_pk(self, conn: sqlite3.Connection, org_id: str, scope: Scope) -> int:
        raise NotImplementedError

    def _active_pks(
        self,
        conn: sqlite3.Connection,
        ids: Sequence[str],
        scopes: ScopeFilter,
        also: Collection[Status] = (),
    ) -> dict[int, str]:
        """pk -> id of the active memories among ``ids`` visible through ``scopes``
        (and of those with one of the statuses ``also``)."""
        raise NotImplementedError
