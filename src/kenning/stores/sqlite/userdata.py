"""What the SQLite store holds about one user, for erasure and export (a mixin of
:class:`~kenning.stores.sqlite.store.SQLiteStore`; see :mod:`kenning.stores.base`).

The engine deletes the user's memories with ``delete`` (which takes their vectors,
keyword rows, graph rows and access log along and scrubs their history); these
methods find those memories, detach the user from what stays, and remove the
rows ``delete`` does not reach: sectors and policies of the user's personal
scopes, and the user's API keys.
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence

from ...models import Scope, ScopeKind
from ..rows import personal_target
from .parts import StoreParts

__all__ = ["SQLiteUserData"]

#: The user's personal scopes in ``scopes`` (params: org, user, user).
_PERSONAL = (
    "SELECT pk FROM scopes WHERE org_id = ? AND ((kind = 'user' AND owner_id = ?) "
    "OR (kind = 'persona_user' AND user_id = ?))"
)


class SQLiteUserData(StoreParts):
    """Per-user reads and removals of the SQLite store."""

    def user_memories(
        self, org_id: str, user_id: str
    ) -> builtins.list[tuple[str, Scope, str | None]]:
        """``(id, scope, created_by)`` of every memory of ``org_id`` (any status) in the
        user's personal scopes or created by the user, by id."""
        with self._read() as conn:
            rows = conn.execute(
                "SELECT m.id, s.kind, s.owner_id, s.user_id, m.created_by FROM memories m "
                f"JOIN scopes s ON s.pk = m.scope_pk WHERE m.org_id = ? AND "
                f"(m.scope_pk IN ({_PERSONAL}) OR m.created_by = ?) ORDER BY m.id",
                (org_id, org_id, user_id, user_id, user_id),
            ).fetchall()
        return [(r[0], Scope(ScopeKind(r[1]), r[2], r[3]), r[4]) for r in rows]

    def set_author(self, org_id: str, ids: Sequence[str], author: str | None) -> int:
        """Set ``created_by`` of these memories of ``org_id`` (no new version, no history
        row); how many changed."""
        changed = 0
        with self.atomic() as conn:
            for start in range(0, len(ids), 500):
                chunk = list(ids[start : start + 500])
                cur = conn.execute(
                    f"UPDATE memories SET created_by = ? WHERE org_id = ? AND id IN "
                    f"({','.join('?' * len(chunk))})",
                    [author, org_id, *chunk],
                )
                changed += cur.rowcount
        return changed

    def forget_user_scopes(self, org_id: str, user_id: str) -> int:
        """Delete the sectors of the user's personal scopes and the policies that target
        those scopes (their memories must be gone first); how many rows went."""
        with self.atomic() as conn:
            sectors = conn.execute(
                f"DELETE FROM sectors WHERE scope_pk IN ({_PERSONAL})", (org_id, user_id, user_id)
            ).rowcount
            targets = [
                r[0]
                for r in conn.execute(
                    "SELECT target FROM policies WHERE org_id = ?", (org_id,)
                ).fetchall()
                if personal_target(r[0], user_id)
            ]
            policies = sum(
                conn.execute(
                    "DELETE FROM policies WHERE org_id = ? AND target = ?", (org_id, target)
                ).rowcount
                for target in set(targets)
            )
        return int(sectors) + int(policies)

    def delete_api_keys(self, org_id: str, user_id: str) -> int:
        """Delete every API key of the user (revoked ones too); how many."""
        with self.atomic() as conn:
            cur = conn.execute(
                "DELETE FROM api_keys WHERE org_id = ? AND user_id = ?", (org_id, user_id)
            )
            return int(cur.rowcount)
