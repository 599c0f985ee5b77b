"""A synchronous handle on the ASGI app for tests: the app's lifespan runs on an
event loop in a background thread and requests go through ``httpx.ASGITransport``
(in-process, no socket), so tests stay plain functions."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

import httpx
from fastapi import FastAPI

from kenning import Memory, Principal
from kenning.server import create_app

T = TypeVar("T")


class Api:
    """``api.call("GET", "/v1/me", key=k)`` → ``httpx.Response``."""

    def __init__(self, mem: Memory) -> None:
        self.mem = mem
        self.app: FastAPI = create_app(memory=mem)
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._thread.start()
        self._stop: asyncio.Event | None = None
        self._ready = threading.Event()
        self._done = self._submit_nowait(self._lifespan())
        self._ready.wait(30)
        transport = httpx.ASGITransport(app=self.app)
        self.client = httpx.AsyncClient(transport=transport, base_url="http://kenning.test")

    async def _lifespan(self) -> None:
        self._stop = asyncio.Event()
        async with self.app.router.lifespan_context(self.app):
            self._ready.set()
            await self._stop.wait()

    def _submit_nowait(self, coro: Coroutine[Any, Any, T]) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self._loop)

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run a coroutine on the app's loop and wait for it."""
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(60)

    def call(
        self,
        method: str,
        path: str,
        *,
        key: str | None = None,
        headers: dict[str, str] | None = None,
        **kw: Any,
    ) -> httpx.Response:
        """One request; ``key`` goes in ``Authorization: Bearer``."""
        h = dict(headers or {})
        if key is not None:
            h["Authorization"] = f"Bearer {key}"
        return self.run(self.client.request(method, path, headers=h, **kw))

    def close(self) -> None:
        """End the lifespan and the loop."""
        self.run(self.client.aclose())
        assert self._stop is not None
        self._loop.call_soon_threadsafe(self._stop.set)
        self._done.result(30)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)


def admin_of(org: str, user: str = "root") -> Principal:
    """An admin principal of ``org`` for setting the directory up."""
    return Principal(org_id=org, user_id=user, roles=frozenset({"admin"}))


def bootstrap_org(mem: Memory, org: str) -> dict[str, str]:
    """``org`` with an admin ``root`` and three users, two teams and a persona;
    returns an API key per user: root (admin), alice (member of eng), lena (team
    lead of eng), bob (member of ops)."""
    d = mem.directory
    _, root_key = d.bootstrap(org, "root", "test")
    admin = admin_of(org)
    d.put_user(admin, "alice", name="Alice", role="member")
    d.put_user(admin, "lena", name="Lena", role="team_lead")
    d.put_user(admin, "bob", name="Bob", role="member")
    d.put_team(admin, "eng", name="Engineering")
    d.put_team(admin, "ops", name="Operations")
    d.set_member(admin, "eng", "alice", "member")
    d.set_member(admin, "eng", "lena", "lead")
    d.set_member(admin, "ops", "bob", "member")
    d.put_persona(admin, "helper", name="Helper")
    d.grant_persona(admin, "helper", "alice")
    keys = {"root": root_key}
    for user in ("alice", "lena", "bob"):
        keys[user] = d.create_key(admin, user, "test")[1]
    return keys
