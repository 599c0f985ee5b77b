"""Parity by construction: the engine's behavioural tests run through two doors.

* ``embedded``: the test talks to the :class:`~kenning.Memory` itself.
* ``http``: the same Memory is served by a real uvicorn server on 127.0.0.1 and
  the test talks to it through :class:`kenning.Client` (:class:`HttpDoor`).

One uvicorn server runs for the session (:class:`DoorServer`); each Memory a test
opens is mounted on it under its own path prefix (``/m/<n>``), with the app's
lifespan run as ``kenning serve`` runs it, and unmounted after the test.

:class:`HttpDoor` looks like a Memory: each ``principal=`` a test passes is turned
into a directory user that has exactly that principal's role, teams and personas
(and the org its recall mode), an API key of that user, and a Client for the key;
the active persona goes in ``X-Kenning-Persona``. The served Memory's
``server.max_k`` is raised to the engine's ``max_k`` (a server's lower cap on k
and page sizes is an operator's limit, tested in test_server.py). The scopes a call names are
created in the directory first (users, teams, personas), because a server's
organization is governed (it lists users) where an embedded one records teams as
they are written; the instance's own principal is a lead of every team, as
``Core.who`` makes it in an ungoverned organization. Only the store, settings,
clock and directory (test plumbing) pass through to the Memory; an engine
method the client does not have is an ``AttributeError``, so a test that needs it
runs on the embedded door only.
"""

from __future__ import annotations

import asyncio
import itertools
import socket
import threading
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import pytest
import uvicorn
from fastapi import FastAPI

from kenning import Client, Memory, Principal, Role, Scope, ScopeKind, TeamRole
from kenning.server import create_app

DOOR_KINDS = ["embedded", "http"]

#: What a door may read from the Memory behind it: test plumbing, not behaviour.
PLUMBING = frozenset(
    {"settings", "store", "directory", "clock", "policy", "principal", "embedder", "flush"}
)
#: The Client's engine methods.
METHODS = frozenset(
    {
        "remember",
        "remember_many",
        "write",
        "upsert",
        "update",
        "forget",
        "archive",
        "restore",
        "feedback",
        "get",
        "recall",
        "list",
        "history",
        "stats",
        "ingest",
        "context",
        "consolidate",
        "build_hint",
        "review_queue",
        "approve",
        "reject",
        "review_many",
        "access_log",
        "reinforce",
        "strength",
        "confidence_components",
        "create_sector",
        "sectors",
        "policies",
        "set_policy",
        "delete_policy",
    }
)
GRAPH_METHODS = frozenset({"neighbours", "entity", "entities", "paths", "link"})


class _Mux:
    """An ASGI app that hands ``/m/<n>/...`` to the app mounted as ``n``."""

    def __init__(self) -> None:
        self.apps: dict[str, FastAPI] = {}

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                kind = message["type"].rsplit(".", 1)[-1]
                await send({"type": f"lifespan.{kind}.complete"})
                if kind == "shutdown":
                    return
        _, m, name, *rest = scope["path"].split("/", 3) + [""]
        app = self.apps.get(name) if m == "m" else None
        if app is None:
            await send({"type": "http.response.start", "status": 404, "headers": []})
            await send({"type": "http.response.body", "body": b"no such mount"})
            return
        path = "/" + (rest[0] if rest else "")
        await app({**scope, "path": path, "raw_path": path.encode()}, receive, send)


class DoorServer:
    """One uvicorn server on 127.0.0.1 (a free port) in a background thread."""

    def __init__(self) -> None:
        self.mux = _Mux()
        # IPPROTO_TCP as uvicorn binds it: asyncio sets TCP_NODELAY only on such sockets
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind(("127.0.0.1", 0))
        self.port = int(self._sock.getsockname()[1])
        config = uvicorn.Config(
            self.mux, log_level="warning", access_log=False, lifespan="on", timeout_keep_alive=30
        )
        self.server = uvicorn.Server(config)
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._run, daemon=True, name="door-uvicorn")
        self._thread.start()
        for _ in range(300):
            if self.server.started:
                break
            self._thread.join(0.02)
        assert self.server.started, "the door's uvicorn server did not start"
        self._names = itertools.count()
        self._stops: dict[str, tuple[asyncio.Event, Any]] = {}

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.run_until_complete(self.server.serve(sockets=[self._sock]))

    @property
    def url(self) -> str:
        """The server's root URL."""
        return f"http://127.0.0.1:{self.port}"

    def mount(self, mem: Memory) -> str:
        """Serve ``mem`` (its app's lifespan started); returns its base URL."""
        name = str(next(self._names))
        app = create_app(memory=mem)
        ready = threading.Event()

        async def lifespan() -> None:
            stop = asyncio.Event()
            self._stops[name] = (stop, None)
            async with app.router.lifespan_context(app):
                ready.set()
                await stop.wait()

        done = asyncio.run_coroutine_threadsafe(lifespan(), self.loop)
        assert ready.wait(60) or done.result(0), "the app's lifespan did not start"
        self._stops[name] = (self._stops[name][0], done)
        self.mux.apps[name] = app
        return f"{self.url}/m/{name}"

    def unmount(self, url: str) -> None:
        """Stop serving the Memory at ``url`` (its lifespan ends; the Memory stays open)."""
        name = url.rsplit("/", 1)[-1]
        self.mux.apps.pop(name, None)
        if name not in self._stops:
            return
        stop, done = self._stops.pop(name)
        self.loop.call_soon_threadsafe(stop.set)
        done.result(30)

    def close(self) -> None:
        """Stop the server."""
        self.server.should_exit = True
        self._thread.join(10)


