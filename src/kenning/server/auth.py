"""Who is calling: API keys (``Authorization: Bearer kn_…`` or ``X-API-Key``) and,
when configured, bearer JWTs, turned into a :class:`~kenning.models.Principal`
by the directory. Shared by the REST routes and the MCP endpoint.

``X-Kenning-Persona`` selects the active persona for one request (one the user
may use); otherwise an API key's own persona, if it has one, is active.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated

import jwt
from fastapi import Depends, Request
from fastapi.security import APIKeyHeader, HTTPBearer

from ..config import Server
from ..engine import Memory
from ..errors import Unauthenticated
from ..models import Principal

__all__ = ["Caller", "principal_from_headers", "current", "engine", "CallerDep", "MemoryDep"]

PERSONA_HEADER = "x-kenning-persona"

# declared for the OpenAPI document; the checks themselves are below
_bearer = HTTPBearer(auto_error=False, description="An API key (kn_…) or, if configured, a JWT")
_api_key = APIKeyHeader(name="X-API-Key", auto_error=False, description="An API key (kn_…)")


@dataclass(frozen=True, slots=True)
class Caller:
    """The authenticated principal of a request and the key it used (None for a JWT)."""

    principal: Principal
    key_id: str | None


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


def principal_from_headers(
    mem: Memory, cfg: Server, headers: Mapping[str, str]
) -> tuple[Principal, str | None]:
    """The principal the request's credentials stand for, and the API key id."""
    token = _token(headers)
    persona = headers.get(PERSONA_HEADER) or None
    if token.startswith("kn_"):
        principal, key = mem.directory.authenticate(token, persona)
        return principal, key.id
    org, user = _jwt_subject(token, cfg)
    return mem.directory.principal(org, user, persona), None


def engine(request: Request) -> Memory:
    """The server's engine (opened once, in the lifespan)."""
    mem: Memory = request.app.state.memory
    return mem


def current(
    request: Request,
    _b: Annotated[object, Depends(_bearer)] = None,
    _k: Annotated[object, Depends(_api_key)] = None,
) -> Caller:
    """Authenticate the request (every route but health and readiness)."""
    mem = engine(request)
    principal, key_id = principal_from_headers(mem, mem.settings.server, request.headers)
    request.state.principal = principal
    return Caller(principal, key_id)


CallerDep = Annotated[Caller, Depends(current)]
MemoryDep = Annotated[Memory, Depends(engine)]
