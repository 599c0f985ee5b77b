"""Text embeddings for kenning: the :class:`Embedder` contract and its backends.

* :class:`MiniLMEmbedder` — local all-MiniLM-L6-v2 (int8 ONNX, 384-d), the default;
* :class:`OpenAIEmbedder` — any OpenAI-compatible ``/v1/embeddings`` endpoint;
* :class:`CachedEmbedder` — wraps either so the same text is embedded only once;
* :class:`BatchingEmbedder` — wraps either so concurrent calls share one model run;
* :func:`create_embedder` — build one by name, including third-party plugins.

Importing this package loads no model and touches no files.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .base import Embedder, WrappingEmbedder
from .batching import BatchingEmbedder
from .cache import CachedEmbedder, EmbeddingCacheBackend, MemoryCacheBackend, content_hash
from .onnx_minilm import MiniLMEmbedder
from .registry import available_embedders, create_embedder, register_embedder

if TYPE_CHECKING:
    from .openai_compat import OpenAIEmbedder


def __getattr__(name: str) -> Any:
    """Import :class:`OpenAIEmbedder` (and httpx) only when it is asked for."""
    if name == "OpenAIEmbedder":
        from .openai_compat import OpenAIEmbedder

        return OpenAIEmbedder
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "Embedder",
    "WrappingEmbedder",
    "MiniLMEmbedder",
    "OpenAIEmbedder",
    "CachedEmbedder",
    "BatchingEmbedder",
    "MemoryCacheBackend",
    "EmbeddingCacheBackend",
    "content_hash",
    "register_embedder",
    "create_embedder",
    "available_embedders",
]
