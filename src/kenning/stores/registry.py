"""Stores by URL scheme: the built-ins and third-party backends, found the same way.

A backend (:class:`StoreBackend`, one object per backend) knows its URL
schemes, how to check and normalise a URL, how to open a store from settings,
how to read what a database says about itself without opening a store, and how
to show a URL to people. Core code asks the backend of a URL and never branches
on a backend's name.

A package adds a store by declaring an entry point in the group
``kenning.stores`` named after its scheme::

    [project.entry-points."kenning.stores"]
    mystore = "mypackage.backend:MyBackend"

(a :class:`StoreBackend` subclass, or an instance), or by calling
:func:`register_store` — the route the built-ins take too: ``sqlite`` and
``postgresql`` are declared as entry points in kenning's ``pyproject.toml``
and, for a source checkout whose installed metadata lacks them, also listed in
a built-in table. A scheme resolves to a registered backend first, then an
entry point, then the built-in table; entry points are read only when a scheme
is not registered yet, and a backend's module is imported only when needed.
"""

from __future__ import annotations

import importlib
import threading
from abc import ABC, abstractmethod
from dataclasses import dataclass
from importlib.metadata import entry_points
from typing import TYPE_CHECKING, Any, ClassVar
from urllib.parse import urlsplit, urlunsplit

from ..errors import ConfigError, InvalidInput

if TYPE_CHECKING:
    from ..config import Settings
    from .base import Store
    from .moves import MoveReport
    from .routed import RouteTable

__all__ = [
    "ENTRY_POINT_GROUP",
    "DEFAULT_SCHEME",
    "DatabaseInfo",
    "StoreBackend",
    "register_store",
    "unregister_store",
    "find_backend",
    "backend_for",
    "available_schemes",
    "unknown_scheme",
    "mask_password",
]

ENTRY_POINT_GROUP = "kenning.stores"
#: The store a plain file path, and a ``Settings`` without ``database_url``, mean.
DEFAULT_SCHEME = "sqlite"
#: Built-in backends by scheme, for installs whose metadata lacks the entry points.
_BUILTINS = {
    "sqlite": "kenning.stores.sqlite.backend:SQLiteBackend",
    "postgresql": "kenning.stores.postgres.backend:PostgresBackend",
    "postgres": "kenning.stores.postgres.backend:PostgresBackend",
}

_lock = threading.Lock()
_backends: dict[str, StoreBackend] = {}


@dataclass(frozen=True, slots=True)
class DatabaseInfo:
    """What a database says about itself, read without opening a store.

    ``identity`` is equal for two URLs exactly when they reach the same
    database; ``model`` is the recorded embedding model ``(model_id, dim)``,
    None when the database holds no kenning store (yet).
    """

    url: str
    identity: str
    model: tuple[str, int] | None


