"""The directory on SQLite: entries, API keys, the audit log (migration ``006``).

Mixed into :class:`~kenning.stores.sqlite.store.SQLiteStore`; see
:mod:`kenning.stores.base` for the contract. Documents and audit details are
JSON text; times are epoch seconds like every other table of this store. The
directory holds no memory content and sits outside the scope filter.
"""

from __future__ import annotations

import builtins
import json
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from ...directory.model import ApiKey, AuditEntry, DirectoryEntry
from ..rows import audit_where
from .parts import StoreParts
from .sql import dt, ts

__all__ = ["SQLiteDirectory"]

_KEY_COLUMNS = "id, org_id, user_id, name, secret_hash, created_at, created_by, persona, revoked_at"
_AUDIT_COLUMNS = "seq, org_id, at, actor, action, target, outcome, detail, request_id"


def _at(value: float) -> datetime:
    """Epoch seconds of a NOT NULL column -> aware UTC datetime."""
    return datetime.fromtimestamp(value, UTC)


def _entry(row: tuple[Any, ...]) -> DirectoryEntry:
    org_id, kind, entry_id, doc, updated_at = row
    return DirectoryEntry(org_id, kind, entry_id, json.loads(doc), _at(updated_at))


def _key(row: tuple[Any, ...]) -> ApiKey:
    key_id, org_id, user_id, name, secret_hash, created_at, created_by, persona, revoked = row
    return ApiKey(
        key_id,
        org_id,
        user_id,
        name,
        secret_hash,
        _at(created_at),
        created_by,
        persona,
        dt(revoked),
    )


def _audit_entry(row: tuple[Any, ...]) -> AuditEntry:
    seq, org_id, at, actor, action, target, outcome, detail, request_id = row
    return AuditEntry(
        org_id, _at(at), actor, action, target, outcome, json.loads(detail), request_id, seq
    )


class SQLiteDirectory(StoreParts):
    """Directory methods of the SQLite store (see :mod:`kenning.stores.base`)."""

    # -- entries -----------------------------------------------------------------------

    def put_entry(self, entry: DirectoryEntry) -> None:
        """Create or replace one directory row (by org, kind and id)."""
        with self.atomic() as conn:
            conn.execute(
                "INSERT INTO directory (org_id, kind, id, doc, updated_at) VALUES (?, ?, ?, ?, ?) "
                "ON CONFLICT (org_id, kind, id) DO UPDATE SET doc = excluded.doc, "
                "updated_at = excluded.updated_at",
                (
                    entry.org_id,
                    entry.kind,
                    entry.id,
                    json.dumps(dict(entry.doc), sort_keys=True),
                    ts(entry.updated_at),
                ),
            )

    def get_entry(self, org_id: str, kind: str, entry_id: str) -> DirectoryEntry | None:
        """One directory row, or None."""
        with self._read() as conn:
            row = conn.execute(
                "SELECT org_id, kind, id, doc, updated_at FROM directory "
                "WHERE org_id = ? AND kind = ? AND id = ?",
                (org_id, kind, entry_id),
            ).fetchone()
        return None if row is None else _entry(row)

    def entries(self, org_id: str, kind: str) -> builtins.list[DirectoryEntry]:
        """Every row of one kind in an organization, by id."""
        with self._read() as conn:
            rows = conn.execute(
                "SELECT org_id, kind, id, doc, updated_at FROM directory "
                "WHERE org_id = ? AND kind = ? ORDER BY id",
                (org_id, kind),
            ).fetchall()
        return [_entry(r) for r in rows]

    def delete_entry(self, org_id: str, kind: str, entry_id: str) -> bool:
        """Remove one directory row; False when there was none."""
        with self.atomic() as conn:
            cur = conn.execute(
                "DELETE FROM directory WHERE org_id = ? AND kind = ? AND id = ?",
                (org_id, kind, entry_id),
            )
            return cur.rowcount > 0

    def directory_orgs(self) -> builtins.list[str]:
        """Every organization id with directory rows, API keys or audit lines, sorted."""
        with self._read() as conn:
            rows = conn.execute(
                "SELECT org_id FROM directory UNION SELECT org_id FROM api_keys "
                "UNION SELECT org_id FROM audit_log ORDER BY 1"
            ).fetchall()
        return [r[0] for r in rows]

    # -- API keys ----------------------------------------------------------------------

    def put_api_key(self, key: ApiKey) -> None:
        """Store a new key; for a known id only a first revocation is recorded (never
        the hash; a revoked key stays revoked)."""
        with self.atomic() as conn:
            conn.execute(
                f"INSERT INTO api_keys ({_KEY_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (id) DO UPDATE SET "
                "revoked_at = COALESCE(api_keys.revoked_at, excluded.revoked_at)",
                (
                    key.id,
                    key.org_id,
                    key.user_id,
                    key.name,
                    key.secret_hash,
                    ts(key.created_at),
                    key.created_by,
                    key.persona,
                    ts(key.revoked_at),
                ),
            )

    def get_api_key(self, key_id: str) -> ApiKey | None:
        """The key with this public id, in whatever organization, or None."""
        with self._read() as conn:
            row = conn.execute(
                f"SELECT {_KEY_COLUMNS} FROM api_keys WHERE id = ?", (key_id,)
            ).fetchone()
        return None if row is None else _key(row)

    def api_keys(self, org_id: str, user_id: str | None = None) -> builtins.list[ApiKey]:
        """The keys of an organization (of one user when given), oldest first."""
        user_clause = "" if user_id is None else " AND user_id = ?"
        params = [org_id] if user_id is None else [org_id, user_id]
        with self._read() as conn:
            rows = conn.execute(
                f"SELECT {_KEY_COLUMNS} FROM api_keys WHERE org_id = ?{user_clause} "
                "ORDER BY created_at, id",
                params,
            ).fetchall()
        return [_key(r) for r in rows]

    # -- audit log ---------------------------------------------------------------------

    def append_audit(self, entries: Sequence[AuditEntry]) -> None:
        """Append audit lines in one transaction; ``seq`` comes from the table."""
        if not entries:
            return
        with self.atomic() as conn:
            conn.executemany(
                "INSERT INTO audit_log (org_id, at, actor, action, target, outcome, detail, "
                "request_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (
                        e.org_id,
                        ts(e.at),
                        e.actor,
                        e.action,
                        e.target,
                        e.outcome,
                        json.dumps(dict(e.detail), sort_keys=True, default=str),
                        e.request_id,
                    )
                    for e in entries
                ],
            )

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
        where, params = audit_where(
            "?", org_id, actor, action, None if since is None else ts(since), before_seq
        )
        with self._read() as conn:
            rows = conn.execute(
                f"SELECT {_AUDIT_COLUMNS} FROM audit_log WHERE {where} ORDER BY seq DESC LIMIT ?",
                [*params, max(limit, 0)],
            ).fetchall()
        return [_audit_entry(r) for r in rows]
