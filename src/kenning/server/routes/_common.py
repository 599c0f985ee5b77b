"""What the route modules share: the server's ``k`` limit, optional fields, scopes."""

from __future__ import annotations

from typing import Any

from ...validation import clean_k
from ..auth import MemoryDep

__all__ = ["bounded", "no_none", "scopes_param"]


def bounded(mem: MemoryDep, value: int, field: str = "k") -> int:
    """``value`` if it is within the server's ``max_k`` (a precise 400 otherwise)."""
    return clean_k(value, mem.settings.server.max_k, field)


def no_none(values: dict[str, Any]) -> dict[str, Any]:
    """Drop unset fields (the engine applies its own defaults)."""
    return {k: v for k, v in values.items() if v is not None}


def scopes_param(scope: list[str] | None, default: Any = "all") -> Any:
    """A repeated ``scope`` query parameter as the engine's ``scopes`` argument:
    ``["all"]`` means every readable scope; none given means ``default``."""
    if scope is None:
        return default
    return "all" if scope == ["all"] else scope
