"""Several server processes on one port, each with its own listening socket.

uvicorn's multi-process mode shares one listening socket among its workers. A
worker woken by new connections accepts every connection waiting at that
moment, so a burst of keep-alive clients (a fleet of agents connecting at once)
can all land on one worker and stay there while the others idle. On Linux each
worker here binds its own socket to the port with ``SO_REUSEPORT``; the kernel
then hands each new connection to one of the listening workers, spread evenly.
A worker's socket listens only once its engine is loaded, so no connection
waits on a worker that is still starting. Where the kernel does not balance
such sockets (macOS, Windows), :func:`kenning.server.run.serve` uses uvicorn's
own mode instead.

The supervisor (the parent process) starts the workers, restarts one that dies
(unless it died during its first seconds several times in a row: a worker that
cannot start is a configuration error, reported by its own log), and on
SIGTERM or SIGINT stops them all, each finishing its open requests.
"""

from __future__ import annotations

import logging
import multiprocessing
import signal
import socket
import sys
import threading
import time
from typing import Any

__all__ = ["balanced_workers_supported", "run_workers"]

log = logging.getLogger("kenning.server")

#: A worker that dies within this many seconds of its start did not start.
EARLY_DEATH_S = 10.0
#: Workers dying early this many times in a row stop the server.
MAX_EARLY_DEATHS = 3


def balanced_workers_supported() -> bool:
    """Whether the kernel spreads connections over sockets sharing a port (Linux)."""
    return sys.platform.startswith("linux") and hasattr(socket, "SO_REUSEPORT")


def _bind(host: str, port: int) -> socket.socket:
    """A socket bound to ``host:port`` with ``SO_REUSEPORT`` (not listening yet)."""
    family, kind, proto, _, address = socket.getaddrinfo(
        host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
    )[0]
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    try:
        sock.bind(address)
    except OSError:
        sock.close()
        raise
    return sock


def _serve_one(host: str, port: int, graceful_s: int) -> None:
    """One worker: its own socket, the app built from the environment."""
    import uvicorn

    from .logs import configure_logging

    sock = _bind(host, port)
    config = uvicorn.Config(
        "kenning.server.app:create_app",
        factory=True,
        host=host,
        port=port,
        log_config=configure_logging(),
        timeout_graceful_shutdown=graceful_s,
    )
    uvicorn.Server(config).run(sockets=[sock])


def run_workers(host: str, port: int, workers: int, graceful_s: int) -> int:
    """Run ``workers`` processes serving ``host:port`` until SIGTERM or SIGINT; returns
    the exit status (1 when workers kept dying at start). The app is built in each
    worker from the environment (``KENNING_DATABASE_URL`` and the rest)."""
    # fail here, not in every worker, when the port is taken by someone else
    _bind(host, port).close()
    ctx = multiprocessing.get_context("spawn")
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())

    def start() -> tuple[Any, float]:
        proc = ctx.Process(target=_serve_one, args=(host, port, graceful_s), daemon=False)
        proc.start()
        return proc, time.monotonic()

    procs = [start() for _ in range(workers)]
    log.info('{"msg": "started %d workers", "pids": %s}', workers, [p.pid for p, _ in procs])
    early = 0
    status = 0
    while not stop.wait(0.5):
        for i, (proc, began) in enumerate(procs):
            if proc.is_alive():
                continue
            early = early + 1 if time.monotonic() - began < EARLY_DEATH_S else 0
            if early >= MAX_EARLY_DEATHS:
                log.error("workers keep dying at start (see their log above); stopping")
                stop.set()
                status = 1
                break
            log.warning("worker %s exited with %s; starting another", proc.pid, proc.exitcode)
            procs[i] = start()
    for proc, _ in procs:
        if proc.is_alive():
            proc.terminate()  # SIGTERM: the worker finishes its open requests
    deadline = time.monotonic() + graceful_s + 10
    for proc, _ in procs:
        proc.join(max(0.0, deadline - time.monotonic()))
        if proc.is_alive():
            log.warning("worker %s did not stop in time; killing it", proc.pid)
            proc.kill()
            proc.join()
    return status
