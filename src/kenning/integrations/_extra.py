"""The error an integration module raises when its framework is not installed:
kenning's one :class:`~kenning._extras.MissingExtra` (a ``ConfigError`` and an
``ImportError``), whose message names the extra to install."""

from __future__ import annotations

from .._extras import MissingExtra

__all__ = ["MissingExtra"]
