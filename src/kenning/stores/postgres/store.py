"""The PostgreSQL store: pgvector HNSW, BM25 over English-stem postings, row-level security.

Every transaction first sets the principal context that the row-level
security policies read (see :mod:`.schema`), then runs its queries with the
same scope filter written into the SQL: two walls, either one enough.
Several processes and threads share one database through a connection pool;
PostgreSQL's MVCC replaces SQLite's single writer. See
:mod:`kenning.stores.base` for the contract.
"""

from __future__ import annotations

import builtins
import json
import logging
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
import psycopg
from pgvector.psycopg import register_vector
from psycopg_pool import ConnectionPool

from ...access import ScopeFilter
from ...config import StoreOptions
from ...errors import ConfigError, Conflict, InvalidInput, NotFound, StoreError
from ...graph.model import Projection
from ...models import HistoryEntry, LayerStats, MemoryFilter, MemoryRecord, Scope
from ...retrieval.text import query_terms
from ..base import Replacement
from ..rows import AGE_BUCKETS, CONFIDENCE_LEVEL_SQL, layer_stats
from .bm25 import K1, B, TTLCache, idf
from .directory import PostgresDirectory
from .graph import PostgresGraph
from .lifecycle import PostgresLifecycle
from .replicas import ReplicaSet, replica_read
from .schema import apply_migrations, ensure_extension
from .sql import (
    MEMORY_COLUMNS,
    SCOPE_COLUMNS,
    SELECT_MEMORY,
    filter_clause,
    record_from_row,
    record_params,
    scope_clause,
    write_context,
)
from .transfer import HISTORY_SQL as _HISTORY_SQL
from .transfer import INSERT_SQL as _INSERT_SQL
from .transfer import POSTINGS_SQL as _POSTINGS_SQL
from .transfer import PostgresTransfer
from .transfer import doc_len as _doc_len
from .transfer import vec as _vec
from .txn import PostgresTransactions
from .userdata import PostgresUserData

log = logging.getLogger("kenning.store")

__all__ = ["PostgresStore", "VectorPlan"]


@dataclass(frozen=True, slots=True)
class VectorPlan:
    """How the last vector search ran: ``exact`` or ``hnsw`` (and whether it fell back)."""

    method: str
    visible: int
    fell_back: bool = False


def _history_row(
    record: MemoryRecord,
    op: str,
    actor: str | None,
    changes: Mapping[str, Any],
    content: str | None,
) -> tuple[Any, ...]:
    return (
        record.id,
        record.org_id,
        record.scope.kind.value,
        record.scope.key,
        op,
        actor,
        record.updated_at,
        record.version,
        content,
        json.dumps(dict(changes), default=str, sort_keys=True),
    )


