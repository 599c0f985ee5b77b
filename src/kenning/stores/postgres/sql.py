"""Row <-> record conversion and filter -> SQL for the PostgreSQL store.

Placeholders are psycopg's ``%s``; every value travels as a parameter.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from psycopg.types.json import Jsonb

from ...access import ScopeFilter
from ...models import MemoryFilter, MemoryRecord, Scope
from ..rows import MEMORY_COLUMNS, finish_record

__all__ = [
    "MEMORY_COLUMNS",
    "SCOPE_COLUMNS",
    "SELECT_MEMORY",
    "record_from_row",
    "record_params",
    "scope_clause",
    "filter_clause",
    "context_values",
    "write_context",
]

#: The scope is stored on the row itself: row-level security reads it there.
SCOPE_COLUMNS = ("scope_kind", "scope_owner", "scope_user", "scope_key")

#: metadata comes back as text: most memories have none, and "{}" needs no parser.
SELECT_MEMORY = (
    "SELECT "
    + ", ".join(
        "m.metadata::text" if c == "metadata" else f"m.{c}"
        for c in (*MEMORY_COLUMNS, *SCOPE_COLUMNS[:3])
    )
    + " FROM memories m"
)

#: Separators of the row-level-security context strings (ids never contain them).
LIST_SEP = ","
PAIR_SEP = "|"


def record_from_row(row: tuple[Any, ...]) -> MemoryRecord:
    """Build a record from a ``SELECT_MEMORY`` row."""
    n = len(MEMORY_COLUMNS)
    values = dict(zip(MEMORY_COLUMNS, row[:n], strict=True))
    kind, owner, user = row[n : n + 3]
    values["tags"] = tuple(values["tags"])
    return finish_record(values, kind, owner, user)


def record_params(record: MemoryRecord) -> list[Any]:
    """Values of ``MEMORY_COLUMNS`` then ``SCOPE_COLUMNS`` for an INSERT/UPDATE."""
    out: list[Any] = []
    for name in MEMORY_COLUMNS:
        value = getattr(record, name)
        if name == "tags":
            value = list(value)
        elif name == "metadata":
            value = Jsonb(dict(value))
        elif name in ("memory_type", "status"):
            value = value.value
        out.append(value)
    scope = record.scope
    out.extend([scope.kind.value, scope.owner_id, scope.user_id, scope.key])
    return out


def scope_clause(
    scopes: ScopeFilter, alias: str = "m", *, unindexed: bool = False
) -> tuple[str, list[Any]]:
    """SQL condition restricting ``alias`` rows to the filter (query-level wall).

    ``unindexed`` writes the tests so no B-tree can serve them, which leaves an
    ``ORDER BY embedding <=> q`` query only the HNSW index to use.
    """
    if scopes.is_empty:
        return "FALSE", []
    parts: list[str] = []
    params: list[Any] = [scopes.org_id]

    def col(name: str) -> str:
        return f"({alias}.{name} || '')" if unindexed else f"{alias}.{name}"

    if scopes.kinds:
        parts.append(f"{col('scope_kind')} = ANY(%s)")
        params.append(sorted(k.value for k in scopes.kinds))
    if scopes.scopes:
        parts.append(f"{col('scope_key')} = ANY(%s)")
        params.append(sorted(s.key for s in scopes.scopes))
    return f"({col('org_id')} = %s AND ({' OR '.join(parts)}))", params


def context_values(scopes: ScopeFilter) -> tuple[str, str, str]:
    """The (org, kinds, org|scope pairs) strings row-level security reads for a reader."""
    if scopes.is_empty:
        return "", "", ""
    kinds = LIST_SEP.join(sorted(k.value for k in scopes.kinds))
    pairs = LIST_SEP.join(sorted(f"{scopes.org_id}{PAIR_SEP}{s.key}" for s in scopes.scopes))
    return scopes.org_id, kinds, pairs


def write_context(rows: Iterable[tuple[str, Scope]]) -> tuple[str, str, str]:
    """The context that lets a transaction write exactly these (org, scope) rows."""
    pairs = sorted({f"{org}{PAIR_SEP}{scope.key}" for org, scope in rows})
    return "", "", LIST_SEP.join(pairs)


def filter_clause(
    filters: MemoryFilter, alias: str = "m", *, unindexed: bool = False
) -> tuple[str, list[Any]]:
    """SQL condition for every structured filter (always at least ``TRUE``).

    ``unindexed``: the status test is kept from the B-trees (see :func:`scope_clause`).
    """
    m = alias
    parts: list[str] = []
    params: list[Any] = []

    def add(sql: str, *values: Any) -> None:
        parts.append(sql)
        params.extend(values)

    if filters.statuses:
        status = f"({m}.status || '')" if unindexed else f"{m}.status"
        add(f"{status} = ANY(%s)", sorted(s.value for s in filters.statuses))
    if filters.types:
        add(f"{m}.memory_type = ANY(%s)", sorted(t.value for t in filters.types))
    if filters.tags_any:
        add(f"{m}.tags && %s::text[]", sorted(filters.tags_any))
    if filters.tags_all:
        add(f"{m}.tags @> %s::text[]", sorted(filters.tags_all))
    if filters.created_after is not None:
        add(f"{m}.created_at >= %s", filters.created_after)
    if filters.created_before is not None:
        add(f"{m}.created_at < %s", filters.created_before)
    if filters.event_after is not None:
        add(f"COALESCE({m}.event_at, {m}.created_at) >= %s", filters.event_after)
    if filters.event_before is not None:
        add(f"COALESCE({m}.event_at, {m}.created_at) < %s", filters.event_before)
    for name, value in sorted(filters.metadata.items()):
        # jsonb equality: 1 = 1.0, and a JSON null only matches an explicit null.
        add(f"({m}.metadata -> %s) = %s", name, Jsonb(value))
    if filters.min_importance is not None:
        add(f"{m}.importance >= %s", filters.min_importance)
    if filters.sectors:
        add(f"{m}.sector_id = ANY(%s)", sorted(filters.sectors))
    for column in ("source", "agent_id", "session_id", "episode_id", "sector_id", "key"):
        value = getattr(filters, column)
        if value is not None:
            add(f"{m}.{column} = %s", value)
    return (" AND ".join(parts) or "TRUE"), params
