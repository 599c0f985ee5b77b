"""Rerankers by name: the built-in cross-encoder plus third-party plugins.

``"ms-marco-minilm"`` is registered with :func:`register_reranker` exactly as a
plugin may do; packages can also advertise rerankers under the entry-point
group ``kenning.rerankers`` (a factory returning a :class:`Reranker`).
Options from the environment (``KENNING_RETRIEVAL_RERANK_OPTIONS``) arrive as
strings; the built-in factory converts them.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .._registry import Registry, coerce_options
from .base import Reranker

if TYPE_CHECKING:
    from ..config import RerankRecall

__all__ = [
    "ENTRY_POINT_GROUP",
    "Rerankers",
    "available_rerankers",
    "create_reranker",
    "register_reranker",
]

ENTRY_POINT_GROUP = "kenning.rerankers"

_registry: Registry[Reranker] = Registry("reranker", Reranker, ENTRY_POINT_GROUP)


def register_reranker(name: str, factory: Callable[..., Reranker]) -> None:
    """Make ``factory(**options)`` available as ``create_reranker(name, **options)``."""
    _registry.register(name, factory)


def available_rerankers() -> list[str]:
    """Sorted names of every registered and plugin-provided reranker."""
    return _registry.available()


def create_reranker(name: str, **options: Any) -> Reranker:
    """Build the reranker registered as ``name``; :class:`~kenning.errors.ConfigError`
    for an unknown name, bad options or a factory returning something else."""
    return _registry.create(name, **options)


class Rerankers:
    """The rerankers an engine has built, one per (name, options), built on first use.

    Recall asks for the one its settings name (``retrieval.rerank``), so settings
    changed on a running engine take effect; the engine asks once when it opens,
    so a bad name or a missing model fails there.
    """

    def __init__(self) -> None:
        """No reranker is built yet."""
        self._lock = threading.Lock()
        self._built: dict[tuple[str, str], Reranker] = {}

    def get(self, opts: RerankRecall) -> Reranker | None:
        """The reranker ``opts.model`` names, built and loaded once (None: off)."""
        if opts.model is None:
            return None
        key = (opts.model, json.dumps(opts.options, sort_keys=True))
        with self._lock:
            reranker = self._built.get(key)
            if reranker is None:
                reranker = create_reranker(opts.model, **opts.options)
                reranker.load()
                self._built[key] = reranker
        return reranker


def _ms_marco(**options: Any) -> Reranker:
    from .cross_encoder import CrossEncoder

    coerce_options(options, {"threads": int, "max_tokens": int}, "reranker 'ms-marco-minilm'")
    return CrossEncoder(**options)


register_reranker("ms-marco-minilm", _ms_marco)
