"""Recall signals: one module per signal, run as a list by the read pipeline.

A signal (:class:`Signal`) names itself, lists the settings it reads and
returns what it adds per candidate in its stage (:mod:`.base`). The built-ins
are registered here exactly as a plugin registers one
(:func:`register_signal`); packages may also advertise factories under the
``kenning.signals`` entry-point group. ``Settings.retrieval.signals`` names
the active list (None: :data:`BUILTINS`). A hit's ``explain`` carries every
active signal's contribution under its name, so a new signal shows up in the
SDK, REST and the UI with no edit there.

Adding a built-in: one module here with its class, one line in
:data:`BUILTINS` below, and its test.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from ..._registry import Registry
from ...config import Settings
from .author import AuthorBoost
from .base import RELEVANCE_STAGES, STAGES, RecallContext, Signal, Stage, add_scores
from .confidence import HighConfidence
from .episode import EpisodeLift
from .exact import ExactMatch
from .graph import GraphSupport
from .layer import LayerBoost
from .persona import PersonaBoost
from .time import TimeMatch

__all__ = [
    "Signal",
    "Stage",
    "STAGES",
    "RELEVANCE_STAGES",
    "RecallContext",
    "add_scores",
    "BUILTINS",
    "ENTRY_POINT_GROUP",
    "register_signal",
    "available_signals",
    "create_signal",
    "active_signals",
]

ENTRY_POINT_GROUP = "kenning.signals"

#: The built-in signals, in the order they run within their stage.
BUILTINS: dict[str, Callable[[], Signal]] = {
    "graph": GraphSupport,
    "episode": EpisodeLift,
    "author": AuthorBoost,
    "time": TimeMatch,
    "layer": LayerBoost,
    "persona": PersonaBoost,
    "exact_match": ExactMatch,
    "high_confidence": HighConfidence,
}

_registry: Registry[Signal] = Registry("signal", Signal, ENTRY_POINT_GROUP)
_lock = threading.Lock()
_lists: dict[tuple[str, ...], tuple[Signal, ...]] = {}


def register_signal(name: str, factory: Callable[[], Signal]) -> None:
    """Make ``factory()`` available as the signal ``name`` (replacing an earlier one).

    It takes part in a recall once ``Settings.retrieval.signals`` names it.
    """
    _registry.register(name, factory)
    with _lock:
        _lists.clear()


def available_signals() -> list[str]:
    """Sorted names of every registered and plugin-provided signal."""
    return _registry.available()


def create_signal(name: str) -> Signal:
    """A new instance of the signal registered as ``name``; its ``name`` must match."""
    made = _registry.create(name)
    if made.name != name or made.stage not in STAGES:
        from ...errors import ConfigError

        raise ConfigError(
            f"signal {name!r} names itself {made.name!r} in stage {made.stage!r}; "
            f"it must be named {name!r}, in one of {', '.join(STAGES)}"
        )
    return made


def active_signals(settings: Settings) -> tuple[Signal, ...]:
    """The signals ``settings`` asks for, built once per list (signals are stateless)."""
    names = settings.retrieval.signals
    key = tuple(BUILTINS) if names is None else tuple(names)
    with _lock:
        found = _lists.get(key)
    if found is None:
        found = tuple(create_signal(n) for n in key)
        with _lock:
            _lists[key] = found
    return found


for _name, _factory in BUILTINS.items():
    register_signal(_name, _factory)
