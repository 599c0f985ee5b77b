"""``kenning.Client`` / ``AsyncClient`` beyond the parity suite: configuration from the
environment, retries and backoff, timeouts, persona per client and per call, the
error classes, and that the async client is the sync one's exact mirror."""

from __future__ import annotations

import asyncio
import inspect
import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from doorkit import GRAPH_METHODS, METHODS, DoorServer
from serverkit import bootstrap_org

from kenning import (
    AsyncClient,
    AsyncMemory,
    Client,
    Conflict,
    InvalidInput,
    Memory,
    MemoryRecord,
    NotFound,
    PermissionDenied,
    Principal,
    Scope,
    StoreError,
    Unauthenticated,
)
from kenning.client import ClientError

# -- a scripted HTTP server on 127.0.0.1 (what a proxy in front of kenning may answer) --------


class Scripted:
    """Answers each request with the next (status, body, delay) of ``script``."""

    def __init__(self, script: list[tuple[int, bytes, float]]) -> None:
        self.script = list(script)
        self.seen: list[tuple[str, str, dict[str, str]]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def _answer(self) -> None:
                size = int(self.headers.get("content-length") or 0)
                self.rfile.read(size)
                outer.seen.append((self.command, self.path, dict(self.headers)))
                status, body, delay = outer.script.pop(0) if outer.script else (500, b"", 0)
                time.sleep(delay)
                try:
                    self.send_response(status)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                except OSError:
                    pass  # the client gave up (a timeout test)

            do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = _answer

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def scripted() -> Iterator[Callable[..., Scripted]]:
    made: list[Scripted] = []

    def make(*script: tuple[int, bytes, float]) -> Scripted:
        made.append(Scripted(list(script)))
        return made[-1]

    yield make
    for s in made:
        s.close()


def _record_json() -> bytes:
    rec = MemoryRecord(id="a" * 32, org_id="default", scope=Scope.user("bo"), content="hi")
    return json.dumps(rec.to_dict()).encode()


UNAVAILABLE = b'{"error": {"code": "store_unavailable", "message": "the store is down"}}'


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# -- configuration ------------------------------------------------------------------------------


def test_url_and_key_come_from_the_environment_when_the_client_is_built(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("KENNING_URL", "http://127.0.0.1:9/base/")
    monkeypatch.setenv("KENNING_API_KEY", "kn_from_env")
    client = Client()
    assert client.config.base_url == "http://127.0.0.1:9/base"
    assert client.config.api_key == "kn_from_env"
    assert client.config.headers()["Authorization"] == "Bearer kn_from_env"
    monkeypatch.setenv("KENNING_URL", "http://127.0.0.1:10")
    assert client.config.base_url == "http://127.0.0.1:9/base"  # read once, at construction
    explicit = Client("http://127.0.0.1:11", "kn_given")
    assert (explicit.config.base_url, explicit.config.api_key) == (
        "http://127.0.0.1:11",
        "kn_given",
    )
    monkeypatch.delenv("KENNING_URL")
    monkeypatch.delenv("KENNING_API_KEY")
    default = Client()
    assert default.config.base_url == "http://127.0.0.1:8765" and default.config.api_key is None
    assert "Authorization" not in default.config.headers()
    for each in (client, explicit, default):
        each.close()


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"base_url": "ftp://x"}, "base_url"),
        ({"timeout": -1}, "timeout_s"),
        ({"retries": -1}, "retries"),
        ({"retries": 1.5}, "retries"),
        ({"backoff": float("nan")}, "backoff_s"),
    ],
)
def test_bad_configuration_is_invalid_input(kwargs: dict[str, Any], field: str) -> None:
    with pytest.raises(InvalidInput) as info:
        Client(**{"base_url": "http://127.0.0.1:1", **kwargs})
    assert info.value.field == field


