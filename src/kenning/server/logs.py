"""The server's logs: JSON lines on stderr, for kenning's loggers and uvicorn's."""

from __future__ import annotations

import json
import logging
from typing import Any

__all__ = ["JsonFormatter", "configure_logging"]


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
