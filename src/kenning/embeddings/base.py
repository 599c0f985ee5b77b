"""The :class:`Embedder` contract every embedding backend implements.

An embedder turns texts into float32 vectors of a fixed dimension whose rows
are L2-normalised, so a dot product is a cosine similarity. Backends implement
only :meth:`Embedder.embed_batch`; :meth:`Embedder.embed` and
:meth:`Embedder.embed_many` are built on it.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence

import numpy as np
from numpy.typing import NDArray

from ..errors import InvalidInput
from ..validation import check_texts

__all__ = ["Embedder", "Vectors", "WrappingEmbedder", "check_texts", "normalize_rows"]

#: A float32 matrix of shape ``(n, dim)`` (or a vector of shape ``(dim,)``).
Vectors = NDArray[np.float32]

_EPS = 1e-12


def normalize_rows(matrix: NDArray[np.floating] | Vectors) -> Vectors:
    """Return a float32 copy of a 2-d ``matrix`` with every row scaled to unit L2 norm.

    All-zero rows stay zero instead of becoming NaN.
    """
    out = np.asarray(matrix, dtype=np.float32)
    if out.ndim != 2:
        raise ValueError(f"expected a 2-d matrix, got shape {out.shape}")
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    result: Vectors = (out / np.maximum(norms, _EPS)).astype(np.float32, copy=False)
    return result


class Embedder(ABC):
    """Turns texts into L2-normalised float32 vectors of dimension :attr:`dim`."""

    @property
    @abstractmethod
    def model_id(self) -> str:
        """A stable identifier of the model; vectors from different ids never mix."""

    @property
    @abstractmethod
    def dim(self) -> int:
        """The number of components of every vector this embedder returns."""

    @abstractmethod
    def embed_batch(self, texts: Sequence[str]) -> Vectors:
        """Embed ``texts`` into a float32 array of shape ``(len(texts), dim)``.

        Rows are L2-normalised and in the order of ``texts``; an empty input
        returns an array of shape ``(0, dim)``.
        """

    @property
    def parallel_query(self) -> bool:
        """Whether embedding one text already keeps every core busy (a local model
        running one input on several threads).

        Recall then embeds its query first and runs the keyword search beside
        the vector search, instead of beside the embedding, where it would
        take a core from the model. ``False`` (the default) suits an endpoint
        or a single-threaded model: the keyword search overlaps the embedding.
        """
        return False

    def embed(self, text: str) -> Vectors:
        """Embed one text into a 1-d float32 vector of length :attr:`dim`."""
        if not isinstance(text, str):
            raise InvalidInput(f"text is {type(text).__name__}, expected str", field="text")
        vector: Vectors = self.embed_batch([text])[0]
        return vector

    def embed_many(
        self,
        texts: Sequence[str],
        batch_size: int = 64,
        progress: Callable[[int], None] | None = None,
    ) -> Vectors:
        """Embed any number of texts in chunks of ``batch_size``.

        After each chunk, ``progress`` (if given) is called with the number of
        texts that chunk embedded, so a caller can drive a progress bar.
        """
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise InvalidInput(
                f"batch_size must be a positive int, got {batch_size!r}", field="batch_size"
            )
        items = check_texts(texts)
        if not items:
            return np.zeros((0, self.dim), dtype=np.float32)
        chunks: list[Vectors] = []
        for start in range(0, len(items), batch_size):
            chunk = items[start : start + batch_size]
            chunks.append(self.embed_batch(chunk))
            if progress is not None:
                progress(len(chunk))
        return np.concatenate(chunks, axis=0)

    def __repr__(self) -> str:
        """A short description naming the model."""
        return f"{type(self).__name__}(model_id={self.model_id!r})"


class WrappingEmbedder(Embedder):
    """An embedder that adds behaviour around ``inner`` (a cache, a counter):
    :attr:`model_id`, :attr:`dim` and :attr:`parallel_query` are ``inner``'s, so
    a wrapper never hides how the model it wraps should be called."""

    def __init__(self, inner: Embedder) -> None:
        """Wrap ``inner``; :class:`InvalidInput` when it is not an :class:`Embedder`."""
        if not isinstance(inner, Embedder):
            raise InvalidInput("inner must be an Embedder", field="inner")
        self.inner = inner

    @property
    def model_id(self) -> str:
        """The wrapped embedder's model id."""
        return self.inner.model_id

    @property
    def dim(self) -> int:
        """The wrapped embedder's dimension."""
        return self.inner.dim

    @property
    def parallel_query(self) -> bool:
        """The wrapped embedder's :attr:`Embedder.parallel_query`."""
        return self.inner.parallel_query
