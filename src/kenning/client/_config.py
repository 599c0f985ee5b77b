"""What both clients share around a request: configuration (arguments, else
``KENNING_URL`` / ``KENNING_API_KEY``, read when a client is built), the request's
URL and headers, when to retry, and turning a response into a result or an error.
"""

from __future__ import annotations

import json
import math
import os
import socket
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

import httpx

from ..errors import InvalidInput
from ._calls import Call
from ._wire import ClientError, error_for

__all__ = ["ClientConfig", "PERSONA_HEADER", "DEFAULT_URL", "NO_DELAY"]

T = TypeVar("T")

#: The header that selects the active persona (``kenning.server.auth``).
PERSONA_HEADER = "X-Kenning-Persona"
#: Where ``kenning serve`` listens by default.
DEFAULT_URL = "http://127.0.0.1:8765"
#: Send small requests at once: without TCP_NODELAY a request whose headers and body
#: are written separately waits for the server's delayed ACK (~40 ms on Linux).
NO_DELAY = [(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)]
#: Connection failures worth another try (nothing reached the server's engine).
_RETRYABLE_ERRORS = (httpx.ConnectError, httpx.ConnectTimeout, httpx.RemoteProtocolError)


@dataclass(frozen=True, slots=True)
class ClientConfig:
    """How a client reaches the server.

    ``retries`` is the number of extra attempts an idempotent call (GET, PUT, DELETE,
    and the reads sent as POST: recall, list, hint) gets after a connection error
    or an HTTP 503; the wait before retry ``n`` (0-based) is
    ``min(backoff_s * 2**n, max_backoff_s)`` seconds, or the server's
    ``Retry-After`` when it is shorter than ``max_backoff_s``.
    """

    base_url: str
    api_key: str | None = field(default=None, repr=False)
    persona: str | None = None
    timeout_s: float = 30.0
    retries: int = 2
    backoff_s: float = 0.2
    max_backoff_s: float = 5.0

    @classmethod
    def resolve(
        cls,
        base_url: str | None,
        api_key: str | None,
        *,
        persona: str | None,
        timeout_s: float,
        retries: int,
        backoff_s: float,
        max_backoff_s: float,
        env: Mapping[str, str] | None = None,
    ) -> ClientConfig:
        """The configuration from the arguments, falling back to ``KENNING_URL`` and
        ``KENNING_API_KEY`` (read now, from ``env`` or the process environment)."""
        source = os.environ if env is None else env
        url = base_url or source.get("KENNING_URL") or DEFAULT_URL
        key = api_key or source.get("KENNING_API_KEY") or None
        if not url.startswith(("http://", "https://")):
            raise InvalidInput(f"base_url must be an http(s) URL; got {url!r}", field="base_url")
        for name, value in (
            ("timeout_s", timeout_s),
            ("backoff_s", backoff_s),
            ("max_backoff_s", max_backoff_s),
        ):
            if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
                raise InvalidInput(f"{name} must be a number >= 0; got {value!r}", field=name)
            if not math.isfinite(value):
                raise InvalidInput(f"{name} must be finite; got {value!r}", field=name)
        if isinstance(retries, bool) or not isinstance(retries, int) or retries < 0:
            raise InvalidInput(f"retries must be an integer >= 0; got {retries!r}", field="retries")
        return cls(
            url.rstrip("/"),
            key,
            persona,
            float(timeout_s),
            retries,
            float(backoff_s),
            float(max_backoff_s),
        )

    def headers(self) -> dict[str, str]:
        """The headers every request carries."""
        from .. import __version__  # the package finishes importing after this module

        out = {"Accept": "application/json", "User-Agent": f"kenning-client/{__version__}"}
        if self.api_key:
            out["Authorization"] = f"Bearer {self.api_key}"
        return out

    def request(self, call: Call[Any]) -> dict[str, Any]:
        """The keyword arguments of ``httpx.Client.request`` for ``call``."""
        headers = {}
        persona = call.persona or self.persona
        if persona:
            headers[PERSONA_HEADER] = persona
        kw: dict[str, Any] = {"method": call.method, "url": self.base_url + call.path}
        if call.params:
            kw["params"] = call.params
        if call.body is not None:
            try:
                content = json.dumps(call.body, allow_nan=False, ensure_ascii=False)
                kw["content"] = content.encode("utf-8")
            except (TypeError, ValueError) as exc:
                raise InvalidInput(f"arguments cannot be sent as JSON: {exc}") from None
            headers["Content-Type"] = "application/json"
        if headers:
            kw["headers"] = headers
        return kw

    def delay(self, attempt: int, retry_after: str | None = None) -> float:
        """Seconds to wait before retry number ``attempt`` (0-based): capped
        exponential backoff, or the server's ``Retry-After`` if sooner than the cap."""
        wait = min(self.backoff_s * 2.0**attempt, self.max_backoff_s)
        if retry_after is not None:
            try:
                asked = float(retry_after)
            except ValueError:
                return wait
            if 0 <= asked <= self.max_backoff_s:
                return asked
        return wait

    def retry_after_error(self, call: Call[Any], attempt: int, error: Exception) -> float:
        """The wait before sending ``call`` again after ``error``; raises the
        :class:`ClientError` to report when it is not retried."""
        if isinstance(error, _RETRYABLE_ERRORS) and call.idempotent and attempt < self.retries:
            return self.delay(attempt)
        if isinstance(error, httpx.TimeoutException):
            raise ClientError(
                f"{call.method} {call.path} timed out after {self.timeout_s:g} s ({error!r})"
            ) from error
        tries = f" after {attempt + 1} attempts" if attempt else ""
        raise ClientError(
            f"cannot reach the kenning server at {self.base_url}{tries}: {error}"
        ) from error

    def retry_after_status(self, call: Call[Any], attempt: int, response: httpx.Response) -> float:
        """The wait before sending ``call`` again after ``response``, or -1 to use it."""
        if response.status_code == 503 and call.idempotent and attempt < self.retries:
            return self.delay(attempt, response.headers.get("retry-after"))
        return -1.0

    def result(self, call: Call[T], response: httpx.Response) -> T:
        """The value of a response (parsed into kenning's classes), or its error raised."""
        status = response.status_code
        if status == 204:
            return call.parse(None)
        try:
            body = response.json() if response.content else None
        except ValueError:
            body = None
            if status < 400:
                raise ClientError(
                    f"{call.method} {call.path}: the answer is not JSON ({response.text[:100]!r})",
                    status=status,
                ) from None
        if status >= 400:
            raise error_for(status, body, response.text, response.headers.get("retry-after"))
        return call.parse(body)
