"""Value types of the memory lifecycle: accesses, sectors, policies (no I/O)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import numpy as np

from ..models import Scope

__all__ = ["Access", "AccessEntry", "Sector", "Policy"]


@dataclass(frozen=True, slots=True)
class Access:
    """One access to a memory, to be written: its strength before and after.

    ``access_type``: ``"recall"`` (a recall hit), ``"reinforce"`` (explicit;
    also counts as a reinforcement) or ``"confirm"`` (a duplicate write).
    """

    memory_id: str
    access_type: str
    strength_before: float
    strength_after: float
    at: datetime
    query: str | None = None

    @property
    def explicit(self) -> bool:
        """Whether this access counts as a reinforcement (not just a use)."""
        return self.access_type != "recall"


@dataclass(frozen=True, slots=True)
class AccessEntry:
    """A row of the access log (seed 003's ``memory_access_log``)."""

    seq: int
    memory_id: str
    access_type: str
    query: str | None
    strength_before: float
    strength_after: float
    at: datetime

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {
            "seq": self.seq,
            "memory_id": self.memory_id,
            "access_type": self.access_type,
            "query": self.query,
            "strength_before": self.strength_before,
            "strength_after": self.strength_after,
            "at": self.at.isoformat(),
        }


@dataclass(slots=True)
class Sector:
    """A node of a scope's sector hierarchy (seed 003): Work > Project_A > Meeting_Notes.

    ``size`` (memories in it, not counting children) is counted by the store on
    read; ``centroid`` is the running mean embedding of what was assigned to it.
    """

    id: str
    org_id: str
    scope: Scope
    name: str
    parent_id: str | None = None
    decay_multiplier: float = 1.0
    topics: tuple[str, ...] = ()
    centroid: np.ndarray | None = None
    max_size: int = 5000
    created_at: datetime | None = None
    updated_at: datetime | None = None
    size: int = 0

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (without the centroid)."""
        return {
            "id": self.id,
            "org_id": self.org_id,
            "scope": self.scope.key,
            "name": self.name,
            "parent_id": self.parent_id,
            "decay_multiplier": self.decay_multiplier,
            "topics": list(self.topics),
            "max_size": self.max_size,
            "size": self.size,
            "created_at": self.created_at.isoformat() if self.created_at else None,
            "updated_at": self.updated_at.isoformat() if self.updated_at else None,
        }


@dataclass(frozen=True, slots=True)
class Policy:
    """Retention, capacity and review rules for a target and memory type.

    ``target``: ``"*"`` (the organization), ``"layer:<layer>"``,
    ``"scope:<scope key>"`` or ``"sector:<id>"`` (see :mod:`kenning.lifecycle.policy`).

    * ``retention_days``: active memories older than this (by event time, else
      creation) are archived by consolidation;
    * ``capacity``: at most this many active memories; the weakest are
      archived (never deleted) past it;
    * ``review``: extracted memories start as ``pending_review``.
    ``memory_type`` is a type name or ``"*"``.
    """

    org_id: str
    target: str = "*"
    memory_type: str = "*"
    retention_days: float | None = None
    capacity: int | None = None
    review: bool = False
    updated_at: datetime | None = field(default=None, compare=False)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {
            "org_id": self.org_id,
            "target": self.target,
            "memory_type": self.memory_type,
            "retention_days": self.retention_days,
            "capacity": self.capacity,
            "review": self.review,
            "updated_at": self.updated_at.isoformat() if self.updated_at else None,
        }
