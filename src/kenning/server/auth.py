"""Who is calling: API keys (``Authorization: Bearer kn_…`` or ``X-API-Key``) and,
when configured, bearer JWTs, turned into a :class:`~kenning.models.Principal`
by the directory. Shared by the REST routes and the MCP endpoint.

``X-Kenning-Persona`` selects the active persona for one request (one the user
may use: granted to them, or for an admin any persona of the organization; any
other id is the same ``InvalidInput``, whether it exists elsewhere or nowhere);
otherwise an API key's own persona, if it has one, is active.

Once the caller is known, the server's per-key rate limit applies
(:mod:`kenning.server.ratelimit`; off unless configured).

A key verified a moment ago is not looked up again: :class:`KeyCache` keeps the
principal of each recently verified key for :data:`KEY_CACHE_TTL_S` seconds, and
forgets them all as soon as the directory changes in this process (a revoked
key, a disabled user, a switch turned off). Another process's changes (a second
worker, ``kenning admin`` on the same database) are seen at most that late.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated

import jwt
from fastapi import Depends, Request
from fastapi.security import APIKeyHeader, HTTPBearer
from starlette.concurrency import run_in_threadpool

from ..config import Server
from ..engine import Memory
from ..errors import KenningError, RateLimited, Unauthenticated
from ..models import Principal
from .ratelimit import RateLimiter, caller_id

__all__ = [
    "Caller",
    "KeyCache",
    "KEY_CACHE_TTL_S",
    "principal_from_headers",
    "current",
    "rate_limited",
    "engine",
    "CallerDep",
    "MemoryDep",
]

PERSONA_HEADER = "x-kenning-persona"
#: Seconds a verified API key's principal is reused without reading the store.
KEY_CACHE_TTL_S = 2.0

# declared for the OpenAPI document; the checks themselves are below
_bearer = HTTPBearer(auto_error=False, description="An API key (kn_…) or, if configured, a JWT")
_api_key = APIKeyHeader(name="X-API-Key", auto_error=False, description="An API key (kn_…)")


@dataclass(frozen=True, slots=True)
class Caller:
    """The authenticated principal of a request and the key it used (None for a JWT)."""

    principal: Principal
    key_id: str | None


class KeyCache:
    """The principals of recently verified API keys (see the module docstring).

    Entries are keyed by the SHA-256 of the presented key and the persona asked
    for (the key itself is not kept); only successful checks are kept, each for
    ``ttl_s`` seconds and only while the directory's
    :attr:`~kenning.directory.Directory.generation` is the one it was read at.
    """

    def __init__(self, ttl_s: float = KEY_CACHE_TTL_S, max_entries: int = 4096) -> None:
        self.ttl_s = ttl_s
        self.max_entries = max_entries
        #: (sha256 of the key, persona) -> (directory generation, expires at, caller)
        self._entries: dict[tuple[bytes, str | None], tuple[int, float, Caller]] = {}

    @staticmethod
    def _slot(token: str, persona: str | None) -> tuple[bytes, str | None]:
        return hashlib.sha256(token.encode("utf-8", "surrogatepass")).digest(), persona

    def get(self, token: str, persona: str | None, generation: int) -> Caller | None:
        """The cached caller of ``token`` asking for ``persona``, if still valid."""
        slot = self._slot(token, persona)
        found = self._entries.get(slot)
        if found is None:
            return None
        if found[0] != generation or time.monotonic() >= found[1]:
            self._entries.pop(slot, None)
            return None
        return found[2]

    def put(self, token: str, persona: str | None, generation: int, caller: Caller) -> None:
        """Remember that ``token`` (with ``persona``) stood for ``caller`` when the
        directory was at ``generation`` (read *before* the check)."""
        if len(self._entries) >= self.max_entries:
            self._entries.clear()
        self._entries[self._slot(token, persona)] = (
            generation,
            time.monotonic() + self.ttl_s,
            caller,
        )


def _token(headers: Mapping[str, str]) -> str:
    auth = headers.get("authorization")
    if auth:
        scheme, _, value = auth.partition(" ")
        if scheme.lower() != "bearer" or not value.strip():
            raise Unauthenticated("the Authorization header must be 'Bearer <key or token>'")
        return value.strip()
    key = headers.get("x-api-key")
    if key:
        return key.strip()
    raise Unauthenticated("an API key is required (Authorization: Bearer kn_… or X-API-Key)")


def _jwt_subject(token: str, cfg: Server) -> tuple[str, str]:
    if cfg.jwt_key is None:
        raise Unauthenticated("unknown credentials (not an API key; JWTs are not configured)")
    try:
        claims = jwt.decode(
            token,
            cfg.jwt_key.get_secret_value(),
            algorithms=list(cfg.jwt_algorithms),
            audience=cfg.jwt_audience,
            issuer=cfg.jwt_issuer,
            options={"require": ["exp", cfg.jwt_user_claim, cfg.jwt_org_claim]},
        )
    except jwt.PyJWTError as exc:
        raise Unauthenticated(f"invalid token: {exc}") from None
    org, user = claims.get(cfg.jwt_org_claim), claims.get(cfg.jwt_user_claim)
    if not isinstance(org, str) or not isinstance(user, str):
        raise Unauthenticated("invalid token: the org and user claims must be strings")
    return org, user


def cached_caller(mem: Memory, cache: KeyCache | None, headers: Mapping[str, str]) -> Caller | None:
    """The caller of an API key verified a moment ago (no I/O), else None."""
    if cache is None:
        return None
    token = _token(headers)
    if not token.startswith("kn_"):
        return None
    return cache.get(token, headers.get(PERSONA_HEADER) or None, mem.directory.generation)


def principal_from_headers(
    mem: Memory, cfg: Server, headers: Mapping[str, str], cache: KeyCache | None = None
) -> tuple[Principal, str | None]:
    """The principal the request's credentials stand for, and the API key id
    (through ``cache`` when one is given)."""
    token = _token(headers)
    persona = headers.get(PERSONA_HEADER) or None
    if token.startswith("kn_"):
        generation = mem.directory.generation
        if cache is not None:
            hit = cache.get(token, persona, generation)
            if hit is not None:
                return hit.principal, hit.key_id
        principal, key = mem.directory.authenticate(token, persona)
        if cache is not None:
            cache.put(token, persona, generation, Caller(principal, key.id))
        return principal, key.id
    org, user = _jwt_subject(token, cfg)
    return mem.directory.principal(org, user, persona), None


async def engine(request: Request) -> Memory:
    """The server's engine (opened once, in the lifespan)."""
    return _engine(request)


