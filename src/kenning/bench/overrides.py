"""Settings overrides by dotted name, for ``--set`` and the ablation table (no I/O)."""

from __future__ import annotations

from typing import Any

__all__ = ["set_dotted"]


def set_dotted(values: dict[str, Any], name: str, value: Any) -> None:
    """``values["a"]["b"] = value`` for ``name`` ``"a.b"`` (nested dicts of a settings
    dump); a plain name is set as is (old flat names are accepted by ``Settings``)."""
    *groups, last = name.split(".")
    for group in groups:
        values = values[group]
    values[last] = value
