"""The hottest JSON route served without FastAPI's per-request machinery.

For each request FastAPI walks its included routers, resolves the route's
dependencies one by one, reads and validates the body, then calls the endpoint.
For a recall that is about half a millisecond of the 1.2-1.8 ms the HTTP door
adds on the reference machine (``bench/client_overhead.py``), and a recall is
what an agent calls on every turn.

A :class:`DirectRoute` stands in front of one such route and calls the *same*
endpoint function with its arguments found by the same means: the body checked
by the same model (after the same JSON parse), the caller by
:func:`~kenning.server.auth.current` (key cache, rate limit), the engine from the
app. Anything out of the ordinary — a content type other than JSON, a body the
model refuses — is handed, untouched, to the FastAPI route, which answers as it
always has (its error format included). Exceptions raised here reach the app's
exception handlers as the FastAPI route's do. The OpenAPI document is the
FastAPI route's: a direct route is not listed in it.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

from fastapi import Request, Response
from pydantic import BaseModel, ValidationError
from starlette.routing import BaseRoute, Match, NoMatchFound
from starlette.types import ASGIApp, Receive, Scope, Send

from ..engine import Memory
from .auth import Caller, current
from .middleware import read_body, replay_body

__all__ = ["DirectRoute", "Endpoint"]

#: An endpoint a direct route can call: ``(body, caller, engine, request)`` to a
#: ready response.
Endpoint = Callable[[Any, Caller, Memory, Request], Awaitable[Response]]

_PASSED = "kenning.direct_passed"  # scope key: this request goes to the FastAPI route


class DirectRoute(BaseRoute):
    """``POST path`` with a JSON body of ``model``, answered by ``endpoint``; requests
    it does not take go to ``fallback`` (the app's router, whose FastAPI route for the
    same path then answers them)."""

    def __init__(
        self,
        path: str,
        name: str,
        endpoint: Endpoint,
        model: type[BaseModel],
        fallback: ASGIApp,
    ) -> None:
        self.path = path
        self.name = name
        self.endpoint = endpoint
        self.model = model
        self.fallback = fallback

    def matches(self, scope: Scope) -> tuple[Match, Scope]:
        if (
            scope["type"] == "http"
            and scope["method"] == "POST"
            and _route_path(scope) == self.path
            and not scope.get(_PASSED)
        ):
            return Match.FULL, {"route": self}
        return Match.NONE, {}

    def url_path_for(self, name: str, /, **path_params: Any) -> Any:
        # never the target of url_for: the FastAPI route of the same path is
        raise NoMatchFound(name, path_params)

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        body = await read_body(receive)
        parsed = self._parse(scope, body)
        if parsed is None:
            scope[_PASSED] = True
            await self.fallback(scope, replay_body(body, receive), send)
            return
        request = Request(scope, receive)
        caller = await current(request)
        response = await self.endpoint(parsed, caller, request.app.state.memory, request)
        await response(scope, receive, send)

    def _parse(self, scope: Scope, body: bytes) -> BaseModel | None:
        """The body as ``model``, or None when the FastAPI route must see it."""
        kind = b""
        for name, value in scope["headers"]:
            if name == b"content-type":
                kind = value.partition(b";")[0].strip().lower()
        if kind != b"application/json":
            return None
        try:
            return self.model.model_validate(json.loads(body))
        except (ValueError, ValidationError):  # (a ValidationError is a ValueError)
            return None


def _route_path(scope: Scope) -> str:
    """The request's path below the app's mount point (``root_path``, set when a
    proxy serves the app under a prefix), as the app's routes are written."""
    path: str = scope["path"]
    root: str = scope.get("root_path", "")
    return path[len(root) :] if root and path.startswith(root) else path
