"""Running the server: the first key, uvicorn (one process or several) with graceful
shutdown; the log format is :mod:`kenning.server.logs`."""

from __future__ import annotations

import logging
import logging.config
import os

from ..config import Settings
from ..engine import Memory
from ..errors import ConfigError
from ..lanes import lane_size, worker_threads
from ..stores import display_url, store_url
from ..stores.registry import backend_for
from .logs import JsonFormatter, configure_logging
from .workers import balanced_workers_supported, run_workers

__all__ = ["JsonFormatter", "configure_logging", "bootstrap", "serve", "worker_threads"]

#: The name of the key ``kenning serve --new-key`` mints (and rotates).
LOCAL_KEY = "kenning serve"


def bootstrap(mem: Memory, org_id: str, user_id: str) -> str:
    """Make sure the organization and its admin exist and mint a fresh local key
    (the previous one of that name is revoked). Returns the key, shown once."""
    _, secret = mem.directory.bootstrap(org_id, user_id, LOCAL_KEY)
    return secret


def serve(settings: Settings) -> None:
    """Run uvicorn: one worker in-process, or several processes, each opening the store
    from the environment (a store processes share: SQLite or PostgreSQL). On Linux
    each worker listens on its own socket (:mod:`kenning.server.workers`), elsewhere
    uvicorn's workers share one. Each worker's model runs on its share of the cores
    unless ``embed_threads`` says otherwise: workers that each spread one run over
    every core would only take the cores from each other. Likewise each worker's
    engine lane is sized for its share (:func:`~kenning.lanes.lane_size`)."""
    import uvicorn

    cfg = settings.server
    if cfg.workers > 1:
        url = store_url(settings)
        if not backend_for(url, field="database_url").serves_processes:
            raise ConfigError(
                f"several workers need a store that processes share (SQLite or "
                f"PostgreSQL); {display_url(url)} serves one process"
            )
        os.environ["KENNING_DATABASE_URL"] = url
        if settings.embed_threads is None:
            os.environ["KENNING_EMBED_THREADS"] = str(worker_threads(cfg.workers))
        # each worker's lane (its environment knows no worker count; a size set in
        # these settings rather than the environment reaches the workers this way too)
        lane = lane_size(settings)
        if lane is not None:
            os.environ["KENNING_SERVER_ENGINE_THREADS"] = str(lane)
        if cfg.inline_reads is not None:
            os.environ["KENNING_SERVER_INLINE_READS"] = str(cfg.inline_reads).lower()
        if balanced_workers_supported():
            logging.config.dictConfig(configure_logging())
            status = run_workers(cfg.host, cfg.port, cfg.workers, cfg.graceful_timeout_s)
            if status:
                raise SystemExit(status)
            return
        uvicorn.run(
            "kenning.server.app:create_app",
            factory=True,
            host=cfg.host,
            port=cfg.port,
            workers=cfg.workers,
            log_config=configure_logging(),
            timeout_graceful_shutdown=cfg.graceful_timeout_s,
        )
        return
    from .app import create_app

    uvicorn.run(
        create_app(settings=settings),
        host=cfg.host,
        port=cfg.port,
        log_config=configure_logging(),
        timeout_graceful_shutdown=cfg.graceful_timeout_s,
    )
