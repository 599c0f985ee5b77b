"""Sector splits (seed 003): a sector that outgrew its maximum becomes two children,
and its memories move to the closer one. Run by consolidation, and by the write
pipeline when a write makes a sector too large."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterator
from dataclasses import replace
from datetime import datetime
from typing import TYPE_CHECKING

from ..access import ScopeFilter
from ..models import MemoryFilter, MemoryRecord, Principal, Status
from ..stores import Replacement
from .model import Sector
from .sectors import SectorInfo, plan_split

if TYPE_CHECKING:
    from ..core import Core

__all__ = ["PAGE", "scan", "split_sector"]

log = logging.getLogger("kenning.sectors")

#: Memories read, or changed in one transaction, at a time by maintenance passes.
PAGE = 1000


def scan(core: Core, view: ScopeFilter, flt: MemoryFilter | None = None) -> Iterator[MemoryRecord]:
    """Every active memory of ``view`` (matching ``flt``), page by page."""
    cursor: tuple[float, str] | None = None
    flt = flt or MemoryFilter(statuses=frozenset({Status.ACTIVE}))
    while True:
        page = core.store.list(view, flt, limit=PAGE, cursor=cursor)
        yield from page
        if len(page) < PAGE:
            return
        cursor = (page[-1].created_at.timestamp(), page[-1].id)


def split_sector(core: Core, sector: Sector, who: Principal, now: datetime) -> bool:
    """Split ``sector`` in two children and move its memories; False when it cannot be
    split meaningfully (its maximum doubles instead, so the attempt is not repeated on
    every write)."""
    store = core.store
    view = ScopeFilter(sector.org_id, frozenset({sector.scope}))
    members = list(scan(core, view, MemoryFilter(sector_id=sector.id)))
    vectors = store.memory_vectors([r.id for r in members], view)
    plan = plan_split(
        SectorInfo.from_sector(sector),
        [(r.id, vectors[r.id], r.tags, r.content) for r in members if r.id in vectors],
    )
    if plan is None:
        log.info("sector %s could not be split meaningfully; max size doubled", sector.id)
        sector.max_size = max(sector.max_size, sector.size) * 2
        sector.updated_at = now
        store.put_sector(sector)
        return False
    by_id = {r.id: r for r in members}
    with store.atomic():
        child_ids = []
        for name, topics, centroid in plan.children:
            child = Sector(
                id=uuid.uuid4().hex,
                org_id=sector.org_id,
                scope=sector.scope,
                name=name,
                parent_id=sector.id,
                decay_multiplier=1.0,
                topics=topics,
                centroid=centroid,
                max_size=sector.max_size,
                created_at=now,
                updated_at=now,
            )
            store.put_sector(child)
            child_ids.append(child.id)
        moves = []
        for mid, index in plan.assignment.items():
            old = by_id[mid]
            moved = replace(old, sector_id=child_ids[index], updated_at=now)
            moves.append(Replacement(moved, None, "sector", old.changes_to(moved, ("sector_id",))))
        store.replace_many(moves, who.user_id)
    core.strength.forget_sectors()
    return True
