"""The directory service: tenancy, roles, personas, switches, API keys and the audit log.

It turns credentials into a :class:`~kenning.models.Principal` (the engine's
access policy takes it from there), and every change to the directory goes
through an admin check and leaves an audit line. Reached as
``Memory.directory``; the server, the MCP door and ``kenning admin`` call it.

Switches: an organization's memory off stops memory for everyone but its
admins (who keep it to govern); a team's or persona's memory off drops that
team or persona from its members' principals, so neither their recall nor
their writes reach it.
"""

from __future__ import annotations

import builtins
import time
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import replace
from datetime import datetime
from typing import TYPE_CHECKING, Any, TypeVar, cast

from ..clock import Clock
from ..errors import InvalidInput, NotFound, PermissionDenied, Unauthenticated
from ..models import Principal, RecallMode, Role, Scope, ScopeKind, TeamRole, check_id
from ..validation import clean_count, clean_flag, clean_text, clean_time
from . import keys, userdata
from .model import ApiKey, AuditEntry, DirectoryEntry, Org, Persona, Team, User
from .userdata import Erasure

if TYPE_CHECKING:
    from ..stores.base import DirectoryStore, Store

__all__ = ["Directory"]

_G = TypeVar("_G", Team, Persona)


def _enum(kind: Any, value: object, field: str) -> Any:
    try:
        return kind(value)
    except ValueError:
        known = ", ".join(x.value for x in kind)
        raise InvalidInput(f"{field} must be one of {known}; got {value!r}", field=field) from None


