"""The sync client's network transport: httpx's transport interface over the
standard library's ``http.client``, with one keep-alive connection per thread and
server.

httpx's default transport (httpcore with the pure-Python h11 state machine) spends
about a millisecond of CPU on each small request and writes a request's headers
and body in two system calls; ``http.client`` sends both in one and parses the
answer in less than half the time. A client that talks to one kenning server,
request after request, pays that on every recall, so :class:`kenning.Client`
uses this transport unless given another. httpx still builds the requests,
applies timeouts, proxies (mounted by httpx itself) and parses the answers.

Errors are httpx's: a refused or unreachable server raises ``ConnectError``
(``ConnectTimeout``), a server that closes the connection mid-answer
``RemoteProtocolError``, a slow answer ``ReadTimeout``; the client's retry rules
act on those classes whichever transport is used. An idle connection the server
has closed meanwhile is noticed before reuse (it reads as end-of-file) and
replaced, as httpcore does.
"""

from __future__ import annotations

import http.client
import select
import socket
import ssl
import threading
from typing import Any

import httpx

__all__ = ["StdlibTransport"]

_Key = tuple[str, str, int]


class StdlibTransport(httpx.BaseTransport):
    """HTTP/1.1 with keep-alive over ``http.client`` (one connection per thread
    and server; thread-safe). ``ssl_context`` verifies HTTPS servers (default: the
    system's trusted certificates)."""

    def __init__(self, ssl_context: ssl.SSLContext | None = None) -> None:
        self._ssl = ssl_context
        self._local = threading.local()
        self._lock = threading.Lock()
        self._open: set[http.client.HTTPConnection] = set()

    # -- connections --------------------------------------------------------

    def _pool(self) -> dict[_Key, http.client.HTTPConnection]:
        pool: dict[_Key, http.client.HTTPConnection] | None = getattr(self._local, "pool", None)
        if pool is None:
            pool = self._local.pool = {}
        return pool

    def _connection(
        self, url: httpx.URL, timeouts: dict[str, Any]
    ) -> tuple[_Key, http.client.HTTPConnection]:
        """This thread's live connection to ``url``'s server (opened if needed), and
        its key in the thread's pool."""
        scheme = url.scheme
        port = url.port or (443 if scheme == "https" else 80)
        key = (scheme, url.host, port)
        pool = self._pool()
        conn = pool.get(key)
        if conn is not None:
            if conn.sock is not None and not _closed_by_peer(conn.sock):
                return key, conn
            self._drop(pool, key, conn)
        conn = self._open_connection(scheme, url.host, port, timeouts.get("connect"))
        pool[key] = conn
        with self._lock:
            self._open.add(conn)
        return key, conn

    def _open_connection(
        self, scheme: str, host: str, port: int, timeout: float | None
    ) -> http.client.HTTPConnection:
        conn: http.client.HTTPConnection
        if scheme == "https":
            if self._ssl is None:
                self._ssl = ssl.create_default_context()
            conn = http.client.HTTPSConnection(host, port, timeout=timeout, context=self._ssl)
        elif scheme == "http":
            conn = http.client.HTTPConnection(host, port, timeout=timeout)
        else:
            raise httpx.UnsupportedProtocol(f"unsupported URL scheme {scheme!r}")
        try:
            conn.connect()
        except TimeoutError as exc:
            conn.close()
            raise httpx.ConnectTimeout(f"connecting to {host}:{port}: {exc}") from exc
        except OSError as exc:
            conn.close()
            raise httpx.ConnectError(f"connecting to {host}:{port}: {exc}") from exc
        assert conn.sock is not None
        conn.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return conn

    def _drop(self, pool: dict[_Key, http.client.HTTPConnection], key: _Key, conn: Any) -> None:
        conn.close()
        if pool.get(key) is conn:
            del pool[key]
        with self._lock:
            self._open.discard(conn)

    # -- requests -----------------------------------------------------------

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        """Send ``request`` and read the whole answer (see the module docstring)."""
        url = request.url
        timeouts: dict[str, Any] = request.extensions.get("timeout") or {}
        body = request.read()
        key, conn = self._connection(url, timeouts)
        pool = self._pool()
        assert conn.sock is not None
        try:
            conn.sock.settimeout(timeouts.get("write"))
            conn.putrequest(
                request.method,
                url.raw_path.decode("ascii"),
                skip_host=True,
                skip_accept_encoding=True,
            )
            for name, value in request.headers.raw:
                conn.putheader(name, value)
            conn.endheaders(body or None)  # headers and body in one write
            conn.sock.settimeout(timeouts.get("read"))
            answer = conn.getresponse()
            content = answer.read()
        except TimeoutError as exc:
            self._drop(pool, key, conn)
            raise httpx.ReadTimeout(f"no answer from {url.host}: {exc}") from exc
        except (http.client.HTTPException, ConnectionError) as exc:
            self._drop(pool, key, conn)
            raise httpx.RemoteProtocolError(f"the server closed the connection: {exc!r}") from exc
        except OSError as exc:
            self._drop(pool, key, conn)
            raise httpx.ReadError(f"talking to {url.host}: {exc}") from exc
        if answer.will_close:
            self._drop(pool, key, conn)
        return httpx.Response(
            answer.status,
            headers=answer.getheaders(),
            content=content,
            extensions={"http_version": b"HTTP/1.1", "reason_phrase": answer.reason.encode()},
        )

    def close(self) -> None:
        """Close every connection this transport opened, in every thread."""
        with self._lock:
            conns, self._open = self._open, set()
        for conn in conns:
            conn.close()


def _closed_by_peer(sock: socket.socket) -> bool:
    """True when an idle keep-alive socket is readable: the server closed it (or
    sent something unasked), so it must not carry the next request."""
    try:
        if hasattr(select, "poll"):  # no FD_SETSIZE limit
            poller = select.poll()
            poller.register(sock, select.POLLIN)
            return bool(poller.poll(0))
        readable, _, _ = select.select([sock], [], [], 0)
    except (OSError, ValueError):
        return True
    return bool(readable)
