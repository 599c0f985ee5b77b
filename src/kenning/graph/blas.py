"""Matrix products for spaCy on one thread of numpy's BLAS.

spaCy's models multiply small matrices (a text's tokens by a layer's weights)
through thinc's ops, which default to ``blis``. The ``blis`` wheel spaCy 3.8
requires carries only its generic reference kernels on many processors (AMD
EPYC among them: ``BLIS_ARCH_DEBUG=1`` prints "selecting sub-configuration
'generic'"), while numpy's OpenBLAS picks the processor's own. On one thread,
numpy's products (``use_ops("numpy", use_blis=False)`` while the pipeline
loads, :func:`~kenning.graph.spacy_ner.load_pipeline`) make the entity
extractor take a quarter less CPU for one text and a third less for a batch
(``docs/extraction.md``), with the same entities.

One thread, because BLAS would otherwise spread each small product over every
core: the wall time halves, the CPU time grows by half, and a server that runs
requests side by side has no core to spare (the vector scan avoids BLAS for the
same reason, see ``stores/sqlite/vectors.py``). numpy's BLAS threads are one
setting for the whole process, so :func:`one_blas_thread` holds it at one while
any thread is inside and restores it when the last one leaves; a numpy product
elsewhere in the process meanwhile runs on one thread too.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["one_blas_thread"]

_lock = threading.Lock()
_inside = 0
_limiter: Any = None
_controller: Any = None


@contextmanager
def one_blas_thread() -> Iterator[None]:
    """numpy's BLAS on one thread while any caller is inside (re-entrant, thread-safe).

    Without ``threadpoolctl`` (it comes with the ``graph`` extra) this changes nothing.
    """
    global _inside, _limiter
    with _lock:
        if _inside == 0:
            _limiter = _limit_to_one()
        _inside += 1
    try:
        yield
    finally:
        with _lock:
            _inside -= 1
            if _inside == 0 and _limiter is not None:
                _limiter.restore_original_limits()
                _limiter = None


def _limit_to_one() -> Any:
    """A threadpoolctl limiter holding the BLAS libraries at one thread, or None."""
    global _controller
    if _controller is None:
        try:
            from threadpoolctl import ThreadpoolController
        except ImportError:
            return None
        _controller = ThreadpoolController()
    return _controller.limit(limits=1, user_api="blas")
