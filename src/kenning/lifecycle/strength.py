"""Strength at read time and reinforcement on access (seed 003's HMD, DESIGN.md §2).

:class:`StrengthModel` turns a record into its current strength with
:func:`kenning.decay.current_strength`, using the decay multiplier of the
memory's sector (the product up to the root, read once per sector and cached
in-process; :meth:`forget_sectors` drops the cache when sectors change), and
turns recall hits into :class:`~kenning.lifecycle.model.Access` rows for one
batched write.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import replace
from datetime import datetime

from ..access import ScopeFilter
from ..decay import current_strength, reinforce
from ..models import MemoryRecord
from ..stores.base import LifecycleStore
from .model import Access
from .sectors import SectorInfo, effective_multiplier

__all__ = ["AccessWriter", "StrengthModel"]

log = logging.getLogger("kenning.access")


class StrengthModel:
    """Current strengths and reinforcement rows for one store (thread-safe)."""

    def __init__(self, store: LifecycleStore, reinforcement: float) -> None:
        self.store = store
        self.reinforcement = reinforcement
        self._multipliers: dict[str, float] = {}
        self._lock = threading.Lock()

    def multiplier(self, sector_id: str | None) -> float:
        """The cached effective decay multiplier of a sector (1.0 when unknown)."""
        return self._multipliers.get(sector_id, 1.0) if sector_id else 1.0

    def learn_sectors(self, records: Iterable[MemoryRecord], scopes: ScopeFilter) -> None:
        """Read the sectors of ``scopes`` once if some record names an unknown one."""
        unknown = {r.sector_id for r in records if r.sector_id} - set(self._multipliers)
        if not unknown:
            return
        infos = {s.id: SectorInfo.from_sector(s) for s in self.store.sectors(scopes)}
        found = {sid: effective_multiplier(sid, infos) for sid in infos}
        with self._lock:
            self._multipliers.update(found)
            for sid in unknown - set(found):  # not visible or gone: neutral, not re-read
                self._multipliers[sid] = 1.0

    def forget_sectors(self) -> None:
        """Drop the cached multipliers (after a sector is created or changed)."""
        with self._lock:
            self._multipliers.clear()

    def of(self, record: MemoryRecord, now: datetime) -> float:
        """The record's strength at ``now``."""
        return current_strength(record, now, self.multiplier(record.sector_id))

    def strengths(self, records: Mapping[str, MemoryRecord], now: datetime) -> dict[str, float]:
        """Id -> current strength for every record."""
        return {mid: self.of(r, now) for mid, r in records.items()}

    def accesses(
        self,
        records: Sequence[MemoryRecord],
        now: datetime,
        access_type: str,
        query: str | None = None,
    ) -> list[Access]:
        """One access per record: its strength now and after reinforcement."""
        out = []
        for r in records:
            before = self.of(r, now)
            out.append(
                Access(
                    r.id,
                    access_type,
                    round(before, 6),
                    reinforce(before, self.reinforcement),
                    now,
                    query,
                )
            )
        return out


class AccessWriter:
    """Writes recall accesses off the caller's path (DESIGN.md §2: "a small batched write").

    Accesses are queued and written by one worker, at most ``delay`` seconds
    after the first of them was queued (sooner once ``max_queued`` wait, or on
    :meth:`flush` and :meth:`close`), all in one transaction. Every write of
    the database makes the other connections drop their page caches, so one
    write per burst of recalls instead of one per recall keeps the next
    recalls' reads warm. A memory accessed again while its first access still
    waits is reinforced from the queued strength, not from the stale stored
    one (the decay of the sub-second gap is ignored), so no reinforcement is
    lost. A failed write is logged and raised again by :meth:`flush`.
    """

    def __init__(
        self,
        store: LifecycleStore,
        reinforcement: float,
        *,
        delay: float = 0.25,
        max_queued: int = 512,
    ) -> None:
        self.store = store
        self.reinforcement = reinforcement
        self.delay = delay
        self.max_queued = max_queued
        self._lock = threading.Lock()
        self._queued: dict[str, list[Access]] = {}
        self._latest: dict[tuple[str, str], Access] = {}  # (org, memory id) -> queued access
        self._count = 0
        self._wake = threading.Event()
        self._drain: Future[None] | None = None
        self._errors: list[Exception] = []
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="kenning-access")

    def submit(self, org_id: str, accesses: Sequence[Access]) -> None:
        """Queue accesses of one organization for the next drain."""
        if not accesses:
            return
        with self._lock:
            queue = self._queued.setdefault(org_id, [])
            for access in accesses:
                prior = self._latest.get((org_id, access.memory_id))
                if prior is not None:  # reinforce on top of the strength still queued
                    before = prior.strength_after
                    after = reinforce(before, self.reinforcement)
                    access = replace(access, strength_before=before, strength_after=after)
                self._latest[(org_id, access.memory_id)] = access
                queue.append(access)
            self._count += len(accesses)
            if self._drain is None:
                self._wake.clear()
                self._drain = self._pool.submit(self._run)
            if self._count >= self.max_queued:
                self._wake.set()

    def _run(self) -> None:
        self._wake.wait(self.delay)
        while True:
            with self._lock:
                batch, self._queued = self._queued, {}
                self._latest.clear()
                self._count = 0
                if not batch:
                    self._drain = None
                    return
            for org_id, accesses in batch.items():
                try:
                    self.store.record_access(org_id, accesses)
                except Exception as exc:  # best effort; reported, never lost silently
                    log.warning("writing %d recall accesses failed: %s", len(accesses), exc)
                    with self._lock:
                        self._errors.append(exc)

    def flush(self) -> None:
        """Wait until everything queued so far is written; raise the first failure."""
        while True:
            with self._lock:
                job = self._drain
            if job is None:
                break
            self._wake.set()  # no waiting out the delay
            job.result()
        with self._lock:
            errors, self._errors = self._errors, []
        if errors:
            raise errors[0]

    def close(self) -> None:
        """Write what is queued (failures only logged), then stop the worker."""
        try:
            self.flush()
        except Exception as exc:  # already logged; closing must not fail on it
            log.debug("access writes failed before close: %s", exc)
        self._pool.shutdown(wait=True)
