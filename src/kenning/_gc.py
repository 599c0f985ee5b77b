"""Pausing Python's cycle collector while a big write batch runs.

A big batch allocates many objects that live on (the reconcile analysis cache,
the graph projection, the vector mirror's rows). The collector counts them and,
every few thousand allocations, walks the young generations; each time enough
survivors pile up it also walks the *whole* heap, and a process that holds a
large store has a large heap. Measured on a 100k-memory store, those passes
took a fifth to a quarter of each 2,000-memory batch.

Reference counting frees almost everything a batch throws away, so the batch
runs with the collector paused and the collector resumes, with its normal
thresholds, when the last paused batch ends. Concurrent batches share one
pause; a batch that ends while others go on collects the young generations
(what was allocated since the pause: cheap, and garbage cycles do not pile up
under a steady stream of big batches). A collector the application disabled
itself stays disabled.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["PAUSE_AT", "collector_paused"]

#: Batches of at least this many records run with the collector paused.
PAUSE_AT = 256

_lock = threading.Lock()
_depth = 0
_resume = False


@contextmanager
def collector_paused(size: int) -> Iterator[None]:
    """Run the block with the cycle collector paused when ``size`` >= :data:`PAUSE_AT`."""
    global _depth, _resume
    if size < PAUSE_AT:
        yield
        return
    with _lock:
        if _depth == 0:
            _resume = gc.isenabled()
            gc.disable()
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _resume:
                gc.enable()
            elif _depth:  # others still write: collect this batch's young cycles now
                gc.collect(1)
