"""Conversations, consolidation, the memory hint and the graph."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request

from ..auth import CallerDep, MemoryDep
from ..errors import ERROR_RESPONSES
from ..inflight import run_engine
from ..schemas import ConsolidateIn, HintIn, HintOut, IngestIn, LinkIn, Loose, MemoryOut
from ._common import bounded

__all__ = ["router"]

router = APIRouter(prefix="/v1", tags=["lifecycle and graph"], responses=ERROR_RESPONSES)


@router.post(
    "/sessions/{session_id}/messages", status_code=201, response_model=Loose, name="session.ingest"
)
def ingest(
    session_id: str, body: IngestIn, caller: CallerDep, mem: MemoryDep, request: Request
) -> Any:
    """Store conversation turns and the facts extracted from them."""
    result = mem.ingest(
        body.messages,
        session_id,
        scope=body.scope,
        episode_id=body.episode_id,
        extract=body.extract,
        principal=caller.principal,
    )
    return result.to_dict()


@router.get(
    "/sessions/{session_id}/context", response_model=list[MemoryOut], name="session.context"
)
def context(
    session_id: str,
    caller: CallerDep,
    mem: MemoryDep,
    scope: Annotated[str | None, Query(max_length=300)] = None,
) -> Any:
    """The session's working-memory window, oldest first."""
    return [m.to_dict() for m in mem.context(session_id, scope=scope, principal=caller.principal)]


@router.post("/consolidate", response_model=Loose, name="memory.consolidate")
def consolidate(body: ConsolidateIn, caller: CallerDep, mem: MemoryDep) -> Any:
    """One consolidation pass over the scopes the caller may write (or a dry run)."""
    report = mem.consolidate(scopes=body.scopes, dry_run=body.dry_run, principal=caller.principal)
    return report.to_dict()


@router.post("/hint", response_model=HintOut, name="memory.hint")
async def hint(body: HintIn, caller: CallerDep, mem: MemoryDep, request: Request) -> Any:
    """A memory block for a system prompt, fenced as data (the model is told not to
    follow instructions inside it)."""
    text = await run_engine(
        request,
        lambda: mem.build_hint(
            persona=body.persona,
            query=body.query,
            max_chars=body.max_chars,
            principal=caller.principal,
        ),
        reader=caller.principal,
    )
    return {"hint": text}


@router.get("/graph/neighbours", response_model=list[Loose], name="graph.neighbours")
def neighbours(
    caller: CallerDep,
    mem: MemoryDep,
    memory_id: Annotated[str | None, Query(max_length=64)] = None,
    entity: Annotated[str | None, Query(max_length=256)] = None,
    relation: Annotated[list[str] | None, Query()] = None,
    limit: Annotated[int, Query(ge=1)] = 20,
) -> Any:
    """Memories linked to a memory, or mentioning an entity (give one of them)."""
    found = mem.graph.neighbours(
        memory_id,
        entity=entity,
        relations=relation,
        limit=bounded(mem, limit, "limit"),
        principal=caller.principal,
    )
    return [n.to_dict() for n in found]


@router.get("/graph/entities/{name}", response_model=Loose, name="graph.entity")
def entity(name: str, caller: CallerDep, mem: MemoryDep) -> Any:
    """An entity or topic: its memories and the entities mentioned alongside it."""
    return mem.graph.entity(name, principal=caller.principal).to_dict()


@router.get("/graph/paths", response_model=list[Loose], name="graph.paths")
def paths(
    caller: CallerDep,
    mem: MemoryDep,
    a: Annotated[str, Query(min_length=1, max_length=64)],
    b: Annotated[str, Query(min_length=1, max_length=64)],
    max_hops: Annotated[int, Query(ge=1, le=6)] = 3,
    limit: Annotated[int, Query(ge=1, le=50)] = 5,
) -> Any:
    """The strongest paths between two memories."""
    found = mem.graph.paths(a, b, max_hops, limit, principal=caller.principal)
    return [p.to_dict() for p in found]


@router.post("/graph/links", status_code=201, response_model=Loose, name="graph.link")
def link(body: LinkIn, caller: CallerDep, mem: MemoryDep, request: Request) -> Any:
    """Link two memories of one scope with a typed, weighted edge."""
    edge = mem.graph.link(body.a, body.b, body.relation, body.weight, principal=caller.principal)
    return edge.to_dict()
