"""What the web UI shows beside the memories: traffic, decay curves, sectors, a
memory's entities, access log, strength and component confidence; and the two
lifecycle writes that go with them (reinforce a memory, add a sector)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query

from ..auth import CallerDep, MemoryDep
from ..errors import ERROR_RESPONSES
from ..schemas import ConfidenceOut, Loose, MemoryOut, SectorIn, SectorOut, StrengthOut
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


@router.post("/sectors", status_code=201, response_model=SectorOut, name="sector.create")
def create_sector(body: SectorIn, caller: CallerDep, mem: MemoryDep) -> Any:
    """Add a sector to a scope's hierarchy: new memories with one of its topics as a
    tag (or close to its centroid) are assigned to it."""
    sector = mem.create_sector(
        body.name,
        scope=body.scope,
        parent_id=body.parent_id,
        decay_multiplier=body.decay_multiplier,
        topics=body.topics,
        max_size=body.max_size,
        principal=caller.principal,
    )
    return sector.to_dict()


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


@router.get("/memories/{memory_id}/strength", response_model=StrengthOut, name="memory.strength")
def strength(memory_id: str, caller: CallerDep, mem: MemoryDep) -> Any:
    """A memory's current strength (decayed to now, with its sector's multiplier)."""
    return {"memory_id": memory_id, "strength": mem.strength(memory_id, principal=caller.principal)}


@router.post("/memories/{memory_id}/reinforce", response_model=MemoryOut, name="memory.reinforce")
def reinforce(memory_id: str, caller: CallerDep, mem: MemoryDep) -> Any:
    """Strengthen a memory now (its decay clock restarts); logged as an access."""
    return mem.reinforce(memory_id, principal=caller.principal).to_dict()


@router.get(
    "/memories/{memory_id}/confidence", response_model=ConfidenceOut, name="memory.confidence"
)
def confidence(memory_id: str, caller: CallerDep, mem: MemoryDep) -> Any:
    """A memory's component confidence: source reliability, entities, relationships,
    validation and user feedback, and the confidence they give."""
    return mem.confidence_components(memory_id, principal=caller.principal)
