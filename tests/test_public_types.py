"""Every type the public API takes or returns is exported from ``kenning``.

Read mechanically from the annotations (``typing.get_type_hints``) of the public
methods and properties of ``Memory``, ``AsyncMemory``, ``mem.graph`` and
``mem.directory`` (sync and async), then, transitively, of the fields and
properties of the value types they return (``RecallResult`` -> ``Hit`` ->
``ScoreBreakdown``, ...), so a new method or field cannot bring a type users
cannot import.
"""

from __future__ import annotations

import dataclasses
import inspect
import typing
from collections.abc import Callable, Iterator
from typing import Any

from typekit import type_hints

import kenning
from kenning import errors

#: Objects reached through ``Memory`` and built by it (their constructors are not public).
_BUILT_BY_MEMORY = (kenning.Graph, kenning.AsyncGraph, kenning.Directory, kenning.AsyncDirectory)
_ROOTS = (kenning.Memory, kenning.AsyncMemory, *_BUILT_BY_MEMORY)


def kenning_classes(annotation: Any) -> Iterator[type]:
    """The kenning classes named anywhere inside an annotation (unions, generics, callables)."""
    if isinstance(annotation, type) and typing.get_origin(annotation) is None:
        if annotation.__module__.split(".")[0] == "kenning":
            yield annotation
        return
    if typing.get_origin(annotation) is typing.Literal:
        return
    for arg in typing.get_args(annotation):
        for item in arg if isinstance(arg, list) else [arg]:  # Callable[[A, B], R]
            yield from kenning_classes(item)


def _public_callables(cls: type) -> Iterator[tuple[str, Callable[..., Any]]]:
    for name in dir(cls):
        if name.startswith("_") and not (name == "__init__" and cls not in _BUILT_BY_MEMORY):
            continue
        value = inspect.getattr_static(cls, name)
        if isinstance(value, property) and value.fget is not None:
            yield name, value.fget
        elif inspect.isfunction(value):
            yield name, value


def public_types() -> dict[type, str]:
    """Each kenning class the public API uses -> where it was first met."""
    found: dict[type, str] = {}
    for root in _ROOTS:
        for name, member in _public_callables(root):
            for hint in type_hints(member).values():
                for cls in kenning_classes(hint):
                    found.setdefault(cls, f"{root.__name__}.{name}")
    todo = list(found)
    while todo:  # the fields and properties of the value types, transitively
        value_type = todo.pop()
        hints: list[Any] = []
        if dataclasses.is_dataclass(value_type):
            hints.extend(type_hints(value_type).values())
        for name, attr in vars(value_type).items():
            if isinstance(attr, property) and attr.fget and not name.startswith("_"):
                hints.extend(type_hints(attr.fget).values())
        for hint in hints:
            for cls in kenning_classes(hint):
                if cls not in found:
                    found[cls] = f"a field of {value_type.__name__}"
                    todo.append(cls)
    return found


def test_every_public_type_is_exported() -> None:
    exported = {id(getattr(kenning, name)) for name in kenning.__all__}
    found = public_types()
    assert len(found) > 40  # the walk saw the API (Memory alone names ~25 types)
    missing = sorted(
        f"{cls.__module__}.{cls.__qualname__} (in {where})"
        for cls, where in found.items()
        if id(cls) not in exported
    )
    assert not missing, "public types not exported from kenning:\n" + "\n".join(missing)


def test_the_walk_sees_nested_and_async_types() -> None:
    found = public_types()
    for cls in (
        kenning.ScoreBreakdown,  # Memory.recall -> RecallResult.hits -> Hit.breakdown
        kenning.WriteAction,  # Memory.write -> WriteResult.action
        kenning.ConsolidationAction,  # Memory.consolidate -> ConsolidationReport.actions
        kenning.AsyncDirectory,  # AsyncMemory.directory
        kenning.ApiKey,  # Directory.authenticate -> tuple[Principal, ApiKey]
        kenning.RebuildReport,  # Graph.rebuild
    ):
        assert cls in found, cls


def test_every_error_is_exported() -> None:
    kinds = [v for v in vars(errors).values() if isinstance(v, type) and issubclass(v, Exception)]
    assert kenning.LLMError in kinds
    for kind in kinds:
        assert getattr(kenning, kind.__name__, None) is kind, kind
        assert kind.__name__ in kenning.__all__
