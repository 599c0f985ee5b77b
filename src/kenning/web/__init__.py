"""The web UI: static files the kenning server serves at ``/`` (the page) and
``/ui/…`` (its scripts and styles).

The page is public HTML; every piece of data comes from the REST API, called
by the browser with the API key the user typed (kept in ``sessionStorage``,
sent only in the ``Authorization`` header). Responses carry a restrictive
Content-Security-Policy: scripts, styles and data only from this origin, no
inline code, no framing, no form posts.
"""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI
from starlette.requests import Request
from starlette.responses import FileResponse, Response
from starlette.staticfiles import StaticFiles
from starlette.types import Scope

__all__ = ["STATIC_DIR", "SECURITY_HEADERS", "mount"]

#: index.html, app.js, app.css and the page modules.
STATIC_DIR: Path = Path(__file__).parent / "static"

_CSP = "; ".join(
    (
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self' data:",
        "connect-src 'self'",
        "font-src 'self'",
        "object-src 'none'",
        "base-uri 'none'",
        "frame-ancestors 'none'",
        "form-action 'none'",
    )
)

#: Headers of every UI response (not of the API, nor of ``/docs``).
SECURITY_HEADERS: dict[str, str] = {
    "Content-Security-Policy": _CSP,
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Permissions-Policy": "camera=(), microphone=(), geolocation=()",
    "Cache-Control": "no-cache",
}


class _Assets(StaticFiles):
    """Static files with the UI's security headers."""

    async def get_response(self, path: str, scope: Scope) -> Response:
        response = await super().get_response(path, scope)
        response.headers.update(SECURITY_HEADERS)
        return response


async def _index(request: Request) -> Response:
    return FileResponse(STATIC_DIR / "index.html", headers=SECURITY_HEADERS)


def mount(app: FastAPI) -> None:
    """Serve the UI on ``app``: the page at ``/``, its assets under ``/ui/``."""
    app.add_route("/", _index, methods=["GET", "HEAD"], name="ui", include_in_schema=False)
    app.mount("/ui", _Assets(directory=STATIC_DIR), name="ui.assets")
