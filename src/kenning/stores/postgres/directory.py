"""The directory on PostgreSQL: entries, API keys, the audit log (migration ``006``).

Mixed into :class:`~kenning.stores.postgres.store.PostgresStore`; see
:mod:`kenning.stores.base` for the contract. Every row is under row-level
security (migration ``007``): it is read and written only in its
organization's organization-wide context. The calls that cross organizations
stay inside that wall: a key by id runs in the one-key lookup context (that
key's row, read-only); an audit batch sets each organization's context in
turn; the list of organizations reads the tenant ids of ``directory_orgs``,
each confirmed in its own context. Ids sort bytewise (``COLLATE "C"``), as on
SQLite, whatever the database's locale.
"""

from __future__ import annotations

import builtins
import json
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from itertools import groupby
from typing import Any

import psycopg

from ...directory.model import ApiKey, AuditEntry, DirectoryEntry
from ..rows import audit_where
from .parts import StoreParts
from .txn import org_context, set_context

__all__ = ["PostgresDirectory"]

#: The row-level-security context of a transaction bound to no organization.
_NO_CONTEXT = ("", "", "")
_KEY_COLUMNS = "id, org_id, user_id, name, secret_hash, created_at, created_by, persona, revoked_at"
_AUDIT_COLUMNS = "seq, org_id, at, actor, action, target, outcome, detail, request_id"
_INSERT_AUDIT = (
    "INSERT INTO audit_log (org_id, at, actor, action, target, outcome, detail, request_id) "
    "VALUES (%s, %s, %s, %s, %s, %s, %s::jsonb, %s)"
)
_NOTE_ORG = "INSERT INTO directory_orgs (org_id) VALUES (%s) ON CONFLICT DO NOTHING"
_HAS_ROWS = (
    "SELECT EXISTS (SELECT 1 FROM directory WHERE org_id = %(o)s) "
    "OR EXISTS (SELECT 1 FROM api_keys WHERE org_id = %(o)s) "
    "OR EXISTS (SELECT 1 FROM audit_log WHERE org_id = %(o)s)"
)


def _audit_entry(row: tuple[Any, ...]) -> AuditEntry:
    seq, org_id, at, actor, action, target, outcome, detail, request_id = row
    return AuditEntry(org_id, at, actor, action, target, outcome, detail, request_id, seq)


