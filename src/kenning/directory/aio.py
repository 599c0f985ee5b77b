"""``AsyncDirectory``: the directory (``Memory.directory``) for asyncio code.

The same methods, parameters and results as
:class:`~kenning.directory.service.Directory` (tenancy, API keys, switches, the
audit log); each runs the sync method in a worker thread (see
:mod:`kenning._aio`). Reached as ``AsyncMemory.directory``.
"""

from __future__ import annotations

import asyncio
import builtins
from collections.abc import Iterable, Iterator, Mapping
from datetime import datetime
from typing import Any

from .._aio import mirrors
from ..models import Principal, RecallMode, Role, Scope, TeamRole
from .model import ApiKey, AuditEntry, Org, Persona, Team, User
from .service import Directory
from .userdata import Erasure

__all__ = ["AsyncDirectory"]


class AsyncDirectory:
    """Asynchronous ``mem.directory``: the same methods as :class:`Directory`."""

    def __init__(self, directory: Directory) -> None:
        """Wrap ``directory`` (kept as :attr:`sync`)."""
        self.sync = directory

    @mirrors(Directory.org)
    async def org(self, org_id: str) -> Org:
        return await asyncio.to_thread(self.sync.org, org_id)

    @mirrors(Directory.user)
    async def user(self, org_id: str, user_id: str) -> User:
        return await asyncio.to_thread(self.sync.user, org_id, user_id)

    @mirrors(Directory.users)
    async def users(self, actor: Principal) -> builtins.list[User]:
        return await asyncio.to_thread(self.sync.users, actor)

    @mirrors(Directory.teams)
    async def teams(self, actor: Principal) -> builtins.list[Team]:
        return await asyncio.to_thread(self.sync.teams, actor)

    @mirrors(Directory.personas)
    async def personas(self, actor: Principal) -> builtins.list[Persona]:
        return await asyncio.to_thread(self.sync.personas, actor)

    @mirrors(Directory.members)
    async def members(self, actor: Principal, team_id: str) -> dict[str, TeamRole]:
        return await asyncio.to_thread(self.sync.members, actor, team_id)

    @mirrors(Directory.review_required)
    async def review_required(self, org_id: str, scope: Scope) -> bool:
        return await asyncio.to_thread(self.sync.review_required, org_id, scope)

    @mirrors(Directory.governed)
    async def governed(self, org_id: str) -> bool:
        return await asyncio.to_thread(self.sync.governed, org_id)

    @mirrors(Directory.has_persona)
    async def has_persona(self, org_id: str, persona_id: str) -> bool:
        return await asyncio.to_thread(self.sync.has_persona, org_id, persona_id)

    @mirrors(Directory.open_teams)
    async def open_teams(self, org_id: str) -> tuple[str, ...]:
        return await asyncio.to_thread(self.sync.open_teams, org_id)

    @mirrors(Directory.check_scopes)
    async def check_scopes(self, org_id: str, scopes: Iterable[Scope]) -> None:
        return await asyncio.to_thread(self.sync.check_scopes, org_id, scopes)

    @mirrors(Directory.principal)
    async def principal(self, org_id: str, user_id: str, persona: str | None = None) -> Principal:
        return await asyncio.to_thread(self.sync.principal, org_id, user_id, persona)

    @mirrors(Directory.authenticate)
    async def authenticate(
        self, token: str, persona: str | None = None
    ) -> tuple[Principal, ApiKey]:
        return await asyncio.to_thread(self.sync.authenticate, token, persona)

    @mirrors(Directory.ensure_org)
    async def ensure_org(
        self,
        org_id: str,
        name: str | None = None,
        mode: RecallMode | str = RecallMode.ORG_GLOBAL_ON,
    ) -> Org:
        return await asyncio.to_thread(self.sync.ensure_org, org_id, name, mode)

    @mirrors(Directory.set_org)
    async def set_org(
        self,
        actor: Principal,
        *,
        name: str | None = None,
        mode: RecallMode | str | None = None,
        memory_enabled: bool | None = None,
        review: bool | None = None,
    ) -> Org:
        return await asyncio.to_thread(
            self.sync.set_org,
            actor,
            name=name,
            mode=mode,
            memory_enabled=memory_enabled,
            review=review,
        )

    @mirrors(Directory.put_user)
    async def put_user(
        self,
        actor: Principal,
        user_id: str,
        *,
        name: str | None = None,
        role: Role | str | None = None,
        disabled: bool | None = None,
    ) -> User:
        return await asyncio.to_thread(
            self.sync.put_user, actor, user_id, name=name, role=role, disabled=disabled
        )

    @mirrors(Directory.put_team)
    async def put_team(
        self,
        actor: Principal,
        team_id: str,
        *,
        name: str | None = None,
        memory_enabled: bool | None = None,
        review: bool | None = None,
    ) -> Team:
        return await asyncio.to_thread(
            self.sync.put_team,
            actor,
            team_id,
            name=name,
            memory_enabled=memory_enabled,
            review=review,
        )

    @mirrors(Directory.set_member)
    async def set_member(
        self, actor: Principal, team_id: str, user_id: str, role: TeamRole | str | None
    ) -> User:
        return await asyncio.to_thread(self.sync.set_member, actor, team_id, user_id, role)

    @mirrors(Directory.delete_team)
    async def delete_team(self, actor: Principal, team_id: str) -> None:
        return await asyncio.to_thread(self.sync.delete_team, actor, team_id)

    @mirrors(Directory.put_persona)
    async def put_persona(
        self,
        actor: Principal,
        persona_id: str,
        *,
        name: str | None = None,
        memory_enabled: bool | None = None,
        review: bool | None = None,
    ) -> Persona:
        return await asyncio.to_thread(
            self.sync.put_persona,
            actor,
            persona_id,
            name=name,
            memory_enabled=memory_enabled,
            review=review,
        )

    @mirrors(Directory.grant_persona)
    async def grant_persona(
        self,
        actor: Principal,
        persona_id: str,
        user_id: str,
        *,
        use: bool = True,
        lead: bool = False,
    ) -> User:
        return await asyncio.to_thread(
            self.sync.grant_persona, actor, persona_id, user_id, use=use, lead=lead
        )

    @mirrors(Directory.create_key)
    async def create_key(
        self, actor: Principal, user_id: str, name: str, *, persona: str | None = None
    ) -> tuple[ApiKey, str]:
        return await asyncio.to_thread(self.sync.create_key, actor, user_id, name, persona=persona)

    @mirrors(Directory.revoke_key)
    async def revoke_key(self, actor: Principal, key_id: str) -> ApiKey:
        return await asyncio.to_thread(self.sync.revoke_key, actor, key_id)

    @mirrors(Directory.keys)
    async def keys(self, actor: Principal, user_id: str | None = None) -> builtins.list[ApiKey]:
        return await asyncio.to_thread(self.sync.keys, actor, user_id)

    @mirrors(Directory.bootstrap)
    async def bootstrap(self, org_id: str, user_id: str, key_name: str) -> tuple[ApiKey, str]:
        return await asyncio.to_thread(self.sync.bootstrap, org_id, user_id, key_name)

    @mirrors(Directory.erase_user)
    async def erase_user(
        self, actor: Principal, user_id: str, *, include_shared: bool = False
    ) -> Erasure:
        return await asyncio.to_thread(
            self.sync.erase_user, actor, user_id, include_shared=include_shared
        )

    @mirrors(Directory.export_user)
    async def export_user(self, actor: Principal, user_id: str) -> Iterator[dict[str, Any]]:
        # read whole in the worker thread: iterating here would block the event loop
        lines = await asyncio.to_thread(lambda: list(self.sync.export_user(actor, user_id)))
        return iter(lines)

    @mirrors(Directory.record)
    async def record(
        self,
        actor: Principal,
        action: str,
        target: str | None = None,
        detail: Mapping[str, Any] | None = None,
        *,
        outcome: str = "ok",
        request_id: str | None = None,
    ) -> None:
        return await asyncio.to_thread(
            self.sync.record, actor, action, target, detail, outcome=outcome, request_id=request_id
        )

    @mirrors(Directory.audit)
    async def audit(
        self,
        actor: Principal,
        *,
        user: str | None = None,
        action: str | None = None,
        since: datetime | None = None,
        before_seq: int | None = None,
        limit: int = 100,
    ) -> builtins.list[AuditEntry]:
        return await asyncio.to_thread(
            self.sync.audit,
            actor,
            user=user,
            action=action,
            since=since,
            before_seq=before_seq,
            limit=limit,
        )