def _engine(request: Request) -> Memory:
    mem: Memory = request.app.state.memory
    return mem


async def current(
    request: Request,
    _b: Annotated[object, Depends(_bearer)] = None,
    _k: Annotated[object, Depends(_api_key)] = None,
) -> Caller:
    """Authenticate the request (every route but health and readiness): a key
    verified a moment ago on the event loop, anything else in a worker thread."""
    mem = _engine(request)
    cache: KeyCache | None = getattr(request.app.state, "key_cache", None)
    caller = cached_caller(mem, cache, request.headers)
    if caller is None:
        principal, key_id = await run_in_threadpool(
            principal_from_headers, mem, mem.settings.server, request.headers, cache
        )
        caller = Caller(principal, key_id)
    request.state.principal = caller.principal
    limiter: RateLimiter | None = getattr(request.app.state, "rate_limiter", None)
    if limiter is not None:
        p = caller.principal
        limiter.check(caller_id(p.org_id, p.user_id, caller.key_id))
    return caller


async def rate_limited(
    mem: Memory, limiter: RateLimiter, cache: KeyCache | None, headers: Mapping[str, str]
) -> RateLimited | None:
    """For a door that authenticates by itself (MCP over HTTP): the rate-limit
    refusal of the caller of ``headers``, or None (also when the credentials do not
    hold: the door then reports that in its own way)."""
    try:
        caller = cached_caller(mem, cache, headers)
        if caller is None:
            principal, key_id = await run_in_threadpool(
                principal_from_headers, mem, mem.settings.server, headers, cache
            )
            caller = Caller(principal, key_id)
    except KenningError:
        return None
    p = caller.principal
    try:
        limiter.check(caller_id(p.org_id, p.user_id, caller.key_id))
    except RateLimited as exc:
        return exc
    return None


CallerDep = Annotated[Caller, Depends(current)]
MemoryDep = Annotated[Memory, Depends(engine)]
