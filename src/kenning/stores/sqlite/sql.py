"""Row <-> record conversion and filter -> SQL for the SQLite store."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from ...access import ScopeFilter
from ...models import MemoryFilter, MemoryRecord, MemoryType, Status
from ..rows import MEMORY_COLUMNS, scope_of
from .driver import sqlite3

__all__ = [
    "MEMORY_COLUMNS",
    "SELECT_MEMORY",
    "ts",
    "dt",
    "record_from_row",
    "record_params",
    "scope_clause",
    "scope_subquery",
    "joined_scope_clause",
    "filter_clause",
]

SELECT_MEMORY = (
    "SELECT "
    + ", ".join(f"m.{c}" for c in MEMORY_COLUMNS)
    + ", s.kind, s.owner_id, s.user_id FROM memories m JOIN scopes s ON s.pk = m.scope_pk"
)

_TIME_FIELDS = {"created_at", "updated_at", "event_at", "valid_from", "valid_to", "last_accessed"}


def ts(value: datetime | None) -> float | None:
    """Datetime -> epoch seconds (None stays None)."""
    return None if value is None else value.timestamp()


def dt(value: float | None) -> datetime | None:
    """Epoch seconds -> aware UTC datetime (None stays None)."""
    return None if value is None else datetime.fromtimestamp(value, UTC)


def record_from_row(row: sqlite3.Row | tuple[Any, ...]) -> MemoryRecord:
    """Build a record from a ``SELECT_MEMORY`` row.

    Recall builds one per candidate, so the columns are unpacked by position
    (the order of ``MEMORY_COLUMNS``; ``tests/test_sqlite_read_path.py`` pins it
    with a round trip of a record whose every field differs) and "[]"/"{}"
    skip the JSON parser.
    """
    (
        id_,
        org_id,
        content,
        key,
        memory_type,
        importance,
        confidence,
        status,
        tags,
        metadata,
        source,
        channel,
        agent,
        session,
        episode,
        created_by,
        created_at,
        updated_at,
        event_at,
        valid_from,
        valid_to,
        strength,
        decay_rate,
        access_count,
        reinforcement_count,
        last_accessed,
        sector_id,
        supersedes,
        superseded_by,
        version,
        content_hash,
        kind,
        owner,
        user,
    ) = row
    return MemoryRecord(
        id=id_,
        org_id=org_id,
        scope=scope_of(kind, owner, user),
        content=content,
        key=key,
        memory_type=_TYPES[memory_type],
        importance=importance,
        confidence=confidence,
        status=_STATUSES[status],
        tags=() if tags == "[]" else tuple(json.loads(tags)),
        metadata={} if metadata == "{}" else json.loads(metadata),
        source=source,
        source_channel_id=channel,
        agent_id=agent,
        session_id=session,
        episode_id=episode,
        created_by=created_by,
        created_at=_at(created_at, UTC),
        updated_at=_at(updated_at, UTC),
        event_at=None if event_at is None else _at(event_at, UTC),
        valid_from=None if valid_from is None else _at(valid_from, UTC),
        valid_to=None if valid_to is None else _at(valid_to, UTC),
        strength=strength,
        decay_rate=decay_rate,
        access_count=access_count,
        reinforcement_count=reinforcement_count,
        last_accessed=None if last_accessed is None else _at(last_accessed, UTC),
        sector_id=sector_id,
        supersedes=supersedes,
        superseded_by=superseded_by,
        version=version,
        content_hash=content_hash,
    )


_TYPES = {t.value: t for t in MemoryType}
_STATUSES = {s.value: s for s in Status}
_at = datetime.fromtimestamp


def record_params(record: MemoryRecord) -> list[Any]:
    """Values of ``MEMORY_COLUMNS`` for an INSERT/UPDATE."""
    out: list[Any] = []
    for name in MEMORY_COLUMNS:
        value = getattr(record, name)
        if name in _TIME_FIELDS:
            value = ts(value)
        elif name == "tags":
            value = json.dumps(list(value))
        elif name == "metadata":
            value = json.dumps(value, sort_keys=True)
        elif name in ("memory_type", "status"):
            value = value.value
        out.append(value)
    return out


def joined_scope_clause(scopes: ScopeFilter, alias: str = "s") -> tuple[str, list[Any]]:
    """The filter as a condition on a ``scopes`` row named ``alias``."""
    if scopes.is_empty:
        return "0", []
    parts: list[str] = []
    params: list[Any] = [scopes.org_id]
    if scopes.kinds:
        parts.append(f"{alias}.kind IN ({','.join('?' * len(scopes.kinds))})")
        params.extend(sorted(k.value for k in scopes.kinds))
    if scopes.scopes:
        parts.append(f"{alias}.key IN ({','.join('?' * len(scopes.scopes))})")
        params.extend(sorted(s.key for s in scopes.scopes))
    return f"({alias}.org_id = ? AND ({' OR '.join(parts)}))", params


def scope_subquery(scopes: ScopeFilter) -> tuple[str, list[Any]]:
    """``SELECT pk FROM scopes ...`` for the filter's scopes."""
    where, params = joined_scope_clause(scopes, "x")
    return f"SELECT x.pk FROM scopes x WHERE {where}", params


