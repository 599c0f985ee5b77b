"""What the PostgreSQL store holds about one user, for erasure and export (a mixin of
:class:`~kenning.stores.postgres.store.PostgresStore`; see :mod:`kenning.stores.base`).

The engine deletes the user's memories with ``delete`` (which takes their vectors,
postings, graph rows and access log along and scrubs their history); these
methods find those memories, detach the user from what stays, and remove the
rows ``delete`` does not reach: sectors and policies of the user's personal
scopes, and the user's API keys. Each runs in the organization-wide context.
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence

from ...models import Scope, ScopeKind
from ..rows import personal_target
from .parts import StoreParts

__all__ = ["PostgresUserData"]

#: The user's personal scopes, on a table with ``scope_kind``, an owner and a user
#: column (params: user, user).
_PERSONAL = (
    "((scope_kind = 'user' AND {owner} = %s) OR (scope_kind = 'persona_user' AND {user} = %s))"
)


class PostgresUserData(StoreParts):
    """Per-user reads and removals of the PostgreSQL store."""

    def user_memories(
        self, org_id: str, user_id: str
    ) -> builtins.list[tuple[str, Scope, str | None]]:
        """``(id, scope, created_by)`` of every memory of ``org_id`` (any status) in the
        user's personal scopes or created by the user, by id."""
        personal = _PERSONAL.format(owner="scope_owner", user="scope_user")
        with self._org_write(org_id) as conn:
            rows = conn.execute(
                "SELECT id, scope_kind, scope_owner, scope_user, created_by FROM memories "
                f'WHERE org_id = %s AND ({personal} OR created_by = %s) ORDER BY id COLLATE "C"',
                (org_id, user_id, user_id, user_id),
            ).fetchall()
        return [(r[0], Scope(ScopeKind(r[1]), r[2], r[3]), r[4]) for r in rows]

    def set_author(self, org_id: str, ids: Sequence[str], author: str | None) -> int:
        """Set ``created_by`` of these memories of ``org_id`` (no new version, no history
        row); how many changed."""
        if not ids:
            return 0
        with self._org_write(org_id) as conn:
            cur = conn.execute(
                "UPDATE memories SET created_by = %s WHERE org_id = %s AND id = ANY(%s)",
                (author, org_id, list(ids)),
            )
            return int(cur.rowcount)

    def forget_user_scopes(self, org_id: str, user_id: str) -> int:
        """Delete the sectors of the user's personal scopes and the policies that target
        those scopes (their memories must be gone first); how many rows went."""
        personal = _PERSONAL.format(owner="owner_id", user="user_id")
        with self._org_write(org_id) as conn:
            sectors = conn.execute(
                f"DELETE FROM sectors WHERE org_id = %s AND {personal}", (org_id, user_id, user_id)
            ).rowcount
            targets = [
                r[0]
                for r in conn.execute(
                    "SELECT DISTINCT target FROM policies WHERE org_id = %s", (org_id,)
                ).fetchall()
                if personal_target(r[0], user_id)
            ]
            policies = conn.execute(
                "DELETE FROM policies WHERE org_id = %s AND target = ANY(%s)", (org_id, targets)
            ).rowcount
        return int(sectors) + int(policies)

    def delete_api_keys(self, org_id: str, user_id: str) -> int:
        """Delete every API key of the user (revoked ones too); how many."""
        with self._org_write(org_id) as conn:
            cur = conn.execute(
                "DELETE FROM api_keys WHERE org_id = %s AND user_id = %s", (org_id, user_id)
            )
            return int(cur.rowcount)
