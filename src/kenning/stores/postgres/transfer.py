"""Export and import of whole memories for the PostgreSQL store (a mixin of
:class:`~kenning.stores.postgres.store.PostgresStore`), with the row shapes
its writes share: records with their vectors and history, and the trails of
deleted memories, verbatim."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import datetime
from typing import Any

import numpy as np
import psycopg
from pgvector import Vector

from ...access import ScopeFilter
from ...errors import ConfigError, Conflict
from ...models import HistoryEntry, MemoryRecord, Scope
from ..rows import tombstones
from .bm25 import TTLCache, doc_length
from .parts import StoreParts
from .sql import (
    MEMORY_COLUMNS,
    SCOPE_COLUMNS,
    SELECT_MEMORY,
    record_from_row,
    record_params,
    scope_clause,
    write_context,
)

__all__ = ["PostgresTransfer", "INSERT_SQL", "HISTORY_SQL", "POSTINGS_SQL", "vec", "doc_len"]

INSERT_COLUMNS = (*MEMORY_COLUMNS, *SCOPE_COLUMNS, "model_id", "embedding", "doc_len")
INSERT_SQL = (
    f"INSERT INTO memories ({', '.join(INSERT_COLUMNS)}) "
    f"VALUES ({', '.join(['%s'] * len(INSERT_COLUMNS))})"
)
HISTORY_SQL = (
    "INSERT INTO history (memory_id, org_id, scope_kind, scope_key, op, actor, at, version, "
    "content, changes) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
)
#: Derive the postings of the memories with these ids from their tsvector.
POSTINGS_SQL = (
    "INSERT INTO postings (pk, lexeme, org_id, scope_kind, scope_key, status, tf, doc_len) "
    "SELECT m.pk, u.lexeme, m.org_id, m.scope_kind, m.scope_key, m.status, "
    "COALESCE(array_length(u.positions, 1), 1), m.doc_len "
    "FROM memories m CROSS JOIN LATERAL unnest(m.tsv) AS u WHERE m.id = ANY(%s)"
)


def vec(vector: Any) -> np.ndarray:
    """float32 numpy from a numpy array or a pgvector ``Vector``."""
    if isinstance(vector, Vector):
        vector = vector.to_numpy()
    return np.asarray(vector, dtype=np.float32)


def doc_len(record: MemoryRecord) -> int:
    return doc_length(record.content, record.key or "", " ".join(record.tags))


class PostgresTransfer(StoreParts):
    """``iter_export``, ``iter_tombstones``, ``import_rows``, ``import_tombstones``."""

    model_id: str
    dim: int
    _counts: TTLCache

    @staticmethod
    def _note_orgs(cur: psycopg.Cursor[Any], org_ids: set[str]) -> None:
        """Record the organizations written to (no lock is taken when already known)."""
        cur.execute(
            "INSERT INTO organizations (org_id) SELECT unnest(%s::text[]) ON CONFLICT DO NOTHING",
            (sorted(org_ids),),
        )

    def iter_export(self, scopes: ScopeFilter, chunk: int = 1000) -> Iterator[dict[str, Any]]:
        """Every visible record with its vector (base64 float32) and history.

        Read in keyset chunks of ``chunk`` memories (two queries each), so an
        export of millions streams in bounded memory.
        """
        if scopes.is_empty:
            return
        swhere, sparams = scope_clause(scopes)
        select = SELECT_MEMORY.replace(
            " FROM memories m", ", m.embedding, m.model_id, m.pk FROM memories m"
        )
        after = 0
        while True:
            with self._read(scopes) as conn:
                rows = conn.execute(
                    f"{select} WHERE {swhere} AND m.pk > %s ORDER BY m.pk LIMIT %s",
                    [*sparams, after, chunk],
                ).fetchall()
                ids = [r[0] for r in rows]
                trails: dict[str, list[dict[str, Any]]] = {i: [] for i in ids}
                for h in conn.execute(
                    "SELECT seq, memory_id, op, actor, at, version, content, changes "
                    "FROM history WHERE memory_id = ANY(%s) ORDER BY seq",
                    (ids,),
                ):
                    entry = HistoryEntry(h[0], h[1], h[2], h[3], h[4], h[5], h[6], dict(h[7]))
                    trails[h[1]].append(entry.to_dict())
            for row in rows:
                rec = record_from_row(row[:-3])
                yield {
                    "record": rec.to_dict(),
                    "vector": base64.b64encode(vec(row[-3]).tobytes()).decode("ascii"),
                    "model_id": row[-2],
                    "history": trails[rec.id],
                }
            if len(rows) < chunk:
                return
            after = rows[-1][-1]

    def iter_tombstones(self, scopes: ScopeFilter) -> Iterator[dict[str, Any]]:
        """The history of each deleted memory visible through ``scopes``."""
        if scopes.is_empty:
            return
        swhere, sparams = scope_clause(scopes, alias="h")
        with self._read(scopes) as conn:
            rows = conn.execute(
                "SELECT h.memory_id, h.org_id, h.scope_key, h.seq, h.op, h.actor, h.at, "
                f"h.version, h.content, h.changes FROM history h WHERE {swhere} AND NOT EXISTS "
                "(SELECT 1 FROM memories m WHERE m.id = h.memory_id) ORDER BY h.memory_id, h.seq",
                sparams,
            ).fetchall()
        yield from tombstones(
            (r[0], r[1], r[2], HistoryEntry(r[3], r[0], r[4], r[5], r[6], r[7], r[8], dict(r[9])))
            for r in rows
        )

    def import_tombstones(self, rows: Sequence[Mapping[str, Any]]) -> int:
        """Insert deleted memories' history verbatim in one transaction."""
        if not rows:
            return 0
        scopes = [(row["org_id"], Scope.parse(row["scope"])) for row in rows]
        with self._tx(write_context(scopes)) as conn, conn.cursor() as cur:
            for row, (org_id, scope) in zip(rows, scopes, strict=True):
                cur.executemany(
                    HISTORY_SQL,
                    [
                        (
                            row["memory_id"],
                            org_id,
                            scope.kind.value,
                            scope.key,
                            h["op"],
                            h["actor"],
                            datetime.fromisoformat(h["at"]),
                            h["version"],
                            h["content"],
                            json.dumps(h["changes"], sort_keys=True),
                        )
                        for h in row["history"]
                    ],
                )
        return len(rows)

    def import_rows(
        self, rows: Sequence[Mapping[str, Any]], progress: Callable[[int], None] | None = None
    ) -> int:
        """Insert exported rows verbatim (ids, times, history) in one transaction."""
        if not rows:
            return 0
        records = [MemoryRecord.from_dict(row["record"]) for row in rows]
        ctx = write_context((r.org_id, r.scope) for r in records)
        try:
            with self._tx(ctx) as conn, conn.cursor() as cur:
                self._note_orgs(cur, {r.org_id for r in records})
                for row, rec in zip(rows, records, strict=True):
                    vector = np.frombuffer(base64.b64decode(row["vector"]), dtype=np.float32)
                    if vector.shape != (self.dim,):
                        raise ConfigError(
                            f"memory {rec.id!r} has a {vector.shape[0]}-d vector; "
                            f"this store holds {self.dim}-d vectors"
                        )
                    cur.execute(
                        INSERT_SQL,
                        [
                            *record_params(rec),
                            row.get("model_id", self.model_id),
                            vector,
                            doc_len(rec),
                        ],
                    )
                    cur.executemany(
                        HISTORY_SQL,
                        [
                            (
                                rec.id,
                                rec.org_id,
                                rec.scope.kind.value,
                                rec.scope.key,
                                h["op"],
                                h["actor"],
                                datetime.fromisoformat(h["at"]),
                                h["version"],
                                h["content"],
                                json.dumps(h["changes"], sort_keys=True),
                            )
                            for h in row.get("history", [])
                        ],
                    )
                    if progress:
                        progress(1)
                cur.execute(POSTINGS_SQL, ([r.id for r in records],))
        except Conflict as exc:
            raise Conflict(f"a memory (or its key) already exists: {exc}") from exc
        self._counts.clear()
        return len(rows)
