"""What the benchmarks share: latency percentiles."""

from __future__ import annotations

import statistics
from collections.abc import Sequence

__all__ = ["percentiles"]


def percentiles(values: Sequence[float]) -> dict[str, float]:
    """p50 and p95 of ``values`` (ms), rounded."""
    if not values:
        return {"p50": 0.0, "p95": 0.0}
    ordered = sorted(values)
    return {
        "p50": round(statistics.median(ordered), 2),
        "p95": round(ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))], 2),
    }
