"""A small named-factory registry shared by the LLM and extractor extension points.

It behaves like :mod:`kenning.embeddings.registry`: built-ins are registered
with :meth:`Registry.register` exactly as a plugin may do; packages can also
advertise factories under an entry-point group, listed only when asked and
imported only when created; a registered name wins over an entry point.
Options often come from the environment as strings, so factories convert them
with :func:`coerce_options`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from importlib.metadata import EntryPoint, entry_points
from typing import Any, Generic, TypeVar

from .errors import ConfigError, InvalidInput

__all__ = ["Registry", "coerce_options"]

T = TypeVar("T")


class Registry(Generic[T]):
    """Factories returning instances of ``kind``, by name.

    ``what`` names the extension point in error messages ("extractor", ...).
    """

    def __init__(self, what: str, kind: type[Any], entry_point_group: str) -> None:
        """An empty registry; nothing is imported or listed here."""
        self.what = what
        self.kind = kind
        self.entry_point_group = entry_point_group
        self._lock = threading.Lock()
        self._factories: dict[str, Callable[..., T]] = {}

    def register(self, name: str, factory: Callable[..., T]) -> None:
        """Make ``factory(**options)`` available as :meth:`create` ``(name, **options)``.

        Registering a name again replaces the earlier factory.
        """
        if not isinstance(name, str) or not name.strip():
            raise InvalidInput(f"{self.what} name must be a non-empty string", field="name")
        if not callable(factory):
            raise InvalidInput(f"{self.what} factory must be callable", field="factory")
        with self._lock:
            self._factories[name] = factory

    def _entry_points(self) -> dict[str, EntryPoint]:
        return {ep.name: ep for ep in entry_points(group=self.entry_point_group)}

    def available(self) -> list[str]:
        """Sorted names of every registered and plugin-provided factory."""
        with self._lock:
            names = set(self._factories)
        names.update(self._entry_points())
        return sorted(names)

    def _resolve(self, name: str) -> Callable[..., T]:
        with self._lock:
            factory = self._factories.get(name)
        if factory is not None:
            return factory
        ep = self._entry_points().get(name)
        if ep is None:
            known = ", ".join(self.available()) or "(none)"
            raise ConfigError(f"unknown {self.what} {name!r}; known {self.what}s: {known}")
        try:
            loaded = ep.load()
        except Exception as exc:  # a broken plugin must not look like a kenning bug
            raise ConfigError(
                f"{self.what} plugin {name!r} ({ep.value}) failed to load: {exc}"
            ) from exc
        if not callable(loaded):
            raise ConfigError(f"{self.what} plugin {name!r} ({ep.value}) is not callable")
        plugin: Callable[..., T] = loaded
        return plugin

    def create(self, name: str, **options: Any) -> T:
        """Build the instance registered as ``name`` with ``options``.

        Raises :class:`ConfigError` for an unknown name (listing the known
        ones), options the factory does not accept, or a factory that returns
        something other than an instance of ``kind``.
        """
        factory = self._resolve(name)
        try:
            made = factory(**options)
        except TypeError as exc:
            raise ConfigError(f"bad options for {self.what} {name!r}: {exc}") from exc
        if not isinstance(made, self.kind):
            raise ConfigError(
                f"{self.what} factory {name!r} returned {type(made).__name__}, "
                f"not a {self.kind.__name__}"
            )
        return made


def coerce_options(
    options: dict[str, Any], kinds: Mapping[str, type[Any]], where: str
) -> dict[str, Any]:
    """Convert string (or int) values of ``options`` to the types named in ``kinds``.

    ``"4"`` becomes ``4`` for an ``int`` option, ``"0.5"`` becomes ``0.5`` for
    a ``float`` one, ``"true"``/``"false"`` become booleans. Values that are
    already of the right type, ``None`` and unlisted keys are left alone.
    Returns ``options`` (changed in place).
    """
    for key, kind in kinds.items():
        value = options.get(key)
        if value is None or (isinstance(value, kind) and not isinstance(value, bool)):
            continue
        if kind is bool and isinstance(value, bool):
            continue
        try:
            options[key] = _convert(value, kind)
        except (TypeError, ValueError) as exc:
            raise ConfigError(
                f"{where} option {key!r} must be {kind.__name__}, got {value!r}"
            ) from exc
    return options


def _convert(value: Any, kind: type[Any]) -> Any:
    if kind is bool:
        if isinstance(value, str) and value.strip().lower() in {"1", "true", "yes", "on"}:
            return True
        if isinstance(value, str) and value.strip().lower() in {"0", "false", "no", "off"}:
            return False
        raise ValueError(value)
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise TypeError(type(value).__name__)
    return kind(value)
