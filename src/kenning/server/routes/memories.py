"""Memories: remember, batch, upsert, recall, get, list, update, forget, archive,
restore, feedback, history, stats; and the size limits arguments are checked against."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request, Response

from ..auth import CallerDep, MemoryDep
from ..errors import ERROR_RESPONSES
from ..inflight import run_engine
from ..schemas import (
    BatchIn,
    FeedbackIn,
    HistoryOut,
    LimitsOut,
    ListIn,
    MemoryIn,
    MemoryOut,
    PageOut,
    RecallIn,
    RecallOut,
    StatsOut,
    UpdateIn,
    UpsertIn,
    WriteOut,
)
from ._common import bounded, limits, no_none, scopes_param

__all__ = ["router"]

router = APIRouter(prefix="/v1", tags=["memories"], responses=ERROR_RESPONSES)

IdPath = Annotated[str, "memory id"]


@router.post("/memories", status_code=201, response_model=WriteOut, name="memory.remember")
async def remember(body: MemoryIn, caller: CallerDep, mem: MemoryDep, request: Request) -> Any:
    """Store one memory (reconciled with what its scope already holds)."""

    def write() -> dict[str, Any]:
        (result,) = mem.write([no_none(body.model_dump())], principal=caller.principal)
        return result.to_dict()

    return await run_engine(request, write, "write")


@router.post("/memories/batch", status_code=201, response_model=list[WriteOut], name="memory.batch")
def batch(body: BatchIn, caller: CallerDep, mem: MemoryDep, request: Request) -> Any:
    """Store many memories in one transaction: all or nothing."""
    items = [no_none(i.model_dump()) for i in body.items]
    results = mem.write(items, reconcile=body.reconcile, principal=caller.principal)
    return [r.to_dict() for r in results]


@router.put("/memories/by-key", response_model=MemoryOut, name="memory.upsert")
async def upsert(body: UpsertIn, caller: CallerDep, mem: MemoryDep, request: Request) -> Any:
    """Create or update the memory with this key in this scope."""
    fields = no_none(body.model_dump(exclude={"key", "content", "scope"}))

    def write() -> dict[str, Any]:
        record = mem.upsert(
            body.key, body.content, scope=body.scope, principal=caller.principal, **fields
        )
        return record.to_dict()

    return await run_engine(request, write, "write")


@router.post("/recall", response_model=RecallOut, name="memory.recall")
async def recall(body: RecallIn, caller: CallerDep, mem: MemoryDep, request: Request) -> Any:
    """The ``k`` memories that best answer ``query``, ranked by priority."""

    def answer() -> Response:
        result = mem.recall(
            body.query,
            bounded(mem, body.k),
            scopes=body.scopes,
            layers=body.layers,
            filters=body.filters,
            min_confidence=body.min_confidence,
            explain=body.explain,
            sector=body.sector,
            principal=caller.principal,
            min_score=body.min_score,
        )
        request.app.state.metrics.observe_recall(result.timings_ms)
        # validated and encoded with the recall (in its thread, when it has one)
        out = RecallOut.model_validate(result.to_dict())
        return Response(out.model_dump_json(), media_type="application/json")

    return await run_engine(request, answer, reader=caller.principal)


@router.get("/memories", response_model=PageOut, name="memory.list")
def list_memories(
    caller: CallerDep,
    mem: MemoryDep,
    scope: Annotated[list[str] | None, Query(description="scopes, or 'all'")] = None,
    layer: Annotated[list[str] | None, Query()] = None,
    type: Annotated[list[str] | None, Query()] = None,
    status: Annotated[list[str] | None, Query()] = None,
    tag: Annotated[list[str] | None, Query()] = None,
    key: Annotated[str | None, Query(max_length=200)] = None,
    sector_id: Annotated[str | None, Query(max_length=256)] = None,
    session_id: Annotated[str | None, Query(max_length=256)] = None,
    created_after: datetime | None = None,
    created_before: datetime | None = None,
    limit: Annotated[int, Query(ge=1)] = 50,
    cursor: Annotated[str | None, Query(max_length=500)] = None,
) -> Any:
    """Memories newest first, one page at a time, with filters."""
    scopes = scopes_param(scope, None)
    filters = no_none(
        {
            "types": type,
            "statuses": status,
            "tags_all": tag,
            "key": key,
            "sector_id": sector_id,
            "session_id": session_id,
            "created_after": created_after,
            "created_before": created_before,
        }
    )
    page = mem.list(
        scopes=scopes,
        layers=layer,
        filters=filters,
        limit=bounded(mem, limit, "limit"),
        cursor=cursor,
        principal=caller.principal,
    )
    return page.to_dict()


@router.post("/memories/query", response_model=PageOut, name="memory.query")
def query_memories(body: ListIn, caller: CallerDep, mem: MemoryDep) -> Any:
    """Memories newest first, one page at a time, with any filter of ``Memory.list``
    (a read: the body only carries what a query string cannot)."""
    page = mem.list(
        scopes=body.scopes,
        layers=body.layers,
        filters=body.filters,
        limit=bounded(mem, body.limit, "limit"),
        cursor=body.cursor,
        principal=caller.principal,
    )
    return page.to_dict()


@router.get("/memories/{memory_id}", response_model=MemoryOut, name="memory.get")
def get(memory_id: str, caller: CallerDep, mem: MemoryDep) -> Any:
    """One memory (404 when it does not exist or the caller may not read it)."""
    return mem.get(memory_id, principal=caller.principal).to_dict()


@router.patch("/memories/{memory_id}", response_model=MemoryOut, name="memory.update")
def update(memory_id: str, body: UpdateIn, caller: CallerDep, mem: MemoryDep) -> Any:
    """Change fields of a memory; with ``expected_version``, only if it is unchanged."""
    changes = no_none(body.model_dump(exclude={"expected_version"}, exclude_unset=True))
    record = mem.update(
        memory_id, principal=caller.principal, expected_version=body.expected_version, **changes
    )
    return record.to_dict()


@router.delete("/memories/{memory_id}", status_code=204, name="memory.forget")
def forget(memory_id: str, caller: CallerDep, mem: MemoryDep) -> Response:
    """Delete a memory from every index; its history keeps who and when."""
    mem.forget(memory_id, principal=caller.principal)
    return Response(status_code=204)


@router.post("/memories/{memory_id}/archive", response_model=MemoryOut, name="memory.archive")
def archive(memory_id: str, caller: CallerDep, mem: MemoryDep) -> Any:
    """Take a memory out of recall without deleting it."""
    return mem.archive(memory_id, principal=caller.principal).to_dict()


@router.post("/memories/{memory_id}/restore", response_model=MemoryOut, name="memory.restore")
def restore(memory_id: str, caller: CallerDep, mem: MemoryDep) -> Any:
    """Bring an archived, superseded or forgotten-for-weakness memory back."""
    return mem.restore(memory_id, principal=caller.principal).to_dict()


@router.post("/memories/{memory_id}/feedback", response_model=MemoryOut, name="memory.feedback")
def feedback(memory_id: str, body: FeedbackIn, caller: CallerDep, mem: MemoryDep) -> Any:
    """Upvote, downvote, validate, contradict or confirm (confidence adjustments)."""
    return mem.feedback(memory_id, body.kind, principal=caller.principal).to_dict()


@router.get("/memories/{memory_id}/history", response_model=list[HistoryOut], name="memory.history")
def history(memory_id: str, caller: CallerDep, mem: MemoryDep) -> Any:
    """Every change to a memory, oldest first."""
    return [e.to_dict() for e in mem.history(memory_id, principal=caller.principal)]


@router.get("/stats", response_model=list[StatsOut], name="memory.stats")
def stats(
    caller: CallerDep,
    mem: MemoryDep,
    scope: Annotated[
        list[str] | None,
        Query(description="scopes; default all readable; 'default' for the default view"),
    ] = None,
) -> Any:
    """Per-layer statistics (personal, shared, organization) over what the caller may read."""
    scopes = None if scope == ["default"] else scopes_param(scope)
    return [s.to_dict() for s in mem.stats(scopes=scopes, principal=caller.principal)]


@router.get("/limits", response_model=LimitsOut, name="limits")
def size_limits(caller: CallerDep, mem: MemoryDep) -> Any:
    """The size limits this server checks arguments against (``kenning.Client`` reads
    them to word an invalid argument exactly as the server would, without sending it)."""
    lim = limits(mem)
    return LimitsOut(
        content_chars=lim.content_chars,
        key_chars=lim.key_chars,
        tags=lim.tags,
        batch=lim.batch,
        k=lim.k,
    )
