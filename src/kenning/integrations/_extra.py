"""The error an integration module raises when its framework is not installed."""

from __future__ import annotations

from ..errors import ConfigError

__all__ = ["MissingExtra"]


class MissingExtra(ConfigError, ImportError):
    """A framework integration was imported without its optional extra.

    Both a :class:`~kenning.errors.ConfigError` (kenning's tree) and an
    ``ImportError`` (what code probing for an optional dependency catches).
    """

    def __init__(self, extra: str, framework: str) -> None:
        super().__init__(
            f"kenning's {framework} integration needs the {framework} package: "
            f"pip install 'kenning[{extra}]'"
        )
        #: The name of the optional extra that installs the framework.
        self.extra = extra
