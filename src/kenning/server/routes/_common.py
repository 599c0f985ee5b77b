"""What the route modules share: the server's limits, optional fields, scopes."""

from __future__ import annotations

from typing import Any

from ...validation import Limits, clean_k
from ..auth import MemoryDep
from ..schemas import BATCH, KEY_CHARS, TAGS

__all__ = ["bounded", "limits", "no_none", "scopes_param"]


def bounded(mem: MemoryDep, value: int, field: str = "k") -> int:
    """``value`` if it is within the server's ``max_k`` (a precise 400 otherwise)."""
    return clean_k(value, limits(mem).k, field)


def limits(mem: MemoryDep) -> Limits:
    """The limits this server checks: the engine's, lowered to the server's ``max_k``
    and the request schemas' caps."""
    own = Limits.of(mem.settings)
    return Limits(
        own.content_chars,
        min(own.key_chars, KEY_CHARS),
        min(own.tags, TAGS),
        min(own.batch, BATCH),
        min(own.k, mem.settings.server.max_k),
    )


def no_none(values: dict[str, Any]) -> dict[str, Any]:
    """Drop unset fields (the engine applies its own defaults)."""
    return {k: v for k, v in values.items() if v is not None}


def scopes_param(scope: list[str] | None, default: Any = "all") -> Any:
    """A repeated ``scope`` query parameter as the engine's ``scopes`` argument:
    ``["all"]`` means every readable scope; none given means ``default``."""
    if scope is None:
        return default
    return "all" if scope == ["all"] else scope
