"""The FastAPI app factory: ``create_app()`` for uvicorn (``kenning serve``),
``create_app(memory=mem)`` for tests and embedding.

The engine is opened once, in the lifespan, and closed there (pending
reinforcement writes are flushed on shutdown). The MCP endpoint
(streamable HTTP) is mounted at ``/mcp`` with the same authentication and rate
limit, the web UI at ``/`` (assets under ``/ui``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any

import anyio.to_thread
from fastapi import FastAPI

from .. import __version__, web
from ..config import Settings
from ..engine import Memory
from ..lanes import EngineLanes, lane_size, reads_inline
from ..models import Principal
from . import errors
from .auth import KeyCache, principal_from_headers, rate_limited
from .direct import DirectRoute
from .inflight import InFlight
from .metrics import Metrics
from .middleware import RequestMiddleware
from .ratelimit import RateLimiter
from .routes import admin, insight, lifecycle, memories, ops, review
from .schemas import RecallIn

__all__ = ["create_app"]


def _mcp_app(app: FastAPI, mem: Memory) -> Any:
    from ..mcp.server import build_mcp

    cache: KeyCache = app.state.key_cache

    def resolve(headers: Mapping[str, str] | None) -> Principal:
        return principal_from_headers(mem, mem.settings.server, headers or {}, cache)[0]

    server = build_mcp(mem, resolve, lanes=app.state.engine_lanes)
    app.state.mcp = server
    return server


def create_app(memory: Memory | None = None, settings: Settings | None = None) -> FastAPI:
    """The kenning server. Without ``memory`` the engine is opened from ``settings``
    (default: the environment) when the app starts, and closed when it stops."""
    holder: dict[str, Any] = {}

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        mem = memory if memory is not None else Memory(settings=settings)
        # models load before the server accepts requests: the first ones do not wait
        await anyio.to_thread.run_sync(mem.warm_up)
        app.state.engine_lanes = EngineLanes.of_size(
            lane_size(mem.settings), reads_inline(mem.settings)
        )
        app.state.metrics.watch_lanes(app.state.engine_lanes)
        app.state.memory = mem
        # a recall spreads over helper threads only while it is the only request
        inflight: InFlight = app.state.inflight
        mem.core.helpers.watch(lambda: inflight.count)
        app.state.metrics.watch_embedder(mem.core.batcher)
        app.state.metrics.watch_replicas(getattr(mem.store, "replicas", None))
        mcp = _mcp_app(app, mem)
        holder["mcp_http"].set(mcp, mem.settings.server.host)
        try:
            async with mcp.session_manager.run():
                yield
        finally:
            mem.core.helpers.watch(None)
            mem.flush()
            if memory is None:
                mem.close()

    app = FastAPI(
        title="kenning",
        version=__version__,
        lifespan=lifespan,
        description="Long-term memory for AI agents: scoped memories, hybrid recall, review, "
        "audit. Authenticate with `Authorization: Bearer kn_…` (or `X-API-Key`); "
        "`X-Kenning-Persona` selects the active persona.",
    )
    app.state.metrics = Metrics()
    app.state.key_cache = KeyCache()
    app.state.inflight = InFlight()
    cfg = (memory.settings if memory is not None else settings or Settings()).server
    app.state.rate_limiter = (
        RateLimiter(cfg.rate_limit_per_s, cfg.rate_limit_burst)
        if cfg.rate_limit_per_s > 0
        else None
    )
    errors.install(app)
    for module in (memories, lifecycle, insight, review, admin, ops):
        app.include_router(module.router)
    # recall, every agent's every turn, skips FastAPI's per-request work (see .direct)
    recall = DirectRoute("/v1/recall", "memory.recall", memories.recall, RecallIn, app.router)
    app.router.routes.insert(0, recall)
    holder["mcp_http"] = _LateMount(app)
    app.mount("/mcp", holder["mcp_http"])
    web.mount(app)

    app.add_middleware(
        RequestMiddleware,
        max_body=cfg.max_body_bytes,
        observe=app.state.metrics.observe_request,
        inflight=app.state.inflight,
    )
    return app


class _LateMount:
    """The MCP streamable-HTTP app, built in the lifespan (it needs the engine),
    behind the server's per-key rate limit."""

    def __init__(self, parent: FastAPI) -> None:
        self._app: Any = None
        self._parent = parent

    def set(self, mcp: Any, host: str) -> None:
        self._app = mcp.streamable_http_app(
            streamable_http_path="/", stateless_http=True, json_response=True, host=host
        )

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if self._app is None:
            raise RuntimeError("the MCP endpoint starts with the app's lifespan")
        state = self._parent.state
        limiter: RateLimiter | None = state.rate_limiter
        if limiter is not None and scope["type"] == "http":
            headers = {
                k.decode("latin-1").lower(): v.decode("latin-1")
                for k, v in scope.get("headers", ())
            }
            refused = await rate_limited(state.memory, limiter, state.key_cache, headers)
            if refused is not None:
                rid = scope.get("state", {}).get("request_id")
                response = errors.error_response(
                    rid,
                    429,
                    "rate_limited",
                    str(refused),
                    headers={"Retry-After": str(refused.retry_after_s)},
                )
                await response(scope, receive, send)
                return
        await self._app(scope, receive, send)
