"""Organizations spread over several databases behind one :class:`~kenning.stores.base.Store`.

:class:`RoutedStore` wraps the *home* store (the database ``database_url``
names) and a routing table that maps some organizations to other databases.
Every call that concerns one organization (it takes ``org_id``, a
:class:`~kenning.access.ScopeFilter`, a record, a sector or a policy) goes to
that organization's database; an organization without a route lives in the
home database. The directory (organizations, users, teams, personas, API
keys), the audit log and the embedding cache always stay in the home
database: authentication looks a key up before any organization is known.

The routing table is cached; its version is re-read at most once per
``refresh_s`` seconds, and the table reloaded when it changed, so several
server processes agree within that interval.

While an organization moves (``kenning migrate --org``), its reads keep going
to its current database and its writes are refused with
:class:`OrganizationMoving` (a :class:`~kenning.errors.StoreError`: HTTP 503,
retry shortly); the access bookkeeping of its recalls is skipped meanwhile.
Every write call runs inside the data store's ``org_writes(org_id)`` where it
has one (PostgreSQL: each of the call's transactions holds the organization's
write lock shared, which a move takes exclusively, see
:mod:`~kenning.stores.postgres.txn`), so a write that checked the route just
before the move, or with a route cached from before its switch, is refused
rather than lost.

``atomic()`` binds to the database of the first organization called inside
the block: one block writes one organization's database. A call inside the
block for an organization that lives in another database raises
:class:`~kenning.errors.InvalidInput`, before anything is written there.
Directory calls inside a block run in a transaction of the home database
opened with the block; when the organization lives elsewhere, that is a
second transaction, committed right after the organization's (the two are
not one atomic commit).
"""

from __future__ import annotations

import builtins
import logging
import threading
import time
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, ExitStack, contextmanager, nullcontext
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

import numpy as np

from ..access import ScopeFilter
from ..directory.model import ApiKey, AuditEntry, DirectoryEntry
from ..errors import InvalidInput, StoreError
from ..graph.model import Entity, GraphEdge, MemoryLink, Projection
from ..lifecycle.model import Access, AccessEntry, Policy, Sector
from ..models import HistoryEntry, LayerStats, MemoryFilter, MemoryRecord, Scope, Status
from .base import Footprint, Replacement, Store

__all__ = ["Route", "RouteTable", "RoutedStore", "OrganizationMoving", "REFRESH_S"]

log = logging.getLogger(__name__)

#: How often (seconds, at most) a process re-reads the routing table's version.
REFRESH_S = 1.0


class OrganizationMoving(StoreError):
    """The organization is being moved to another database; its writes are refused
    until the move ends (seconds to minutes). Retry the write shortly."""

    def __init__(self, org_id: str) -> None:
        super().__init__(
            f"organization {org_id!r} is moving to another database; its writes are "
            "paused until the move ends, retry shortly (reads keep working)"
        )
        self.org_id = org_id


@dataclass(frozen=True, slots=True)
class Route:
    """Where one organization lives: ``database_url`` (None: the home database) and
    ``state`` (``"active"``, or ``"moving"`` towards ``target_url``)."""

    org_id: str
    database_url: str | None
    state: str = "active"
    target_url: str | None = None

    @property
    def moving(self) -> bool:
        """True while a move is under way (writes refused)."""
        return self.state == "moving"


class RouteTable(Protocol):
    """The routing table as :class:`RoutedStore` reads it."""

    def version(self) -> int:
        """A number that changes whenever a route changes."""

    def routes(self) -> tuple[int, dict[str, Route]]:
        """``(version, org id -> route)`` read together."""

    def close(self) -> None:
        """Release connections."""


#: Opens the store at a (normalised) database URL.
Opener = Callable[[str], Store]


