"""Access policy: a principal becomes the set of scopes it may read or write.

The rules are seed 000's matrix with seed 001's persona scopes:

=================  ===================================  ===================================
scope              read                                 write
=================  ===================================  ===================================
user:U             U; org admins                        U; org admins
persona_user:P/U   U (if U may use P); org admins       U; org admins
team:T             members of T (any team role)         team members and leads; org admins
persona:P          users who may use P; org admins      leads of P; org admins
org:O              every member of O                    org admins
=================  ===================================  ===================================

Anonymous callers have no principal and no access. The result is a
:class:`ScopeFilter` that every store applies *inside* its queries.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from .errors import InvalidInput, PermissionDenied
from .models import ALL_SCOPES, LAYER_OF, Layer, Principal, RecallMode, Scope, ScopeKind, TeamRole

__all__ = ["ScopeFilter", "AccessPolicy"]


@dataclass(frozen=True, slots=True)
class ScopeFilter:
    """A set of scopes inside one organization.

    ``kinds`` are wildcard scope kinds (every scope of that kind in the org,
    used for admins); ``scopes`` are explicit scopes. A row is visible when its
    org matches and its scope is in either set.
    """

    org_id: str
    scopes: frozenset[Scope] = frozenset()
    kinds: frozenset[ScopeKind] = frozenset()

    def allows(self, org_id: str, scope: Scope) -> bool:
        """True when ``scope`` of ``org_id`` falls inside this filter."""
        return org_id == self.org_id and (scope.kind in self.kinds or scope in self.scopes)

    @property
    def is_empty(self) -> bool:
        """True when nothing can match."""
        return not self.scopes and not self.kinds

    def restrict_layers(self, layers: Iterable[Layer]) -> ScopeFilter:
        """Keep only scopes whose layer is in ``layers``."""
        wanted = {Layer(x) for x in layers}
        return ScopeFilter(
            self.org_id,
            frozenset(s for s in self.scopes if s.layer in wanted),
            frozenset(k for k in self.kinds if LAYER_OF[k] in wanted),
        )


class AccessPolicy:
    """Turns a :class:`Principal` into readable and writable scopes."""

    def can_read(self, principal: Principal, scope: Scope) -> bool:
        """May ``principal`` read memories in ``scope`` of its organization?"""
        if principal.is_admin:
            return True
        kind = scope.kind
        if kind is ScopeKind.USER:
            return scope.owner_id == principal.user_id
        if kind is ScopeKind.PERSONA_USER:
            return scope.user_id == principal.user_id and scope.owner_id in principal.personas
        if kind is ScopeKind.TEAM:
            return scope.owner_id in principal.teams
        if kind is ScopeKind.PERSONA:
            return scope.owner_id in principal.personas or scope.owner_id in principal.persona_leads
        return scope.owner_id == principal.org_id

    def can_write(self, principal: Principal, scope: Scope) -> bool:
        """May ``principal`` create or change memories in ``scope``?"""
        if principal.is_admin:
            return scope.kind is not ScopeKind.ORG or scope.owner_id == principal.org_id
        kind = scope.kind
        if kind is ScopeKind.USER:
            return scope.owner_id == principal.user_id
        if kind is ScopeKind.PERSONA_USER:
            return scope.user_id == principal.user_id and scope.owner_id in principal.personas
        if kind is ScopeKind.TEAM:
            role = principal.teams.get(scope.owner_id)
            return role in (TeamRole.MEMBER, TeamRole.LEAD)
        if kind is ScopeKind.PERSONA:
            return scope.owner_id in principal.persona_leads
        return False

    def can_review(self, principal: Principal, scope: Scope) -> bool:
        """May ``principal`` approve, edit or reject pending memories in ``scope``?

        Admins everywhere in their organization; team leads in their teams;
        persona leads in their personas' shared scope; users in their own
        personal scopes (facts extracted about them wait for their word).
        """
        if principal.is_admin:
            return True
        kind = scope.kind
        if kind in (ScopeKind.USER, ScopeKind.PERSONA_USER):
            return self.can_write(principal, scope)
        if kind is ScopeKind.TEAM:
            return principal.teams.get(scope.owner_id) is TeamRole.LEAD
        if kind is ScopeKind.PERSONA:
            return scope.owner_id in principal.persona_leads
        return False

    def reviewable(self, principal: Principal) -> ScopeFilter:
        """Every scope whose pending memories ``principal`` may review."""
        readable = self.readable(principal)
        if principal.is_admin:
            return readable
        return ScopeFilter(
            principal.org_id, frozenset(s for s in readable.scopes if self.can_review(principal, s))
        )

    def check_read(self, principal: Principal, scope: Scope) -> None:
        """Raise :class:`PermissionDenied` unless ``principal`` may read ``scope``."""
        if not self.can_read(principal, scope):
            raise PermissionDenied(f"{principal.user_id!r} may not read scope {scope.key!r}")

    def check_review(self, principal: Principal, scope: Scope) -> None:
        """Raise :class:`PermissionDenied` unless ``principal`` may review ``scope``."""
        if not self.can_review(principal, scope):
            raise PermissionDenied(f"{principal.user_id!r} may not review scope {scope.key!r}")

    def check_write(self, principal: Principal, scope: Scope) -> None:
        """Raise :class:`PermissionDenied` unless ``principal`` may write ``scope``."""
        if scope.kind is ScopeKind.ORG and scope.owner_id != principal.org_id:
            raise PermissionDenied(
                f"scope {scope.key!r} is not the organization {principal.org_id!r}"
            )
        if not self.can_write(principal, scope):
            raise PermissionDenied(f"{principal.user_id!r} may not write scope {scope.key!r}")

    def readable(self, principal: Principal) -> ScopeFilter:
        """Every scope ``principal`` may read (admins: the whole organization)."""
        if principal.is_admin:
            return ScopeFilter(principal.org_id, kinds=frozenset(ScopeKind))
        scopes: set[Scope] = {Scope.user(principal.user_id), Scope.org(principal.org_id)}
        scopes.update(Scope.team(t) for t in principal.teams)
        for persona in principal.personas | principal.persona_leads:
            scopes.add(Scope.persona(persona))
        for persona in principal.personas:
            scopes.add(Scope.persona_user(persona, principal.user_id))
        return ScopeFilter(principal.org_id, frozenset(scopes))

    def writable(self, principal: Principal, view: ScopeFilter) -> ScopeFilter:
        """The part of ``view`` that ``principal`` may also write (maintenance jobs)."""
        kinds = view.kinds if principal.is_admin else frozenset()
        return ScopeFilter(
            view.org_id,
            frozenset(s for s in view.scopes if self.can_write(principal, s)),
            kinds,
        )

    def default_recall(self, principal: Principal) -> ScopeFilter:
        """The scopes a recall reaches when the caller names none.

        Personal scopes of *this* user (persona ones only for the active
        persona), then teams, personas and the org as the recall mode allows.
        An admin's default recall is their own view, not every user's memory:
        reaching other users' scopes needs ``scopes=ALL_SCOPES`` or naming them.
        """
        scopes: set[Scope] = set()
        personal = principal.mode in (RecallMode.PERSONAL, RecallMode.ORG_GLOBAL_ON)
        if personal:
            scopes.add(Scope.user(principal.user_id))
            if principal.active_persona:
                scopes.add(Scope.persona_user(principal.active_persona, principal.user_id))
        if principal.active_persona:
            scopes.add(Scope.persona(principal.active_persona))
        if principal.mode is not RecallMode.PERSONAL:
            scopes.add(Scope.org(principal.org_id))
            scopes.update(Scope.team(t) for t in principal.teams)
        return ScopeFilter(
            principal.org_id, frozenset(s for s in scopes if self.can_read(principal, s))
        )

    def resolve(
        self,
        principal: Principal,
        scopes: str | Scope | Iterable[Scope | str] | None,
        layers: Iterable[Layer | str] | None = None,
    ) -> ScopeFilter:
        """The filter for a read: named scopes (each checked), all, or the default."""
        if scopes is None:
            result = self.default_recall(principal)
        elif isinstance(scopes, str) and scopes == ALL_SCOPES:
            result = self.readable(principal)
        else:
            items = [scopes] if isinstance(scopes, Scope | str) else list(scopes)
            parsed = [s if isinstance(s, Scope) else Scope.parse(s) for s in items]
            if not parsed:
                raise InvalidInput("scopes must name at least one scope", field="scopes")
            for scope in parsed:
                self.check_read(principal, scope)
            result = ScopeFilter(principal.org_id, frozenset(parsed))
        if layers is not None:
            try:
                wanted = [Layer(x) for x in layers]
            except ValueError:
                known = ", ".join(x.value for x in Layer)
                raise InvalidInput(
                    f"unknown layer in {layers!r}; expected {known}", field="layers"
                ) from None
            result = result.restrict_layers(wanted)
        return result