def scope_clause(scopes: ScopeFilter, alias: str = "m") -> tuple[str, list[Any]]:
    """SQL condition restricting ``alias.scope_pk`` to the filter's scopes."""
    sub, params = scope_subquery(scopes)
    return f"{alias}.scope_pk IN ({sub})", params


def filter_clause(filters: MemoryFilter, alias: str = "m") -> tuple[str, list[Any]]:
    """SQL condition for every structured filter (always at least ``1``)."""
    m = alias
    parts: list[str] = []
    params: list[Any] = []

    def add(sql: str, *values: Any) -> None:
        parts.append(sql)
        params.extend(values)

    if filters.statuses:
        add(
            f"{m}.status IN ({','.join('?' * len(filters.statuses))})",
            *sorted(s.value for s in filters.statuses),
        )
    if filters.types:
        add(
            f"{m}.memory_type IN ({','.join('?' * len(filters.types))})",
            *sorted(t.value for t in filters.types),
        )
    if filters.tags_any:
        marks = ",".join("?" * len(filters.tags_any))
        add(
            f"EXISTS (SELECT 1 FROM json_each({m}.tags) WHERE value IN ({marks}))",
            *sorted(filters.tags_any),
        )
    for tag in sorted(filters.tags_all):
        add(f"EXISTS (SELECT 1 FROM json_each({m}.tags) WHERE value = ?)", tag)
    if filters.created_after is not None:
        add(f"{m}.created_at >= ?", ts(filters.created_after))
    if filters.created_before is not None:
        add(f"{m}.created_at < ?", ts(filters.created_before))
    if filters.event_after is not None:
        add(f"COALESCE({m}.event_at, {m}.created_at) >= ?", ts(filters.event_after))
    if filters.event_before is not None:
        add(f"COALESCE({m}.event_at, {m}.created_at) < ?", ts(filters.event_before))
    for name, value in sorted(filters.metadata.items()):
        path = '$."' + name.replace('"', '""') + '"'
        if value is None:
            add(f"json_type({m}.metadata, ?) = 'null'", path)
        elif isinstance(value, bool):
            add(f"json_type({m}.metadata, ?) = ?", path, "true" if value else "false")
        elif isinstance(value, int | float):
            add(
                f"(json_type({m}.metadata, ?) IN ('integer', 'real') AND "
                f"json_extract({m}.metadata, ?) = ?)",
                path,
                path,
                value,
            )
        else:
            add(
                f"(json_type({m}.metadata, ?) = 'text' AND json_extract({m}.metadata, ?) = ?)",
                path,
                path,
                value,
            )
    if filters.min_importance is not None:
        add(f"{m}.importance >= ?", filters.min_importance)
    if filters.sectors:
        parts.append(f"{m}.sector_id IN ({','.join('?' * len(filters.sectors))})")
        params.extend(sorted(filters.sectors))
    for column in ("source", "agent_id", "session_id", "episode_id", "sector_id", "key"):
        value = getattr(filters, column)
        if value is not None:
            add(f"{m}.{column} = ?", value)
    return (" AND ".join(parts) or "1"), params
