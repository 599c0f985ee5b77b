"""kenning over HTTP: :class:`Client` and :class:`AsyncClient` have the methods,
arguments, return types and exceptions of :class:`kenning.Memory` and
:class:`kenning.AsyncMemory`, answered by a kenning server (``kenning serve``).

The two share everything but the I/O: :mod:`._calls` builds each request and
says how its answer is read, :mod:`._config` holds the configuration, the retry
rules and the error mapping (:mod:`._wire`). This package imports neither the
server nor a database driver, so a light install can use it.
"""

from ._config import ClientConfig
from ._wire import ClientError
from .aio import AsyncClient, AsyncClientGraph
from .sync import Client, ClientGraph

__all__ = [
    "Client",
    "AsyncClient",
    "ClientGraph",
    "AsyncClientGraph",
    "ClientConfig",
    "ClientError",
]
