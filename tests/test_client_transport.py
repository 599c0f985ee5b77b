"""The sync client's default transport (``http.client`` under httpx): keep-alive
connections reused, one per thread; an idle connection the server closed is
replaced; a broken answer is httpx's ``RemoteProtocolError`` (retried only for
idempotent calls); HTTPS verified against the given certificates."""

from __future__ import annotations

import datetime as dt
import json
import ssl
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from kenning import Client, MemoryRecord, Scope
from kenning.client import ClientError
from kenning.client._transport import StdlibTransport

RECORD = json.dumps(
    MemoryRecord(id="a" * 32, org_id="default", scope=Scope.user("bo"), content="hi").to_dict()
).encode()


class KeepAlive:
    """An HTTP/1.1 server that counts connections. Each request's answer follows
    ``mode``: ``"keep"`` (keep-alive), ``"drop"`` (answer, then close without
    saying so) or ``"cut"`` (close in the middle of the body)."""

    def __init__(self, tls: ssl.SSLContext | None = None) -> None:
        self.connections = 0
        self.requests = 0
        self.mode = "keep"
        self.lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def setup(self) -> None:
                with outer.lock:
                    outer.connections += 1
                super().setup()

            def _answer(self) -> None:
                self.rfile.read(int(self.headers.get("content-length") or 0))
                with outer.lock:
                    outer.requests += 1
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(RECORD)))
                self.end_headers()
                if outer.mode == "cut":
                    self.wfile.write(RECORD[:10])
                    self.close_connection = True
                    return
                self.wfile.write(RECORD)
                if outer.mode == "drop":
                    self.close_connection = True

            do_GET = do_POST = _answer

            def log_message(self, *args: Any) -> None:
                pass

        class Server(ThreadingHTTPServer):
            def shutdown_request(self, request: Any) -> None:
                super().shutdown_request(request)
                outer.closed.set()

        self.closed = threading.Event()
        self.httpd = Server(("127.0.0.1", 0), Handler)
        if tls is not None:
            self.httpd.socket = tls.wrap_socket(self.httpd.socket, server_side=True)
        scheme = "https" if tls else "http"
        self.url = f"{scheme}://localhost:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def settle(self) -> None:
        """Wait until the server has closed a connection (``"drop"`` mode)."""
        assert self.closed.wait(10)
        self.closed.clear()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def server() -> Iterator[KeepAlive]:
    made = KeepAlive()
    yield made
    made.close()


def test_requests_share_one_keep_alive_connection(server: KeepAlive) -> None:
    client = Client(server.url, "kn_x")
    for _ in range(5):
        assert client.get("a" * 32).content == "hi"
    assert server.requests == 5 and server.connections == 1
    client.close()


def test_an_idle_connection_the_server_closed_is_replaced_even_for_a_write(
    server: KeepAlive,
) -> None:
    client = Client(server.url, "kn_x", retries=0)
    server.mode = "drop"
    assert client.get("a" * 32).id == "a" * 32
    server.settle()
    # the server has closed the connection: a write (never retried) still goes through
    http = httpx.Client(transport=StdlibTransport())
    for _ in range(2):
        assert http.post(server.url + "/v1/memories", content=b"{}").status_code == 200
        server.settle()
    assert client.get("a" * 32).id == "a" * 32
    assert server.requests == 4 and server.connections == 4
    http.close()
    client.close()


def test_an_answer_cut_short_is_retried_for_a_read_and_reported_for_a_write(
    server: KeepAlive,
) -> None:
    server.mode = "cut"
    client = Client(server.url, "kn_x", retries=2, backoff=0)
    with pytest.raises(ClientError, match="after 3 attempts") as info:
        client.get("a" * 32)
    assert isinstance(info.value.__cause__, httpx.RemoteProtocolError)
    assert server.requests == 3
    with pytest.raises(ClientError, match="cannot reach the kenning server"):
        client.remember("sent once")
    assert server.requests == 4
    server.mode = "keep"
    assert client.get("a" * 32).content == "hi"  # a fresh connection afterwards
    client.close()


def test_threads_each_get_a_connection_and_close_ends_them_all(server: KeepAlive) -> None:
    client = Client(server.url, "kn_x")
    errors: list[BaseException] = []

    def work() -> None:
        try:
            for _ in range(10):
                assert client.get("a" * 32).content == "hi"
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert server.requests == 40 and server.connections == 4
    client.close()
    assert client._sender.http._transport._open == set()  # type: ignore[attr-defined]


def _certificate(where: Path) -> tuple[Path, Path]:
    """A self-signed certificate for ``localhost`` and its key, as PEM files."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = dt.datetime.now(dt.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(days=1))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost")]), critical=False)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = where / "cert.pem", where / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_path, key_path


def test_https_is_verified_against_the_trusted_certificates(tmp_path: Path) -> None:
    cert, key = _certificate(tmp_path)
    tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    tls.load_cert_chain(cert, key)
    server = KeepAlive(tls)
    try:
        trusting = ssl.create_default_context(cafile=str(cert))
        client = Client(server.url, "kn_x", transport=StdlibTransport(trusting))
        assert client.get("a" * 32).content == "hi"
        assert client.get("a" * 32).content == "hi"
        assert server.connections == 1
        client.close()
        stranger = Client(server.url, "kn_x", retries=0)  # the system's trust store
        with pytest.raises(ClientError, match="CERTIFICATE_VERIFY_FAILED"):
            stranger.get("a" * 32)
        stranger.close()
    finally:
        server.close()