class RoutedStore:
    """A :class:`~kenning.stores.base.Store` that sends each organization's calls to
    the database the routing table names (see the module docs)."""

    def __init__(
        self, home: Store, table: RouteTable, opener: Opener, *, refresh_s: float = REFRESH_S
    ) -> None:
        self.home = home
        self.kind = home.kind
        self._table = table
        self._open = opener
        self._refresh_s = refresh_s
        self._lock = threading.Lock()
        self._stores: dict[str, Store] = {}
        self._routes: dict[str, Route] = {}
        self._version: int | None = None
        self._checked = float("-inf")
        self._local = threading.local()
        self.refresh(force=True)

    # -- routes -------------------------------------------------------------------------

    def refresh(self, *, force: bool = False) -> None:
        """Reload the routes when their version changed (checked at most once per
        ``refresh_s`` unless ``force``). A home database that cannot be read keeps
        the cached routes (logged)."""
        now = time.monotonic()
        if not force and now - self._checked < self._refresh_s:
            return
        with self._lock:
            if not force and now - self._checked < self._refresh_s:
                return
            self._checked = now
            try:
                if not force and self._table.version() == self._version:
                    return
                self._version, self._routes = self._table.routes()
            except StoreError as exc:
                if self._version is None:
                    raise
                log.warning("routing table unreadable, keeping the cached routes: %s", exc)

    def route(self, org_id: str) -> Route | None:
        """The cached route of ``org_id`` (None: it lives in the home database)."""
        self.refresh()
        return self._routes.get(org_id)

    def store_at(self, url: str | None) -> Store:
        """The store of the database at ``url`` (None: home), opened once."""
        if url is None:
            return self.home
        found = self._stores.get(url)
        if found is not None:
            return found
        with self._lock:
            found = self._stores.get(url)
            if found is None:
                found = self._stores[url] = self._open(url)
        return found

    def _for(self, org_id: str, write: bool = False) -> Store:
        """The store ``org_id`` lives in; binds (or checks) the thread's atomic block."""
        route = self.route(org_id)
        if write and route is not None and route.moving:
            raise OrganizationMoving(org_id)
        store = self.store_at(route.database_url if route is not None else None)
        if getattr(self._local, "levels", None):
            data: Store | None = getattr(self._local, "data", None)
            if data is None:
                self._local.data, self._local.data_org = store, org_id
            elif data is not store:
                raise InvalidInput(
                    f"one atomic block writes one database: organization {org_id!r} lives "
                    f"in another database than {self._local.data_org!r}",
                    field="org_id",
                )
            self._bind(store)
        return store

    @contextmanager
    def _write(self, org_id: str) -> Iterator[Store]:
        """The store ``org_id`` lives in, for a write (refused while it moves); the
        calls made inside run in the store's ``org_writes(org_id)`` where it has one."""
        store = self._for(org_id, True)
        hold: Callable[[str], AbstractContextManager[None]] | None
        hold = getattr(store, "org_writes", None)
        with hold(org_id) if hold is not None else nullcontext():
            yield store

    def _write_one(self, org_ids: Collection[str]) -> AbstractContextManager[Store]:
        """:meth:`_write` for the single organization among ``org_ids`` (the home
        store, as it is, when empty)."""
        distinct = set(org_ids)
        if len(distinct) > 1:
            raise InvalidInput(
                f"one call writes one organization; got {', '.join(sorted(distinct))}",
                field="org_id",
            )
        return self._write(distinct.pop()) if distinct else nullcontext(self.home)

    def _dir(self) -> Store:
        """The home store for a directory call, joined to the thread's atomic block."""
        if getattr(self._local, "levels", None):
            self._bind(self.home)
        return self.home

    def _bind(self, store: Store) -> None:
        """Open ``store``'s transaction at every open block level (outermost first)."""
        bound: list[Store] = self._local.__dict__.setdefault("bound", [])
        if any(b is store for b in bound):
            return
        for level in self._local.levels:
            level.enter_context(store.atomic())
        bound.append(store)

    def _all(self) -> list[tuple[Store, set[str] | None]]:
        """Every database with the organizations routed to it (None: home, all but
        those routed elsewhere)."""
        self.refresh()
        by_url: dict[str, set[str]] = {}
        for route in self._routes.values():
            if route.database_url is not None:
                by_url.setdefault(route.database_url, set()).add(route.org_id)
        return [(self.home, None), *((self.store_at(u), orgs) for u, orgs in by_url.items())]

    # -- transaction, footprint, lifecycle ------------------------------------------------

    @contextmanager
    def atomic(self) -> Iterator[object]:
        """One transaction in the database of the first organization called inside
        (and one in the home database when the block calls the directory)."""
        levels: list[ExitStack] = self._local.__dict__.setdefault("levels", [])
        stack = ExitStack()
        for store in getattr(self._local, "bound", []) if levels else []:
            stack.enter_context(store.atomic())
        levels.append(stack)
        try:
            with stack:
                yield self
        finally:
            levels.pop()
            if not levels:
                self._local.bound, self._local.data = [], None

    def footprint(self, org_id: str | None = None) -> Footprint:
        """Rows of ``org_id`` in its database, or of every organization everywhere."""
        if org_id is not None:
            return self._for(org_id).footprint(org_id)
        return sum((self.footprint(o) for o in self.organizations()), Footprint())

    def close(self) -> None:
        """Close every opened database and the routing table."""
        with self._lock:
            stores, self._stores = list(self._stores.values()), {}
        for store in stores:
            store.close()
        self._table.close()
        self.home.close()

    def size_bytes(self) -> int:
        """Space taken by the home database and every database a route names."""
        return sum(store.size_bytes() for store, _ in self._all())

    def count_memories(self, org_id: str, cap: int) -> int:
        """Memories of ``org_id`` up to ``cap`` (under the quota lock where the store has one)."""
        store = self._for(org_id)
        counter = getattr(store, "count_memories", None)
        return int(counter(org_id, cap)) if counter else store.footprint(org_id).memories

    def __getattr__(self, name: str) -> Any:
        """Backend-specific extras (``url``, ``bulk_load``, ...) are the home store's."""
        if name.startswith("__") or name in ("home", "_local", "_routes"):
            raise AttributeError(name)
        return getattr(self.home, name)

    # -- MemoryStore ------------------------------------------------------------------------

    def insert(
        self,
        items: Sequence[tuple[MemoryRecord, np.ndarray]],
        actor: str | None,
        graph: Projection | None = None,
    ) -> None:
        """(routed by the records' organization)"""
        with self._write_one([r.org_id for r, _ in items]) as store:
            store.insert(items, actor, graph)

    def replace(
        self,
        record: MemoryRecord,
        vector: np.ndarray | None,
        *,
        op: str,
        actor: str | None,
        changes: Mapping[str, Any],
        expected_version: int | None = None,
        graph: Projection | None = None,
    ) -> MemoryRecord:
        """(routed by the record's organization)"""
        with self._write(record.org_id) as store:
            return store.replace(
                record,
                vector,
                op=op,
                actor=actor,
                changes=changes,
                expected_version=expected_version,
                graph=graph,
            )

    def replace_many(
        self, replacements: Sequence[Replacement], actor: str | None
    ) -> builtins.list[MemoryRecord]:
        """(routed by the records' organization)"""
        with self._write_one([r.record.org_id for r in replacements]) as store:
            return store.replace_many(replacements, actor)

    def delete(self, org_id: str, memory_id: str, actor: str | None, at: datetime) -> bool:
        """(routed)"""
        with self._write(org_id) as store:
            return store.delete(org_id, memory_id, actor, at)

    def get(self, ids: Sequence[str], scopes: ScopeFilter) -> builtins.list[MemoryRecord]:
        """(routed)"""
        return self._for(scopes.org_id).get(ids, scopes)

    def find_by_key(self, org_id: str, scope: Scope, key: str) -> MemoryRecord | None:
        """(routed)"""
        return self._for(org_id).find_by_key(org_id, scope, key)

    def list(
        self,
        scopes: ScopeFilter,
        filters: MemoryFilter,
        *,
        limit: int,
        cursor: tuple[float, str] | None,
    ) -> builtins.list[MemoryRecord]:
        """(routed)"""
        return self._for(scopes.org_id).list(scopes, filters, limit=limit, cursor=cursor)

    def keyword_search(
        self, query: str, scopes: ScopeFilter, filters: MemoryFilter, limit: int
    ) -> builtins.list[tuple[str, float]]:
        """(routed)"""
        return self._for(scopes.org_id).keyword_search(query, scopes, filters, limit)

    def common_terms(
        self,
        terms: Sequence[str],
        scopes: ScopeFilter,
        ratio: float,
        min_docs: int,
        max_docs: int,
    ) -> set[str]:
        """(routed)"""
        store = self._for(scopes.org_id)
        return store.common_terms(terms, scopes, ratio, min_docs, max_docs)

    def vector_search(
        self, vector: np.ndarray, scopes: ScopeFilter, filters: MemoryFilter, limit: int
    ) -> builtins.list[tuple[str, float]]:
        """(routed)"""
        return self._for(scopes.org_id).vector_search(vector, scopes, filters, limit)

    def vector_scores(
        self, vector: np.ndarray, ids: Sequence[str], scopes: ScopeFilter
    ) -> dict[str, float]:
        """(routed)"""
        return self._for(scopes.org_id).vector_scores(vector, ids, scopes)

    def history(self, memory_id: str, scopes: ScopeFilter) -> builtins.list[HistoryEntry]:
        """(routed)"""
        return self._for(scopes.org_id).history(memory_id, scopes)

    def stats(self, scopes: ScopeFilter, now: datetime) -> builtins.list[LayerStats]:
        """(routed)"""
        return self._for(scopes.org_id).stats(scopes, now)

    def organizations(self) -> builtins.list[str]:
        """Every organization that holds memories, in whichever database."""
        found: set[str] = set()
        self.refresh()
        routed = {o for o, r in self._routes.items() if r.database_url is not None}
        for store, orgs in self._all():
            held = set(store.organizations())
            found |= (held - routed) if orgs is None else (held & orgs)
        return sorted(found)

    def iter_export(self, scopes: ScopeFilter) -> Iterator[dict[str, Any]]:
        """(routed)"""
        return self._for(scopes.org_id).iter_export(scopes)

    def iter_tombstones(self, scopes: ScopeFilter) -> Iterator[dict[str, Any]]:
        """(routed)"""
        return self._for(scopes.org_id).iter_tombstones(scopes)

    def import_tombstones(self, rows: Sequence[Mapping[str, Any]]) -> int:
        """(routed by the rows' organization)"""
        with self._write_one([str(r["org_id"]) for r in rows]) as store:
            return store.import_tombstones(rows)

    def import_rows(
        self, rows: Sequence[Mapping[str, Any]], progress: Callable[[int], None] | None = None
    ) -> int:
        """(routed by the rows' organization)"""
        with self._write_one([str(r["record"]["org_id"]) for r in rows]) as store:
            return store.import_rows(rows, progress)

    def get_vectors(self, model_id: str, hashes: Sequence[str]) -> dict[str, np.ndarray]:
        """(the home database's embedding cache)"""
        return self._dir().get_vectors(model_id, hashes)

    def put_vectors(self, model_id: str, items: Mapping[str, np.ndarray]) -> None:
        """(the home database's embedding cache)"""
        self._dir().put_vectors(model_id, items)

    def scope_neighbours(
        self,
        org_id: str,
        items: Sequence[tuple[Scope, np.ndarray]],
        limit: int,
        statuses: Collection[Status] | None = None,
    ) -> builtins.list[builtins.list[tuple[str, float]]]:
        """(routed)"""
        return self._for(org_id).scope_neighbours(org_id, items, limit, statuses)

    def memory_vectors(self, ids: Sequence[str], scopes: ScopeFilter) -> dict[str, np.ndarray]:
        """(routed)"""
        return self._for(scopes.org_id).memory_vectors(ids, scopes)

    def stale_vectors(
        self, org_id: str, model_id: str, limit: int
    ) -> builtins.list[tuple[str, str]]:
        """(routed)"""
        return self._for(org_id).stale_vectors(org_id, model_id, limit)

    def replace_vectors(
        self, org_id: str, model_id: str, vectors: Sequence[tuple[str, np.ndarray]]
    ) -> int:
        """(routed)"""
        with self._write(org_id) as store:
            return store.replace_vectors(org_id, model_id, vectors)

    def user_memories(
        self, org_id: str, user_id: str
    ) -> builtins.list[tuple[str, Scope, str | None]]:
        """(routed)"""
        return self._for(org_id).user_memories(org_id, user_id)

    def set_author(self, org_id: str, ids: Sequence[str], author: str | None) -> int:
        """(routed)"""
        with self._write(org_id) as store:
            return store.set_author(org_id, ids, author)

    # -- GraphStore -------------------------------------------------------------------------

    def graph_write(self, org_id: str, projection: Projection, at: datetime) -> int:
        """(routed)"""
        with self._write(org_id) as store:
            return store.graph_write(org_id, projection, at)

    def graph_link(self, org_id: str, link: MemoryLink, at: datetime) -> bool:
        """(routed)"""
        with self._write(org_id) as store:
            return store.graph_link(org_id, link, at)

    def graph_alias(self, org_id: str, entity: str, alias_norm: str) -> None:
        """(routed)"""
        with self._write(org_id) as store:
            store.graph_alias(org_id, entity, alias_norm)

    def graph_clear(self, scopes: ScopeFilter) -> tuple[int, int]:
        """(routed)"""
        with self._write(scopes.org_id) as store:
            return store.graph_clear(scopes)

    def graph_edges(
        self,
        ids: Sequence[str],
        scopes: ScopeFilter,
        relations: Collection[str] | None = None,
        limit: int | None = None,
        within: bool = False,
        far: Collection[Status] | None = None,
        near: Collection[Status] | None = None,
    ) -> builtins.list[GraphEdge]:
        """(routed)"""
        store = self._for(scopes.org_id)
        return store.graph_edges(ids, scopes, relations, limit, within, far, near)

    def graph_mentions(
        self, ids: Sequence[str], scopes: ScopeFilter
    ) -> dict[str, builtins.list[str]]:
        """(routed)"""
        return self._for(scopes.org_id).graph_mentions(ids, scopes)

    def entity_memories(
        self, entity_ids: Sequence[str], scopes: ScopeFilter, limit_per_entity: int
    ) -> dict[str, builtins.list[str]]:
        """(routed)"""
        return self._for(scopes.org_id).entity_memories(entity_ids, scopes, limit_per_entity)

    def find_entities(
        self, org_id: str, names: Sequence[str], scopes: ScopeFilter
    ) -> builtins.list[Entity]:
        """(routed)"""
        return self._for(org_id).find_entities(org_id, names, scopes)

    def entities_of(
        self, memory_ids: Sequence[str], scopes: ScopeFilter
    ) -> dict[str, builtins.list[Entity]]:
        """(routed)"""
        return self._for(scopes.org_id).entities_of(memory_ids, scopes)

    def graph_counts(self, scopes: ScopeFilter) -> tuple[int, int]:
        """(routed)"""
        return self._for(scopes.org_id).graph_counts(scopes)

    def episode_tails(
        self, org_id: str, groups: Sequence[tuple[Scope, str, str, datetime]]
    ) -> builtins.list[str | None]:
        """(routed)"""
        return self._for(org_id).episode_tails(org_id, groups)

    # -- LifecycleStore ---------------------------------------------------------------------

    def record_access(self, org_id: str, accesses: Sequence[Access]) -> None:
        """(routed; skipped while the organization moves)"""
        try:
            with self._write(org_id) as store:
                store.record_access(org_id, accesses)
        except OrganizationMoving:
            log.info("access bookkeeping of %s skipped: the organization is moving", org_id)

    def access_log(
        self, memory_id: str, scopes: ScopeFilter, limit: int = 100
    ) -> builtins.list[AccessEntry]:
        """(routed)"""
        return self._for(scopes.org_id).access_log(memory_id, scopes, limit)

    def access_counts(
        self, scopes: ScopeFilter, since: datetime
    ) -> builtins.list[tuple[str, str, int]]:
        """(routed)"""
        return self._for(scopes.org_id).access_counts(scopes, since)

    def put_sector(self, sector: Sector) -> None:
        """(routed)"""
        with self._write(sector.org_id) as store:
            store.put_sector(sector)

    def sectors(self, scopes: ScopeFilter) -> builtins.list[Sector]:
        """(routed)"""
        return self._for(scopes.org_id).sectors(scopes)

    def put_policy(self, policy: Policy) -> None:
        """(routed)"""
        with self._write(policy.org_id) as store:
            store.put_policy(policy)

    def delete_policy(self, org_id: str, target: str, memory_type: str) -> bool:
        """(routed)"""
        with self._write(org_id) as store:
            return store.delete_policy(org_id, target, memory_type)

    def policies(self, org_id: str) -> builtins.list[Policy]:
        """(routed)"""
        return self._for(org_id).policies(org_id)

    def forget_user_scopes(self, org_id: str, user_id: str) -> int:
        """(routed)"""
        with self._write(org_id) as store:
            return store.forget_user_scopes(org_id, user_id)

    # -- DirectoryStore: always the home database --------------------------------------------

    def put_entry(self, entry: DirectoryEntry) -> None:
        """(home)"""
        self._dir().put_entry(entry)

    def get_entry(self, org_id: str, kind: str, entry_id: str) -> DirectoryEntry | None:
        """(home)"""
        return self._dir().get_entry(org_id, kind, entry_id)

    def entries(self, org_id: str, kind: str) -> builtins.list[DirectoryEntry]:
        """(home)"""
        return self._dir().entries(org_id, kind)

    def delete_entry(self, org_id: str, kind: str, entry_id: str) -> bool:
        """(home)"""
        return self._dir().delete_entry(org_id, kind, entry_id)

    def directory_orgs(self) -> builtins.list[str]:
        """(home)"""
        return self._dir().directory_orgs()

    def put_api_key(self, key: ApiKey) -> None:
        """(home)"""
        self._dir().put_api_key(key)

    def get_api_key(self, key_id: str) -> ApiKey | None:
        """(home)"""
        return self._dir().get_api_key(key_id)

    def api_keys(self, org_id: str, user_id: str | None = None) -> builtins.list[ApiKey]:
        """(home)"""
        return self._dir().api_keys(org_id, user_id)

    def delete_api_keys(self, org_id: str, user_id: str) -> int:
        """(home)"""
        return self._dir().delete_api_keys(org_id, user_id)

    def append_audit(self, entries: Sequence[AuditEntry]) -> None:
        """(home)"""
        self._dir().append_audit(entries)

    def audit(
        self,
        org_id: str,
        *,
        actor: str | None = None,
        action: str | None = None,
        since: datetime | None = None,
        before_seq: int | None = None,
        limit: int = 100,
    ) -> builtins.list[AuditEntry]:
        """(home)"""
        return self._dir().audit(
            org_id, actor=actor, action=action, since=since, before_seq=before_seq, limit=limit
        )