def _role(p: Principal) -> Role:
    if Role.ADMIN in p.roles:
        return Role.ADMIN
    return Role.TEAM_LEAD if Role.TEAM_LEAD in p.roles else Role.MEMBER


class HttpDoor:
    """A Memory's methods, answered through :class:`kenning.Client` (module docstring)."""

    def __init__(self, mem: Memory, server: DoorServer) -> None:
        # a server caps k and page sizes lower than the engine (an operator's limit,
        # KENNING_SERVER_MAX_K); the door serves the engine's own limit
        cfg = mem.settings
        mem.settings = cfg.model_copy(
            update={"server": cfg.server.model_copy(update={"max_k": cfg.max_k})}
        )
        object.__setattr__(self, "memory", mem)
        object.__setattr__(self, "server", server)
        object.__setattr__(self, "url", server.mount(mem))
        object.__setattr__(self, "_keys", {})
        object.__setattr__(self, "_clients", {})
        object.__setattr__(self, "_synced", {})
        object.__setattr__(self, "graph", _GraphDoor(self))

    memory: Memory
    server: DoorServer | None
    url: str
    graph: _GraphDoor
    _keys: dict[tuple[str, str], str]
    _clients: dict[tuple[str, str], Client]
    _synced: dict[tuple[str, str], Any]

    def __getattr__(self, name: str) -> Any:
        if name in PLUMBING:
            return getattr(self.memory, name)
        if name in METHODS:
            return lambda *args, **kw: self.call(name, None, *args, **kw)
        raise AttributeError(f"Memory.{name} is not served through the HTTP door")

    def __setattr__(self, name: str, value: Any) -> None:
        if name != "settings":
            raise AttributeError(f"cannot set {name!r} through the HTTP door")
        setattr(self.memory, name, value)

    def close(self) -> None:
        """``Memory.close``: stop serving the Memory, close the clients and the Memory."""
        self.release()
        self.memory.close()

    def release(self) -> None:
        """Close the clients and stop serving the Memory (which stays open)."""
        for client in self._clients.values():
            client.close()
        self._clients.clear()
        if self.server is not None:
            self.server.unmount(self.url)

    # -- dispatch -----------------------------------------------------------------------------

    def call(self, name: str, graph: bool | None, *args: Any, **kw: Any) -> Any:
        """``Memory.<name>(*args, **kw)`` through the Client of ``kw['principal']``."""
        principal = kw.pop("principal", None)
        if principal is not None and not isinstance(principal, Principal):
            kw["principal"] = principal  # the client refuses it, as the engine does
            principal = None
        who = principal or self.memory.principal
        self._scopes_exist(who.org_id, args, kw)
        client = self._client(who, own=principal is None)
        if who.active_persona and "persona" not in kw:
            kw["persona"] = who.active_persona
        target: Any = client.graph if graph else client
        return getattr(target, name)(*args, **kw)

    def _client(self, who: Principal, *, own: bool) -> Client:
        org, user = who.org_id, who.user_id
        d = self.memory.directory
        admin = Principal(org_id=org, user_id="door-admin", roles=frozenset({Role.ADMIN}))
        if org not in self._synced:
            d.ensure_org(org)
            self._synced[org] = True
        if d.org(org).mode is not who.mode:
            d.set_org(admin, mode=who.mode)
        teams = dict(who.teams)
        if (
            own and who.is_admin
        ):  # Core.who: the instance's admin leads every team of its organization
            teams = {**dict.fromkeys((t.id for t in d.teams(admin)), TeamRole.LEAD), **teams}
        shape = (_role(who), tuple(sorted(teams.items())), who.personas, who.persona_leads)
        if self._synced.get((org, user)) != shape:
            self._sync_user(admin, user, shape)
            self._synced[(org, user)] = shape
        client = self._clients.get((org, user))
        if client is None:
            _, secret = d.create_key(admin, user, "door")
            client = self._clients[(org, user)] = Client(self.url, secret, retries=0)
        return client

    def _sync_user(self, admin: Principal, user_id: str, shape: Any) -> None:
        role, teams, personas, leads = shape
        d = self.memory.directory
        d.put_user(admin, user_id, role=role)
        for team, team_role in teams:
            self._ensure(admin, "team", team)
            d.set_member(admin, team, user_id, team_role)
        for team in set(d.user(admin.org_id, user_id).teams) - {t for t, _ in teams}:
            d.set_member(admin, team, user_id, None)
        current = d.user(admin.org_id, user_id)
        for persona in personas | leads | current.personas | current.persona_leads:
            self._ensure(admin, "persona", persona)
            d.grant_persona(
                admin,
                persona,
                user_id,
                use=persona in personas or persona in leads,
                lead=persona in leads,
            )
        d._shape.pop(admin.org_id, None)

    def _ensure(self, admin: Principal, kind: str, owner: str) -> None:
        d = self.memory.directory
        if d.store.get_entry(admin.org_id, kind, owner) is not None:
            return
        if kind == "team":
            d.put_team(admin, owner)
            own = self.memory.principal
            self._synced.pop((own.org_id, own.user_id), None)  # it leads the new team
        elif kind == "persona":
            d.put_persona(admin, owner)
        else:
            d.put_user(admin, owner, role=Role.MEMBER)
        d._shape.pop(admin.org_id, None)

    def _scopes_exist(self, org: str, args: tuple[Any, ...], kw: Mapping[str, Any]) -> None:
        """Create the users, teams and personas of the scopes a call names."""
        named: list[Any] = [kw.get("scope")]
        scopes = kw.get("scopes")
        named += [scopes] if isinstance(scopes, str | Scope) else list(scopes or ())
        for items in (*args, kw.get("items")):
            if isinstance(items, list | tuple):
                named += [i.get("scope") for i in items if isinstance(i, Mapping)]
        admin = Principal(org_id=org, user_id="door-admin", roles=frozenset({Role.ADMIN}))
        for value in named:
            try:
                scope = value if isinstance(value, Scope) else Scope.parse(value)
            except (ValueError, TypeError, AttributeError):
                continue  # not a scope (or "all"): the server says what is wrong
            if scope.kind in (ScopeKind.TEAM, ScopeKind.PERSONA, ScopeKind.USER):
                kind = {ScopeKind.TEAM: "team", ScopeKind.PERSONA: "persona"}.get(
                    scope.kind, "user"
                )
                self._ensure(admin, kind, scope.owner_id)
            elif scope.kind is ScopeKind.PERSONA_USER:
                self._ensure(admin, "persona", scope.owner_id)
                self._ensure(admin, "user", str(scope.user_id))


