"""The storage seam: four protocols every backend implements, and one transaction.

:class:`Store` is what the engine holds: :class:`MemoryStore` (records, their
vectors and keyword rows, history, search, export), :class:`GraphStore`
(mentions, entities, links), :class:`LifecycleStore` (strength, accesses,
sectors, policies) and :class:`DirectoryStore` (organizations, users, keys,
audit), plus :meth:`Store.atomic`, :meth:`Store.footprint`, ``close``,
``size_bytes`` and ``kind``. A service that needs one part may type its store
as that part. Backends are found by URL scheme (:mod:`kenning.stores.registry`).

Contract (the contract suite in ``tests/test_store_contract.py`` checks it on
every store):

* **Scoped reads.** Every read takes a :class:`~kenning.access.ScopeFilter` and
  applies it inside the query (keyword, vector, list, get, history, stats):
  a row outside the filter is never returned, counted or ranked, and the top
  ``limit`` is the true top within the filter.
* **Atomic writes.** ``insert``, ``replace`` and ``delete`` each commit the
  record, its vector, its keyword-index row and its history row together or
  not at all. A batch ``insert`` is one transaction.
* **One transaction around several writes.** Every write method called inside
  ``with store.atomic():`` joins that block's transaction (on the calling
  thread); a nested ``atomic()`` is a savepoint, the commit happens when the
  outermost block exits, and an exception rolls everything back: no row,
  vector, keyword entry, history row or graph row of the block survives, and
  the store's caches and in-process indexes show the committed state. Reads
  inside the block see its writes; other threads and processes never do
  before the commit. The block holds the store's writer (SQLite: the one write
  connection and the database's write lock) until it exits, so keep it short
  and never wait inside it for another thread that uses the same store.
* **History.** Every create, update, archive, restore, feedback and delete
  writes one history row. A delete scrubs the content of the memory's earlier
  history rows; the trail keeps who and when, not what it said.
* **Keys.** At most one non-superseded memory per (scope, key); an insert that
  would break this raises :class:`~kenning.errors.Conflict` and writes nothing.
* **Versions.** ``replace`` with ``expected_version`` raises ``Conflict`` when
  the stored version differs; every replace increments ``version``.
* **Concurrency.** Several processes may write one database at once; the
  store waits for locks itself and never surfaces "database is locked".
* **Graph.** ``insert(graph=...)`` and ``replace(graph=...)`` commit a
  :class:`~kenning.graph.model.Projection` (mentions creating entities; links)
  in the write's transaction; ``replace`` always mirrors the new status onto
  the memory's mentions and, given a projection, first drops the memory's
  mentions and *content-derived* links (API, batch and temporal links stay).
  ``delete`` removes every link touching the memory, its mentions, and each
  entity (with its aliases) left without a mention. A link joins two memories
  of one scope; the store skips links whose endpoints are missing or in
  different scopes. Symmetric relations are stored once (``src < dst``).
* **Lifecycle.** ``replace_many`` commits several replacements at once; inside
  ``atomic()`` it joins the write's transaction (reconcile's changes to older
  memories commit with the new ones). ``record_access`` updates strength state
  (strength, last access, counts) without a new version or history row and
  appends to the access log; ``delete`` removes the memory's access log too.
  Sectors belong to one scope and are read through the scope filter; their
  ``size`` counts the active memories assigned to each.
* **Graph reads** apply the scope filter inside the query: a link is returned
  or counted only when both endpoints are visible *and active* (archived,
  superseded and pending memories drop out; restoring brings their links
  back); an entity only through a visible active mention, and its label, type
  and count come from those mentions only — a reader learns nothing about an
  entity from memories it cannot read. Entity ids derive from (org, kind, norm).
* **Footprint.** :meth:`Store.footprint` counts the rows a store holds per
  kind (:class:`Footprint`), for tests and operators: the contract suite checks
  all-or-nothing writes and complete deletion with it, so a store without SQL
  runs the same suite.
* **Directory.** Organizations, users, teams and personas are
  :class:`~kenning.directory.model.DirectoryEntry` rows keyed by
  ``(org_id, kind, id)``; ``put_entry`` creates or replaces one. API keys are
  found by their public id across organizations (authentication comes before
  any org is known) and are never deleted, only revoked (except when their
  user is erased: ``delete_api_keys``). The audit log is
  append-only; ``audit`` reads one organization's, newest first. The directory
  holds no memory content, so it sits outside the scope filter: the engine's
  directory service checks who may read or change it.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any, Protocol, runtime_checkable

import numpy as np

from ..access import ScopeFilter
from ..directory.model import ApiKey, AuditEntry, DirectoryEntry
from ..graph.model import Entity, GraphEdge, MemoryLink, Projection
from ..lifecycle.model import Access, AccessEntry, Policy, Sector
from ..models import HistoryEntry, LayerStats, MemoryFilter, MemoryRecord, Scope, Status

__all__ = [
    "Store",
    "MemoryStore",
    "GraphStore",
    "LifecycleStore",
    "DirectoryStore",
    "Replacement",
    "Footprint",
]


@dataclass(frozen=True, slots=True)
class Replacement:
    """One change to an existing memory, as :meth:`MemoryStore.replace` takes it."""

    record: MemoryRecord
    vector: np.ndarray | None
    op: str
    changes: Mapping[str, Any]
    graph: Projection | None = None


@dataclass(frozen=True, slots=True)
class Footprint:
    """How many rows a store holds, per kind (:meth:`Store.footprint`).

    ``memories``: records of any status; ``vectors``: stored vectors;
    ``keyword``: documents in the keyword index; ``history``: history rows
    (deleted memories' trails included); ``scopes``: the scopes the store has
    recorded (a row per scope where it keeps them, else the distinct scopes its
    memories, history and sectors name); ``mentions``,
    ``entities``, ``aliases`` and ``links``: the graph; ``accesses``: access-log
    rows. A consistent store has ``vectors == keyword == memories``.
    """

    memories: int = 0
    vectors: int = 0
    keyword: int = 0
    history: int = 0
    scopes: int = 0
    mentions: int = 0
    entities: int = 0
    aliases: int = 0
    links: int = 0
    accesses: int = 0

    def as_dict(self) -> dict[str, int]:
        """The counts by name."""
        return asdict(self)

    def __add__(self, other: Footprint) -> Footprint:
        """Field-wise sum (several organizations' footprints)."""
        mine, theirs = self.as_dict(), other.as_dict()
        return Footprint(**{k: mine[k] + theirs[k] for k in mine})


@runtime_checkable
class MemoryStore(Protocol):
    """Memory records with their vectors, keyword rows and history: writes,
    searches, export and import, the embedding cache."""

    def insert(
        self,
        items: Sequence[tuple[MemoryRecord, np.ndarray]],
        actor: str | None,
        graph: Projection | None = None,
    ) -> None:
        """Store new records with their vectors (and ``graph``, their projection) in one
        transaction (history: ``create``); inside ``atomic()`` it joins that one.

        A taken id or key raises :class:`~kenning.errors.Conflict` before anything
        is written, so inside a block it fails alone. A store may write the batch
        without a savepoint (SQLite does, for speed): any other failure part-way
        then rolls the whole enclosing transaction back."""

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
        """Overwrite a record (and its vector when given); bump its version; log ``op``.

        ``graph`` replaces the memory's mentions and content-derived links."""

    def replace_many(
        self, replacements: Sequence[Replacement], actor: str | None
    ) -> builtins.list[MemoryRecord]:
        """Apply several :meth:`replace` calls in one transaction (all or none)."""

    def delete(self, org_id: str, memory_id: str, actor: str | None, at: datetime) -> bool:
        """Remove a memory from every table and index; False when it did not exist."""

    def get(self, ids: Sequence[str], scopes: ScopeFilter) -> list[MemoryRecord]:
        """The records among ``ids`` visible through ``scopes`` (in the order given)."""

    def find_by_key(self, org_id: str, scope: Scope, key: str) -> MemoryRecord | None:
        """The non-superseded record with this key in this scope, if any."""

    def list(
        self,
        scopes: ScopeFilter,
        filters: MemoryFilter,
        *,
        limit: int,
        cursor: tuple[float, str] | None,
    ) -> builtins.list[MemoryRecord]:
        """Records newest first, starting after ``cursor`` = (created_at, id)."""

    def keyword_search(
        self, query: str, scopes: ScopeFilter, filters: MemoryFilter, limit: int
    ) -> builtins.list[tuple[str, float]]:
        """BM25 top ``limit`` as (id, score), higher is better."""

    def common_terms(
        self,
        terms: Sequence[str],
        scopes: ScopeFilter,
        ratio: float,
        min_docs: int,
        max_docs: int,
    ) -> set[str]:
        """The ``terms`` that occur in more than ``ratio`` of the active memories
        visible through ``scopes``; empty unless ``min_docs`` to ``max_docs`` are visible."""

    def vector_search(
        self, vector: np.ndarray, scopes: ScopeFilter, filters: MemoryFilter, limit: int
    ) -> builtins.list[tuple[str, float]]:
        """Cosine top ``limit`` as (id, similarity)."""

    def vector_scores(
        self, vector: np.ndarray, ids: Sequence[str], scopes: ScopeFilter
    ) -> dict[str, float]:
        """Cosine of ``vector`` with each of ``ids`` (those visible through ``scopes``).

        Fusion needs the dense score of keyword-only candidates too.
        """

    def history(self, memory_id: str, scopes: ScopeFilter) -> builtins.list[HistoryEntry]:
        """The change trail of one memory, oldest first, if its scope is visible."""

    def stats(self, scopes: ScopeFilter, now: datetime) -> builtins.list[LayerStats]:
        """Seed 000's per-layer statistics over what ``scopes`` covers."""

    def organizations(self) -> builtins.list[str]:
        """Every organization id that has held memories, sorted (for whole-store copies)."""

    def iter_export(self, scopes: ScopeFilter) -> Iterator[dict[str, Any]]:
        """Every record (with vector and history) under ``scopes``, for export."""

    def iter_tombstones(self, scopes: ScopeFilter) -> Iterator[dict[str, Any]]:
        """The trail of each *deleted* memory under ``scopes`` (its record is gone).

        Rows: ``{"memory_id", "org_id", "scope" (key), "history": [HistoryEntry dicts]}``,
        by memory id. Whole-store copies carry them so "who deleted what when" survives.
        """

    def import_tombstones(self, rows: Sequence[Mapping[str, Any]]) -> int:
        """Insert rows of :meth:`iter_tombstones` verbatim in one transaction; how many."""

    def import_rows(
        self, rows: Sequence[Mapping[str, Any]], progress: Callable[[int], None] | None = None
    ) -> int:
        """Insert exported rows verbatim (ids, times, history) in one transaction."""

    def get_vectors(self, model_id: str, hashes: Sequence[str]) -> dict[str, np.ndarray]:
        """Embedding cache lookup by content hash."""

    def put_vectors(self, model_id: str, items: Mapping[str, np.ndarray]) -> None:
        """Embedding cache write."""

    def scope_neighbours(
        self,
        org_id: str,
        items: Sequence[tuple[Scope, np.ndarray]],
        limit: int,
        statuses: Collection[Status] | None = None,
    ) -> builtins.list[builtins.list[tuple[str, float]]]:
        """For each (scope, vector): the cosine top ``limit`` among the memories of that
        one scope with one of ``statuses`` (default: active), as (id, similarity) best
        first (batched: reconcile's and the write projection's lookups)."""

    def memory_vectors(self, ids: Sequence[str], scopes: ScopeFilter) -> dict[str, np.ndarray]:
        """The stored vectors of the visible memories among ``ids``."""

    def stale_vectors(
        self, org_id: str, model_id: str, limit: int
    ) -> builtins.list[tuple[str, str]]:
        """(memory id, content) of up to ``limit`` memories of ``org_id`` whose vector
        was made by another model than ``model_id`` (maintenance: every scope)."""

    def replace_vectors(
        self, org_id: str, model_id: str, vectors: Sequence[tuple[str, np.ndarray]]
    ) -> int:
        """Store ``model_id``'s vector for each (memory id, vector) of ``org_id`` in one
        transaction; the store's own search indexes follow. Returns how many changed
        (memories deleted meanwhile are skipped). Run it with no other writer."""

    def user_memories(
        self, org_id: str, user_id: str
    ) -> builtins.list[tuple[str, Scope, str | None]]:
        """``(id, scope, created_by)`` of every memory of ``org_id`` (any status) in the
        user's personal scopes (``user:U``, ``persona_user:P/U``) or created by the
        user, by id (erasure and export; every scope, no filter)."""

    def set_author(self, org_id: str, ids: Sequence[str], author: str | None) -> int:
        """Set ``created_by`` of these memories of ``org_id`` (no new version, no history
        row: erasure detaches an erased user from what stays); how many changed."""


@runtime_checkable
class GraphStore(Protocol):
    """The memory graph: mentions, entities and links, written with the memories."""

    def graph_write(self, org_id: str, projection: Projection, at: datetime) -> int:
        """Add mentions and links between existing memories of ``org_id`` (rebuild) in one
        transaction; existing rows stay. Returns the links written."""

    def graph_link(self, org_id: str, link: MemoryLink, at: datetime) -> bool:
        """Add (or re-weight) one API link, kept when the memories change; False when
        its endpoints are missing or not in one scope of ``org_id``."""

    def graph_alias(self, org_id: str, entity: str, alias_norm: str) -> None:
        """Let ``alias_norm`` resolve to entity id ``entity`` (removed with the entity)."""

    def graph_clear(self, scopes: ScopeFilter) -> tuple[int, int]:
        """Delete the mentions and links inside ``scopes`` and the entities left without a
        mention; returns (mentions, links) deleted."""

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
        """Every link with an endpoint in ``ids`` whose two endpoints are visible through
        ``scopes`` and active (each link once), heaviest first, at most ``limit``.
        ``within``: only links whose *both* endpoints are among ``ids`` (what support
        propagation over a candidate pool needs; cheaper). ``far``: the statuses the
        end that is not among ``ids`` may have (default: active; not with ``within``),
        as the facts drawn from a turn, some since retired. ``near``: the statuses
        besides active a memory among ``ids`` may have, as the superseded
        candidates of a question about before."""

    def graph_mentions(
        self, ids: Sequence[str], scopes: ScopeFilter
    ) -> dict[str, builtins.list[str]]:
        """Memory id -> entity ids, for the visible memories among ``ids`` (any status)."""

    def entity_memories(
        self, entity_ids: Sequence[str], scopes: ScopeFilter, limit_per_entity: int
    ) -> dict[str, builtins.list[str]]:
        """Entity id -> the visible active memories mentioning it, newest first."""

    def find_entities(
        self, org_id: str, names: Sequence[str], scopes: ScopeFilter
    ) -> builtins.list[Entity]:
        """Entities whose norm or alias matches a normalised name, with at least one
        visible active mention; ``mentions`` = that visible count. Most mentioned first."""

    def entities_of(
        self, memory_ids: Sequence[str], scopes: ScopeFilter
    ) -> dict[str, builtins.list[Entity]]:
        """Memory id -> its entities, for the visible memories among ``memory_ids``."""

    def graph_counts(self, scopes: ScopeFilter) -> tuple[int, int]:
        """(entities with a visible active mention, links between visible active memories)."""

    def episode_tails(
        self, org_id: str, groups: Sequence[tuple[Scope, str, str, datetime]]
    ) -> builtins.list[str | None]:
        """Per (scope, ``"episode_id"`` | ``"session_id"``, value, at): the latest
        non-superseded memory of that episode (or episode-less session) in that scope
        with event time <= ``at``, by (event time, created_at, id)."""


@runtime_checkable
class LifecycleStore(Protocol):
    """Strength and the access log, sectors, retention and review policies."""

    def record_access(self, org_id: str, accesses: Sequence[Access]) -> None:
        """Set each memory's strength to ``strength_after`` and last access to ``at``,
        count the access (and the reinforcement, when explicit), and log it; one
        transaction, no version bump. Memories gone meanwhile are skipped."""

    def access_log(
        self, memory_id: str, scopes: ScopeFilter, limit: int = 100
    ) -> builtins.list[AccessEntry]:
        """The latest ``limit`` accesses of one visible memory, oldest first."""

    def access_counts(
        self, scopes: ScopeFilter, since: datetime
    ) -> builtins.list[tuple[str, str, int]]:
        """``(UTC day "YYYY-MM-DD", access type, count)`` of the accesses to visible
        memories at or after ``since``, by day."""

    def put_sector(self, sector: Sector) -> None:
        """Create or update a sector (by id) in its scope."""

    def sectors(self, scopes: ScopeFilter) -> builtins.list[Sector]:
        """Every sector of the visible scopes, with its size (active memories)."""

    def put_policy(self, policy: Policy) -> None:
        """Create or replace the policy for (org, target, memory type)."""

    def delete_policy(self, org_id: str, target: str, memory_type: str) -> bool:
        """Remove one policy; False when there was none."""

    def policies(self, org_id: str) -> builtins.list[Policy]:
        """Every policy of the organization."""

    def forget_user_scopes(self, org_id: str, user_id: str) -> int:
        """Delete the sectors of the user's personal scopes and the policies that target
        those scopes (erasure; their memories must be gone first); how many rows went."""


@runtime_checkable
class DirectoryStore(Protocol):
    """Organizations, users, teams, personas, API keys and the audit log."""

    def put_entry(self, entry: DirectoryEntry) -> None:
        """Create or replace one directory row (by org, kind and id)."""

    def get_entry(self, org_id: str, kind: str, entry_id: str) -> DirectoryEntry | None:
        """One directory row, or None."""

    def entries(self, org_id: str, kind: str) -> builtins.list[DirectoryEntry]:
        """Every row of one kind in an organization, by id."""

    def delete_entry(self, org_id: str, kind: str, entry_id: str) -> bool:
        """Remove one directory row; False when there was none."""

    def directory_orgs(self) -> builtins.list[str]:
        """Every organization id with directory rows, API keys or audit lines, sorted
        (an organization may live in the directory without ever holding a memory;
        :meth:`organizations` lists only those that did)."""

    def put_api_key(self, key: ApiKey) -> None:
        """Store a new key, or record its revocation (the hash never changes; a
        revoked key stays revoked)."""

    def get_api_key(self, key_id: str) -> ApiKey | None:
        """The key with this public id, in whatever organization, or None."""

    def api_keys(self, org_id: str, user_id: str | None = None) -> builtins.list[ApiKey]:
        """The keys of an organization (of one user when given), oldest first."""

    def delete_api_keys(self, org_id: str, user_id: str) -> int:
        """Delete every key of the user, revoked ones too (erasure only: otherwise keys
        are revoked, never deleted); how many."""

    def append_audit(self, entries: Sequence[AuditEntry]) -> None:
        """Append audit lines (one transaction); the store assigns ``seq``."""

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
        """An organization's audit lines, newest first; ``action`` matches a prefix
        (``"admin."``); ``before_seq`` pages backwards."""


@runtime_checkable
class Store(MemoryStore, GraphStore, LifecycleStore, DirectoryStore, Protocol):
    """What the engine needs from a database: the four parts and one transaction."""

    #: Which backend this is (``"sqlite"``, ``"postgresql"``): for reports, never for logic.
    kind: str

    def atomic(self) -> AbstractContextManager[object]:
        """A transaction around a block: every write inside joins it, nested blocks
        are savepoints, the outermost exit commits and an exception rolls all back.

        >>> with store.atomic():                                  # doctest: +SKIP
        ...     store.insert(items, actor, graph=projection)
        ...     store.replace_many(replacements, actor)
        ...     store.graph_write(org_id, Projection(links=links), at)
        """

    def footprint(self, org_id: str | None = None) -> Footprint:
        """Rows held per kind: of ``org_id``, or of the whole store (every organization,
        and rows no organization owns, which a correct store never leaves)."""

    def close(self) -> None:
        """Release connections and caches."""

    def size_bytes(self) -> int:
        """How much space the database takes (files, or the PostgreSQL database)."""