class Directory:
    """Who exists in each organization, what they may use, and what they did."""

    def __init__(self, store: DirectoryStore, clock: Clock) -> None:
        self.store = store
        self.clock = clock
        #: org id -> (read at, governed, recorded team ids); see :meth:`governed`
        self._shape: dict[str, tuple[float, bool, tuple[str, ...]]] = {}
        self._generation = 0

    @property
    def generation(self) -> int:
        """A count of the changes made through this directory object: a copy of what it
        said (the server's verified API keys) is stale once the count has moved.
        Changes made by another process are not counted."""
        return self._generation

    # -- reads -----------------------------------------------------------------------------

    def org(self, org_id: str) -> Org:
        """The organization (defaults when it was never configured)."""
        entry = self.store.get_entry(check_id(org_id, "org id"), "org", org_id)
        return Org.from_entry(entry) if entry else Org(org_id, org_id)

    def user(self, org_id: str, user_id: str) -> User:
        """A user of the organization (``NotFound`` when unknown)."""
        entry = self.store.get_entry(org_id, "user", check_id(user_id, "user id"))
        if entry is None:
            raise NotFound(f"no user {user_id!r} in {org_id!r}")
        return User.from_entry(entry)

    def users(self, actor: Principal) -> builtins.list[User]:
        """Every user of the actor's organization (admins), else the actor alone."""
        if actor.is_admin:
            return [User.from_entry(e) for e in self.store.entries(actor.org_id, "user")]
        return [self.user(actor.org_id, actor.user_id)]

    def teams(self, actor: Principal) -> builtins.list[Team]:
        """The organization's teams (admins), else the actor's own teams."""
        found = [Team.from_entry(e) for e in self.store.entries(actor.org_id, "team")]
        return found if actor.is_admin else [t for t in found if t.id in actor.teams]

    def personas(self, actor: Principal) -> builtins.list[Persona]:
        """The organization's personas (admins), else those the actor may use or leads."""
        found = [Persona.from_entry(e) for e in self.store.entries(actor.org_id, "persona")]
        mine = actor.personas | actor.persona_leads
        return found if actor.is_admin else [p for p in found if p.id in mine]

    def members(self, actor: Principal, team_id: str) -> dict[str, TeamRole]:
        """Who is in a team and in which role (admins and the team's members)."""
        self._team(actor.org_id, team_id)
        if not actor.is_admin and team_id not in actor.teams:
            raise PermissionDenied(f"{actor.user_id!r} is not in team {team_id!r}")
        return {u.id: u.teams[team_id] for u in self._all_users(actor.org_id) if team_id in u.teams}

    def review_required(self, org_id: str, scope: Scope) -> bool:
        """Whether new memories in ``scope`` wait for approval: the organization's
        ``review`` for its layer, a team's or persona's for their shared scope."""
        kind = {ScopeKind.ORG: "org", ScopeKind.TEAM: "team", ScopeKind.PERSONA: "persona"}
        if scope.kind not in kind:
            return False
        entry = self.store.get_entry(org_id, kind[scope.kind], scope.owner_id)
        return entry is not None and bool(entry.doc.get("review", False))

    # -- which scopes exist -------------------------------------------------------------------

    def governed(self, org_id: str) -> bool:
        """Whether the directory governs the organization: it lists users (every
        server organization does, from its first admin on). An ungoverned one is an
        embedded install or a :class:`~kenning.Memory` used from code."""
        return self._org_shape(org_id)[0]

    def has_persona(self, org_id: str, persona_id: str) -> bool:
        """Whether the organization's directory lists persona ``persona_id``."""
        return self.store.get_entry(org_id, "persona", persona_id) is not None

    def open_teams(self, org_id: str) -> tuple[str, ...]:
        """The teams an *ungoverned* organization records (created by use); empty for a
        governed one, whose memberships the directory's users carry."""
        governed, teams = self._org_shape(org_id)
        return () if governed else teams

    def check_scopes(self, org_id: str, scopes: Iterable[Scope]) -> None:
        """Refuse a write into a team, persona or user a governed organization does not
        list (admins included: no member could ever read it, and a team created later
        under that id would inherit it). In an ungoverned organization the first write
        into ``team:X`` or ``persona:X`` records that team or persona instead."""
        wanted = {(kind, owner) for s in set(scopes) for kind, owner in _owners(s)}
        if not wanted:
            return
        governed, recorded = self._org_shape(org_id)
        for kind, owner in sorted(wanted):
            if not governed and (kind == "user" or (kind == "team" and owner in recorded)):
                continue  # users are not listed there; a recorded team is known
            if self.store.get_entry(org_id, kind, owner) is not None:
                continue
            if governed:
                raise InvalidInput(
                    f"organization {org_id!r} has no {kind} {owner!r}: create it first "
                    f"(an admin: kenning admin {kind}, or the admin API), then write there",
                    field="scope",
                )
            if kind != "user":
                group = Team if kind == "team" else Persona
                self._put(org_id, kind, owner, group(org_id, owner, owner).doc())

    def _org_shape(self, org_id: str) -> tuple[bool, tuple[str, ...]]:
        now = time.monotonic()
        cached = self._shape.get(org_id)
        if cached is None or now - cached[0] > _SHAPE_TTL_S:
            governed = bool(self.store.entries(org_id, "user"))
            teams = tuple(e.id for e in self.store.entries(org_id, "team"))
            cached = (now, governed, teams)
            self._shape[org_id] = cached
        return cached[1], cached[2]

    # -- principals ------------------------------------------------------------------------

    def principal(self, org_id: str, user_id: str, persona: str | None = None) -> Principal:
        """The principal of a directory user, with switches applied.

        Raises ``Unauthenticated`` for an unknown or disabled user,
        ``PermissionDenied`` when memory is off for them or for ``persona``, and
        ``InvalidInput`` (one message, whether the id exists in another
        organization or nowhere) when ``persona`` is not one they may use: granted
        to them, or for an admin, any persona of the organization.
        """
        org = self.org(org_id)
        try:
            user = self.user(org_id, user_id)
        except NotFound:
            raise Unauthenticated(f"unknown user {user_id!r}") from None
        if user.disabled:
            raise Unauthenticated(f"user {user_id!r} is disabled")
        admin = user.role is Role.ADMIN
        if not org.memory_enabled and not admin:
            raise PermissionDenied(f"memory is switched off for organization {org_id!r}")
        teams, personas, leads = dict(user.teams), set(user.personas), set(user.persona_leads)
        if not admin:
            off_teams = {
                t.id
                for t in map(Team.from_entry, self.store.entries(org_id, "team"))
                if not t.memory_enabled
            }
            off = {
                p.id
                for p in map(Persona.from_entry, self.store.entries(org_id, "persona"))
                if not p.memory_enabled
            }
            if persona is not None and persona in off:
                raise PermissionDenied(f"memory is switched off for persona {persona!r}")
            teams = {t: r for t, r in teams.items() if t not in off_teams}
            personas, leads = personas - off, leads - off
        elif persona is not None and not self.has_persona(org_id, persona):
            # an admin may act as any persona of the organization, not as an id it
            # lacks; the refusal reads as a member's does (nothing said of other orgs)
            raise InvalidInput(
                f"active persona {persona!r} is not one the user may use", field="active_persona"
            )
        roles = {user.role} | ({Role.MEMBER} if user.role is not Role.MEMBER else set())
        return Principal(
            org_id=org_id,
            user_id=user_id,
            roles=frozenset(roles),
            teams=teams,
            personas=frozenset(personas),
            persona_leads=frozenset(leads),
            active_persona=persona,
            mode=org.mode,
        )

    def authenticate(self, token: str, persona: str | None = None) -> tuple[Principal, ApiKey]:
        """The principal an API key stands for (its default persona unless one is asked)."""
        key_id, secret = keys.parse(token)
        key = self.store.get_api_key(key_id)
        if key is None or not keys.matches(secret, key.secret_hash):
            raise Unauthenticated("unknown API key")
        if not key.active:
            raise Unauthenticated(f"API key {key_id!r} was revoked")
        return self.principal(key.org_id, key.user_id, persona or key.persona), key

    # -- organization and users (admins) --------------------------------------------------

    def ensure_org(
        self,
        org_id: str,
        name: str | None = None,
        mode: RecallMode | str = RecallMode.ORG_GLOBAL_ON,
    ) -> Org:
        """Create the organization if it does not exist (bootstrap; no actor needed)."""
        existing = self.store.get_entry(check_id(org_id, "org id"), "org", org_id)
        if existing is not None:
            return Org.from_entry(existing)
        org = Org(org_id, clean_text(name or org_id, "name", 200), _enum(RecallMode, mode, "mode"))
        self._put(org_id, "org", org_id, org.doc())
        return org

    def set_org(
        self,
        actor: Principal,
        *,
        name: str | None = None,
        mode: RecallMode | str | None = None,
        memory_enabled: bool | None = None,
        review: bool | None = None,
    ) -> Org:
        """Rename the organization, set its recall mode, switch its memory or the
        approval of organization-layer writes (admins)."""
        self._admin(actor)
        org = self.org(actor.org_id)
        new = replace(
            org,
            name=org.name if name is None else clean_text(name, "name", 200),
            mode=org.mode if mode is None else _enum(RecallMode, mode, "mode"),
            memory_enabled=org.memory_enabled
            if memory_enabled is None
            else clean_flag(memory_enabled, "memory_enabled"),
            review=org.review if review is None else clean_flag(review, "review"),
        )
        self._put(org.id, "org", org.id, new.doc())
        self.record(actor, "admin.org.set", org.id, _diff(org.to_dict(), new.to_dict()))
        return new

    def put_user(
        self,
        actor: Principal,
        user_id: str,
        *,
        name: str | None = None,
        role: Role | str | None = None,
        disabled: bool | None = None,
    ) -> User:
        """Create a user or change their name, role or disabled flag (admins)."""
        self._admin(actor)
        check_id(user_id, "user id")
        try:
            old: User | None = self.user(actor.org_id, user_id)
        except NotFound:
            old = None
        base = old or User(actor.org_id, user_id, user_id)
        new = replace(
            base,
            name=base.name if name is None else clean_text(name, "name", 200),
            role=base.role if role is None else _enum(Role, role, "role"),
            disabled=base.disabled if disabled is None else clean_flag(disabled, "disabled"),
        )
        if old is not None and old.role is Role.ADMIN and new.role is not Role.ADMIN:
            self._keep_an_admin(actor.org_id, user_id)
        if new.disabled and user_id == actor.user_id:
            raise InvalidInput("you cannot disable yourself", field="disabled")
        self._put(actor.org_id, "user", user_id, new.doc())
        self.record(
            actor,
            "admin.user.create" if old is None else "admin.user.update",
            user_id,
            _diff(old.to_dict() if old else {}, new.to_dict()),
        )
        return new

    # -- teams and personas (admins) -------------------------------------------------------

    def put_team(
        self,
        actor: Principal,
        team_id: str,
        *,
        name: str | None = None,
        memory_enabled: bool | None = None,
        review: bool | None = None,
    ) -> Team:
        """Create a team or project, rename it, switch its shared memory or its
        review of members' writes (admins)."""
        return self._put_group(actor, Team, "team", team_id, name, memory_enabled, review)

    def set_member(
        self, actor: Principal, team_id: str, user_id: str, role: TeamRole | str | None
    ) -> User:
        """Add a user to a team in a role, change the role, or remove them (``None``)."""
        self._admin(actor)
        self._team(actor.org_id, team_id)
        user = self.user(actor.org_id, user_id)
        teams = dict(user.teams)
        if role is None:
            if teams.pop(team_id, None) is None:
                raise NotFound(f"{user_id!r} is not in team {team_id!r}")
        else:
            teams[team_id] = _enum(TeamRole, role, "role")
        new = replace(user, teams=teams)
        self._put(actor.org_id, "user", user_id, new.doc())
        self.record(
            actor,
            "admin.team.member",
            f"{team_id}/{user_id}",
            {"role": None if role is None else teams[team_id].value},
        )
        return new

    def delete_team(self, actor: Principal, team_id: str) -> None:
        """Remove a team and every membership in it; its memories stay (admins)."""
        self._admin(actor)
        self._team(actor.org_id, team_id)
        for user in self._all_users(actor.org_id):
            if team_id in user.teams:
                teams = {t: r for t, r in user.teams.items() if t != team_id}
                self._put(actor.org_id, "user", user.id, replace(user, teams=teams).doc())
        self.store.delete_entry(actor.org_id, "team", team_id)
        self._changed(actor.org_id)
        self.record(actor, "admin.team.delete", team_id)

    def put_persona(
        self,
        actor: Principal,
        persona_id: str,
        *,
        name: str | None = None,
        memory_enabled: bool | None = None,
        review: bool | None = None,
    ) -> Persona:
        """Create a persona, rename it, switch its memory or its review (admins)."""
        return self._put_group(actor, Persona, "persona", persona_id, name, memory_enabled, review)

    def _put_group(
        self,
        actor: Principal,
        cls: type[_G],
        kind: str,
        group_id: str,
        name: str | None,
        memory_enabled: bool | None,
        review: bool | None,
    ) -> _G:
        self._admin(actor)
        entry = self.store.get_entry(actor.org_id, kind, check_id(group_id, f"{kind} id"))
        old = cls.from_entry(entry) if entry else None
        base = old or cls(actor.org_id, group_id, group_id)
        new = replace(
            base,
            name=base.name if name is None else clean_text(name, "name", 200),
            memory_enabled=base.memory_enabled
            if memory_enabled is None
            else clean_flag(memory_enabled, "memory_enabled"),
            review=base.review if review is None else clean_flag(review, "review"),
        )
        self._put(actor.org_id, kind, group_id, new.doc())
        self.record(
            actor,
            f"admin.{kind}.{'create' if old is None else 'update'}",
            group_id,
            _diff(old.to_dict() if old else {}, new.to_dict()),
        )
        return new

    def grant_persona(
        self,
        actor: Principal,
        persona_id: str,
        user_id: str,
        *,
        use: bool = True,
        lead: bool = False,
    ) -> User:
        """Let a user use a persona (and curate its shared memory when ``lead``);
        ``use=False`` takes both away (admins)."""
        self._admin(actor)
        check_id(persona_id, "persona id")
        if self.store.get_entry(actor.org_id, "persona", persona_id) is None:
            raise NotFound(f"no persona {persona_id!r}")
        user = self.user(actor.org_id, user_id)
        use, lead = clean_flag(use, "use"), clean_flag(lead, "lead")
        personas, leads = set(user.personas), set(user.persona_leads)
        (personas.add if use else personas.discard)(persona_id)
        (leads.add if use and lead else leads.discard)(persona_id)
        new = replace(user, personas=frozenset(personas), persona_leads=frozenset(leads))
        self._put(actor.org_id, "user", user_id, new.doc())
        self.record(
            actor,
            "admin.persona.grant",
            f"{persona_id}/{user_id}",
            {"use": use, "lead": use and lead},
        )
        return new

    # -- API keys -------------------------------------------------------------------------

    def create_key(
        self, actor: Principal, user_id: str, name: str, *, persona: str | None = None
    ) -> tuple[ApiKey, str]:
        """A new key for a user (admins; users for themselves). Returns the stored
        key and the full secret, which is shown this once and never again."""
        if user_id != actor.user_id:
            self._admin(actor)
        user = self.user(actor.org_id, user_id)
        if persona is not None and persona not in user.personas and user.role is not Role.ADMIN:
            raise InvalidInput(f"{user_id!r} may not use persona {persona!r}", field="persona")
        key_id, token, digest = keys.mint()
        key = ApiKey(
            key_id,
            actor.org_id,
            user_id,
            clean_text(name, "name", 200),
            digest,
            self.clock.now(),
            actor.user_id,
            persona,
        )
        self.store.put_api_key(key)
        self._changed(actor.org_id)
        self.record(actor, "admin.key.create", key_id, {"user": user_id, "name": key.name})
        return key, token

    def revoke_key(self, actor: Principal, key_id: str) -> ApiKey:
        """Revoke a key (admins; users their own). Revoking twice changes nothing."""
        key = self.store.get_api_key(clean_text(key_id, "key id", 64))
        if key is None or key.org_id != actor.org_id:
            raise NotFound(f"no API key {key_id!r}")
        if key.user_id != actor.user_id:
            self._admin(actor)
        if key.revoked_at is not None:
            return key
        revoked = replace(key, revoked_at=self.clock.now())
        self.store.put_api_key(revoked)
        self._changed(actor.org_id)
        self.record(actor, "admin.key.revoke", key_id, {"user": key.user_id})
        return revoked

    def keys(self, actor: Principal, user_id: str | None = None) -> builtins.list[ApiKey]:
        """API keys of the organization or one user (admins); users see their own."""
        if not actor.is_admin:
            if user_id not in (None, actor.user_id):
                raise PermissionDenied(f"{actor.user_id!r} may only list their own keys")
            user_id = actor.user_id
        return self.store.api_keys(actor.org_id, user_id)

    def bootstrap(self, org_id: str, user_id: str, key_name: str) -> tuple[ApiKey, str]:
        """First start: the organization, an admin user, and a fresh key named
        ``key_name`` (an earlier active key of that name and user is revoked)."""
        self.ensure_org(org_id)
        system = Principal(org_id=org_id, user_id=user_id, roles=frozenset({Role.ADMIN}))
        try:
            user = self.user(org_id, user_id)
            if user.role is not Role.ADMIN or user.disabled:
                self.put_user(system, user_id, role=Role.ADMIN, disabled=False)
        except NotFound:
            self.put_user(system, user_id, name=user_id, role=Role.ADMIN)
        for old in self.store.api_keys(org_id, user_id):
            if old.active and old.name == key_name:
                self.revoke_key(system, old.id)
        return self.create_key(system, user_id, key_name)

    # -- a user's data: erasure and export ---------------------------------------------------

    def erase_user(
        self, actor: Principal, user_id: str, *, include_shared: bool = False
    ) -> Erasure:
        """Erase a user of the actor's organization and everything stored about them
        (admins; one transaction; a repeat returns the first erasure, ``repeated``).

        Goes: their personal and persona_user memories (with vectors, keyword and
        graph rows, access log, sectors, policies), their directory record, team
        memberships, persona grants and API keys. Memories they wrote in shared
        scopes stay, with the author replaced by ``"(erased)"``, unless
        ``include_shared`` deletes them too. History keeps who and when without
        content; the audit log records the erasure. Refused for yourself, the last
        admin, and users the organization does not know (``NotFound``).
        """
        found = userdata.erase(self, self._whole(), actor, user_id, include_shared=include_shared)
        if not found.repeated:
            self._changed(actor.org_id)
        return found

    def export_user(self, actor: Principal, user_id: str) -> Iterator[dict[str, Any]]:
        """Everything stored about a user, as JSON-ready lines (JSONL) each with a
        ``type``: ``export`` (header), ``user``, ``api_key``, ``memory`` (``personal``,
        or ``authored`` elsewhere), ``history``, ``access``, ``audit``, ``end``.

        The user themselves (authored memories they can still read) or an admin of
        their organization (every memory they authored). Checked, and recorded in
        the audit log, before the first line; the lines are read as they are taken.
        """
        store = self._whole()
        userdata.check_export(self, store, actor, user_id)
        self.record(actor, "user.export", user_id)
        return userdata.export_lines(store, actor, user_id, self.clock.now())

    def _whole(self) -> Store:
        # The engine's directory runs on its whole store (memories and directory in one).
        return cast("Store", self.store)

    # -- audit ------------------------------------------------------------------------------

    def record(
        self,
        actor: Principal,
        action: str,
        target: str | None = None,
        detail: Mapping[str, Any] | None = None,
        *,
        outcome: str = "ok",
        request_id: str | None = None,
    ) -> None:
        """Append one audit line for ``actor``."""
        self.store.append_audit(
            [
                AuditEntry(
                    actor.org_id,
                    self.clock.now(),
                    actor.user_id,
                    action,
                    target,
                    outcome,
                    dict(detail or {}),
                    request_id,
                )
            ]
        )

    def audit(
        self,
        actor: Principal,
        *,
        user: str | None = None,
        action: str | None = None,
        since: datetime | None = None,
        before_seq: int | None = None,
        limit: int = 100,
    ) -> builtins.list[AuditEntry]:
        """The organization's audit log, newest first (admins only)."""
        self._admin(actor)
        return self.store.audit(
            actor.org_id,
            actor=None if user is None else check_id(user, "user"),
            action=None if action is None else clean_text(action, "action", 100),
            since=clean_time(since, "since"),
            before_seq=None if before_seq is None else clean_count(before_seq, "before_seq"),
            limit=min(clean_count(limit, "limit", 1), 1000),
        )

    # -- helpers ----------------------------------------------------------------------------

    def _put(self, org_id: str, kind: str, entry_id: str, doc: Mapping[str, Any]) -> None:
        self.store.put_entry(DirectoryEntry(org_id, kind, entry_id, doc, self.clock.now()))
        self._changed(org_id)

    def _changed(self, org_id: str) -> None:
        self._shape.pop(org_id, None)
        self._generation += 1

    def _team(self, org_id: str, team_id: str) -> Team:
        entry = self.store.get_entry(org_id, "team", check_id(team_id, "team id"))
        if entry is None:
            raise NotFound(f"no team {team_id!r}")
        return Team.from_entry(entry)

    def _all_users(self, org_id: str) -> builtins.list[User]:
        return [User.from_entry(e) for e in self.store.entries(org_id, "user")]

    def _keep_an_admin(self, org_id: str, leaving: str) -> None:
        others = [
            u
            for u in self._all_users(org_id)
            if u.role is Role.ADMIN and u.id != leaving and not u.disabled
        ]
        if not others:
            raise InvalidInput("an organization keeps at least one admin", field="role")

    @staticmethod
    def _admin(actor: Principal) -> None:
        if not actor.is_admin:
            raise PermissionDenied(f"{actor.user_id!r} is not an admin of {actor.org_id!r}")


#: How long an organization's directory shape (governed, teams) is cached: another
#: process's directory changes are seen this late by :meth:`Directory.open_teams`.
_SHAPE_TTL_S = 2.0


def _owners(scope: Scope) -> list[tuple[str, str]]:
    """The directory rows a scope needs: (kind, id)."""
    if scope.kind is ScopeKind.TEAM:
        return [("team", scope.owner_id)]
    if scope.kind is ScopeKind.PERSONA:
        return [("persona", scope.owner_id)]
    if scope.kind is ScopeKind.USER:
        return [("user", scope.owner_id)]
    if scope.kind is ScopeKind.PERSONA_USER:
        return [("persona", scope.owner_id), ("user", str(scope.user_id))]
    return []


def _diff(old: Mapping[str, Any], new: Mapping[str, Any]) -> dict[str, Any]:
    return {k: [old.get(k), v] for k, v in new.items() if old.get(k) != v}