class PostgresStore(
    PostgresTransactions,
    PostgresTransfer,
    PostgresGraph,
    PostgresLifecycle,
    PostgresDirectory,
    PostgresUserData,
):
    """The server store. ``url`` is a ``postgresql://`` connection URL."""

    kind = "postgresql"

    def __init__(
        self,
        url: str,
        *,
        model_id: str,
        dim: int,
        options: StoreOptions | None = None,
        read_urls: Sequence[str] = (),
    ) -> None:
        """Connect (migrating the schema); ``options`` default to
        :class:`~kenning.config.StoreOptions` (``KENNING_STORE_*``); ``read_urls``:
        hot standbys of this database for reads (:mod:`.replicas`)."""
        opts = options if options is not None else StoreOptions()
        self.url = url
        self._replicas: ReplicaSet | None = None
        self.model_id = model_id
        self.dim = dim
        self.exact_search_max = opts.pg_exact_search_max
        self.ann_expansion = opts.ann_expansion
        self.keyword_max_df_ratio = opts.keyword_max_df_ratio
        self.count_cap = opts.pg_count_cap
        self.postings_budget = opts.keyword_postings_budget
        self._counts = TTLCache(size=4096, ttl=60.0)
        self._lexemes = TTLCache(size=65_536, ttl=3600.0)
        self._block = threading.local()  # this thread's atomic() connection, if any
        self.last_plan = VectorPlan("exact", 0)
        self._setup(url, dim)
        self._pool = ConnectionPool(
            url,
            min_size=1,
            max_size=max(opts.pg_pool_size, 2),
            kwargs={"options": "-c TimeZone=UTC"},
            configure=register_vector,
            open=False,
            name="kenning",
        )
        try:
            self._pool.open(wait=True, timeout=30)
        except Exception as exc:  # psycopg_pool.PoolTimeout and friends
            raise StoreError(f"cannot open a connection pool to {self._safe_url}: {exc}") from exc
        if read_urls:
            self._replicas = ReplicaSet(
                read_urls,
                url,
                max_lag_s=opts.replica_max_lag_s,
                check_s=opts.replica_check_s,
                pool_size=max(opts.pg_pool_size, 2),
            )

    @property
    def replicas(self) -> ReplicaSet | None:
        """The read replicas (None without ``KENNING_DATABASE_READ_URLS``)."""
        return self._replicas

    @property
    def _safe_url(self) -> str:
        head, _, tail = self.url.rpartition("@")
        return f"postgresql://…@{tail}" if head else self.url

    # -- plumbing -----------------------------------------------------------------

    def _setup(self, url: str, dim: int) -> None:
        """Check the role, create pgvector if needed, migrate, check the model."""
        try:
            conn = psycopg.connect(
                url, autocommit=True, connect_timeout=10, options="-c TimeZone=UTC"
            )
        except psycopg.Error as exc:
            raise StoreError(f"cannot connect to PostgreSQL at {self._safe_url}: {exc}") from exc
        try:
            row = conn.execute(
                "SELECT rolsuper OR rolbypassrls FROM pg_roles WHERE rolname = current_user"
            ).fetchone()
            if row is not None and row[0]:
                raise ConfigError(
                    "kenning must not connect to PostgreSQL as a superuser or a BYPASSRLS role: "
                    "row-level security would not apply. Create an application role, e.g. "
                    "CREATE ROLE kenning LOGIN PASSWORD '…'; CREATE DATABASE kenning OWNER "
                    "kenning; and connect as it."
                )
            ensure_extension(conn)
            conn.autocommit = False
            apply_migrations(conn, dim)
            self._check_model(conn, dim)
        except psycopg.Error as exc:
            raise StoreError(f"PostgreSQL set-up failed: {exc}") from exc
        finally:
            conn.close()

    def _check_model(self, conn: psycopg.Connection, dim: int) -> None:
        wanted = json.dumps({"model_id": self.model_id, "dim": dim})
        with conn.transaction():
            row = conn.execute(
                "SELECT value FROM kenning_meta WHERE key = 'embedding' FOR UPDATE"
            ).fetchone()
            if row is None:
                conn.execute(
                    "INSERT INTO kenning_meta (key, value) VALUES ('embedding', %s) "
                    "ON CONFLICT (key) DO NOTHING",
                    (wanted,),
                )
            elif json.loads(row[0])["dim"] != dim:
                raise ConfigError(
                    f"this database holds {row[0]} vectors; the configured embedder is "
                    f"{self.model_id} ({dim}-d). Use the same model or re-embed the store."
                )
            elif json.loads(row[0])["model_id"] != self.model_id:
                conn.execute(
                    "UPDATE kenning_meta SET value = %s WHERE key = 'embedding'", (wanted,)
                )
                log.warning(
                    "this database was last used with %s vectors, now %s: recall compares "
                    "the two until `kenning reembed` gives every memory a %s vector",
                    json.loads(row[0])["model_id"],
                    self.model_id,
                    self.model_id,
                )

    def size_bytes(self) -> int:
        """``pg_database_size`` of the connected database."""
        with self._pool.connection() as conn:
            row = conn.execute("SELECT pg_database_size(current_database())").fetchone()
        return int(row[0]) if row else 0

    def close(self) -> None:
        """Close every pooled connection (the replicas' too)."""
        if self._replicas is not None:
            self._replicas.close()
        self._pool.close()

    # -- writes -------------------------------------------------------------------

    def insert(
        self,
        items: Sequence[tuple[MemoryRecord, np.ndarray]],
        actor: str | None,
        graph: Projection | None = None,
    ) -> None:
        """Store new records (with vector and tsvector), graph rows and history in one
        transaction (``atomic()`` joins it with what else a write changes)."""
        if not items:
            return
        ctx = write_context([(r.org_id, r.scope) for r, _ in items])
        rows = [(*record_params(r), self.model_id, _vec(v), _doc_len(r)) for r, v in items]
        history = [_history_row(r, "create", actor, {}, r.content) for r, _ in items]
        try:
            with self._tx(ctx) as conn, conn.cursor() as cur:
                self._note_orgs(cur, {r.org_id for r, _ in items})
                cur.executemany(_INSERT_SQL, rows)
                cur.execute(_POSTINGS_SQL, ([r.id for r, _ in items],))
                cur.executemany(_HISTORY_SQL, history)
                if graph is not None:
                    self._graph_write(conn, graph, items[0][0].created_at)
        except Conflict as exc:
            record = items[0][0] if len(items) == 1 else None
            what = f"memory {record.id!r} or key {record.key!r}" if record else "a memory or key"
            raise Conflict(
                f"{what} already exists in its scope; use upsert to change a keyed memory ({exc})"
            ) from exc
        self._counts.clear()

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
        with self._org_write(record.org_id) as conn:
            self._replace_on(
                conn, Replacement(record, vector, op, changes, graph), actor, expected_version
            )
        self._counts.clear()
        return record

    def replace_many(
        self, replacements: Sequence[Replacement], actor: str | None
    ) -> builtins.list[MemoryRecord]:
        """Several replacements in one transaction."""
        orgs = {r.record.org_id for r in replacements}
        if not orgs:
            return []
        if len(orgs) > 1:
            raise InvalidInput("replace_many takes the memories of one organization")
        with self._org_write(orgs.pop()) as conn:
            for r in replacements:
                self._replace_on(conn, r, actor)
        self._counts.clear()
        return [r.record for r in replacements]

    def _replace_on(
        self,
        conn: psycopg.Connection,
        r: Replacement,
        actor: str | None,
        expected_version: int | None = None,
    ) -> None:
        record, vector, op, changes, graph = r.record, r.vector, r.op, r.changes, r.graph
        row = conn.execute(
            "SELECT pk, version FROM memories WHERE id = %s AND org_id = %s FOR UPDATE",
            (record.id, record.org_id),
        ).fetchone()
        if row is None:
            raise NotFound(f"memory {record.id!r} not found")
        pk, version = row
        if expected_version is not None and version != expected_version:
            raise Conflict(f"memory {record.id!r} is at version {version}, not {expected_version}")
        record.version = version + 1
        columns = [*MEMORY_COLUMNS, *SCOPE_COLUMNS, "doc_len"]
        values = [*record_params(record), _doc_len(record)]
        if vector is not None:
            columns += ["embedding", "model_id"]
            values += [_vec(vector), self.model_id]
        sets = ", ".join(f"{c} = %s" for c in columns)
        conn.execute(f"UPDATE memories SET {sets} WHERE pk = %s", [*values, pk])
        conn.execute("DELETE FROM postings WHERE pk = %s", (pk,))
        conn.execute(_POSTINGS_SQL, ([record.id],))
        self._graph_status(conn, record.id, record.status.value)
        if graph is not None:
            self._graph_forget(conn, record.id, content_only=True)
            self._graph_write(conn, graph, record.updated_at)
        content = record.content if "content" in changes or op == "create" else None
        conn.execute(_HISTORY_SQL, _history_row(record, op, actor, changes, content))

    def delete(self, org_id: str, memory_id: str, actor: str | None, at: datetime) -> bool:
        """Hard delete (row with its vector, postings, mentions, links, the entities
        left without a mention and the cached vector of its text); scrub earlier
        history content. The bytes stay in the table files until PostgreSQL reuses
        the space (see "Erasure" in ``docs/operations.md``)."""
        with self._org_write(org_id) as conn:
            self._graph_forget(conn, memory_id, content_only=False)
            row = conn.execute(
                "DELETE FROM memories WHERE id = %s AND org_id = %s "
                "RETURNING scope_kind, scope_key, version, pk, content_hash",
                (memory_id, org_id),
            ).fetchone()
            if row is None:
                return False
            kind, key, version, pk, content_hash = row
            conn.execute("DELETE FROM postings WHERE pk = %s", (pk,))
            # the cached vectors of its texts, this one and earlier versions' (a vector
            # reveals something of its text); other memories keep their own vectors
            conn.execute(
                "DELETE FROM embedding_cache WHERE model_id = %s AND content_hash IN "
                "(SELECT %s UNION SELECT encode(sha256(convert_to(content, 'UTF8')), 'hex') "
                "FROM history WHERE memory_id = %s AND content IS NOT NULL)",
                (self.model_id, content_hash, memory_id),
            )
            conn.execute("DELETE FROM access_log WHERE memory_id = %s", (memory_id,))
            conn.execute(
                "UPDATE history SET content = NULL, changes = '{}' WHERE memory_id = %s",
                (memory_id,),
            )
            conn.execute(
                _HISTORY_SQL,
                (memory_id, org_id, kind, key, "delete", actor, at, version, None, "{}"),
            )
        self._counts.clear()
        return True

    # -- reads --------------------------------------------------------------------

    @replica_read
    def get(self, ids: Sequence[str], scopes: ScopeFilter) -> list[MemoryRecord]:
        """Visible records among ``ids``, in the order given."""
        if not ids or scopes.is_empty:
            return []
        where, params = scope_clause(scopes)
        with self._read(scopes) as conn:
            rows = conn.execute(
                f"{SELECT_MEMORY} WHERE m.id = ANY(%s) AND {where}",
                [list(ids), *params],
                binary=True,
            ).fetchall()
        found = {r.id: r for r in map(record_from_row, rows)}
        return [found[i] for i in ids if i in found]

    def find_by_key(self, org_id: str, scope: Scope, key: str) -> MemoryRecord | None:
        """The non-superseded record with ``key`` in ``scope``."""
        view = ScopeFilter(org_id, frozenset({scope}))
        with self._read(view) as conn:
            row = conn.execute(
                f"{SELECT_MEMORY} WHERE m.org_id = %s AND m.scope_key = %s AND m.key = %s "
                "AND m.status <> 'superseded'",
                (org_id, scope.key, key),
            ).fetchone()
        return None if row is None else record_from_row(row)

    @replica_read
    def list(
        self,
        scopes: ScopeFilter,
        filters: MemoryFilter,
        *,
        limit: int,
        cursor: tuple[float, str] | None,
    ) -> builtins.list[MemoryRecord]:
        """Newest first, keyset-paginated on (created_at, id)."""
        if scopes.is_empty:
            return []
        swhere, sparams = scope_clause(scopes)
        fwhere, fparams = filter_clause(filters)
        params: list[Any] = [*sparams, *fparams]
        after = ""
        if cursor is not None:
            after = " AND (m.created_at, m.id) < (%s, %s)"
            params.extend([datetime.fromtimestamp(cursor[0], UTC), cursor[1]])
        with self._read(scopes) as conn:
            rows = conn.execute(
                f"{SELECT_MEMORY} WHERE {swhere} AND {fwhere}{after} "
                "ORDER BY m.created_at DESC, m.id DESC LIMIT %s",
                [*params, limit],
            ).fetchall()
        return [record_from_row(r) for r in rows]

    # -- term statistics ------------------------------------------------------------

    def _lexemes_of(self, conn: psycopg.Connection, terms: Sequence[str]) -> dict[str, str]:
        """Each term's English stem (terms that stem to nothing are left out)."""
        out: dict[str, str] = {}
        missing = []
        for term in terms:
            hit = self._lexemes.get(term)
            if hit is None:
                missing.append(term)
            elif hit:
                out[term] = str(hit)
        if missing:
            rows = conn.execute(
                "SELECT t, (SELECT min(lexeme) FROM unnest(to_tsvector('english', t))) "
                "FROM unnest(%s::text[]) AS t",
                (missing,),
            ).fetchall()
            for term, lexeme in rows:
                self._lexemes.put(term, lexeme or "")
                if lexeme:
                    out[term] = lexeme
        return out

    def _visible(self, conn: psycopg.Connection, scopes: ScopeFilter) -> tuple[int, float]:
        """(active memories visible, their average length), cached for a minute.

        Counted up to ``count_cap`` first (one cheap pass for most readers); a reader
        who sees more is counted in full. Both numbers are the reader's own, never
        the table's: another organization's rows must not move this reader's BM25
        statistics or plan choices.
        """
        key = ("n", scopes)
        hit = self._counts.get(key)
        if hit is not None:
            return hit  # type: ignore[return-value]
        swhere, sparams = scope_clause(scopes)
        n, avg = conn.execute(
            "SELECT count(*), COALESCE(avg(doc_len), 1) FROM (SELECT m.doc_len FROM memories m "
            f"WHERE {swhere} AND m.status = 'active' LIMIT %s) x",
            [*sparams, self.count_cap],
        ).fetchone() or (0, 1.0)
        n = int(n)
        if n >= self.count_cap:
            n, avg = conn.execute(
                "SELECT count(*), COALESCE(avg(m.doc_len), 1) FROM memories m "
                f"WHERE {swhere} AND m.status = 'active'",
                sparams,
            ).fetchone() or (n, avg)
            n = int(n)
        value = (n, max(float(avg), 1.0))
        self._counts.put(key, value)
        return value

    def _doc_freqs(
        self, conn: psycopg.Connection, lexemes: Iterable[str], scopes: ScopeFilter, cap: int
    ) -> dict[str, int]:
        """Visible active memories containing each lexeme, counted up to ``cap`` + 1."""
        out: dict[str, int] = {}
        missing = []
        for lexeme in lexemes:
            hit = self._counts.get(("df", scopes, lexeme, cap))
            if hit is None:
                missing.append(lexeme)
            else:
                out[lexeme] = int(hit)  # type: ignore[call-overload]
        if missing:
            # One statement for all of them; stem equality keeps each sub-select on
            # the postings index (a leakproof operator, so row-level security allows it).
            swhere, sparams = scope_clause(scopes, alias="p")
            rows = conn.execute(
                "SELECT (SELECT count(*) FROM (SELECT 1 FROM postings p WHERE p.org_id = %s "
                f"AND p.lexeme = w.lexeme AND {swhere} AND p.status = 'active' LIMIT %s) x) "
                "FROM unnest(%s::text[]) WITH ORDINALITY AS w(lexeme, n) ORDER BY w.n",
                [scopes.org_id, *sparams, cap + 1, missing],
            ).fetchall()
            for lexeme, (count,) in zip(missing, rows, strict=True):
                self._counts.put(("df", scopes, lexeme, cap), int(count))
                out[lexeme] = int(count)
        return out

    def _scored_lexemes(self, df: dict[str, int], n_docs: int) -> builtins.list[str]:
        """The lexemes worth scoring: rarest first, within the postings budget.

        Lexemes in more than ``keyword_max_df_ratio`` of the reader's memories
        go (near-zero IDF, as in the SQLite store); then rarer lexemes are taken
        while their matches add up to at most ``keyword_postings_budget``, so a
        query's cost does not grow with the store. The rarest always stays.
        """
        ratio_cap = max(int(self.keyword_max_df_ratio * n_docs), 2000)
        ranked = sorted(df, key=lambda lx: (df[lx], lx))
        kept: builtins.list[str] = []
        total = 0
        for lexeme in ranked:
            if kept and (df[lexeme] > ratio_cap or total + df[lexeme] > self.postings_budget):
                break
            kept.append(lexeme)
            total += df[lexeme]
        return kept

    @replica_read
    def keyword_search(
        self, query: str, scopes: ScopeFilter, filters: MemoryFilter, limit: int
    ) -> builtins.list[tuple[str, float]]:
        """BM25 (FTS5's formula) over the query's English stems, inside the filter.

        Scores come from ``postings`` (see :mod:`.schema` for why not a GIN
        index); :meth:`_scored_lexemes` picks the stems. When even the rarest
        stem matches more than the budget, only ``keyword_postings_budget`` of
        its matches are scored (a bounded, approximate answer for a stem too
        common to matter much).
        """
        terms = query_terms(query)
        if not terms or scopes.is_empty:
            return []
        swhere, sparams = scope_clause(scopes)
        fwhere, fparams = filter_clause(filters)
        with self._read(scopes) as conn:
            lexemes = set(self._lexemes_of(conn, terms).values())
            if not lexemes:
                return []
            n_docs, avgdl = self._visible(conn, scopes)
            df = self._doc_freqs(conn, lexemes, scopes, self.postings_budget)
            kept = self._scored_lexemes(df, n_docs)
            weights = [idf(max(n_docs, df[lx]), df[lx]) for lx in kept]
            pwhere, pparams = scope_clause(scopes, alias="p")
            # Postings carry scope and status: with no other filter, rank there and
            # read only the top ``limit`` memories; otherwise filter every candidate.
            top, top_params = (
                ("ORDER BY score DESC, p.pk LIMIT %s", [limit]) if filters.is_plain else ("", [])
            )
            status = "AND p.status = ANY(%s)" if filters.statuses else ""
            statuses = [sorted(x.value for x in filters.statuses)] if filters.statuses else []
            rows = conn.execute(
                "WITH s AS (SELECT p.pk, sum(w.idf * (p.tf * %s) / "
                "(p.tf + %s * (1 - %s + %s * p.doc_len / %s))) AS score "
                "FROM unnest(%s::text[], %s::float8[]) AS w(lexeme, idf) "
                "CROSS JOIN LATERAL (SELECT p.pk, p.tf, p.doc_len FROM postings p "
                f"WHERE p.org_id = %s AND p.lexeme = w.lexeme AND {pwhere} "
                f"{status} LIMIT %s) AS p GROUP BY p.pk {top}) "
                "SELECT m.id, s.score FROM s JOIN memories m ON m.pk = s.pk "
                f"WHERE {swhere} AND {fwhere} ORDER BY s.score DESC, m.pk LIMIT %s",
                [
                    K1 + 1,
                    K1,
                    B,
                    B,
                    avgdl,
                    kept,
                    weights,
                    scopes.org_id,
                    *pparams,
                    *statuses,
                    self.postings_budget,
                    *top_params,
                    *sparams,
                    *fparams,
                    limit,
                ],
            ).fetchall()
        return [(r[0], float(r[1])) for r in rows]

    @replica_read
    def common_terms(
        self,
        terms: Sequence[str],
        scopes: ScopeFilter,
        ratio: float,
        min_docs: int,
        max_docs: int,
    ) -> set[str]:
        """Terms in more than ``ratio`` of the visible active memories (bounded counts).

        Only for readers who see ``min_docs`` to ``max_docs`` memories: past
        that, counting a common term would cost more than the whole recall, and
        the keyword search's own frequency cut-off covers the cost side.
        """
        if not terms or ratio <= 0 or scopes.is_empty:
            return set()
        with self._read(scopes) as conn:
            visible = self._visible(conn, scopes)[0]
            if not min_docs <= visible <= max_docs:
                return set()
            lexemes = self._lexemes_of(conn, terms)
            cap = int(ratio * visible) + 1
            df = self._doc_freqs(conn, set(lexemes.values()), scopes, cap)
        return {t for t, lx in lexemes.items() if df[lx] >= cap}

    @replica_read
    def vector_search(
        self, vector: np.ndarray, scopes: ScopeFilter, filters: MemoryFilter, limit: int
    ) -> builtins.list[tuple[str, float]]:
        """Cosine top ``limit`` inside the readable scopes and filters.

        Small readable sets are scanned exactly; large ones walk the HNSW index
        with pgvector's iterative scan (the filter applied during the walk), and
        fall back to the exact scan if the walk ends with fewer than ``limit``.
        """
        if scopes.is_empty or limit <= 0:
            return []
        swhere, sparams = scope_clause(scopes)
        fwhere, fparams = filter_clause(filters)
        q = _vec(vector)
        with self._read(scopes) as conn:
            visible = self._visible(conn, scopes)[0]
            if visible > self.exact_search_max:
                # Row-level security hides the filter's selectivity from the planner,
                # which then prefers a B-tree scan + sort over thousands of rows; the
                # HNSW walk was chosen from the real count, so leave it the only plan.
                conn.execute(
                    "SELECT set_config('hnsw.ef_search', %s, true), "
                    "set_config('hnsw.iterative_scan', 'relaxed_order', true), "
                    "set_config('enable_seqscan', 'off', true)",
                    (str(max(self.ann_expansion, limit)),),
                )
                hwhere, _ = scope_clause(scopes, unindexed=True)
                hfilter, _ = filter_clause(filters, unindexed=True)
                rows = conn.execute(
                    "SELECT m.id, m.embedding <=> %s AS d FROM memories m "
                    f"WHERE {hwhere} AND {hfilter} ORDER BY d LIMIT %s",
                    [q, *sparams, *fparams, limit],
                ).fetchall()
                if len(rows) >= limit:
                    self.last_plan = VectorPlan("hnsw", visible)
                    return sorted(((r[0], 1.0 - float(r[1])) for r in rows), key=lambda x: -x[1])
            # "+ 0" keeps the planner off the HNSW index: an exact, complete scan.
            rows = conn.execute(
                "SELECT m.id, (m.embedding <=> %s) + 0 AS d FROM memories m "
                f"WHERE {swhere} AND {fwhere} ORDER BY d, m.id LIMIT %s",
                [q, *sparams, *fparams, limit],
            ).fetchall()
            self.last_plan = VectorPlan("exact", visible, visible > self.exact_search_max)
        return [(r[0], 1.0 - float(r[1])) for r in rows]

    @replica_read
    def vector_scores(
        self, vector: np.ndarray, ids: Sequence[str], scopes: ScopeFilter
    ) -> dict[str, float]:
        """Cosine similarity of ``vector`` with each of ``ids`` visible through ``scopes``."""
        if not ids or scopes.is_empty:
            return {}
        swhere, sparams = scope_clause(scopes)
        with self._read(scopes) as conn:
            rows = conn.execute(
                f"SELECT m.id, 1 - (m.embedding <=> %s) FROM memories m "
                f"WHERE m.id = ANY(%s) AND {swhere}",
                [_vec(vector), list(ids), *sparams],
            ).fetchall()
        return {r[0]: float(r[1]) for r in rows}

    @replica_read
    def history(self, memory_id: str, scopes: ScopeFilter) -> builtins.list[HistoryEntry]:
        """The trail of one memory when its scope is visible."""
        if scopes.is_empty:
            return []
        swhere, sparams = scope_clause(scopes, alias="h")
        with self._read(scopes) as conn:
            rows = conn.execute(
                "SELECT seq, memory_id, op, actor, at, version, content, changes FROM history h "
                f"WHERE h.memory_id = %s AND {swhere} ORDER BY seq",
                [memory_id, *sparams],
            ).fetchall()
        return [HistoryEntry(r[0], r[1], r[2], r[3], r[4], r[5], r[6], dict(r[7])) for r in rows]

    @replica_read
    def stats(self, scopes: ScopeFilter, now: datetime) -> builtins.list[LayerStats]:
        """Per-layer counts, confidence and age distributions (aggregated in SQL)."""
        if scopes.is_empty:
            return []
        swhere, sparams = scope_clause(scopes)
        age = " ".join(f"WHEN m.created_at > %s THEN '{name}'" for name, _ in AGE_BUCKETS)
        cutoffs = [now - timedelta(days=d) for _, d in AGE_BUCKETS]
        with self._read(scopes) as conn:
            rows = conn.execute(
                f"SELECT m.scope_kind, m.status, m.memory_type, {CONFIDENCE_LEVEL_SQL}, "
                f"CASE {age} ELSE '>=365d' END, COUNT(*), SUM(m.confidence) "
                f"FROM memories m WHERE {swhere} GROUP BY 1, 2, 3, 4, 5",
                [*cutoffs, *sparams],
            ).fetchall()
        return layer_stats(rows)

    # -- export / import / embedding cache ------------------------------------------

    def organizations(self) -> builtins.list[str]:
        """Every organization id that has held memories, sorted.

        Read from ``organizations`` (ids only, no row-level security): listing
        tenants is an operator's task, and reading any of their rows still needs
        that tenant's context.
        """
        with self._tx(("", "", "")) as conn:
            rows = conn.execute("SELECT org_id FROM organizations ORDER BY 1").fetchall()
        return [r[0] for r in rows]

    def count_memories(self, org_id: str, cap: int) -> int:
        """How many memories (any status) ``org_id`` holds, counted up to ``cap``.

        First takes the organization's quota lock (a transaction-level advisory
        lock): inside :meth:`atomic` it is held until the block commits, so two
        writers of one organization never both count the room one of them takes.
        """
        with self._org_write(org_id) as conn:
            conn.execute(
                "SELECT pg_advisory_xact_lock(hashtextextended('kenning.quota:' || %s, 0))",
                (org_id,),
            )
            row = conn.execute(
                "SELECT count(*) FROM (SELECT 1 FROM memories WHERE org_id = %s LIMIT %s) c",
                (org_id, max(0, cap)),
            ).fetchone()
        return int(row[0]) if row else 0

    def stale_vectors(
        self, org_id: str, model_id: str, limit: int
    ) -> builtins.list[tuple[str, str]]:
        """(memory id, content) of memories of ``org_id`` with another model's vector."""
        with self._org_write(org_id, track=False) as conn:
            rows = conn.execute(
                "SELECT id, content FROM memories WHERE org_id = %s AND model_id <> %s "
                "ORDER BY pk LIMIT %s",
                (org_id, model_id, limit),
            ).fetchall()
        return [(r[0], r[1]) for r in rows]

    def replace_vectors(
        self, org_id: str, model_id: str, vectors: Sequence[tuple[str, np.ndarray]]
    ) -> int:
        """New vectors in one transaction (the HNSW index follows by itself)."""
        if not vectors:
            return 0
        changed = 0
        with self._org_write(org_id) as conn, conn.cursor() as cur:
            for mid, vector in vectors:
                cur.execute(
                    "UPDATE memories SET embedding = %s, model_id = %s "
                    "WHERE org_id = %s AND id = %s",
                    (_vec(vector), model_id, org_id, mid),
                )
                changed += cur.rowcount
        return changed

    def get_vectors(self, model_id: str, hashes: Sequence[str]) -> dict[str, np.ndarray]:
        """Embedding cache lookup (the content-addressed ``embedding_cache`` table)."""
        if not hashes:
            return {}
        with self._tx(("", "", "")) as conn:
            rows = conn.execute(
                "SELECT content_hash, embedding FROM embedding_cache "
                "WHERE model_id = %s AND content_hash = ANY(%s)",
                (model_id, list(hashes)),
            ).fetchall()
        return {h: _vec(v).copy() for h, v in rows}

    def put_vectors(self, model_id: str, items: Mapping[str, np.ndarray]) -> None:
        """Embedding cache write (first writer wins; concurrent writers never conflict)."""
        if not items:
            return
        with self._tx(("", "", "")) as conn, conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO embedding_cache (model_id, content_hash, embedding) "
                "VALUES (%s, %s, %s) ON CONFLICT DO NOTHING",
                [(model_id, h, _vec(v)) for h, v in sorted(items.items())],
            )
