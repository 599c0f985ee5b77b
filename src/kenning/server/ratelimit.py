"""The per-key request rate limit of the server (``KENNING_SERVER_RATE_LIMIT_*``).

Each caller has a token bucket: it holds up to ``burst`` tokens, gains
``rate`` tokens a second, and each request takes one. A request finding the
bucket empty is refused with :class:`~kenning.errors.RateLimited` (HTTP 429
with ``Retry-After``) before it reaches the engine. Buckets are per caller
(an API key, or the organization and user of a JWT), so one noisy key does
not slow the others.

Buckets live in the server process: with several workers, each keeps its own
and a key may reach ``workers x rate``.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable

from ..errors import RateLimited

__all__ = ["RateLimiter", "caller_id"]


class RateLimiter:
    """Token buckets per caller; ``clock`` (seconds, monotonic) is injectable for tests."""

    def __init__(
        self,
        rate: float,
        burst: int,
        *,
        clock: Callable[[], float] = time.monotonic,
        max_buckets: int = 100_000,
    ) -> None:
        if rate <= 0 or burst < 1:
            raise ValueError("rate must be positive and burst at least 1")
        self.rate = float(rate)
        self.burst = int(burst)
        self.clock = clock
        self.max_buckets = max_buckets
        #: caller -> (tokens, at)
        self._buckets: dict[str, tuple[float, float]] = {}
        self._lock = threading.Lock()

    def wait_s(self, caller: str) -> float:
        """Take a token for ``caller``: 0.0 when the request may go on, else the
        seconds until a token is there (nothing is taken then)."""
        now = self.clock()
        with self._lock:
            tokens, at = self._buckets.get(caller, (float(self.burst), now))
            tokens = min(float(self.burst), tokens + max(0.0, now - at) * self.rate)
            if tokens >= 1.0:
                if len(self._buckets) >= self.max_buckets and caller not in self._buckets:
                    self._forget_full(now)
                self._buckets[caller] = (tokens - 1.0, now)
                return 0.0
            self._buckets[caller] = (tokens, now)
            return (1.0 - tokens) / self.rate

    def check(self, caller: str) -> None:
        """Take a token for ``caller`` or raise :class:`RateLimited` (with whole
        seconds to wait, at least 1)."""
        wait = self.wait_s(caller)
        if wait > 0:
            seconds = max(1, math.ceil(wait))
            raise RateLimited(
                f"too many requests for this key: at most {self.rate:g} a second "
                f"(bursts of {self.burst}); retry in {seconds} s",
                retry_after_s=seconds,
            )

    def _forget_full(self, now: float) -> None:
        """Drop the buckets that have refilled (they equal a new one); if none has,
        drop them all rather than grow without bound."""
        full = [
            k
            for k, (tokens, at) in self._buckets.items()
            if tokens + (now - at) * self.rate >= self.burst
        ]
        for k in full:
            del self._buckets[k]
        if not full:
            self._buckets.clear()


def caller_id(org_id: str, user_id: str, key_id: str | None) -> str:
    """The bucket of a caller: its API key, else (a JWT) its organization and user."""
    return f"key:{key_id}" if key_id else f"user:{org_id}/{user_id}"
