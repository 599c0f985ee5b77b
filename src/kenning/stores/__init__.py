"""Storage backends behind one seam; :func:`open_store` picks one from settings.

Database URLs are ``sqlite:///PATH`` (``sqlite:////abs/path`` for an absolute
path), ``postgresql://USER@HOST:PORT/DB`` or the URL of a store a plugin
registers (:mod:`.registry`: backends by URL scheme, entry-point group
``kenning.stores``); :func:`database_url` also takes a plain file path (the
embedded store). :func:`inspect_database` reads what a database records about
itself (which embedding model its vectors come from) without opening a store,
so tools that move data (``kenning migrate``) never load the model.
"""

from __future__ import annotations

from pathlib import Path

from ..config import Settings
from ..errors import ConfigError, InvalidInput
from .base import (
    DirectoryStore,
    Footprint,
    GraphStore,
    LifecycleStore,
    MemoryStore,
    Replacement,
    Store,
)
from .registry import (
    DEFAULT_SCHEME,
    DatabaseInfo,
    StoreBackend,
    backend_for,
    find_backend,
    mask_password,
    register_store,
    unknown_scheme,
)
from .routed import RoutedStore

__all__ = [
    "Store",
    "MemoryStore",
    "GraphStore",
    "LifecycleStore",
    "DirectoryStore",
    "Replacement",
    "Footprint",
    "DatabaseInfo",
    "StoreBackend",
    "register_store",
    "open_store",
    "store_url",
    "database_url",
    "inspect_database",
    "display_url",
    "location",
]


def _default_backend() -> StoreBackend:
    backend = find_backend(DEFAULT_SCHEME)
    if backend is None:  # the built-in table always has it
        raise ConfigError(f"the default store ({DEFAULT_SCHEME}) is not available")
    return backend


def store_url(settings: Settings) -> str:
    """The URL of the store ``settings`` name: ``database_url``, else the embedded
    database under the home directory."""
    return settings.database_url or _default_backend().url_for_path(str(settings.db_path()))


def open_store(settings: Settings, model_id: str, dim: int) -> Store:
    """Open the store ``settings.database_url`` names (the embedded SQLite file by default).

    On a backend that routes organizations to other databases (PostgreSQL),
    this is a :class:`~kenning.stores.routed.RoutedStore` around that home store.
    """
    url = store_url(settings)
    try:
        backend = backend_for(url, field="database_url")
    except InvalidInput:
        raise ConfigError(unknown_scheme(url.split("://", 1)[0])) from None
    url = backend.normalise(url, "database_url")
    home = backend.open(url, settings, model_id, dim)
    table = backend.route_table(url)
    if table is None:
        return home

    def open_routed(target: str) -> Store:
        routed = backend_for(target, field="database_url")
        return routed.open(routed.normalise(target, "database_url"), settings, model_id, dim)

    try:
        return RoutedStore(home, table, open_routed)
    except BaseException:
        home.close()
        raise


def database_url(value: str, *, field: str = "database_url") -> str:
    """A store URL from ``value``: the URL of a known store, or a file path.

    A URL is normalised by its backend (``postgres://`` becomes
    ``postgresql://``); a path becomes the embedded store's URL. An unknown
    scheme or a malformed URL is :class:`~kenning.errors.InvalidInput` naming
    ``field`` (an unknown scheme's message lists the known stores).
    """
    text = value.strip()
    if not text:
        raise InvalidInput(f"{field} is empty; give a file path or a database URL", field=field)
    if "://" not in text:
        return _default_backend().url_for_path(str(Path(text).expanduser()))
    return backend_for(text, field).normalise(text, field)


def location(settings: Settings) -> str:
    """Where ``settings`` keep memories, for people: the SQLite file, or the masked URL."""
    url = store_url(settings)
    backend = find_backend(url.split("://", 1)[0])
    return backend.location(url) if backend is not None else mask_password(url)


def display_url(url: str) -> str:
    """``url`` fit for messages: a password is masked."""
    backend = find_backend(url.split("://", 1)[0]) if "://" in url else None
    return backend.display(url) if backend is not None else mask_password(url)


def inspect_database(url: str, *, field: str = "database_url") -> DatabaseInfo:
    """Identity and recorded embedding model of the database at ``url`` (writes nothing)."""
    url = database_url(url, field=field)
    return backend_for(url, field).inspect(url, field)
