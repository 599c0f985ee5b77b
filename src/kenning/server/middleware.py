"""One ASGI middleware around every request: a request id, the body-size limit,
metrics and a structured access-log line.

The audit trail is the engine's (:mod:`kenning.audit`): the middleware only
says that the calls of a request came through the REST door, and under which
request id, so each audit line names both.
"""

from __future__ import annotations

import json
import logging
import re
import time
import uuid
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from ..audit import door
from ..models import Principal
from .errors import error_response

__all__ = ["RequestMiddleware"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]

access_log = logging.getLogger("kenning.access")
_RID = re.compile(r"^[A-Za-z0-9._-]{1,64}$")


class _TooLarge(Exception):
    pass


class RequestMiddleware:
    """Request ids, body limit, metrics, access log and audit (see the module docstring)."""

    def __init__(
        self,
        app: App,
        *,
        max_body: int,
        observe: Callable[[str, str, int, float], None],
    ) -> None:
        self.app = app
        self.max_body = max_body
        self.observe = observe

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {
            k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", ())
        }
        given = headers.get("x-request-id", "")
        rid = given if _RID.match(given) else uuid.uuid4().hex
        state = scope.setdefault("state", {})
        state["request_id"] = rid
        started = time.perf_counter()
        status = 500
        response_started = False

        async def send_wrapped(message: Message) -> None:
            nonlocal status, response_started
            if message["type"] == "http.response.start":
                status = int(message["status"])
                response_started = True
                message.setdefault("headers", [])
                message["headers"] = [*message["headers"], (b"x-request-id", rid.encode())]
            await send(message)

        seen = 0

        async def receive_limited() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_body:
                    raise _TooLarge
            return message

        try:
            declared = int(headers.get("content-length") or 0)
        except ValueError:
            declared = 0
        try:
            if declared > self.max_body:
                raise _TooLarge
            with door("rest", rid):
                await self.app(scope, receive_limited, send_wrapped)
        except _TooLarge:
            if response_started:
                raise
            message = f"the request body exceeds {self.max_body} bytes"
            response = error_response(rid, 413, "too_large", message)
            await response(scope, receive, send_wrapped)
        await self._after(scope, state, status, time.perf_counter() - started)

    async def _after(
        self, scope: Scope, state: dict[str, Any], status: int, seconds: float
    ) -> None:
        route = scope.get("route")
        name = getattr(route, "name", None) or "unmatched"
        method = scope["method"]
        self.observe(method, name, status, seconds)
        if not access_log.isEnabledFor(logging.INFO):
            return
        principal: Principal | None = state.get("principal")
        access_log.info(
            json.dumps(
                {
                    "request_id": state["request_id"],
                    "method": method,
                    "path": scope["path"],
                    "route": name,
                    "status": status,
                    "ms": round(seconds * 1000, 2),
                    "org": principal.org_id if principal else None,
                    "user": principal.user_id if principal else None,
                }
            )
        )
