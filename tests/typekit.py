"""Resolving the annotations of kenning's public API in tests."""

from __future__ import annotations

import sys
import typing
from typing import Any

__all__ = ["type_hints"]


def type_hints(obj: Any) -> dict[str, Any]:
    """``typing.get_type_hints``, finding names imported only for type checking in kenning.

    A module may annotate with a name it imports under ``TYPE_CHECKING`` (say
    ``ScopesArg``); such a name is looked up in the loaded kenning modules.
    """
    extra: dict[str, Any] = {}
    while True:
        try:
            return typing.get_type_hints(obj, localns=extra)
        except NameError as exc:
            if exc.name is None or exc.name in extra:
                raise
            owners = [
                module
                for name, module in sorted(sys.modules.items())
                if name.split(".")[0] == "kenning" and hasattr(module, exc.name)
            ]
            if not owners:
                raise
            extra[exc.name] = getattr(owners[0], exc.name)
