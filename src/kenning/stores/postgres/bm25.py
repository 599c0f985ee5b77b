"""BM25 over English-stem postings, scored like SQLite FTS5's ``bm25()``.

``ts_rank`` is not BM25, so the store ranks with the same formula FTS5 uses
(k1 = 1.2, b = 0.75, IDF = ln((N - df + 0.5) / (df + 0.5)), floored at 1e-6),
term frequencies counted from the ``to_tsvector('english', …)`` positions. N, the average length and
each term's document frequency are counted *inside the reader's visible
scopes* (row-level security applies to the counts too), so one tenant's data
never shifts another's scores. Counts are bounded and cached for a short time:
they steer ranking, never access.
"""

from __future__ import annotations

import math
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Hashable

__all__ = ["K1", "B", "idf", "doc_length", "TTLCache"]

K1 = 1.2
B = 0.75

_WORD = re.compile(r"\w+", re.UNICODE)


def idf(n_docs: int, df: int) -> float:
    """FTS5's IDF: ln((N - df + 0.5) / (df + 0.5)), never below 1e-6."""
    value = math.log((n_docs - df + 0.5) / (df + 0.5))
    return value if value > 1e-6 else 1e-6


def doc_length(*parts: str) -> int:
    """Word tokens in the indexed text (the BM25 document length)."""
    return sum(len(_WORD.findall(p)) for p in parts if p)


class TTLCache:
    """A small thread-safe LRU whose entries expire after ``ttl`` seconds."""

    def __init__(self, size: int = 4096, ttl: float = 60.0) -> None:
        self.size, self.ttl = size, ttl
        self._data: OrderedDict[Hashable, tuple[float, object]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable) -> object | None:
        """The cached value, or None when absent or expired."""
        with self._lock:
            hit = self._data.get(key)
            if hit is None:
                return None
            if time.monotonic() - hit[0] > self.ttl:
                del self._data[key]
                return None
            self._data.move_to_end(key)
            return hit[1]

    def put(self, key: Hashable, value: object) -> None:
        """Store ``value``; the oldest entries go when full."""
        with self._lock:
            self._data[key] = (time.monotonic(), value)
            self._data.move_to_end(key)
            while len(self._data) > self.size:
                self._data.popitem(last=False)

    def clear(self) -> None:
        """Forget everything (after writes that change counts a lot)."""
        with self._lock:
            self._data.clear()
