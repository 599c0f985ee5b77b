"""The kenning server: REST API, authentication, review, audit, metrics, MCP over HTTP."""

from .._extras import require_extra

require_extra("server", "kenning.server")  # before importing the server's libraries

from .app import create_app  # noqa: E402

__all__ = ["create_app"]