def test_importing_the_client_reads_no_environment_and_loads_no_server() -> None:
    import subprocess
    import sys

    code = (
        "import os, sys; os.environ['KENNING_URL'] = 'http://127.0.0.1:5'; import kenning.client;"
        "heavy = [m for m in ('fastapi', 'uvicorn', 'mcp', 'psycopg', 'spacy')"
        " if m in sys.modules];"
        "print(heavy, kenning.client.Client().config.base_url)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[] http://127.0.0.1:5"


# -- retries --------------------------------------------------------------------------------------


def test_an_idempotent_call_is_retried_after_503_with_capped_backoff(
    scripted: Callable[..., Scripted],
) -> None:
    server = scripted(
        (503, UNAVAILABLE, 0),
        (503, UNAVAILABLE, 0),
        (503, UNAVAILABLE, 0),
        (200, _record_json(), 0),
    )
    client = Client(server.url, "kn_x", retries=3, backoff=0.5, max_backoff=0.75)
    waits: list[float] = []
    client._sender.sleep = waits.append
    rec = client.get("a" * 32)
    assert rec.content == "hi" and rec.id == "a" * 32
    assert waits == [0.5, 0.75, 0.75]  # 0.5 * 2**n, capped
    assert [s[0] for s in server.seen] == ["GET"] * 4
    client.close()


def test_a_recall_sent_as_post_is_retried_but_a_write_is_not(
    scripted: Callable[..., Scripted],
) -> None:
    body = b'{"hits": [], "timings_ms": {"total": 1.0}}'
    server = scripted((503, UNAVAILABLE, 0), (200, body, 0), (503, UNAVAILABLE, 0))
    client = Client(server.url, "kn_x", retries=2, backoff=0)
    assert len(client.recall("anything")) == 0
    with pytest.raises(StoreError, match="the store is down"):
        client.remember("a write is sent once")
    assert [s[:2] for s in server.seen] == [
        ("POST", "/v1/recall"),
        ("POST", "/v1/recall"),
        ("POST", "/v1/memories"),
    ]
    client.close()


def test_retries_stop_after_the_configured_number(scripted: Callable[..., Scripted]) -> None:
    server = scripted(*[(503, UNAVAILABLE, 0)] * 5)
    client = Client(server.url, "kn_x", retries=2, backoff=0)
    with pytest.raises(StoreError, match="the store is down"):
        client.get("a" * 32)
    assert len(server.seen) == 3
    client.close()


def test_connection_refused_is_retried_only_for_idempotent_calls() -> None:
    url = f"http://127.0.0.1:{_free_port()}"
    client = Client(url, "kn_x", retries=2, backoff=0.01)
    waits: list[float] = []
    client._sender.sleep = waits.append
    with pytest.raises(ClientError, match="cannot reach the kenning server") as info:
        client.remember("not sent twice")
    assert waits == [] and info.value.status is None
    with pytest.raises(ClientError, match="after 3 attempts"):
        client.get("a" * 32)
    assert waits == [0.01, 0.02]
    client.close()


def test_a_slow_server_times_out(scripted: Callable[..., Scripted]) -> None:
    server = scripted((200, _record_json(), 1.0))
    client = Client(server.url, "kn_x", timeout=0.2, retries=0)
    started = time.perf_counter()
    with pytest.raises(ClientError, match="timed out after 0.2 s"):
        client.get("a" * 32)
    assert time.perf_counter() - started < 0.9
    client.close()


def test_an_answer_that_is_not_kenning_is_a_client_error(
    scripted: Callable[..., Scripted],
) -> None:
    server = scripted((502, b"<html>bad gateway</html>", 0), (200, b"not json", 0))
    client = Client(server.url, "kn_x", retries=0)
    with pytest.raises(ClientError, match="server error 502") as info:
        client.get("a" * 32)
    assert info.value.status == 502
    with pytest.raises(ClientError, match="not JSON"):
        client.get("a" * 32)
    client.close()


# -- arguments are checked before anything is sent ---------------------------------------------

LIMITS = b'{"content_chars": 40, "key_chars": 10, "tags": 2, "batch": 3, "k": 7}'


def test_a_bad_argument_is_refused_before_it_is_sent(scripted: Callable[..., Scripted]) -> None:
    """The engine's checks run in the client; the server's size limits are read once,
    the first time an error needs them for its words, and never for a valid call."""
    server = scripted((200, LIMITS, 0), (200, _record_json(), 0))
    client = Client(server.url, "kn_x", retries=0)
    with pytest.raises(InvalidInput, match="importance must be an integer from 1 to 5") as info:
        client.remember("fine", importance=0)
    assert info.value.field == "importance"
    assert [s[:2] for s in server.seen] == [("GET", "/v1/limits")]
    for call, words in (
        (lambda: client.remember("x" * 41), "content is 41 characters; the limit is 40"),
        (lambda: client.recall("tea", k=0), "k must be an integer from 1 to 7, got 0"),
        (lambda: client.recall("tea", k="5"), "k must be an integer from 1 to 7, got '5'"),
        (lambda: client.remember("ok", tags=["a", "b", "c"]), "at most 2 tags"),
        (lambda: client.remember_many([{"content": "a"}] * 4), "at most 3 memories, got 4"),
        (lambda: client.remember("ok", metadata={"a": {1}}), "not JSON-serialisable"),
        (lambda: client.get(None), "memory id must be a string, got NoneType"),  # type: ignore[arg-type]
        (lambda: client.update("a" * 32, colour="red"), r"cannot update \['colour'\]"),
    ):
        with pytest.raises(InvalidInput, match=words):
            call()
    assert len(server.seen) == 1  # the limits, read once; no bad call was sent
    assert client.get("a" * 32).content == "hi"
    client.close()


def test_limits_are_read_only_when_an_error_needs_them(
    scripted: Callable[..., Scripted],
) -> None:
    """A valid call is sent at once; a server that does not say its limits leaves the
    size checks to itself (the error is then worded without them)."""
    server = scripted((200, _record_json(), 0), (404, b'{"detail": "no"}', 0))
    client = Client(server.url, "kn_x", retries=0)
    assert client.get("a" * 32).id == "a" * 32
    with pytest.raises(InvalidInput, match="memory_type must be one of") as info:
        client.remember("ok", memory_type="dream")
    assert info.value.field == "memory_type"
    assert [s[:2] for s in server.seen] == [
        ("GET", "/v1/memories/" + "a" * 32),
        ("GET", "/v1/limits"),
    ]
    client.close()


# -- against a real server -------------------------------------------------------------------------


@pytest.fixture
def served(mem: Memory, door_server: DoorServer) -> Iterator[tuple[Memory, str, dict[str, str]]]:
    """``mem`` served by the session's uvicorn server, with org acme's users and keys."""
    keys = bootstrap_org(mem, "acme")
    url = door_server.mount(mem)
    yield mem, url, keys
    door_server.unmount(url)


def test_persona_per_client_and_per_call(served: tuple[Memory, str, dict[str, str]]) -> None:
    mem, url, keys = served
    with Client(url, keys["alice"]) as alice, Client(url, keys["alice"], persona="helper") as bot:
        own = alice.remember("Alice keeps her notes in a paper diary")
        assert own.scope.key == "user:alice"
        as_helper = alice.remember("Ticket 7 waits for the customer", persona="helper")
        assert as_helper.scope.key == "persona_user:helper/alice"
        assert bot.remember("Ticket 9 is closed").scope.key == "persona_user:helper/alice"
        assert bot.remember("Plain note", persona=None).scope.key == "persona_user:helper/alice"
        assert [h.memory.id for h in alice.recall("ticket customer", scopes="all")] != []
        with pytest.raises(InvalidInput, match="active persona 'ghost' is not one"):
            alice.remember("Not hers to use", persona="ghost")
    with Client(url, keys["bob"]) as bob, pytest.raises(InvalidInput, match="persona"):
        bob.remember("Bob may not use the helper", persona="helper")


def test_errors_are_the_engines_classes_with_the_servers_message(
    served: tuple[Memory, str, dict[str, str]],
) -> None:
    mem, url, keys = served
    with Client(url, keys["alice"]) as alice, Client(url, keys["bob"]) as bob:
        rec = alice.remember("Alice's locker code is 4711", scope="team:eng")
        with pytest.raises(NotFound, match="not found"):
            bob.get(rec.id)
        with pytest.raises(PermissionDenied, match="may not write scope 'team:eng'"):
            bob.remember("Bob writes into eng", scope="team:eng")
        with pytest.raises(InvalidInput, match="importance") as info:
            alice.update(rec.id, importance=9)
        assert info.value.field is not None
        with pytest.raises(Conflict):
            alice.update(rec.id, content="Locker code changed", expected_version=7)
        with pytest.raises(InvalidInput, match="principal= has no meaning over HTTP"):
            alice.recall("locker", principal=Principal.member("alice", "acme"))
        with pytest.raises(InvalidInput, match="memory id must not be empty"):
            alice.get(" ")
        assert alice.get(rec.id).version == 1
    with Client(url, "kn_not_a_key") as nobody, pytest.raises(Unauthenticated):
        nobody.recall("anything")
    with Client(url, None) as anonymous, pytest.raises(Unauthenticated, match="API key"):
        anonymous.recall("anything")


def test_async_client_answers_like_the_sync_one(
    served: tuple[Memory, str, dict[str, str]],
) -> None:
    mem, url, keys = served

    async def run() -> tuple[Any, ...]:
        async with AsyncClient(url, keys["alice"]) as client:
            rec = await client.remember("Alice parks on level three", key="parking")
            again = await client.upsert("parking", "Alice parks on level four")
            hits = await client.recall("where does Alice park?", explain=True)
            page = await client.list(filters={"key": "parking"})
            trail = await client.history(rec.id)
            with pytest.raises(NotFound):
                await client.get("f" * 32)
            return rec, again, hits, page, trail

    rec, again, hits, page, trail = asyncio.run(run())
    with Client(url, keys["alice"]) as sync:
        assert sync.get(rec.id).to_dict() == again.to_dict()
        assert hits.to_dict()["hits"][0]["memory"]["id"] == rec.id
        assert [r.id for r in page.items] == [rec.id]
        assert [e.to_dict() for e in trail] == [e.to_dict() for e in sync.history(rec.id)]


# -- the surface --------------------------------------------------------------------------------

#: The engine methods the clients mirror (the door kit's list: one list for both).
MIRRORED = sorted(METHODS)
GRAPH = sorted(GRAPH_METHODS)


def _params(fn: Any) -> list[tuple[str, Any, Any]]:
    sig = inspect.signature(fn)
    return [(p.name, p.kind, p.default) for p in sig.parameters.values() if p.name != "self"]


@pytest.mark.parametrize("name", MIRRORED)
def test_the_clients_take_the_engines_arguments(name: str) -> None:
    """Same names, kinds and defaults as ``Memory`` (plus ``persona=`` per call), and
    the async client is the sync one with ``async def``."""
    engine = [p for p in _params(getattr(Memory, name))]
    sync = _params(getattr(Client, name))
    extra = [p for p in sync if p not in engine]
    assert [p for p in sync if p in engine] == engine
    assert extra in ([("persona", inspect.Parameter.KEYWORD_ONLY, None)], [])
    assert _params(getattr(AsyncClient, name)) == sync
    assert inspect.iscoroutinefunction(getattr(AsyncClient, name))
    assert inspect.iscoroutinefunction(getattr(AsyncMemory, name))

    def ret(cls: type) -> str:
        return str(inspect.signature(getattr(cls, name)).return_annotation).replace("builtins.", "")

    assert ret(Client) == ret(AsyncClient) == ret(Memory) == ret(AsyncMemory)


@pytest.mark.parametrize("name", GRAPH)
def test_the_graph_methods_take_the_engines_arguments(name: str) -> None:
    from kenning import Graph
    from kenning.client import AsyncClientGraph, ClientGraph

    engine = _params(getattr(Graph, name))
    sync = _params(getattr(ClientGraph, name))
    assert sync == engine + [("persona", inspect.Parameter.KEYWORD_ONLY, None)]
    assert _params(getattr(AsyncClientGraph, name)) == sync
    assert inspect.iscoroutinefunction(getattr(AsyncClientGraph, name))
