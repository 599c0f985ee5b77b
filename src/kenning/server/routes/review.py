"""The review queue: pending memories for admins, team leads, persona leads and
their owners (seed 001 phase 3)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request, Response

from ..auth import CallerDep, MemoryDep
from ..errors import ERROR_RESPONSES
from ..schemas import ApproveIn, BulkReviewIn, BulkReviewOut, MemoryOut, PageOut, RejectIn
from ._common import bounded, no_none

__all__ = ["router"]

router = APIRouter(prefix="/v1/review", tags=["review"], responses=ERROR_RESPONSES)


@router.get("", response_model=PageOut, name="review.queue")
def queue(
    caller: CallerDep,
    mem: MemoryDep,
    scope: Annotated[list[str] | None, Query()] = None,
    limit: Annotated[int, Query(ge=1)] = 50,
    cursor: Annotated[str | None, Query(max_length=500)] = None,
) -> Any:
    """Pending memories the caller may review, newest first."""
    page = mem.review_queue(
        scopes=scope, limit=bounded(mem, limit, "limit"), cursor=cursor, principal=caller.principal
    )
    return page.to_dict()


@router.post("/{memory_id}/approve", response_model=MemoryOut, name="review.approve")
def approve(memory_id: str, body: ApproveIn, caller: CallerDep, mem: MemoryDep) -> Any:
    """Make a pending memory active, optionally with edits."""
    changes = (
        None
        if body.changes is None
        else no_none(body.changes.model_dump(exclude={"expected_version"}, exclude_unset=True))
    )
    return mem.approve(memory_id, changes=changes, principal=caller.principal).to_dict()


@router.post("/{memory_id}/reject", status_code=204, name="review.reject")
def reject(
    memory_id: str, body: RejectIn, caller: CallerDep, mem: MemoryDep, request: Request
) -> Response:
    """Delete a pending memory (the audit line keeps the reason)."""
    mem.reject(memory_id, reason=body.reason, principal=caller.principal)
    return Response(status_code=204)


@router.post("/bulk", response_model=BulkReviewOut, name="review.bulk")
def bulk(body: BulkReviewIn, caller: CallerDep, mem: MemoryDep, request: Request) -> Any:
    """Approve or reject many; each id succeeds or fails on its own."""
    done, failed = mem.review_many(
        body.ids, body.action, reason=body.reason, principal=caller.principal
    )
    return {"done": done, "failed": failed}
