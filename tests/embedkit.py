"""A pass-through embedder for tests: the real model, with what it was asked noted."""

from __future__ import annotations

import threading
from collections.abc import Sequence

from kenning.embeddings import Embedder, WrappingEmbedder
from kenning.embeddings.base import Vectors


class CountingEmbedder(WrappingEmbedder):
    """Passes through to ``inner``, recording every batch of texts and the thread
    that asked; ``parallel`` overrides :attr:`Embedder.parallel_query`."""

    def __init__(self, inner: Embedder, parallel: bool | None = None) -> None:
        super().__init__(inner)
        self.parallel = parallel
        self.calls: list[list[str]] = []
        self.threads: list[int] = []

    @property
    def parallel_query(self) -> bool:
        return self.inner.parallel_query if self.parallel is None else self.parallel

    def embed_batch(self, texts: Sequence[str]) -> Vectors:
        self.calls.append(list(texts))
        self.threads.append(threading.get_ident())
        return self.inner.embed_batch(texts)
