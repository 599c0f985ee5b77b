"""Per-organization memory quotas (``Settings.max_memories_per_org``).

The write pipeline checks the quota inside the transaction that inserts
(:meth:`~kenning.write.WritePipeline.commit`, and imports), so a write that
would take an organization past it is refused whole and changes nothing, and
so every door (SDK, CLI, REST, MCP, the client) enforces it alike.

What counts is every memory the organization holds, of any status: archived
and superseded memories take room as active ones do; deleting one frees it.

Counting is cheap and correct under concurrency. SQLite keeps each
organization's count in a table that triggers on ``memories`` maintain in the
writing transaction (:mod:`kenning.stores.sqlite.orgcounts`): the check is one
primary-key read, under the database write lock that ``BEGIN IMMEDIATE`` takes.
PostgreSQL counts the organization's rows on an index, stopping one past the
limit, after taking a transaction-level advisory lock per organization. Either
way the lock is held until the write commits, so two writers (threads,
workers, processes) never both take the last room.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Protocol, runtime_checkable

from .errors import QuotaExceeded
from .stores import Store

__all__ = ["CountsMemories", "check_quota"]


@runtime_checkable
class CountsMemories(Protocol):
    """A store that counts an organization's memories under its quota lock."""

    def count_memories(self, org_id: str, cap: int) -> int:
        """Memories (any status) of ``org_id``, counted up to ``cap``; inside the
        store's ``atomic()`` block, the count holds until the block ends."""


def _count(store: Store, org_id: str, cap: int) -> int:
    if isinstance(store, CountsMemories):
        return store.count_memories(org_id, cap)
    # a store without the capability: a full count, without the lock
    return store.footprint(org_id).memories


def check_quota(store: Store, limit: int | None, org_ids: Iterable[str]) -> None:
    """Refuse (``QuotaExceeded``) new memories, one ``org_ids`` entry each, that
    would take an organization past ``limit`` (None: no quota). Call it inside the
    ``store.atomic()`` block that inserts them."""
    if limit is None:
        return
    for org_id, adding in sorted(Counter(org_ids).items()):
        count = _count(store, org_id, limit + 1)
        if count + adding <= limit:
            continue
        held = f"already more than {limit}" if count > limit else str(count)
        raise QuotaExceeded(
            f"organization {org_id!r} may hold at most {limit} memories: it holds "
            f"{held}, and this write would add {adding}; nothing was written",
            limit=limit,
            count=count,
            adding=adding,
        )
