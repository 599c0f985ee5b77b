"""Retention, capacity and review policies: which one applies to a memory (pure).

A policy targets the organization (``"*"``), a layer (``"layer:shared"``), a
scope (``"scope:team:eng"``) or a sector (``"sector:<id>"``), for one memory
type or all (``"*"``). Per attribute the most specific policy that sets it
wins: sector, then scope, then layer, then the organization; an exact type
before ``"*"``. Capacity is different: each policy with a capacity caps the
set of memories it targets, on its own.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..errors import InvalidInput
from ..models import Layer, MemoryRecord, MemoryType, Scope
from .model import Policy

__all__ = ["check_target", "matches", "most_specific", "needs_review", "retention_days"]


def check_target(target: str) -> str:
    """Validate a policy target string; returns it."""
    if target == "*":
        return target
    kind, sep, rest = target.partition(":")
    if not sep or not rest:
        raise InvalidInput(
            f"policy target must be '*', 'layer:<layer>', 'scope:<scope>' or "
            f"'sector:<id>'; got {target!r}",
            field="target",
        )
    if kind == "layer":
        try:
            Layer(rest)
        except ValueError:
            known = ", ".join(x.value for x in Layer)
            raise InvalidInput(f"unknown layer {rest!r} (known: {known})", field="target") from None
    elif kind == "scope":
        Scope.parse(rest)
    elif kind != "sector":
        raise InvalidInput(f"unknown policy target kind {kind!r}", field="target")
    return target


def _rank(policy: Policy) -> tuple[int, int]:
    kind = policy.target.partition(":")[0]
    place = {"sector": 0, "scope": 1, "layer": 2}.get(kind, 3)
    return place, 0 if policy.memory_type != "*" else 1


def matches(policy: Policy, record: MemoryRecord) -> bool:
    """Whether ``policy`` targets ``record``."""
    if policy.org_id != record.org_id:
        return False
    if policy.memory_type not in ("*", record.memory_type.value):
        return False
    kind, _, rest = policy.target.partition(":")
    if policy.target == "*":
        return True
    if kind == "layer":
        return record.layer.value == rest
    if kind == "scope":
        return record.scope.key == rest
    return kind == "sector" and record.sector_id == rest


def most_specific(
    policies: Sequence[Policy], record: MemoryRecord, attribute: str
) -> Policy | None:
    """The most specific policy targeting ``record`` that sets ``attribute``."""
    found = [
        p for p in policies if matches(p, record) and getattr(p, attribute) not in (None, False)
    ]
    return min(found, key=_rank) if found else None


def retention_days(policies: Sequence[Policy], record: MemoryRecord) -> float | None:
    """How long ``record`` is kept active, if a policy limits it."""
    p = most_specific(policies, record, "retention_days")
    return p.retention_days if p is not None else None


def needs_review(
    policies: Sequence[Policy],
    org_id: str,
    scope: Scope,
    memory_type: MemoryType,
    layers: Sequence[str],
) -> bool:
    """Whether an extracted memory for ``scope`` starts as ``pending_review``: a
    policy targeting it asks for review, or its layer is in ``layers`` (the
    ``lifecycle.review_extracted_layers`` setting)."""
    probe = MemoryRecord(id="", org_id=org_id, scope=scope, content="", memory_type=memory_type)
    return scope.layer.value in layers or any(p.review and matches(p, probe) for p in policies)
