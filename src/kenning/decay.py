"""Memory strength (seed 003's HMD), computed at read time: pure functions, no I/O.

A memory stores the strength it had at its last access (``strength``), when
that was (``last_accessed``, else ``created_at``), its per-day ``decay_rate``
(0.85-0.99), its ``importance`` and how often it was accessed. Nothing
rewrites rows as time passes (DESIGN.md §2); the current strength is::

    strength(now) = stored · decay_rate ^ steps
    steps = days · sector multiplier / (importance factor · access factor)

* **days** since the last access (or creation);
* **sector multiplier**: the product of the decay multipliers from the
  memory's sector up to the root (>1 fades faster, <1 slower);
* **importance factor** (seed 004's levels): trivial 0.5 (twice as fast),
  low 0.75, medium 1, high 1.5; critical memories do not decay ("permanent
  retention");
* **access factor** ``1 + 0.1 · ln(1 + access_count)``: a memory used often
  fades more slowly (seed 003's access multiplier).

An access (a recall hit or an explicit reinforce) adds ``reinforcement``
(default 0.15) to the current strength, capped at 1, and restarts the clock.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from datetime import datetime

from .models import MemoryRecord, MemoryType

__all__ = [
    "IMPORTANCE_FACTOR",
    "access_factor",
    "current_strength",
    "decay_exponent",
    "reinforce",
    "type_defaults",
]

#: How much longer a memory of each importance lasts (None: it never fades).
IMPORTANCE_FACTOR: Mapping[int, float | None] = {1: 0.5, 2: 0.75, 3: 1.0, 4: 1.5, 5: None}


def access_factor(access_count: int) -> float:
    """Seed 003's access multiplier: frequently used memories decay more slowly."""
    return 1.0 + 0.1 * math.log1p(max(0, access_count))


def decay_exponent(record: MemoryRecord, now: datetime, sector_multiplier: float = 1.0) -> float:
    """The effective number of decay steps (days) since the last access; 0 for critical."""
    factor = IMPORTANCE_FACTOR.get(record.importance, 1.0)
    if factor is None:
        return 0.0
    since = record.last_accessed or record.created_at
    days = max(0.0, (now - since).total_seconds() / 86_400.0)
    return days * sector_multiplier / (factor * access_factor(record.access_count))


def current_strength(record: MemoryRecord, now: datetime, sector_multiplier: float = 1.0) -> float:
    """The memory's strength at ``now`` in [0, 1] (see the module docstring)."""
    steps = decay_exponent(record, now, sector_multiplier)
    value = record.strength * (record.decay_rate**steps) if steps else record.strength
    return min(1.0, max(0.0, value))


def reinforce(current: float, amount: float) -> float:
    """Strength after one access: ``current + amount``, capped at 1."""
    return round(min(1.0, max(0.0, current + amount)), 6)


def type_defaults(
    memory_type: MemoryType, initial: Mapping[str, float], rates: Mapping[str, float]
) -> tuple[float, float]:
    """(initial strength, decay rate) for a memory type, from the lifecycle settings."""
    return initial.get(memory_type.value, 0.8), rates.get(memory_type.value, 0.95)
