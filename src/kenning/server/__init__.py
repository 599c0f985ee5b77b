"""The kenning server: REST API, authentication, review, audit, metrics, MCP over HTTP."""

from .app import create_app

__all__ = ["create_app"]
