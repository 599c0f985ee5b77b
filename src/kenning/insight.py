"""Insight for people looking at their memory (the web UI's charts), mixed into
:class:`~kenning.engine.Memory`: recall traffic per day, and how strength decays
for each memory type under the configured lifecycle settings."""

from __future__ import annotations

import builtins
from datetime import timedelta
from typing import Any

from .decay import current_strength, type_defaults
from .facade import Facade
from .models import ALL_SCOPES, MemoryRecord, MemoryType, Principal, Scope, ScopesArg
from .validation import clean_k

__all__ = ["InsightMethods"]


class InsightMethods(Facade):
    """Traffic and decay curves of :class:`~kenning.engine.Memory`."""

    def traffic(
        self,
        days: int = 30,
        *,
        scopes: ScopesArg = ALL_SCOPES,
        principal: Principal | None = None,
    ) -> builtins.list[dict[str, Any]]:
        """Accesses per UTC day over the last ``days`` days (1-366) to the memories
        the caller may read: ``[{"day", "recall", "reinforce", ...}]``, oldest first,
        every day present (zeros included)."""
        who = self.core.who(principal)
        days = clean_k(days, 366, "days")
        view = self.policy.resolve(who, scopes)
        now = self.clock.now()
        start = (now - timedelta(days=days - 1)).replace(hour=0, minute=0, second=0, microsecond=0)
        by_day: dict[str, dict[str, Any]] = {
            (start + timedelta(days=i)).strftime("%Y-%m-%d"): {} for i in range(days)
        }
        for day, kind, n in self.store.access_counts(view, start):
            by_day.setdefault(day, {})[kind] = n
        return [{"day": day, **counts} for day, counts in sorted(by_day.items())]

    def strength_curves(
        self, days: int = 365, points: int = 25
    ) -> dict[str, builtins.list[tuple[float, float]]]:
        """Strength over days without use, per memory type at default importance
        (and ``trivial`` / ``important``), from the lifecycle settings:
        ``{"semantic": [(day, strength), ...], ...}``."""
        days = clean_k(days, 3650, "days")
        points = clean_k(points, 500, "points")
        lc = self.settings.lifecycle
        now = self.clock.now()
        curves: dict[str, builtins.list[tuple[float, float]]] = {}
        series = [(t.value, t, 3) for t in MemoryType]
        series += [
            ("semantic, trivial", MemoryType.SEMANTIC, 1),
            ("semantic, important", MemoryType.SEMANTIC, 4),
        ]
        for name, memory_type, importance in series:
            strength, rate = type_defaults(memory_type, lc.initial_strength, lc.decay_rate)
            base = MemoryRecord(
                id="",
                org_id="",
                scope=Scope.user("curve"),
                content="",
                memory_type=memory_type,
                importance=importance,
                strength=strength,
                decay_rate=rate,
                created_at=now,
            )
            steps = [days * i / (points - 1) if points > 1 else 0.0 for i in range(points)]
            curves[name] = [
                (round(d, 2), round(current_strength(base, now + timedelta(days=d)), 4))
                for d in steps
            ]
        return curves
