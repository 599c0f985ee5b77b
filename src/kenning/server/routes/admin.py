"""Who am I, and the directory: organization, users, teams, personas, API keys,
policies and the audit log. Changes are for admins (users manage their own keys);
the directory service checks that."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request, Response
from fastapi.responses import StreamingResponse

from ...directory.userdata import jsonl
from ...validation import MAX_INT64
from ..auth import CallerDep, MemoryDep
from ..errors import ERROR_RESPONSES
from ..schemas import (
    AuditOut,
    EraseIn,
    GrantIn,
    GroupIn,
    KeyIn,
    KeyOut,
    Loose,
    MemberIn,
    MeOut,
    NewKeyOut,
    OrgIn,
    PolicyIn,
    UserIn,
)

__all__ = ["router"]

router = APIRouter(prefix="/v1", tags=["directory"], responses=ERROR_RESPONSES)


@router.get("/me", response_model=MeOut, name="me")
def me(caller: CallerDep, mem: MemoryDep) -> Any:
    """The caller: organization, user, roles, teams, personas, recall mode."""
    p = caller.principal
    d = mem.directory
    return {
        "org": d.org(p.org_id).to_dict(),
        "user": d.user(p.org_id, p.user_id).to_dict(),
        "roles": sorted(r.value for r in p.roles),
        "teams": {t: r.value for t, r in sorted(p.teams.items())},
        "personas": sorted(p.personas),
        "persona_leads": sorted(p.persona_leads),
        "active_persona": p.active_persona,
        "mode": p.mode.value,
        "key_id": caller.key_id,
    }


#: The export's media type, as the OpenAPI document names it.
_JSONL: dict[int | str, dict[str, Any]] = {
    200: {"content": {"application/x-ndjson": {}}, "description": "JSONL, one object a line"}
}


def _export(mem: MemoryDep, caller: CallerDep, user_id: str) -> StreamingResponse:
    """The export stream (checked, and audited, before the first byte)."""
    lines = mem.directory.export_user(caller.principal, user_id)
    name = f"kenning-export-{caller.principal.org_id}-{user_id}.jsonl"
    return StreamingResponse(
        jsonl(lines),
        media_type="application/x-ndjson",
        headers={"Content-Disposition": f'attachment; filename="{name}"'},
    )


@router.get("/me/export", response_class=StreamingResponse, responses=_JSONL, name="me.export")
def export_me(caller: CallerDep, mem: MemoryDep) -> StreamingResponse:
    """Everything stored about the caller, as JSONL (see docs/administration.md)."""
    return _export(mem, caller, caller.principal.user_id)


@router.patch("/admin/org", response_model=Loose, name="admin.org.set")
def set_org(body: OrgIn, caller: CallerDep, mem: MemoryDep) -> Any:
    """Rename the organization, set its recall mode, switch memory or org-layer review."""
    return mem.directory.set_org(caller.principal, **body.model_dump()).to_dict()


@router.get("/admin/users", response_model=list[Loose], name="admin.users")
def users(caller: CallerDep, mem: MemoryDep) -> Any:
    """The organization's users (admins; others see themselves)."""
    return [u.to_dict() for u in mem.directory.users(caller.principal)]


@router.put("/admin/users/{user_id}", response_model=Loose, name="admin.user.put")
def put_user(user_id: str, body: UserIn, caller: CallerDep, mem: MemoryDep) -> Any:
    """Create a user or change their name, role or disabled flag."""
    return mem.directory.put_user(caller.principal, user_id, **body.model_dump()).to_dict()


@router.post("/admin/users/{user_id}/erase", response_model=Loose, name="admin.user.erase")
def erase_user(user_id: str, body: EraseIn, caller: CallerDep, mem: MemoryDep) -> Any:
    """Erase a user and everything stored about them (admins; see docs/administration.md):
    their personal memories, directory record, memberships, grants and keys. Memories
    they wrote in shared scopes stay with the author ``(erased)`` unless
    ``include_shared``. Repeating it answers the first erasure with ``repeated``."""
    return mem.directory.erase_user(
        caller.principal, user_id, include_shared=body.include_shared
    ).to_dict()


@router.get(
    "/admin/users/{user_id}/export",
    response_class=StreamingResponse,
    responses=_JSONL,
    name="admin.user.export",
)
def export_user(user_id: str, caller: CallerDep, mem: MemoryDep) -> StreamingResponse:
    """Everything stored about a user, as JSONL (admins; users their own)."""
    return _export(mem, caller, user_id)


@router.get("/admin/teams", response_model=list[Loose], name="admin.teams")
def teams(caller: CallerDep, mem: MemoryDep) -> Any:
    """The organization's teams (admins; others their own)."""
    return [t.to_dict() for t in mem.directory.teams(caller.principal)]


@router.put("/admin/teams/{team_id}", response_model=Loose, name="admin.team.put")
def put_team(team_id: str, body: GroupIn, caller: CallerDep, mem: MemoryDep) -> Any:
    """Create a team or change its name or switches."""
    return mem.directory.put_team(caller.principal, team_id, **body.model_dump()).to_dict()


