"""The embedded SQLite store (WAL, FTS5 BM25, in-process vector index).

One connection per store object, serialised by a lock; several processes may
share the file (WAL, ``BEGIN IMMEDIATE`` with a busy wait). See
:mod:`kenning.stores.base` for the contract this class keeps.
"""

from __future__ import annotations

import builtins
import json
import logging
import threading
from collections.abc import Collection, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np

from ...access import ScopeFilter
from ...config import StoreOptions
from ...errors import ConfigError, Conflict, NotFound, StoreError
from ...graph.model import Projection
from ...models import (
    HistoryEntry,
    LayerStats,
    MemoryFilter,
    MemoryRecord,
    Scope,
    Status,
)
from ...retrieval.text import query_terms
from ..base import Footprint, Replacement
from ..rows import AGE_BUCKETS, CONFIDENCE_LEVEL_SQL, layer_stats
from . import orgcounts
from .directory import SQLiteDirectory
from .driver import flush_fts, sqlite3
from .footprint import footprint
from .graph import SQLiteGraph
from .lifecycle import SQLiteLifecycle
from .migrations import apply_migrations
from .postings import PostingsIndex
from .readers import ReadPool
from .sql import (
    MEMORY_COLUMNS,
    SELECT_MEMORY,
    dt,
    filter_clause,
    joined_scope_clause,
    record_from_row,
    record_params,
    scope_clause,
    scope_subquery,
    ts,
)
from .terms import TermStats
from .transfer import SQLiteTransfer
from .turns import WriterTurns
from .txn import BUSY_WAIT_S, SQLiteTransactions, Transaction
from .userdata import SQLiteUserData
from .vectors import SaidRange, VectorIndex

log = logging.getLogger("kenning.store")

