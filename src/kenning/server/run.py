"""Running the server: structured logs, the first key, uvicorn with graceful shutdown."""

from __future__ import annotations

import json
import logging
import logging.config
import os
from typing import Any

from ..config import Settings
from ..engine import Memory
from ..errors import ConfigError
from ..stores import display_url, store_url
from ..stores.registry import backend_for
from .workers import balanced_workers_supported, run_workers

__all__ = ["JsonFormatter", "configure_logging", "bootstrap", "serve", "worker_threads"]

#: The name of the key ``kenning serve --new-key`` mints (and rotates).
LOCAL_KEY = "kenning serve"


class JsonFormatter(logging.Formatter):
    """One JSON object per log line (time, level, logger, process id, message, exception)."""

    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {
            "ts": self.formatTime(record, "%Y-%m-%dT%H:%M:%S"),
            "level": record.levelname,
            "logger": record.name,
            "pid": record.process,  # which worker, when several serve
        }
        message = record.getMessage()
        try:
            parsed = json.loads(message) if message.startswith("{") else None
        except ValueError:
            parsed = None
        if isinstance(parsed, dict):
            out.update(parsed)
        else:
            out["msg"] = message
        if record.exc_info:
            out["exc"] = self.formatException(record.exc_info)
        return json.dumps(out, ensure_ascii=False)


def configure_logging(level: str = "INFO") -> dict[str, Any]:
    """A logging config (for uvicorn too) writing JSON lines to stderr."""
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {"json": {"()": JsonFormatter}},
        "handlers": {
            "stderr": {
                "class": "logging.StreamHandler",
                "formatter": "json",
                "stream": "ext://sys.stderr",
            }
        },
        "loggers": {
            "kenning": {"handlers": ["stderr"], "level": level, "propagate": False},
            "uvicorn": {"handlers": ["stderr"], "level": level, "propagate": False},
            "uvicorn.access": {"handlers": [], "level": "WARNING", "propagate": False},
        },
    }


def bootstrap(mem: Memory, org_id: str, user_id: str) -> str:
    """Make sure the organization and its admin exist and mint a fresh local key
    (the previous one of that name is revoked). Returns the key, shown once."""
    _, secret = mem.directory.bootstrap(org_id, user_id, LOCAL_KEY)
    return secret


def worker_threads(workers: int, cores: int | None = None) -> int:
    """The model threads of each of ``workers`` processes: its share of the cores."""
    return max(1, (cores or os.cpu_count() or 1) // workers)


def serve(settings: Settings) -> None:
    """Run uvicorn: one worker in-process, or several processes, each opening the store
    from the environment (a store processes share: SQLite or PostgreSQL). On Linux
    each worker listens on its own socket (:mod:`kenning.server.workers`), elsewhere
    uvicorn's workers share one. Each worker's model runs on its share of the cores
    unless ``embed_threads`` says otherwise: workers that each spread one run over
    every core would only take the cores from each other."""
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
