"""Health, readiness and metrics."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request, Response

from ...errors import KenningError, PermissionDenied
from ...models import Principal
from ..auth import CallerDep, MemoryDep
from ..errors import ERROR_RESPONSES, error_response

__all__ = ["router"]

router = APIRouter(tags=["operations"])


@router.get("/v1/health", name="health")
def health() -> dict[str, str]:
    """The process is up (no authentication, no store access)."""
    return {"status": "ok"}


@router.get("/v1/ready", name="ready", responses={503: ERROR_RESPONSES[503]})
def ready(mem: MemoryDep, request: Request) -> Any:
    """The store answers (no authentication)."""
    try:
        mem.store.get_entry("ready-probe", "org", "ready-probe")
    except KenningError as exc:
        return error_response(
            getattr(request.state, "request_id", None), 503, "store_unavailable", str(exc)
        )
    return {"status": "ready", "store": mem.store.kind}


#: The exposition text, declared so the OpenAPI document names its media type.
_METRICS_TEXT: dict[int | str, dict[str, Any]] = {
    200: {
        "description": "Prometheus exposition text",
        "content": {"text/plain": {"schema": {"type": "string"}}},
    }
}


@router.get(
    "/metrics",
    name="metrics",
    responses={**ERROR_RESPONSES, **_METRICS_TEXT},
    response_class=Response,
)
def metrics(caller: CallerDep, mem: MemoryDep, request: Request) -> Response:
    """Prometheus metrics (an admin key: the size gauges cover the organization)."""
    who: Principal = caller.principal
    if not who.is_admin:
        raise PermissionDenied(f"{who.user_id!r} is not an admin; metrics need an admin key")
    body = request.app.state.metrics.render(mem.stats(principal=who), mem.store.size_bytes())
    return Response(body, media_type="text/plain; version=0.0.4; charset=utf-8")