_HISTORY_SQL = (
    "INSERT INTO history (memory_id, org_id, scope_pk, op, actor, at, version, content, "
    "changes) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
_FTS_SQL = "INSERT INTO memories_fts (rowid, content, key, tags) VALUES (?, ?, ?, ?)"


def _history_row(
    record: MemoryRecord,
    scope_pk: int,
    op: str,
    actor: str | None,
    changes: Mapping[str, Any],
    content: str | None,
) -> tuple[Any, ...]:
    """The parameters of one ``history`` row (:data:`_HISTORY_SQL`)."""
    return (
        record.id,
        record.org_id,
        scope_pk,
        op,
        actor,
        ts(record.updated_at),
        record.version,
        content,
        json.dumps(dict(changes), default=str, sort_keys=True),
    )


def _fts_row(pk: int, record: MemoryRecord) -> tuple[int, str, str, str]:
    """The parameters of one keyword-index row (:data:`_FTS_SQL`)."""
    return (pk, record.content, record.key or "", " ".join(record.tags))


__all__ = ["SQLiteStore"]


class SQLiteStore(
    SQLiteTransactions,
    SQLiteTransfer,
    SQLiteGraph,
    SQLiteLifecycle,
    SQLiteDirectory,
    SQLiteUserData,
):
    """The embedded store. ``path`` may be ``":memory:"`` for throwaway use."""

    kind = "sqlite"

    def __init__(
        self,
        path: str | Path,
        *,
        model_id: str,
        dim: int,
        options: StoreOptions | None = None,
    ) -> None:
        """Open (creating and migrating) the database at ``path``; ``options`` default
        to :class:`~kenning.config.StoreOptions` (``KENNING_STORE_*``)."""
        opts = options if options is not None else StoreOptions()
        self.path = str(path)
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.RLock()
        self._depth = 0
        self._writer: int | None = None  # thread id inside a write transaction
        self._txn: Transaction | None = None  # what the outermost write block touched
        self._terms = TermStats()
        self._scope_cache: dict[ScopeFilter, tuple[int, builtins.list[int]]] = {}
        self._turns = WriterTurns(None if self.path == ":memory:" else self.path, BUSY_WAIT_S)
        self._conn = self._connect(self.path)
        with self._lock:
            self._retry_busy(lambda: apply_migrations(self._conn))
            self._retry_busy(lambda: orgcounts.ensure(self._conn))
            self._check_model(model_id, dim)
        # A file database also gets read connections (WAL: reads run beside
        # each other and beside a write); ":memory:" is private to one connection.
        self._readers: ReadPool | None = None
        if self.path != ":memory:":
            self._readers = ReadPool(self.path, opts.read_connections, self._connect)
        self.keyword_max_df_ratio = opts.keyword_max_df_ratio
        # The postings are also each reader's keyword statistics: always kept.
        self.postings = PostingsIndex()
        self.keyword_in_process = opts.keyword_in_process
        self.model_id = model_id
        self.vectors = VectorIndex(
            dim,
            exact_max=opts.exact_search_max,
            ann_min_rows=opts.ann_min_rows,
            connectivity=opts.ann_connectivity,
            expansion=opts.ann_expansion,
        )

    @property
    def last_plan(self) -> Any:
        """How the last vector search ran (the vector index's plan)."""
        return self.vectors.last_plan

    # -- plumbing -----------------------------------------------------------------

    def size_bytes(self) -> int:
        """The database file with its WAL and shared-memory files (0 in memory)."""
        if self.path == ":memory:":
            return 0
        main = Path(self.path)
        return sum(p.stat().st_size for p in main.parent.glob(main.name + "*") if p.is_file())

    def footprint(self, org_id: str | None = None) -> Footprint:
        """Rows per kind (see :class:`~kenning.stores.base.Footprint`)."""
        with self._read() as conn:
            return footprint(conn, org_id)

    def count_memories(self, org_id: str, cap: int) -> int:
        """How many memories (any status) ``org_id`` holds (exact: ``cap`` only bounds
        the scan of a database without kept counts, see :mod:`.orgcounts`).

        Read on the write connection: inside :meth:`atomic` the count includes
        the block's own writes and, the database's write lock being held since
        ``BEGIN IMMEDIATE``, stays true until the block commits.
        """
        with self.atomic() as conn:
            return orgcounts.count(conn, org_id, cap)

    def close(self) -> None:
        """Close the connections."""
        if self._readers is not None:
            self._readers.close()
        with self._lock:
            if self._scrub_pending:  # an erasure's checkpoint that readers held up
                self._scrub_wal(wait=True)
            self._conn.close()
            self._turns.close()

    def _check_model(self, model_id: str, dim: int) -> None:
        with self.atomic() as conn:
            row = conn.execute("SELECT value FROM meta WHERE key = 'embedding'").fetchone()
            wanted = json.dumps({"model_id": model_id, "dim": dim})
            if row is None:
                conn.execute("INSERT INTO meta (key, value) VALUES ('embedding', ?)", (wanted,))
            elif json.loads(row[0])["dim"] != dim:
                raise ConfigError(
                    f"this database holds {row[0]} vectors; the configured embedder is "
                    f"{model_id} ({dim}-d). Use the same model or re-embed the store."
                )
            elif json.loads(row[0])["model_id"] != model_id:
                conn.execute("UPDATE meta SET value = ? WHERE key = 'embedding'", (wanted,))
                log.warning(
                    "this database was last used with %s vectors, now %s: recall compares "
                    "the two until `kenning reembed` gives every memory a %s vector",
                    json.loads(row[0])["model_id"],
                    model_id,
                    model_id,
                )

    def _scope_pk(self, conn: sqlite3.Connection, org_id: str, scope: Scope) -> int:
        conn.execute(
            "INSERT OR IGNORE INTO scopes (org_id, kind, owner_id, user_id, key) "
            "VALUES (?, ?, ?, ?, ?)",
            (org_id, scope.kind.value, scope.owner_id, scope.user_id, scope.key),
        )
        row = conn.execute(
            "SELECT pk FROM scopes WHERE org_id = ? AND key = ?", (org_id, scope.key)
        ).fetchone()
        return int(row[0])

    @staticmethod
    def _fts_write(conn: sqlite3.Connection, pk: int, record: MemoryRecord) -> None:
        conn.execute(_FTS_SQL, _fts_row(pk, record))

    # -- writes -------------------------------------------------------------------

    def insert(
        self,
        items: Sequence[tuple[MemoryRecord, np.ndarray]],
        actor: str | None,
        graph: Projection | None = None,
    ) -> None:
        """Store new records, vectors, keyword rows, graph rows and history in one
        transaction (``atomic()`` joins it with what else a write changes).

        A batch whose id or key is taken fails with :class:`Conflict` before it
        writes anything, so inside an enclosing block it fails alone. The rows
        are written a table at a time without a savepoint (SQLite walks a
        savepoint's page images at the end of every statement inside it, so a
        large batch in one slows down as the database grows); should a write
        fail part-way for another reason (a full disk), the enclosing
        transaction rolls back whole."""
        if not items:
            return
        cols = ", ".join(MEMORY_COLUMNS)
        marks = ", ".join("?" * (len(MEMORY_COLUMNS) + 1))
        with self.atomic(savepoint=False) as conn:
            self._check_new(conn, [r for r, _ in items])
            scope_pks = self._scope_pk_map(conn, {(r.org_id, r.scope) for r, _ in items})
            rows = [[*record_params(r), scope_pks[r.org_id, r.scope]] for r, _ in items]
            (before,) = conn.execute(
                "SELECT MAX(COALESCE((SELECT MAX(pk) FROM memories), 0), COALESCE((SELECT seq "
                "FROM sqlite_sequence WHERE name = 'memories'), 0))"
            ).fetchone()
            try:
                conn.executemany(f"INSERT INTO memories ({cols}, scope_pk) VALUES ({marks})", rows)
            except sqlite3.IntegrityError as exc:  # pragma: no cover - _check_new saw to it
                raise Conflict(f"a memory of the batch already exists: {exc}") from exc
            # AUTOINCREMENT under the write lock: the batch took the next pks, in order
            pks = [int(before) + 1 + n for n in range(len(items))]
            (top,) = conn.execute("SELECT MAX(pk) FROM memories").fetchone()
            if top != pks[-1]:  # pragma: no cover - a pk gap would break the invariant
                raise StoreError(f"memories pks {before}+{len(items)} ended at {top}")
            model_id = self.model_id
            conn.executemany(
                "INSERT INTO vectors (pk, model_id, vector) VALUES (?, ?, ?)",
                [
                    (pk, model_id, np.asarray(v, dtype=np.float32).tobytes())
                    for pk, (_, v) in zip(pks, items, strict=True)
                ],
            )
            conn.executemany(
                _FTS_SQL, [_fts_row(pk, r) for pk, (r, _) in zip(pks, items, strict=True)]
            )
            conn.executemany(
                _HISTORY_SQL,
                [
                    _history_row(r, scope_pks[r.org_id, r.scope], "create", actor, {}, r.content)
                    for r, _ in items
                ],
            )
            if graph is not None:
                self._graph_write(conn, graph, items[0][0].created_at.timestamp())

    @staticmethod
    def _check_new(conn: sqlite3.Connection, records: Sequence[MemoryRecord]) -> None:
        """Raise :class:`Conflict` for the first record whose id, or (scope, key) while
        not superseded, is taken: by a stored memory or an earlier one of the batch."""
        ids: dict[str, MemoryRecord] = {}
        keys: dict[tuple[str, str, str], MemoryRecord] = {}
        clash: MemoryRecord | None = None
        for r in records:
            if r.id in ids:
                clash = clash or r
            ids[r.id] = r
            if r.key is not None and r.status is not Status.SUPERSEDED:
                where = (r.org_id, r.scope.key, r.key)
                if where in keys:
                    clash = clash or r
                keys[where] = r
        if clash is None:
            row = conn.execute(
                "SELECT m.id FROM json_each(?) j CROSS JOIN memories m ON m.id = j.value "
                "ORDER BY j.key LIMIT 1",
                (json.dumps(list(ids)),),
            ).fetchone()
            clash = None if row is None else ids[row[0]]
        if clash is None and keys:
            row = conn.execute(
                "SELECT j.key FROM json_each(?) j CROSS JOIN scopes s "
                "ON s.org_id = j.value ->> 0 AND s.key = j.value ->> 1 "
                "CROSS JOIN memories m ON m.scope_pk = s.pk AND m.key = j.value ->> 2 "
                "WHERE m.key IS NOT NULL AND m.status != 'superseded' ORDER BY j.key LIMIT 1",
                (json.dumps(list(keys)),),
            ).fetchone()
            clash = None if row is None else list(keys.values())[row[0]]
        if clash is not None:
            raise Conflict(
                f"memory {clash.id!r} or key {clash.key!r} already exists in "
                f"scope {clash.scope.key!r}; use upsert to change a keyed memory"
            )

    def _scope_pk_map(
        self, conn: sqlite3.Connection, wanted: set[tuple[str, Scope]]
    ) -> dict[tuple[str, Scope], int]:
        """The pk of each (organization, scope), creating the scopes not stored yet."""
        out: dict[tuple[str, Scope], int] = {}
        by_org: dict[str, dict[str, Scope]] = {}
        for org_id, scope in wanted:
            by_org.setdefault(org_id, {})[scope.key] = scope
        for org_id, scopes in by_org.items():
            found = conn.execute(
                "SELECT key, pk FROM scopes WHERE org_id = ? "
                "AND key IN (SELECT value FROM json_each(?))",
                (org_id, json.dumps(sorted(scopes))),
            ).fetchall()
            for key, pk in found:
                out[org_id, scopes.pop(key)] = int(pk)
            for scope in scopes.values():
                out[org_id, scope] = self._scope_pk(conn, org_id, scope)
        return out

    def replace_many(
        self, replacements: Sequence[Replacement], actor: str | None
    ) -> builtins.list[MemoryRecord]:
        """Several replacements in one transaction (savepoints nest in ``atomic``)."""
        with self.atomic():
            return [
                self.replace(
                    r.record, r.vector, op=r.op, actor=actor, changes=r.changes, graph=r.graph
                )
                for r in replacements
            ]

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
        """Overwrite one record (and vector), bump its version, write history.

        ``graph`` (when the content or tags changed) replaces the memory's
        mentions and content-derived links; its status is always mirrored.
        """
        with self.atomic() as conn:
            row = conn.execute(
                "SELECT pk, scope_pk, version FROM memories WHERE id = ?", (record.id,)
            ).fetchone()
            if row is None:
                raise NotFound(f"memory {record.id!r} not found")
            pk, scope_pk, version = row
            if expected_version is not None and version != expected_version:
                raise Conflict(
                    f"memory {record.id!r} is at version {version}, not {expected_version}"
                )
            record.version = version + 1
            sets = ", ".join(f"{c} = ?" for c in MEMORY_COLUMNS)
            try:
                conn.execute(
                    f"UPDATE memories SET {sets} WHERE pk = ?", [*record_params(record), pk]
                )
            except sqlite3.IntegrityError as exc:
                raise Conflict(
                    f"key {record.key!r} already exists in {record.scope.key!r}"
                ) from exc
            if vector is not None:
                conn.execute(
                    "UPDATE vectors SET vector = ?, model_id = ? WHERE pk = ?",
                    (np.asarray(vector, dtype=np.float32).tobytes(), self.model_id, pk),
                )
            conn.execute("DELETE FROM memories_fts WHERE rowid = ?", (pk,))
            flush_fts(conn)  # before the same rowid comes back (see driver.flush_fts)
            self._fts_write(conn, pk, record)
            self._graph_status(conn, pk, record.status.value)
            if graph is not None:
                self._graph_forget(conn, pk, content_only=True)
                self._graph_write(conn, graph, record.updated_at.timestamp())
            content = record.content if "content" in changes or op == "create" else None
            conn.execute(_HISTORY_SQL, _history_row(record, scope_pk, op, actor, changes, content))
        return record

    def delete(self, org_id: str, memory_id: str, actor: str | None, at: datetime) -> bool:
        """Hard delete from every table; scrub earlier history content. Freed space is
        zeroed, and the write-ahead log is checkpointed and truncated when the
        outermost write block ends (see :meth:`_scrub_wal`)."""
        with self.atomic() as conn:
            row = conn.execute(
                "SELECT pk, scope_pk, version FROM memories WHERE id = ? AND org_id = ?",
                (memory_id, org_id),
            ).fetchone()
            if row is None:
                return False
            pk, scope_pk, version = row
            self._erased()
            self._graph_forget(conn, pk, content_only=False)
            conn.execute("DELETE FROM memories_fts WHERE rowid = ?", (pk,))
            conn.execute("DELETE FROM vectors WHERE pk = ?", (pk,))
            conn.execute("DELETE FROM memories WHERE pk = ?", (pk,))
            conn.execute("DELETE FROM access_log WHERE memory_id = ?", (memory_id,))
            conn.execute(
                "UPDATE history SET content = NULL, changes = '{}' WHERE memory_id = ?",
                (memory_id,),
            )
            conn.execute(
                "INSERT INTO history (memory_id, org_id, scope_pk, op, actor, at, version, changes)"
                " VALUES (?, ?, ?, 'delete', ?, ?, ?, '{}')",
                (memory_id, org_id, scope_pk, actor, at.timestamp(), version),
            )
        return True

    # -- reads --------------------------------------------------------------------

    def get(self, ids: Sequence[str], scopes: ScopeFilter) -> list[MemoryRecord]:
        """Visible records among ``ids``, in the order given."""
        if not ids:
            return []
        where, params = joined_scope_clause(scopes)
        found: dict[str, MemoryRecord] = {}
        with self._read() as conn:
            for start in range(0, len(ids), 500):
                chunk = list(ids[start : start + 500])
                # CROSS JOIN keeps memories (looked up by id) as the outer loop.
                rows = conn.execute(
                    f"{SELECT_MEMORY.replace(' JOIN scopes', ' CROSS JOIN scopes')} "
                    f"WHERE m.id IN ({','.join('?' * len(chunk))}) AND {where}",
                    [*chunk, *params],
                ).fetchall()
                for row in rows:
                    rec = record_from_row(row)
                    found[rec.id] = rec
        return [found[i] for i in ids if i in found]

    def find_by_key(self, org_id: str, scope: Scope, key: str) -> MemoryRecord | None:
        """The non-superseded record with ``key`` in ``scope``."""
        with self._read() as conn:
            row = conn.execute(
                f"{SELECT_MEMORY} WHERE s.org_id = ? AND s.key = ? AND m.key = ? "
                "AND m.status != 'superseded'",
                (org_id, scope.key, key),
            ).fetchone()
        return None if row is None else record_from_row(row)

    def list(
        self,
        scopes: ScopeFilter,
        filters: MemoryFilter,
        *,
        limit: int,
        cursor: tuple[float, str] | None,
    ) -> builtins.list[MemoryRecord]:
        """Newest first, keyset-paginated on (created_at, id)."""
        swhere, sparams = scope_clause(scopes)
        fwhere, fparams = filter_clause(filters)
        params: list[Any] = [*sparams, *fparams]
        after = ""
        if cursor is not None:
            after = " AND (m.created_at < ? OR (m.created_at = ? AND m.id < ?))"
            params.extend([cursor[0], cursor[0], cursor[1]])
        with self._read() as conn:
            rows = conn.execute(
                f"{SELECT_MEMORY} WHERE {swhere} AND {fwhere}{after} "
                "ORDER BY m.created_at DESC, m.id DESC LIMIT ?",
                [*params, limit],
            ).fetchall()
        return [record_from_row(r) for r in rows]

    # -- term statistics and keyword search -------------------------------------

    def keyword_search(
        self, query: str, scopes: ScopeFilter, filters: MemoryFilter, limit: int
    ) -> builtins.list[tuple[str, float]]:
        """FTS5's BM25 (porter stemming) over the query's terms, with the reader's
        statistics, filtered inside the search.

        N, each term's document frequency and the average length are counted over
        the memories of the scopes the reader may read (any status), so another
        organization's memories never move a score; a reader who can read every
        memory gets FTS5's own ``bm25()``. Terms in more than
        ``keyword_max_df_ratio`` of the reader's memories are left out (the
        rarest always stays): their IDF is near zero, but scoring their huge
        match lists would dominate the query time. Scores come from the
        in-process postings (:mod:`.postings`); statuses and a time window are
        checked in the row mirror, other filters in SQL.
        """
        terms = query_terms(query)
        if not terms or scopes.is_empty:
            return []
        with self._read() as conn:
            scope_pks = self._scope_pks(conn, scopes)
            if not scope_pks:
                return []
            self._follow(conn, self.postings)
            phrases = [p for p in self._terms.phrases(conn, terms) if p]
            if not phrases:
                return []
            # The ratio is only a cost guard: below a few thousand matches scoring is cheap.
            pks, scores = self.postings.scores(
                conn, phrases, scope_pks, self.keyword_max_df_ratio, 2000
            )
            if len(pks) == 0:
                return []
            found = None
            if filters.is_timed_only and self.keyword_in_process:
                found = self._keyword_mirrored(conn, pks, scores, scopes, filters, limit)
            if found is None:
                found = self._keyword_joined(conn, pks, scores, scopes, filters, limit)
        return found

    def _keyword_mirrored(
        self,
        conn: sqlite3.Connection,
        pks: np.ndarray,
        scores: np.ndarray,
        scopes: ScopeFilter,
        filters: MemoryFilter,
        limit: int,
    ) -> builtins.list[tuple[str, float]] | None:
        """The best ``limit`` of the scored rows, statuses and time window checked in
        the row mirror (no SQL per match). None when the mirror cannot answer."""
        self._follow(conn, self.vectors)
        statuses = [st.value for st in filters.statuses]
        ok = self.vectors.visible_mask(
            scopes.org_id, pks, self._scope_pks(conn, scopes), statuses, _said_range(filters)
        )
        if ok is None:
            return None
        pks, scores = _best(pks[ok], scores[ok], limit)
        ids = self.vectors.ids_of(scopes.org_id, pks)
        return [(i, float(s)) for i, s in zip(ids, scores, strict=True)]

    def _keyword_joined(
        self,
        conn: sqlite3.Connection,
        pks: np.ndarray,
        scores: np.ndarray,
        scopes: ScopeFilter,
        filters: MemoryFilter,
        limit: int,
    ) -> builtins.list[tuple[str, float]]:
        """The best ``limit`` of the scored rows that pass the scope and filters in
        SQL, checked best first in growing batches (any filter)."""
        pks, scores = _best(pks, scores, len(pks))
        swhere, sparams = scope_clause(scopes)
        fwhere, fparams = filter_clause(filters)
        found: builtins.list[tuple[str, float]] = []
        start, want = 0, 4 * limit + 32
        while start < len(pks) and len(found) < limit:
            chunk = pks[start : start + want]
            passed = dict(
                conn.execute(
                    "SELECT m.pk, m.id FROM memories m WHERE m.pk IN "
                    f"(SELECT value FROM json_each(?)) AND {swhere} AND {fwhere}",
                    [json.dumps(chunk.tolist()), *sparams, *fparams],
                ).fetchall()
            )
            found.extend(
                (passed[int(pk)], float(s))
                for pk, s in zip(chunk, scores[start : start + want], strict=True)
                if int(pk) in passed
            )
            start += want
            want *= 8
        return found[:limit]

    def _scope_pks(self, conn: sqlite3.Connection, scopes: ScopeFilter) -> builtins.list[int]:
        """The pks of the scopes ``scopes`` covers; cached until a scope is added
        (scope rows are never changed or deleted)."""
        (top,) = conn.execute("SELECT COALESCE(MAX(pk), 0) FROM scopes").fetchone()
        hit = self._scope_cache.get(scopes)
        if hit is not None and hit[0] == top:
            return hit[1]
        sub, params = scope_subquery(scopes)
        pks = sorted(r[0] for r in conn.execute(sub, params))
        if len(self._scope_cache) > 10_000:
            self._scope_cache.clear()
        self._scope_cache[scopes] = (int(top), pks)
        return pks

    def common_terms(
        self,
        terms: Sequence[str],
        scopes: ScopeFilter,
        ratio: float,
        min_docs: int,
        max_docs: int,
    ) -> set[str]:
        """Terms in more than ``ratio`` of the visible active memories.

        Exact counts over the reader's own memories (the postings mirror's
        reader mask), whatever the reader's size: counting is a sum over a
        cached mask here, so ``max_docs`` (a bound on the cost elsewhere) is
        not needed. Empty below ``min_docs`` visible memories.
        """
        if not terms or ratio <= 0 or scopes.is_empty:
            return set()
        with self._read() as conn:
            scope_pks = self._scope_pks(conn, scopes)
            if not scope_pks:
                return set()
            self._follow(conn, self.postings)
            phrases = self._terms.phrases(conn, terms)
            common = self.postings.frequent(conn, phrases, scope_pks, ratio, min_docs)
        return {t for t, yes in zip(terms, common, strict=True) if yes}

    def vector_search(
        self, vector: np.ndarray, scopes: ScopeFilter, filters: MemoryFilter, limit: int
    ) -> builtins.list[tuple[str, float]]:
        """Cosine top ``limit`` inside the readable scopes and filters."""
        if scopes.is_empty:
            return []
        restrict: builtins.list[int] | None = None
        with self._read() as conn:
            self._follow(conn, self.vectors)
            scope_pks = self._scope_pks(conn, scopes)
            if not filters.is_timed_only:  # (a time window alone is checked in the mirror)
                fwhere, fparams = filter_clause(filters)
                mwhere, mparams = scope_clause(scopes)
                # a time window reads its rows through the event-time index;
                # the planner would otherwise walk every row of every scope
                timed = filters.event_after is not None or filters.event_before is not None
                hint = " INDEXED BY memories_said_at" if timed else ""
                restrict = [
                    r[0]
                    for r in conn.execute(
                        f"SELECT m.pk FROM memories m{hint} WHERE {mwhere} AND {fwhere}",
                        [*mparams, *fparams],
                    )
                ]
        statuses = [s.value for s in filters.statuses]
        # the window is checked once: in the mirror, or in SQL with the other filters
        said = _said_range(filters) if restrict is None else None
        return self.vectors.search(
            scopes.org_id, vector, scope_pks, statuses, limit, restrict, said
        )

    def scope_neighbours(
        self,
        org_id: str,
        items: Sequence[tuple[Scope, np.ndarray]],
        limit: int,
        statuses: Collection[Status] | None = None,
    ) -> builtins.list[builtins.list[tuple[str, float]]]:
        """For each (scope, vector): the cosine top ``limit`` of the memories of that
        scope with one of ``statuses`` (default: active; the in-process vector index,
        no SQL per vector)."""
        if not items:
            return []
        wanted = [s.value for s in (statuses or MemoryFilter().statuses)]
        with self._read() as conn:
            self._follow(conn, self.vectors)
            pks = {
                scope: self._scope_pks(conn, ScopeFilter(org_id, frozenset({scope})))
                for scope, _ in items
            }
        asked = [(pks[scope][0], vec) for scope, vec in items if pks[scope]]
        found = iter(self.vectors.search_by_scope(org_id, asked, wanted, limit))
        return [next(found) if pks[scope] else [] for scope, _ in items]

    def _active_pks(
        self,
        conn: sqlite3.Connection,
        ids: Sequence[str],
        scopes: ScopeFilter,
        also: Collection[Status] = (),
    ) -> dict[int, str]:
        """pk -> id of the active memories among ``ids`` visible through ``scopes``
        (and of those with one of the statuses ``also``).

        Answered by the vector mirror, first brought up to this read's snapshot
        (it follows the history, which every status or scope change writes), so
        the graph reads skip an id-index lookup per memory; ids it does not hold
        go to SQL.
        """
        statuses = sorted({Status.ACTIVE.value, *(s.value for s in also)})
        self._follow(conn, self.vectors)
        found, rest = self.vectors.active_pks(
            scopes.org_id, ids, set(self._scope_pks(conn, scopes)), [s.value for s in also]
        )
        if rest:
            where, params = joined_scope_clause(scopes)
            for start in range(0, len(rest), 500):
                chunk = rest[start : start + 500]
                found.update(
                    conn.execute(
                        "SELECT m.pk, m.id FROM memories m "
                        "CROSS JOIN scopes s ON s.pk = m.scope_pk "
                        f"WHERE m.id IN ({','.join('?' * len(chunk))}) "
                        f"AND m.status IN ({','.join('?' * len(statuses))}) AND {where}",
                        [*chunk, *statuses, *params],
                    ).fetchall()
                )
        return found

    def vector_scores(
        self, vector: np.ndarray, ids: Sequence[str], scopes: ScopeFilter
    ) -> dict[str, float]:
        """Cosine similarity of ``vector`` with each of ``ids`` visible through ``scopes``."""
        if not ids or scopes.is_empty:
            return {}
        with self._read() as conn:
            self._follow(conn, self.vectors)
            scope_pks = set(self._scope_pks(conn, scopes))
        return self.vectors.scores(scopes.org_id, vector, ids, scope_pks)

    def history(self, memory_id: str, scopes: ScopeFilter) -> builtins.list[HistoryEntry]:
        """The trail of one memory when its scope is visible."""
        swhere, sparams = scope_clause(scopes, alias="h")
        with self._read() as conn:
            rows = conn.execute(
                "SELECT seq, memory_id, op, actor, at, version, content, changes FROM history h "
                f"WHERE h.memory_id = ? AND {swhere} ORDER BY seq",
                [memory_id, *sparams],
            ).fetchall()
        return [
            HistoryEntry(
                r[0], r[1], r[2], r[3], dt(r[4]) or datetime.min, r[5], r[6], json.loads(r[7])
            )
            for r in rows
        ]

    def stats(self, scopes: ScopeFilter, now: datetime) -> builtins.list[LayerStats]:
        """Per-layer counts, confidence and age distributions (aggregated in SQL)."""
        swhere, sparams = scope_clause(scopes)
        now_ts = now.timestamp()
        age = " ".join(
            f"WHEN ? - m.created_at < {d * 86400} THEN '{name}'" for name, d in AGE_BUCKETS
        )
        with self._read() as conn:
            rows = conn.execute(
                f"SELECT s.kind, m.status, m.memory_type, {CONFIDENCE_LEVEL_SQL}, "
                f"CASE {age} ELSE '>=365d' END, COUNT(*), SUM(m.confidence) "
                f"FROM memories m JOIN scopes s ON s.pk = m.scope_pk WHERE {swhere} "
                "GROUP BY 1, 2, 3, 4, 5",
                [*([now_ts] * len(AGE_BUCKETS)), *sparams],
            ).fetchall()
        return layer_stats(rows)

    # -- export / import / embedding cache ------------------------------------------

    def organizations(self) -> builtins.list[str]:
        """Every organization id that has held memories, sorted."""
        with self._read() as conn:
            rows = conn.execute("SELECT DISTINCT org_id FROM scopes ORDER BY 1").fetchall()
        return [r[0] for r in rows]

    def stale_vectors(
        self, org_id: str, model_id: str, limit: int
    ) -> builtins.list[tuple[str, str]]:
        """(memory id, content) of memories of ``org_id`` with another model's vector."""
        with self._read() as conn:
            rows = conn.execute(
                "SELECT m.id, m.content FROM memories m JOIN vectors v ON v.pk = m.pk "
                "WHERE m.org_id = ? AND v.model_id != ? ORDER BY m.pk LIMIT ?",
                (org_id, model_id, limit),
            ).fetchall()
        return [(r[0], r[1]) for r in rows]

    def replace_vectors(
        self, org_id: str, model_id: str, vectors: Sequence[tuple[str, np.ndarray]]
    ) -> int:
        """New vectors in one transaction; this process's vector mirror reloads."""
        if not vectors:
            return 0
        with self.atomic() as conn:
            before = conn.total_changes
            conn.executemany(
                "UPDATE vectors SET model_id = ?, vector = ? WHERE pk = "
                "(SELECT pk FROM memories WHERE id = ? AND org_id = ?)",
                [
                    (model_id, np.asarray(v, dtype=np.float32).tobytes(), mid, org_id)
                    for mid, v in vectors
                ],
            )
            changed = conn.total_changes - before
            # the history does not record a new vector: the mirror reloads after the block
            self._at_end(self.vectors.invalidate)
        return int(changed)

    def get_vectors(self, model_id: str, hashes: Sequence[str]) -> dict[str, np.ndarray]:
        """Embedding cache: the stored vectors of memories with these content hashes.

        The vectors table is the cache, so no vector is stored twice.
        """
        out: dict[str, np.ndarray] = {}
        with self._read() as conn:
            for start in range(0, len(hashes), 500):
                chunk = list(hashes[start : start + 500])
                for h, blob in conn.execute(
                    "SELECT m.content_hash, v.vector FROM memories m JOIN vectors v ON v.pk = m.pk "
                    f"WHERE v.model_id = ? AND m.content_hash IN ({','.join('?' * len(chunk))})",
                    [model_id, *chunk],
                ):
                    out[h] = np.frombuffer(blob, dtype=np.float32).copy()
        return out

    def put_vectors(self, model_id: str, items: Mapping[str, np.ndarray]) -> None:
        """Nothing to do: vectors become cached when their memory is inserted."""


def _best(pks: np.ndarray, scores: np.ndarray, limit: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``limit`` best rows, best first (ties by row, as FTS5 scans them)."""
    if len(pks) > limit:
        top = np.argpartition(-scores, limit - 1)[:limit]
        pks, scores = pks[top], scores[top]
    order = np.lexsort((pks, -scores))
    return pks[order], scores[order]


def _said_range(filters: MemoryFilter) -> SaidRange | None:
    """The filter's event-time window as timestamps (None: no window)."""
    if filters.event_after is None and filters.event_before is None:
        return None
    return ts(filters.event_after), ts(filters.event_before)
