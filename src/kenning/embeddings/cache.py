"""A content-hash cache so the same text is never embedded twice.

Vectors are keyed by ``(model_id, content_hash(text))``. :class:`CachedEmbedder`
consults a list of :class:`EmbeddingCacheBackend` in order (e.g. an in-process
:class:`MemoryCacheBackend` in front of the persistent SQLite store), embeds
only what none of them has, and writes the new vectors back to all of them.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from typing import Protocol, runtime_checkable

import numpy as np

from ..errors import EmbeddingError, InvalidInput
from .base import Embedder, Vectors, WrappingEmbedder, check_texts

__all__ = ["content_hash", "EmbeddingCacheBackend", "MemoryCacheBackend", "CachedEmbedder"]


def content_hash(text: str) -> str:
    """The sha256 hex digest of ``text`` encoded as UTF-8."""
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InvalidInput(f"text is not valid UTF-8: {exc}", field="text") from exc
    return hashlib.sha256(data).hexdigest()


@runtime_checkable
class EmbeddingCacheBackend(Protocol):
    """Somewhere vectors can be looked up and stored by ``(model_id, content hash)``."""

    def get_vectors(self, model_id: str, hashes: Sequence[str]) -> dict[str, Vectors]:
        """Return the vectors known for ``hashes`` (missing hashes are simply absent)."""
        ...

    def put_vectors(self, model_id: str, items: Mapping[str, Vectors]) -> None:
        """Store ``items`` (hash → 1-d vector) for ``model_id``, replacing any present."""
        ...


class MemoryCacheBackend:
    """An in-process, thread-safe LRU cache holding at most ``max_items`` vectors."""

    def __init__(self, max_items: int = 100_000) -> None:
        """Create an empty cache bounded to ``max_items`` entries."""
        if isinstance(max_items, bool) or not isinstance(max_items, int) or max_items < 1:
            raise InvalidInput(
                f"max_items must be a positive int, got {max_items!r}", field="max_items"
            )
        self._max_items = max_items
        self._data: OrderedDict[tuple[str, str], Vectors] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        """The number of cached vectors."""
        with self._lock:
            return len(self._data)

    def get_vectors(self, model_id: str, hashes: Sequence[str]) -> dict[str, Vectors]:
        """Return the cached vectors among ``hashes`` and mark them recently used."""
        found: dict[str, Vectors] = {}
        with self._lock:
            for h in hashes:
                key = (model_id, h)
                vector = self._data.get(key)
                if vector is not None:
                    self._data.move_to_end(key)
                    found[h] = vector
        return found

    def put_vectors(self, model_id: str, items: Mapping[str, Vectors]) -> None:
        """Store read-only float32 copies of ``items``, evicting the least recently used."""
        frozen: list[tuple[tuple[str, str], Vectors]] = []
        for h, vector in items.items():
            copy = np.array(vector, dtype=np.float32, copy=True)
            copy.setflags(write=False)
            frozen.append(((model_id, h), copy))
        with self._lock:
            for key, copy in frozen:
                self._data[key] = copy
                self._data.move_to_end(key)
            while len(self._data) > self._max_items:
                self._data.popitem(last=False)

    def clear(self) -> None:
        """Drop every cached vector."""
        with self._lock:
            self._data.clear()


class CachedEmbedder(WrappingEmbedder):
    """Wraps ``inner`` so each distinct text is embedded at most once.

    ``backends`` are consulted in order (default: one fresh
    :class:`MemoryCacheBackend`). Texts none of them has are embedded in a
    single ``inner.embed_batch`` call, with duplicates inside the batch sent
    once; new vectors are written to every backend, and a vector found in a
    later backend is copied into the earlier ones. :attr:`hits` and
    :attr:`misses` count distinct texts per call served from a backend and
    embedded by ``inner`` respectively.
    """

    def __init__(
        self, inner: Embedder, backends: Sequence[EmbeddingCacheBackend] | None = None
    ) -> None:
        """Wrap ``inner`` with ``backends`` (default: one in-memory LRU)."""
        super().__init__(inner)
        self.backends: list[EmbeddingCacheBackend] = (
            [MemoryCacheBackend()] if backends is None else list(backends)
        )
        self._counter_lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def embed_batch(self, texts: Sequence[str]) -> Vectors:
        """Embed ``texts`` using cached vectors where possible (order preserved)."""
        items = check_texts(texts)
        dim = self.dim
        if not items:
            return np.zeros((0, dim), dtype=np.float32)
        model_id = self.model_id
        hashes = [content_hash(t) for t in items]
        first_text: dict[str, str] = {}
        for h, t in zip(hashes, items, strict=True):
            first_text.setdefault(h, t)
        vectors = self._lookup(model_id, list(first_text), dim)
        missing = [h for h in first_text if h not in vectors]
        if missing:
            fresh = self.inner.embed_batch([first_text[h] for h in missing])
            if fresh.shape != (len(missing), dim):
                raise EmbeddingError(
                    f"{self.inner!r} returned shape {fresh.shape}, expected {(len(missing), dim)}"
                )
            new = {h: np.asarray(fresh[i], dtype=np.float32) for i, h in enumerate(missing)}
            for backend in self.backends:
                backend.put_vectors(model_id, new)
            vectors.update(new)
        with self._counter_lock:
            self.hits += len(first_text) - len(missing)
            self.misses += len(missing)
        out = np.empty((len(items), dim), dtype=np.float32)
        for row, h in enumerate(hashes):
            out[row] = vectors[h]
        return out

    def _lookup(self, model_id: str, wanted: list[str], dim: int) -> dict[str, Vectors]:
        """Ask each backend in turn for what is still missing; back-fill earlier ones."""
        found: dict[str, Vectors] = {}
        remaining = wanted
        for position, backend in enumerate(self.backends):
            if not remaining:
                break
            got = backend.get_vectors(model_id, remaining)
            pending = set(remaining)
            # A vector of the wrong shape (stale or corrupt entry) counts as a miss.
            here = {h: v for h, v in got.items() if h in pending and np.shape(v) == (dim,)}
            if here and position:
                for earlier in self.backends[:position]:
                    earlier.put_vectors(model_id, here)
            found.update(here)
            remaining = [h for h in remaining if h not in here]
        return found

    def __repr__(self) -> str:
        """Describe the wrapper and what it wraps."""
        return f"CachedEmbedder({self.inner!r}, backends={len(self.backends)})"