class PostgresDirectory(StoreParts):
    """Directory methods of the PostgreSQL store (see :mod:`kenning.stores.base`)."""

    @contextmanager
    def _recording(self, org_id: str) -> Iterator[psycopg.Connection]:
        """An organization-wide write that also records ``org_id`` in ``directory_orgs``;
        skipped once this store has committed it (outside an ``atomic()`` block, whose
        end could still roll the row back): one statement less on every audit line."""
        known: set[str] = self.__dict__.setdefault("_recorded_orgs", set())
        # directory rows are read on the primary only: no read-your-writes pin (.replicas)
        with self._org_write(org_id, track=False) as conn:
            if org_id not in known:
                conn.execute(_NOTE_ORG, (org_id,))
            yield conn
        if getattr(getattr(self, "_block", None), "conn", None) is None:
            known.add(org_id)

    # -- entries -----------------------------------------------------------------------

    def put_entry(self, entry: DirectoryEntry) -> None:
        """Create or replace one directory row (by org, kind and id)."""
        with self._recording(entry.org_id) as conn:
            conn.execute(
                "INSERT INTO directory (org_id, kind, id, doc, updated_at) "
                "VALUES (%s, %s, %s, %s::jsonb, %s) ON CONFLICT (org_id, kind, id) "
                "DO UPDATE SET doc = excluded.doc, updated_at = excluded.updated_at",
                (entry.org_id, entry.kind, entry.id, json.dumps(dict(entry.doc)), entry.updated_at),
            )

    def get_entry(self, org_id: str, kind: str, entry_id: str) -> DirectoryEntry | None:
        """One directory row, or None."""
        with self._org_write(org_id, track=False) as conn:
            row = conn.execute(
                "SELECT org_id, kind, id, doc, updated_at FROM directory "
                "WHERE org_id = %s AND kind = %s AND id = %s",
                (org_id, kind, entry_id),
            ).fetchone()
        return None if row is None else DirectoryEntry(*row)

    def entries(self, org_id: str, kind: str) -> builtins.list[DirectoryEntry]:
        """Every row of one kind in an organization, by id."""
        with self._org_write(org_id, track=False) as conn:
            rows = conn.execute(
                "SELECT org_id, kind, id, doc, updated_at FROM directory "
                'WHERE org_id = %s AND kind = %s ORDER BY id COLLATE "C"',
                (org_id, kind),
            ).fetchall()
        return [DirectoryEntry(*r) for r in rows]

    def delete_entry(self, org_id: str, kind: str, entry_id: str) -> bool:
        """Remove one directory row; False when there was none."""
        with self._org_write(org_id, track=False) as conn:
            cur = conn.execute(
                "DELETE FROM directory WHERE org_id = %s AND kind = %s AND id = %s",
                (org_id, kind, entry_id),
            )
            return bool(cur.rowcount > 0)

    def directory_orgs(self) -> builtins.list[str]:
        """Every organization id with directory rows, API keys or audit lines, sorted
        (the recorded tenant ids, each checked for rows in its own context)."""
        found: builtins.list[str] = []
        with self._tx(_NO_CONTEXT) as conn:
            known = conn.execute(
                'SELECT org_id FROM directory_orgs ORDER BY org_id COLLATE "C"'
            ).fetchall()
            for (org_id,) in known:
                row = set_context(conn, org_context(org_id)).execute(_HAS_ROWS, {"o": org_id})
                if row.fetchone() == (True,):
                    found.append(org_id)
        return found

    # -- API keys ----------------------------------------------------------------------

    def put_api_key(self, key: ApiKey) -> None:
        """Store a new key; for a known id only a first revocation is recorded (never
        the hash; a revoked key stays revoked)."""
        with self._recording(key.org_id) as conn:
            conn.execute(
                f"INSERT INTO api_keys ({_KEY_COLUMNS}) "
                "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s) "
                "ON CONFLICT (id) DO UPDATE SET "
                "revoked_at = COALESCE(api_keys.revoked_at, excluded.revoked_at)",
                (
                    key.id,
                    key.org_id,
                    key.user_id,
                    key.name,
                    key.secret_hash,
                    key.created_at,
                    key.created_by,
                    key.persona,
                    key.revoked_at,
                ),
            )

    def get_api_key(self, key_id: str) -> ApiKey | None:
        """The key with this public id, in whatever organization, or None: read in
        the one-key lookup context, which shows that key's row and nothing else."""
        with self._tx(_NO_CONTEXT) as conn:
            conn.execute("SELECT set_config('kenning.key_id', %s, true)", (key_id,))
            row = conn.execute(
                f"SELECT {_KEY_COLUMNS} FROM api_keys WHERE id = %s", (key_id,)
            ).fetchone()
        return None if row is None else ApiKey(*row)

    def api_keys(self, org_id: str, user_id: str | None = None) -> builtins.list[ApiKey]:
        """The keys of an organization (of one user when given), oldest first."""
        user_clause = "" if user_id is None else " AND user_id = %s"
        params = [org_id] if user_id is None else [org_id, user_id]
        with self._org_write(org_id, track=False) as conn:
            rows = conn.execute(
                f"SELECT {_KEY_COLUMNS} FROM api_keys WHERE org_id = %s{user_clause} "
                'ORDER BY created_at, id COLLATE "C"',
                params,
            ).fetchall()
        return [ApiKey(*r) for r in rows]

    # -- audit log ---------------------------------------------------------------------

    def append_audit(self, entries: Sequence[AuditEntry]) -> None:
        """Append audit lines in one transaction, each organization's run of lines in
        its own context; ``seq`` comes from the table, in the order given."""
        runs = [(org_id, list(run)) for org_id, run in groupby(entries, key=lambda e: e.org_id)]
        if not runs:
            return
        with self._recording(runs[0][0]) as conn, conn.cursor() as cur:
            for n, (org_id, run) in enumerate(runs):
                if n:  # another organization (a batch across them: migrations)
                    set_context(conn, org_context(org_id))
                    cur.execute(_NOTE_ORG, (org_id,))
                rows = [
                    (
                        e.org_id,
                        e.at,
                        e.actor,
                        e.action,
                        e.target,
                        e.outcome,
                        json.dumps(dict(e.detail), sort_keys=True, default=str),
                        e.request_id,
                    )
                    for e in run
                ]
                if len(rows) == 1:
                    cur.execute(_INSERT_AUDIT, rows[0])
                else:
                    cur.executemany(_INSERT_AUDIT, rows)

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
        """An organization's audit lines, newest first; ``action`` matches a prefix."""
        where, params = audit_where("%s", org_id, actor, action, since, before_seq)
        with self._org_write(org_id, track=False) as conn:
            rows = conn.execute(
                f"SELECT {_AUDIT_COLUMNS} FROM audit_log WHERE {where} ORDER BY seq DESC LIMIT %s",
                [*params, max(limit, 0)],
            ).fetchall()
        return [_audit_entry(r) for r in rows]
