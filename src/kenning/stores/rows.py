"""What every store shares: the record's columns and store-neutral row shaping."""

from __future__ import annotations

import builtins
import functools
import itertools
import json
from collections.abc import Iterable, Iterator, Sequence
from datetime import datetime
from typing import Any

import numpy as np

from ..lifecycle.model import Sector
from ..models import (
    LAYER_OF,
    HistoryEntry,
    LayerStats,
    MemoryRecord,
    MemoryType,
    Scope,
    ScopeKind,
    Status,
)

__all__ = [
    "MEMORY_COLUMNS",
    "AGE_BUCKETS",
    "CONFIDENCE_LEVEL_SQL",
    "finish_record",
    "finish_sector",
    "audit_where",
    "personal_target",
    "layer_stats",
    "tombstones",
    "recorded_model",
]

#: The record's own columns (the scope is stored per store's own design).
MEMORY_COLUMNS = (
    "id",
    "org_id",
    "content",
    "key",
    "memory_type",
    "importance",
    "confidence",
    "status",
    "tags",
    "metadata",
    "source",
    "source_channel_id",
    "agent_id",
    "session_id",
    "episode_id",
    "created_by",
    "created_at",
    "updated_at",
    "event_at",
    "valid_from",
    "valid_to",
    "strength",
    "decay_rate",
    "access_count",
    "reinforcement_count",
    "last_accessed",
    "sector_id",
    "supersedes",
    "superseded_by",
    "version",
    "content_hash",
)


@functools.lru_cache(maxsize=65_536)
def scope_of(kind: str, owner: str, user: str | None) -> Scope:
    """The (cached, immutable) scope of a stored row."""
    return Scope(ScopeKind(kind), owner, user)


def finish_record(values: dict[str, Any], kind: str, owner: str, user: str | None) -> MemoryRecord:
    """A record from column values whose times and tags the store has converted already.

    ``metadata`` arrives as JSON text ("{}" needs no parser), the enums as strings.
    """
    meta = values["metadata"]
    values["metadata"] = {} if meta == "{}" else json.loads(meta)
    values["memory_type"] = MemoryType(values["memory_type"])
    values["status"] = Status(values["status"])
    return MemoryRecord(scope=scope_of(kind, owner, user), **values)


#: Seed 000's age buckets: (name, days).
AGE_BUCKETS = (("<1d", 1), ("<7d", 7), ("<30d", 30), ("<365d", 365))


def finish_sector(
    row: Sequence[Any],
    topics: Iterable[str],
    created: datetime | None,
    updated: datetime | None,
) -> Sector:
    """A sector from a row (id, org, scope kind, owner, user, name, parent, multiplier,
    topics, centroid, max size, created, updated, active-memory count) whose topics and
    times the store has converted already; the centroid is raw float32 bytes or None."""
    sid, org, kind, owner, user, name, parent, mult, _, centroid, max_size, _, _, size = row
    return Sector(
        id=sid,
        org_id=org,
        scope=scope_of(kind, owner, user),
        name=name,
        parent_id=parent,
        decay_multiplier=mult,
        topics=tuple(topics),
        centroid=None if centroid is None else np.frombuffer(bytes(centroid), np.float32).copy(),
        max_size=max_size,
        created_at=created,
        updated_at=updated,
        size=size,
    )


def tombstones(
    entries: Iterable[tuple[str, str, str, HistoryEntry]],
) -> Iterator[dict[str, Any]]:
    """Group (memory id, org, scope key, entry) in memory-id order into tombstone rows."""
    for (memory_id, org_id, scope), group in itertools.groupby(entries, key=lambda e: e[:3]):
        yield {
            "memory_id": memory_id,
            "org_id": org_id,
            "scope": scope,
            "history": [e[3].to_dict() for e in group],
        }


#: Seed 000's confidence levels as SQL over ``m.confidence`` (both dialects).
CONFIDENCE_LEVEL_SQL = (
    "CASE WHEN m.confidence >= 0.9 THEN 'very_high' WHEN m.confidence >= 0.75 THEN 'high' "
    "WHEN m.confidence >= 0.6 THEN 'medium' WHEN m.confidence >= 0.4 THEN 'low' "
    "ELSE 'very_low' END"
)


def layer_stats(
    rows: Sequence[tuple[str, str, str, str, str, int, float]],
) -> builtins.list[LayerStats]:
    """Fold (scope kind, status, type, confidence level, age bucket, count, confidence sum)
    rows into one :class:`LayerStats` per layer."""
    out: dict[str, LayerStats] = {}
    conf_sum: dict[str, float] = {}
    for kind, status, mtype, level, bucket, count, total_conf in rows:
        layer = LAYER_OF[ScopeKind(kind)].value
        st = out.get(layer)
        if st is None:
            st = out[layer] = LayerStats(layer, 0, {}, {}, None, {}, {})
        st.total_memories += count
        for dist, name in (
            (st.by_status, status),
            (st.by_type, mtype),
            (st.confidence_distribution, level),
            (st.age_distribution, bucket),
        ):
            dist[name] = dist.get(name, 0) + count
        conf_sum[layer] = conf_sum.get(layer, 0.0) + total_conf
    for layer, st in out.items():
        st.avg_confidence = round(conf_sum[layer] / st.total_memories, 4)
    return [out[k] for k in sorted(out)]


def personal_target(target: str, user_id: str) -> bool:
    """Whether a policy ``target`` names one of the user's personal scopes
    (``scope:user:U`` or ``scope:persona_user:P/U``)."""
    if not target.startswith("scope:"):
        return False
    try:
        scope = Scope.parse(target.removeprefix("scope:"))
    except ValueError:  # InvalidInput is a ValueError: not a scope of anyone's
        return False
    if scope.kind is ScopeKind.USER:
        return scope.owner_id == user_id
    return scope.kind is ScopeKind.PERSONA_USER and scope.user_id == user_id


def audit_where(
    ph: str,
    org_id: str,
    actor: str | None,
    action: str | None,
    since: object | None,
    before_seq: int | None,
) -> tuple[str, list[Any]]:
    """The WHERE clause of ``Store.audit`` in either SQL dialect (``ph`` is its
    placeholder; ``since`` already in the store's time form). ``action`` is a literal
    prefix compared with ``substr``, so ``%`` and ``_`` are no wildcards."""
    conditions: list[tuple[str, list[Any]]] = [("org_id = {ph}", [org_id])]
    if actor is not None:
        conditions.append(("actor = {ph}", [actor]))
    if action is not None:
        conditions.append(("substr(action, 1, {ph}) = {ph}", [len(action), action]))
    if since is not None:
        conditions.append(("at >= {ph}", [since]))
    if before_seq is not None:
        conditions.append(("seq < {ph}", [before_seq]))
    where = " AND ".join(sql.format(ph=ph) for sql, _ in conditions)
    return where, [v for _, values in conditions for v in values]


def recorded_model(value: str | None) -> tuple[str, int] | None:
    """``(model_id, dim)`` from a store's recorded ``embedding`` meta value (JSON)."""
    if value is None:
        return None
    recorded = json.loads(value)
    return str(recorded["model_id"]), int(recorded["dim"])