@router.delete("/admin/teams/{team_id}", status_code=204, name="admin.team.delete")
def delete_team(team_id: str, caller: CallerDep, mem: MemoryDep) -> Response:
    """Remove a team and its memberships (its memories stay)."""
    mem.directory.delete_team(caller.principal, team_id)
    return Response(status_code=204)


@router.get(
    "/admin/teams/{team_id}/members", response_model=dict[str, str], name="admin.team.members"
)
def members(team_id: str, caller: CallerDep, mem: MemoryDep) -> Any:
    """Who is in the team, and their role."""
    return {u: r.value for u, r in mem.directory.members(caller.principal, team_id).items()}


@router.put(
    "/admin/teams/{team_id}/members/{user_id}", response_model=Loose, name="admin.team.member"
)
def put_member(
    team_id: str, user_id: str, body: MemberIn, caller: CallerDep, mem: MemoryDep
) -> Any:
    """Add a user to a team, or change their role there."""
    return mem.directory.set_member(caller.principal, team_id, user_id, body.role).to_dict()


@router.delete(
    "/admin/teams/{team_id}/members/{user_id}", status_code=204, name="admin.team.unmember"
)
def delete_member(team_id: str, user_id: str, caller: CallerDep, mem: MemoryDep) -> Response:
    """Take a user out of a team."""
    mem.directory.set_member(caller.principal, team_id, user_id, None)
    return Response(status_code=204)


@router.get("/admin/personas", response_model=list[Loose], name="admin.personas")
def personas(caller: CallerDep, mem: MemoryDep) -> Any:
    """The organization's personas (admins; others those they may use)."""
    return [p.to_dict() for p in mem.directory.personas(caller.principal)]


@router.put("/admin/personas/{persona_id}", response_model=Loose, name="admin.persona.put")
def put_persona(persona_id: str, body: GroupIn, caller: CallerDep, mem: MemoryDep) -> Any:
    """Create a persona or change its name or switches."""
    return mem.directory.put_persona(caller.principal, persona_id, **body.model_dump()).to_dict()


@router.put(
    "/admin/personas/{persona_id}/users/{user_id}", response_model=Loose, name="admin.persona.grant"
)
def grant(persona_id: str, user_id: str, body: GrantIn, caller: CallerDep, mem: MemoryDep) -> Any:
    """Let a user use a persona (``lead``: curate its shared memory), or not."""
    return mem.directory.grant_persona(
        caller.principal, persona_id, user_id, use=body.use, lead=body.lead
    ).to_dict()


@router.get("/keys", response_model=list[KeyOut], name="key.list")
def list_keys(
    caller: CallerDep,
    mem: MemoryDep,
    user_id: Annotated[str | None, Query(max_length=128)] = None,
) -> Any:
    """API keys (admins: the organization's or one user's; others their own)."""
    return [k.to_dict() for k in mem.directory.keys(caller.principal, user_id)]


@router.post("/keys", status_code=201, response_model=NewKeyOut, name="key.create")
def create_key(body: KeyIn, caller: CallerDep, mem: MemoryDep, request: Request) -> Any:
    """A new API key; its secret is in this response only."""
    key, secret = mem.directory.create_key(
        caller.principal, body.user_id or caller.principal.user_id, body.name, persona=body.persona
    )
    return {**key.to_dict(), "secret": secret}


@router.delete("/keys/{key_id}", response_model=KeyOut, name="key.revoke")
def revoke_key(key_id: str, caller: CallerDep, mem: MemoryDep) -> Any:
    """Revoke an API key (admins; users their own)."""
    return mem.directory.revoke_key(caller.principal, key_id).to_dict()


@router.get("/admin/audit", response_model=list[AuditOut], name="admin.audit")
def audit(
    caller: CallerDep,
    mem: MemoryDep,
    user: Annotated[str | None, Query(max_length=128)] = None,
    action: Annotated[str | None, Query(max_length=100)] = None,
    since: datetime | None = None,
    before_seq: Annotated[int | None, Query(ge=1, le=MAX_INT64)] = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
) -> Any:
    """The audit log, newest first (admins)."""
    lines = mem.directory.audit(
        caller.principal, user=user, action=action, since=since, before_seq=before_seq, limit=limit
    )
    return [a.to_dict() for a in lines]


@router.get("/admin/policies", response_model=list[Loose], name="admin.policies")
def policies(caller: CallerDep, mem: MemoryDep) -> Any:
    """Retention, capacity and review policies."""
    return [p.to_dict() for p in mem.policies(principal=caller.principal)]


@router.put("/admin/policies", response_model=Loose, name="policy.put")
def put_policy(body: PolicyIn, caller: CallerDep, mem: MemoryDep) -> Any:
    """Set the policy for a target and memory type (admins)."""
    return mem.set_policy(**body.model_dump(), principal=caller.principal).to_dict()


@router.delete("/admin/policies", status_code=204, name="policy.delete")
def delete_policy(
    caller: CallerDep,
    mem: MemoryDep,
    target: Annotated[str, Query(min_length=1, max_length=300)] = "*",
    memory_type: Annotated[str, Query(min_length=1, max_length=32)] = "*",
) -> Response:
    """Remove a policy (admins)."""
    mem.delete_policy(target, memory_type=memory_type, principal=caller.principal)
    return Response(status_code=204)
