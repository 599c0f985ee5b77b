"""One ASGI middleware around every request: a request id, the body-size limit,
a strict check of JSON request bodies, metrics, a structured access-log line and
the count of requests in flight (:mod:`kenning.server.inflight`).

A JSON body (``Content-Type: application/json``, ``…+json`` or none) of a REST
request is read whole and checked before any route sees it: invalid UTF-8,
malformed JSON, ``NaN``/``Infinity`` (which Python's parser would let through)
and numbers too large to be finite are refused with 400 ``invalid_input`` naming
where (line, column and byte offset). The MCP endpoint answers in JSON-RPC and
checks its own bodies.

The audit trail is the engine's (:mod:`kenning.audit`): the middleware only
says that the calls of a request came through the REST door, and under which
request id, so each audit line names both.
"""

from __future__ import annotations

import json
import logging
import math
import re
import time
import uuid
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from ..audit import door
from ..models import Principal
from .errors import error_response
from .inflight import InFlight

__all__ = ["RequestMiddleware", "json_problem", "read_body", "replay_body"]

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
        inflight: InFlight | None = None,
    ) -> None:
        self.app = app
        self.max_body = max_body
        self.observe = observe
        self.inflight = inflight or InFlight()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        self.inflight.count += 1
        try:
            await self._serve(scope, receive, send)
        finally:
            self.inflight.count -= 1

    async def _serve(self, scope: Scope, receive: Receive, send: Send) -> None:
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
            downstream: Receive = receive_limited
            if _json_body_expected(scope, headers):
                body = await read_body(receive_limited)
                problem = json_problem(body)
                if problem is not None:
                    response = error_response(rid, 400, "invalid_input", problem, "body")
                    await response(scope, receive, send_wrapped)
                    await self._after(scope, state, status, time.perf_counter() - started)
                    return
                downstream = replay_body(body, receive)
            with door("rest", rid):
                await self.app(scope, downstream, send_wrapped)
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


# -- strict JSON bodies ------------------------------------------------------------------

_BODY_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})


def _json_body_expected(scope: Scope, headers: dict[str, str]) -> bool:
    """A REST request whose body the app will parse as JSON."""
    if scope["method"] not in _BODY_METHODS or scope["path"].startswith("/mcp"):
        return False
    kind = headers.get("content-type", "").partition(";")[0].strip().lower()
    return not kind or kind == "application/json" or kind.endswith("+json")


async def read_body(receive: Receive) -> bytes:
    """The whole body of a request, read from ``receive``."""
    parts: list[bytes] = []
    while True:
        message = await receive()
        if message["type"] != "http.request":
            break
        parts.append(message.get("body", b""))
        if not message.get("more_body", False):
            break
    return b"".join(parts)


def replay_body(body: bytes, receive: Receive) -> Receive:
    """A ``receive`` that gives ``body`` once, then waits on the real one (disconnects)."""
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay


class _NotFinite(ValueError):
    def __init__(self, literal: str, why: str) -> None:
        super().__init__(literal)
        self.literal = literal
        self.why = why


def _constant(literal: str) -> float:
    raise _NotFinite(literal, "is not a number (JSON has no NaN or Infinity)")


def _finite(literal: str) -> float:
    value = float(literal)
    if not math.isfinite(value):
        raise _NotFinite(literal, "is not a finite number")
    return value


def _outside_strings(text: str, literal: str) -> int:
    """Where ``literal`` first stands outside a JSON string (-1 if nowhere)."""
    in_string = escaped = False
    for i, ch in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif text.startswith(literal, i) and (i == 0 or text[i - 1] not in "-+.0123456789eE"):
            return i
    return -1


def _where(text: str, pos: int) -> str:
    line = text.count("\n", 0, pos) + 1
    column = pos - (text.rfind("\n", 0, pos) + 1) + 1
    return f"line {line}, column {column} (byte offset {len(text[:pos].encode())})"


def json_problem(body: bytes) -> str | None:
    """What is wrong with a JSON request body, saying where; None when it is fine
    (or empty: the route then says what it misses)."""
    if not body.strip():
        return None
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        start = exc.start
        line = body.count(b"\n", 0, start) + 1
        column = start - (body.rfind(b"\n", 0, start) + 1) + 1
        return (
            f"the request body is not valid UTF-8: byte 0x{body[start]:02x} at line {line}, "
            f"column {column} (byte offset {start})"
        )
    try:
        json.loads(text, parse_constant=_constant, parse_float=_finite)
    except _NotFinite as exc:
        pos = _outside_strings(text, exc.literal)
        at = f" at {_where(text, pos)}" if pos >= 0 else ""
        return f"the request body is not valid JSON: {exc.literal} {exc.why}{at}"
    except json.JSONDecodeError as exc:
        return f"the request body is not valid JSON: {exc.msg} at {_where(text, exc.pos)}"
    except RecursionError:
        return "the request body is not valid JSON: it nests too deeply"
    except ValueError:  # an integer of more digits than Python converts
        return "the request body is not valid JSON: an integer has too many digits"
    return None