class _GraphDoor:
    """``door.graph``: the graph methods through the caller's Client."""

    def __init__(self, door: HttpDoor) -> None:
        self._door = door

    def __getattr__(self, name: str) -> Any:
        if name not in GRAPH_METHODS:
            raise AttributeError(f"Memory.graph.{name} is not served through the HTTP door")
        return lambda *args, **kw: self._door.call(name, True, *args, **kw)


# -- fixtures -------------------------------------------------------------------------------


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "doors(*kinds): run only through these doors (engine methods REST lacks)"
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Drop the door parameters a ``doors(...)`` marker rules out (not skipped: not built)."""
    keep, drop = [], []
    for item in items:
        marker = item.get_closest_marker("doors")
        kind = getattr(getattr(item, "callspec", None), "params", {}).get("door_kind")
        (drop if marker and kind and kind not in marker.args else keep).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


@pytest.fixture(scope="session")
def door_server() -> Iterator[DoorServer]:
    """The session's uvicorn server (started on first use)."""
    server = DoorServer()
    yield server
    server.close()


@pytest.fixture(scope="session", params=DOOR_KINDS)
def door_kind(request: pytest.FixtureRequest) -> str:
    """Which door a parity test goes through."""
    return str(request.param)


class Doors:
    """Turns Memories into doors of one kind; the http ones are unmounted by :meth:`close`."""

    def __init__(self, kind: str, request: pytest.FixtureRequest) -> None:
        self.kind = kind
        self._request = request
        self._open: list[HttpDoor] = []

    def __call__(self, mem: Memory) -> Any:
        """``mem`` itself (embedded) or an :class:`HttpDoor` serving it (http)."""
        if self.kind == "embedded":
            return mem
        server: DoorServer = self._request.getfixturevalue("door_server")
        door = HttpDoor(mem, server)
        self._open.append(door)
        return door

    def close(self) -> None:
        """Close every door's clients and unmount its Memory."""
        for door in self._open:
            door.release()
        self._open.clear()


@pytest.fixture
def as_door(door_kind: str, request: pytest.FixtureRequest) -> Iterator[Doors]:
    """``as_door(mem)``: ``mem`` through this test's door (closed after the test)."""
    doors = Doors(door_kind, request)
    yield doors
    doors.close()


@pytest.fixture
def door(mem: Memory, as_door: Doors) -> Any:
    """The test's fresh Memory (``mem``) through the door of this parametrisation."""
    return as_door(mem)


@pytest.fixture
def make_door(make_memory: Callable[..., Memory], as_door: Doors) -> Callable[..., Any]:
    """``make_door(name='db', **Memory kwargs)``: ``make_memory`` through the door."""
    return lambda *args, **kw: as_door(make_memory(*args, **kw))


@pytest.fixture(scope="module")
def module_doors(door_kind: str, request: pytest.FixtureRequest) -> Iterator[Doors]:
    """Doors for module-scoped fixtures (unmounted after the module)."""
    doors = Doors(door_kind, request)
    yield doors
    doors.close()