def mask_password(url: str) -> str:
    """``url`` with its password (if any) replaced by ``***``."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit(parts._replace(netloc=f"{parts.username or ''}:***@{host}"))


class StoreBackend(ABC):
    """One storage backend: its URLs, how to open it and how to inspect it.

    Subclasses set ``schemes`` (the first is canonical) and ``example`` (shown
    in error messages) and implement :meth:`open` and :meth:`inspect`.
    """

    #: URL schemes this backend serves, canonical first (``("postgresql", "postgres")``).
    schemes: ClassVar[tuple[str, ...]] = ()
    #: A URL shape for messages (``"postgresql://USER@HOST/DB"``).
    example: ClassVar[str] = ""
    #: Several server processes may share one database (``kenning serve --workers``).
    serves_processes: ClassVar[bool] = False
    #: A call's time is spent on this machine's cores (an embedded database), not
    #: waiting on a database server: a server process gains nothing from running
    #: more engine calls at once than it has cores for (see
    #: :func:`kenning.lanes.lane_size`).
    bound_by_cores: ClassVar[bool] = False

    def normalise(self, url: str, field: str) -> str:
        """``url`` checked and in canonical form (the canonical scheme);
        :class:`~kenning.errors.InvalidInput` naming ``field`` when it is malformed."""
        scheme, sep, rest = url.partition("://")
        return f"{self.schemes[0]}{sep}{rest}" if scheme != self.schemes[0] else url

    def url_for_path(self, path: str) -> str:
        """The URL of a database given as a plain file path (the default backend's)."""
        raise InvalidInput(f"{self.schemes[0]} stores are not files; give a URL", field="path")

    @abstractmethod
    def open(self, url: str, settings: Settings, model_id: str, dim: int) -> Store:
        """Open (creating or migrating as needed) the store at the normalised ``url``."""

    @abstractmethod
    def inspect(self, url: str, field: str) -> DatabaseInfo:
        """Identity and recorded embedding model of the database at ``url`` (writes nothing)."""

    def route_table(self, url: str) -> RouteTable | None:
        """The routing table of organizations spread over several databases, kept
        in the database at ``url``; None when this backend cannot route (the
        store is then used as it is)."""
        return None

    def move_organization(
        self, home_url: str, org_id: str, to: str, *, write_wait_s: float | None = None
    ) -> MoveReport:
        """Move ``org_id`` to the database ``to`` (``"home"``: back into ``home_url``),
        verified, while the others keep working; ``write_wait_s`` bounds the wait for
        its writes in flight (None: the backend's default). A backend without a
        routing table cannot: :class:`InvalidInput`."""
        raise InvalidInput(
            f"from: organizations can be spread only over PostgreSQL databases; "
            f"the home database is {self.display(home_url)}",
            field="from",
        )

    def display(self, url: str) -> str:
        """``url`` fit for messages and logs (no password)."""
        return mask_password(url)

    def location(self, url: str) -> str:
        """Where ``url`` keeps memories, for people (a file path, or the masked URL)."""
        return self.display(url)


def _as_backend(loaded: Any, where: str) -> StoreBackend:
    if isinstance(loaded, type) and issubclass(loaded, StoreBackend):
        loaded = loaded()
    if not isinstance(loaded, StoreBackend):
        raise ConfigError(f"store plugin {where} is not a StoreBackend")
    return loaded


def register_store(backend: StoreBackend | type[StoreBackend]) -> None:
    """Serve each of ``backend.schemes`` with ``backend`` (replacing an earlier one)."""
    made = _as_backend(backend, repr(backend))
    if not made.schemes or not all(isinstance(s, str) and s for s in made.schemes):
        raise InvalidInput("a store backend needs at least one URL scheme", field="schemes")
    with _lock:
        for scheme in made.schemes:
            _backends[scheme] = made


def unregister_store(scheme: str) -> None:
    """Forget the backend registered (or loaded) for ``scheme``; built-ins and entry
    points are found again on the next lookup."""
    with _lock:
        _backends.pop(scheme, None)


def _load(scheme: str) -> StoreBackend | None:
    """The backend an entry point or the built-in table names for ``scheme``."""
    target = None
    for ep in entry_points(group=ENTRY_POINT_GROUP, name=scheme):
        target = ep.value
        try:
            return _as_backend(ep.load(), f"{scheme!r} ({ep.value})")
        except ConfigError:
            raise
        except Exception as exc:  # a broken plugin must not look like a kenning bug
            raise ConfigError(f"store plugin {scheme!r} ({target}) failed to load: {exc}") from exc
    target = _BUILTINS.get(scheme)
    if target is None:
        return None
    module, _, name = target.partition(":")
    return _as_backend(getattr(importlib.import_module(module), name), target)


def find_backend(scheme: str) -> StoreBackend | None:
    """The backend serving ``scheme``, or None when no store is known for it."""
    with _lock:
        found = _backends.get(scheme)
    if found is not None:
        return found
    loaded = _load(scheme)
    if loaded is not None:
        with _lock:
            found = _backends.setdefault(scheme, loaded)
    return found


def available_schemes() -> list[str]:
    """Every scheme a store is known for (registered, entry points, built-ins), sorted."""
    with _lock:
        names = set(_backends)
    names.update(ep.name for ep in entry_points(group=ENTRY_POINT_GROUP))
    names.update(_BUILTINS)
    return sorted(names)


def _examples() -> list[str]:
    """URL shapes of the known stores, the built-ins first, each backend once."""
    with _lock:
        registered = list(_backends)
    seen: list[StoreBackend] = []
    out: list[str] = []
    for scheme in [*_BUILTINS, *registered, *available_schemes()]:
        backend = _backends.get(scheme) if scheme not in _BUILTINS else find_backend(scheme)
        if backend is None:
            out.append(f"{scheme}://…")
        elif backend not in seen:
            seen.append(backend)
            out.append(backend.example or f"{backend.schemes[0]}://…")
    return list(dict.fromkeys(out))


def unknown_scheme(scheme: str) -> str:
    """``no store for 'x' URLs; use sqlite:///PATH, ... or a file path`` (the known stores)."""
    return f"no store for {scheme!r} URLs; use {', '.join(_examples())} or a file path"


def backend_for(url: str, field: str) -> StoreBackend:
    """The backend of ``url`` (which has a ``scheme://``); InvalidInput naming ``field``
    and listing the known stores when there is none."""
    scheme = url.split("://", 1)[0]
    backend = find_backend(scheme)
    if backend is None:
        raise InvalidInput(f"{field}: {unknown_scheme(scheme)}", field=field)
    return backend
