"""Small file helpers the model-loading seams share (embeddings, rerankers)."""

from __future__ import annotations

import hashlib
import importlib.util
from pathlib import Path

from ._extras import require_extra
from .errors import ConfigError

__all__ = ["file_sha256", "package_dir", "verified_file"]


def file_sha256(path: Path) -> str:
    """The sha256 of a file, read in 1 MB blocks (model files are checked by it)."""
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def verified_file(path: Path, sha256: str, what: str) -> Path:
    """``path`` if it exists and has the pinned ``sha256``; else a :class:`ConfigError`
    naming ``what`` ("MiniLM model file", ...)."""
    if not path.is_file():
        raise ConfigError(f"{what} not found: {path}")
    actual = file_sha256(path)
    if actual != sha256:
        raise ConfigError(
            f"{what} {path} has sha256 {actual}, expected {sha256}; "
            "refusing to load an unverified model"
        )
    return path


def package_dir(package: str, extra: str, what: str) -> Path:
    """Where the installed ``package`` (brought by ``extra``) keeps its files, found
    without importing it; :class:`~kenning._extras.MissingExtra` naming ``what``
    when it is not installed."""
    require_extra(extra, what)
    spec = importlib.util.find_spec(package)  # finds the files; runs none of its code
    assert spec is not None and spec.submodule_search_locations
    return Path(next(iter(spec.submodule_search_locations)))
