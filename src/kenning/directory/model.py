"""Value types of the directory: who exists, who may use what, what they did (no I/O).

The store keeps organizations, users, teams and personas as
:class:`DirectoryEntry` rows (a kind, an id and a small JSON document), API
keys as :class:`ApiKey` rows and the audit log as :class:`AuditEntry` rows.
The typed views (:class:`Org`, :class:`User`, :class:`Team`,
:class:`Persona`) turn documents into fields and back.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Self

from ..models import RecallMode, Role, TeamRole

__all__ = [
    "DirectoryEntry",
    "ApiKey",
    "AuditEntry",
    "Org",
    "User",
    "Team",
    "Persona",
    "ENTRY_KINDS",
]

#: The kinds of :class:`DirectoryEntry` a store holds.
ENTRY_KINDS = ("org", "user", "team", "persona")


@dataclass(frozen=True, slots=True)
class DirectoryEntry:
    """One stored directory row: ``(org_id, kind, id)`` and its JSON document."""

    org_id: str
    kind: str
    id: str
    doc: Mapping[str, Any]
    updated_at: datetime


@dataclass(frozen=True, slots=True)
class ApiKey:
    """A stored API key. The secret itself is never stored, only its SHA-256.

    The key a client presents is ``kn_<id>_<secret>``; ``id`` is public (it
    names the key in listings and the audit log), ``secret_hash`` proves it.
    """

    id: str
    org_id: str
    user_id: str
    name: str
    secret_hash: str
    created_at: datetime
    created_by: str
    persona: str | None = None
    revoked_at: datetime | None = None

    @property
    def active(self) -> bool:
        """Not revoked."""
        return self.revoked_at is None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (without the hash)."""
        return {
            "id": self.id,
            "org_id": self.org_id,
            "user_id": self.user_id,
            "name": self.name,
            "persona": self.persona,
            "created_at": self.created_at.isoformat(),
            "created_by": self.created_by,
            "revoked_at": self.revoked_at.isoformat() if self.revoked_at else None,
        }


@dataclass(frozen=True, slots=True)
class AuditEntry:
    """One line of the audit log: who did what to which target, when, and how it went.

    ``action`` is dotted (``memory.remember``, ``admin.key.create``,
    ``review.approve``); ``outcome`` is ``ok``, ``denied`` or ``invalid``.
    ``seq`` is assigned by the store (0 before).
    """

    org_id: str
    at: datetime
    actor: str
    action: str
    target: str | None = None
    outcome: str = "ok"
    detail: Mapping[str, Any] = field(default_factory=dict)
    request_id: str | None = None
    seq: int = 0

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {
            "seq": self.seq,
            "org_id": self.org_id,
            "at": self.at.isoformat(),
            "actor": self.actor,
            "action": self.action,
            "target": self.target,
            "outcome": self.outcome,
            "detail": dict(self.detail),
            "request_id": self.request_id,
        }


def _flag(doc: Mapping[str, Any], name: str, default: bool = True) -> bool:
    return bool(doc.get(name, default))


@dataclass(frozen=True, slots=True)
class Org:
    """An organization (tenant) and its switches.

    ``mode``: which layers a recall reaches by default (personal; org with
    global memory on; org with global memory off). ``memory_enabled`` off
    stops memory for everyone but admins (who keep it to govern). ``review``
    on: every new organization-layer memory waits for an admin's approval.
    """

    id: str
    name: str
    mode: RecallMode = RecallMode.ORG_GLOBAL_ON
    memory_enabled: bool = True
    review: bool = False

    def doc(self) -> dict[str, Any]:
        """The stored document."""
        return {
            "name": self.name,
            "mode": self.mode.value,
            "memory_enabled": self.memory_enabled,
            "review": self.review,
        }

    @classmethod
    def from_entry(cls, entry: DirectoryEntry) -> Org:
        """The typed view of a stored row."""
        d = entry.doc
        return cls(
            entry.id,
            str(d.get("name", entry.id)),
            RecallMode(d.get("mode", "org")),
            _flag(d, "memory_enabled"),
            _flag(d, "review", False),
        )

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {"id": self.id, **self.doc()}


@dataclass(frozen=True, slots=True)
class User:
    """A user of an organization: role, team memberships, personas.

    ``teams`` maps team id to the user's role there; ``personas`` are the
    personas the user may use, ``persona_leads`` those whose shared memory the
    user curates. A disabled user cannot authenticate.
    """

    org_id: str
    id: str
    name: str = ""
    role: Role = Role.MEMBER
    teams: Mapping[str, TeamRole] = field(default_factory=dict)
    personas: frozenset[str] = frozenset()
    persona_leads: frozenset[str] = frozenset()
    disabled: bool = False

    def doc(self) -> dict[str, Any]:
        """The stored document."""
        return {
            "name": self.name,
            "role": self.role.value,
            "teams": {t: r.value for t, r in sorted(self.teams.items())},
            "personas": sorted(self.personas),
            "persona_leads": sorted(self.persona_leads),
            "disabled": self.disabled,
        }

    @classmethod
    def from_entry(cls, entry: DirectoryEntry) -> User:
        """The typed view of a stored row."""
        d = entry.doc
        return cls(
            entry.org_id,
            entry.id,
            str(d.get("name", "")),
            Role(d.get("role", "member")),
            {str(t): TeamRole(r) for t, r in dict(d.get("teams", {})).items()},
            frozenset(d.get("personas", ())),
            frozenset(d.get("persona_leads", ())),
            _flag(d, "disabled", False),
        )

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {"org_id": self.org_id, "id": self.id, **self.doc()}


@dataclass(frozen=True, slots=True)
class _Group:
    """What teams and personas share: a name and two switches."""

    org_id: str
    id: str
    name: str = ""
    memory_enabled: bool = True
    review: bool = False

    def doc(self) -> dict[str, Any]:
        """The stored document."""
        return {"name": self.name, "memory_enabled": self.memory_enabled, "review": self.review}

    @classmethod
    def from_entry(cls, entry: DirectoryEntry) -> Self:
        """The typed view of a stored row."""
        d = entry.doc
        return cls(
            entry.org_id,
            entry.id,
            str(d.get("name", "")),
            _flag(d, "memory_enabled"),
            _flag(d, "review", False),
        )

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {"org_id": self.org_id, "id": self.id, **self.doc()}


@dataclass(frozen=True, slots=True)
class Team(_Group):
    """A team or project. Its shared memory can be switched off; with ``review``
    on, what members write there waits for a team lead's approval."""


@dataclass(frozen=True, slots=True)
class Persona(_Group):
    """A persona (an agent identity users may act through). Its memory can be
    switched off; with ``review`` on, writes to its shared scope by anyone but
    its leads wait for approval."""
