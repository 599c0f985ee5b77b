"""What the asynchronous façades share: each async method mirrors a sync one.

:class:`~kenning.aio.AsyncMemory`, :class:`~kenning.graph.aio.AsyncGraph` and
:class:`~kenning.directory.aio.AsyncDirectory` define every method explicitly,
with the sync method's parameters and return type (so type checkers see real
signatures), and run the sync method in a worker thread: the logic is shared,
only the I/O leaves the event loop. :func:`mirrors` gives each the sync
method's documentation; ``tests/test_async_parity.py`` checks the signatures.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["mirrors"]

F = TypeVar("F", bound=Callable[..., Any])


def mirrors(sync: Callable[..., Any]) -> Callable[[F], F]:
    """Mark the decorated coroutine function as the async form of ``sync`` (its docstring)."""

    def decorate(method: F) -> F:
        method.__doc__ = sync.__doc__
        return method

    return decorate
