"""What the web UI shows beside the memories: traffic, decay curves, sectors, a
memory's entities and access log."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query

from ..auth import CallerDep, MemoryDep
from ..errors import ERROR_RESPONSES
from ..schemas import Loose
from ._common import bounded, scopes_param

__all__ = ["router"]

router = APIRouter(prefix="/v1", tags=["insight"], responses=ERROR_RESPONSES)


@router.get("/insight/traffic", response_model=list[Loose], name="insight.traffic")
def traffic(
    caller: CallerDep,
    mem: MemoryDep,
    days: Annotated[int, Query(ge=1, le=366)] = 30,
    scope: Annotated[list[str] | None, Query()] = None,
) -> Any:
    """Accesses per day (recall hits, reinforcements, ...) to readable memories."""
    scopes = scopes_param(scope)
    return mem.traffic(days, scopes=scopes, principal=caller.principal)


@router.get(
    "/insight/strength-curves", response_model=dict[str, list[list[float]]], name="insight.curves"
)
def curves(
    caller: CallerDep,
    mem: MemoryDep,
    days: Annotated[int, Query(ge=1, le=3650)] = 365,
    points: Annotated[int, Query(ge=2, le=500)] = 25,
) -> Any:
    """Strength over days without use, per memory type (the lifecycle settings)."""
    return {k: [list(p) for p in v] for k, v in mem.strength_curves(days, points).items()}


@router.get("/sectors", response_model=list[Loose], name="sector.list")
def sectors(
    caller: CallerDep,
    mem: MemoryDep,
    scope: Annotated[
        list[str] | None,
        Query(description="scopes; default all readable; 'default' for the default view"),
    ] = None,
) -> Any:
    """The sectors of the scopes the caller may read, with their sizes."""
    scopes = None if scope == ["default"] else scopes_param(scope)
    return [s.to_dict() for s in mem.sectors(scopes=scopes, principal=caller.principal)]


@router.get("/memories/{memory_id}/entities", response_model=list[Loose], name="memory.entities")
def entities(memory_id: str, caller: CallerDep, mem: MemoryDep) -> Any:
    """The entities and topics a memory mentions."""
    return [e.to_dict() for e in mem.graph.entities(memory_id, principal=caller.principal)]


@router.get(
    "/memories/{memory_id}/access-log", response_model=list[Loose], name="memory.access_log"
)
def access_log(
    memory_id: str,
    caller: CallerDep,
    mem: MemoryDep,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
) -> Any:
    """The latest accesses of a memory (recalls, reinforcements), oldest first."""
    found = mem.access_log(
        memory_id, limit=bounded(mem, limit, "limit"), principal=caller.principal
    )
    return [a.to_dict() for a in found]
