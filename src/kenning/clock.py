"""Injected time: the engine asks a clock, never ``datetime.now`` directly."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Protocol

from .models import as_utc

__all__ = ["Clock", "SystemClock", "FixedClock"]


class Clock(Protocol):
    """Anything with ``now()`` returning an aware UTC datetime."""

    def now(self) -> datetime:
        """The current time."""


class SystemClock:
    """The real wall clock."""

    def now(self) -> datetime:
        """Current UTC time."""
        return datetime.now(UTC)


class FixedClock:
    """A clock that only moves when told (tests, benchmarks, replays)."""

    def __init__(self, at: datetime) -> None:
        self._at = as_utc(at)

    def now(self) -> datetime:
        """The set time."""
        return self._at

    def set(self, at: datetime) -> None:
        """Jump to ``at``."""
        self._at = as_utc(at)

    def advance(self, **delta: float) -> None:
        """Move forward by ``timedelta(**delta)``."""
        self._at += timedelta(**delta)
