"""Export and import of whole memories for the SQLite store (a mixin of
:class:`~kenning.stores.sqlite.store.SQLiteStore`): records with their vectors
and history, and the trails of deleted memories, verbatim."""

from __future__ import annotations

import base64
import builtins
import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import datetime
from typing import Any

from ...access import ScopeFilter
from ...errors import Conflict
from ...models import HistoryEntry, MemoryRecord, Scope
from ..rows import tombstones
from .driver import sqlite3
from .parts import StoreParts
from .sql import MEMORY_COLUMNS, SELECT_MEMORY, dt, record_from_row, record_params, scope_clause

__all__ = ["SQLiteTransfer"]


class SQLiteTransfer(StoreParts):
    """``iter_export``, ``iter_tombstones``, ``import_rows``, ``import_tombstones``."""

    model_id: str

    def history(self, memory_id: str, scopes: ScopeFilter) -> builtins.list[HistoryEntry]:
        """(the store's)"""
        raise NotImplementedError

    @staticmethod
    def _fts_write(conn: sqlite3.Connection, pk: int, record: MemoryRecord) -> None:
        raise NotImplementedError

    def iter_export(self, scopes: ScopeFilter) -> Iterator[dict[str, Any]]:
        """Every visible record with its vector (base64 float32) and history."""
        swhere, sparams = scope_clause(scopes)
        with self._read() as conn:
            rows = conn.execute(
                f"{SELECT_MEMORY.replace('FROM memories m', ', v.vector FROM memories m')} "
                f"JOIN vectors v ON v.pk = m.pk WHERE {swhere} ORDER BY m.pk",
                sparams,
            ).fetchall()
        for row in rows:
            rec = record_from_row(row[:-1])
            yield {
                "record": rec.to_dict(),
                "vector": base64.b64encode(row[-1]).decode("ascii"),
                "model_id": self.model_id,
                "history": [h.to_dict() for h in self.history(rec.id, scopes)],
            }

    def iter_tombstones(self, scopes: ScopeFilter) -> Iterator[dict[str, Any]]:
        """The history of each deleted memory visible through ``scopes``."""
        swhere, sparams = scope_clause(scopes, alias="h")
        with self._read() as conn:
            rows = conn.execute(
                "SELECT h.memory_id, h.org_id, s.key, h.seq, h.op, h.actor, h.at, h.version, "
                "h.content, h.changes FROM history h JOIN scopes s ON s.pk = h.scope_pk "
                f"WHERE {swhere} AND NOT EXISTS (SELECT 1 FROM memories m "
                "WHERE m.id = h.memory_id) ORDER BY h.memory_id, h.seq",
                sparams,
            ).fetchall()
        yield from tombstones(
            (
                r[0],
                r[1],
                r[2],
                HistoryEntry(
                    r[3], r[0], r[4], r[5], dt(r[6]) or datetime.min, r[7], r[8], json.loads(r[9])
                ),
            )
            for r in rows
        )

    def import_tombstones(self, rows: Sequence[Mapping[str, Any]]) -> int:
        """Insert deleted memories' history verbatim in one transaction."""
        with self.atomic() as conn:
            for row in rows:
                scope_pk = self._scope_pk(conn, row["org_id"], Scope.parse(row["scope"]))
                for h in row["history"]:
                    conn.execute(
                        "INSERT INTO history (memory_id, org_id, scope_pk, op, actor, at, version,"
                        " content, changes) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                        (
                            row["memory_id"],
                            row["org_id"],
                            scope_pk,
                            h["op"],
                            h["actor"],
                            datetime.fromisoformat(h["at"]).timestamp(),
                            h["version"],
                            h["content"],
                            json.dumps(h["changes"], sort_keys=True),
                        ),
                    )
        return len(rows)

    def import_rows(
        self, rows: Sequence[Mapping[str, Any]], progress: Callable[[int], None] | None = None
    ) -> int:
        """Insert exported rows verbatim in one transaction; returns how many.

        Inside an enclosing block the rows join it without a savepoint (see
        ``insert``): a failure part-way rolls the whole transaction back."""
        cols = ", ".join(MEMORY_COLUMNS)
        marks = ", ".join("?" * (len(MEMORY_COLUMNS) + 1))
        with self.atomic(savepoint=False) as conn:
            for row in rows:
                rec = MemoryRecord.from_dict(row["record"])
                scope_pk = self._scope_pk(conn, rec.org_id, rec.scope)
                try:
                    cur = conn.execute(
                        f"INSERT INTO memories ({cols}, scope_pk) VALUES ({marks})",
                        [*record_params(rec), scope_pk],
                    )
                except sqlite3.IntegrityError as exc:
                    raise Conflict(f"memory {rec.id!r} (or its key) already exists") from exc
                pk = int(cur.lastrowid or 0)
                conn.execute(
                    "INSERT INTO vectors (pk, model_id, vector) VALUES (?, ?, ?)",
                    (pk, row.get("model_id", self.model_id), base64.b64decode(row["vector"])),
                )
                self._fts_write(conn, pk, rec)
                for h in row.get("history", []):
                    conn.execute(
                        "INSERT INTO history (memory_id, org_id, scope_pk, op, actor, at, version,"
                        " content, changes) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                        (
                            rec.id,
                            rec.org_id,
                            scope_pk,
                            h["op"],
                            h["actor"],
                            datetime.fromisoformat(h["at"]).timestamp(),
                            h["version"],
                            h["content"],
                            json.dumps(h["changes"], sort_keys=True),
                        ),
                    )
                if progress:
                    progress(1)
        return len(rows)
