"""Embedders by name: built-ins plus third-party plugins.

Built-ins (``"minilm"``, ``"openai"``) are registered with
:func:`register_embedder`, exactly as a plugin may do. Packages can also
advertise embedders under the entry-point group ``kenning.embedders``; the
entry point's name is the embedder name and it must load to a callable that
returns an :class:`Embedder` (a factory function or an ``Embedder`` subclass).
Entry points are listed only when :func:`available_embedders` or
:func:`create_embedder` runs, and a plugin is imported only when it is created.
A name registered with :func:`register_embedder` wins over an entry point.

Options often come from the environment as strings (``KENNING_EMBEDDER_OPTIONS``),
so the built-in factories convert ``"4"`` to ``4`` and so on themselves.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from importlib.metadata import EntryPoint, entry_points
from pathlib import Path
from typing import Any

from ..errors import ConfigError, InvalidInput
from .base import Embedder

__all__ = [
    "ENTRY_POINT_GROUP",
    "register_embedder",
    "create_embedder",
    "available_embedders",
]

ENTRY_POINT_GROUP = "kenning.embedders"

EmbedderFactory = Callable[..., Embedder]

_lock = threading.Lock()
_factories: dict[str, EmbedderFactory] = {}


def register_embedder(name: str, factory: EmbedderFactory) -> None:
    """Make ``factory(**options)`` available as ``create_embedder(name, **options)``.

    Registering a name again replaces the earlier factory.
    """
    if not isinstance(name, str) or not name.strip():
        raise InvalidInput("embedder name must be a non-empty string", field="name")
    if not callable(factory):
        raise InvalidInput("embedder factory must be callable", field="factory")
    with _lock:
        _factories[name] = factory


def _plugin_entry_points() -> dict[str, EntryPoint]:
    """Entry points in :data:`ENTRY_POINT_GROUP`, by name (not loaded)."""
    return {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP)}


def available_embedders() -> list[str]:
    """Sorted names of every registered and plugin-provided embedder."""
    with _lock:
        names = set(_factories)
    names.update(_plugin_entry_points())
    return sorted(names)


def _resolve(name: str) -> EmbedderFactory:
    with _lock:
        factory = _factories.get(name)
    if factory is not None:
        return factory
    ep = _plugin_entry_points().get(name)
    if ep is None:
        known = ", ".join(available_embedders()) or "(none)"
        raise ConfigError(f"unknown embedder {name!r}; known embedders: {known}")
    try:
        loaded = ep.load()
    except Exception as exc:  # a broken plugin must not look like a kenning bug
        raise ConfigError(f"embedder plugin {name!r} ({ep.value}) failed to load: {exc}") from exc
    if not callable(loaded):
        raise ConfigError(f"embedder plugin {name!r} ({ep.value}) is not callable")
    plugin: EmbedderFactory = loaded
    return plugin


def create_embedder(name: str, **options: Any) -> Embedder:
    """Build the embedder registered as ``name`` with ``options``.

    Raises :class:`ConfigError` for an unknown name (listing the known ones),
    options the factory does not accept, or a factory that returns something
    other than an :class:`Embedder`.
    """
    factory = _resolve(name)
    try:
        embedder = factory(**options)
    except TypeError as exc:
        raise ConfigError(f"bad options for embedder {name!r}: {exc}") from exc
    if not isinstance(embedder, Embedder):
        raise ConfigError(
            f"embedder factory {name!r} returned {type(embedder).__name__}, not an Embedder"
        )
    return embedder


def _coerce(options: dict[str, Any], key: str, kind: type[Any], name: str) -> None:
    """Convert ``options[key]`` (often a string from the environment) to ``kind``."""
    value = options.get(key)
    if value is None or (isinstance(value, kind) and not isinstance(value, bool)):
        return
    try:
        if isinstance(value, bool) or (kind is not Path and not isinstance(value, str | int)):
            raise TypeError(type(value).__name__)
        options[key] = kind(value)
    except (TypeError, ValueError) as exc:
        raise ConfigError(
            f"embedder {name!r} option {key!r} must be {kind.__name__}, got {value!r}"
        ) from exc


def _minilm(**options: Any) -> Embedder:
    from .onnx_minilm import MiniLMEmbedder

    for key, kind in (("threads", int), ("query_threads", int), ("sub_batch_size", int)):
        _coerce(options, key, kind, "minilm")
    for key in ("model_path", "tokenizer_path"):
        _coerce(options, key, Path, "minilm")
    return MiniLMEmbedder(**options)


def _openai(**options: Any) -> Embedder:
    from .openai_compat import OpenAIEmbedder

    for key, kind in (
        ("dim", int),
        ("max_retries", int),
        ("batch_size", int),
        ("timeout_s", float),
        ("backoff_s", float),
        ("max_backoff_s", float),
    ):
        _coerce(options, key, kind, "openai")
    return OpenAIEmbedder(**options)


register_embedder("minilm", _minilm)
register_embedder("openai", _openai)
