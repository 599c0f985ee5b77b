"""Import what mem0's ``Memory.get_all(...)`` returns.

mem0 (v1.1 and later) returns ``{"results": [item, ...]}`` (plus ``"relations"``
when its graph store is on, which is left out: kenning builds its own graph
from the content); v1.0 returned the bare list. Both are accepted. An item is
mem0's ``MemoryItem`` with the payload keys it promotes::

    {"id", "memory", "hash", "metadata", "created_at", "updated_at",
     "user_id", "agent_id", "run_id", "actor_id", "role",
     "attributed_to", "expiration_date"}

The mapping (docs/importing.md has the table):

* ``memory`` -> ``content``;
* the scope, unless ``scope=`` puts every item in one: ``user_id`` and
  ``agent_id`` -> ``persona_user:AGENT/USER`` (the agent's memory about that
  user); ``user_id`` alone -> ``user:USER``; ``agent_id`` alone ->
  ``persona:AGENT``; neither (a run only) -> the importer's own personal scope;
* ``agent_id`` -> ``agent_id`` too; ``run_id`` -> ``session_id``;
* ``created_at`` / ``updated_at`` -> ``created_at`` / ``updated_at`` (so
  ``said_at`` is when mem0 stored it); ``expiration_date`` (mem0 hides the
  memory after that day) -> ``valid_to``, the end of that day (UTC);
* ``metadata`` -> ``metadata``, with ``actor_id``, ``role``, ``attributed_to``
  and ``expiration_date`` beside it (mem0 keeps them in the same payload);
* ``categories`` (mem0's platform) -> ``tags``;
* ``metadata["import"]`` records the origin: ``{"from": "mem0", "id", "hash",
  "digest", "user_id", "agent_id", "run_id"}`` plus ``extra`` (any other
  field of the item), so a re-import skips what it already holds.

Imported memories are ``semantic`` (mem0 stores extracted facts) with source
``mem0``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..audit import audited
from ..errors import InvalidInput
from ..models import Principal, Scope
from ..validation import clean_time
from .base import ImportReport, Incoming, digest, owner_scope, run_import

if TYPE_CHECKING:
    from ..engine import Memory

__all__ = ["MEM0_SOURCE", "import_mem0", "read_mem0"]

#: The ``source`` of memories imported from mem0.
MEM0_SOURCE = "mem0"

#: Payload keys mem0 promotes beside ``metadata``; kept in kenning's metadata.
_PAYLOAD_KEYS = ("actor_id", "role", "attributed_to", "expiration_date")
#: What the mapping reads (everything else goes to ``metadata["import"]["extra"]``).
_KNOWN = frozenset(
    {
        "id",
        "memory",
        "hash",
        "metadata",
        "created_at",
        "updated_at",
        "user_id",
        "agent_id",
        "run_id",
        "categories",
        *_PAYLOAD_KEYS,
    }
)
#: kenning's field -> mem0's name, for error messages.
_NAMES = {
    "content": "memory",
    "session_id": "run_id",
    "valid_to": "expiration_date",
    "tags": "categories",
    "user": "user_id",
    "agent": "agent_id",
}

Mem0Source = str | os.PathLike[str] | Mapping[str, Any] | Sequence[Any]


def read_mem0(data: object, *, scope: Scope | str | None = None) -> list[Incoming]:
    """mem0's ``get_all`` output (parsed JSON) as items to import (nothing stored).

    ``scope``: put every item there instead of the scope its ids name. Errors
    name the item (``results[3]``) and the field.
    """
    if isinstance(data, Mapping) and "results" in data:
        items, label = data["results"], "results"
    elif isinstance(data, list):
        items, label = data, ""
    else:
        raise InvalidInput(
            'not mem0 get_all output: expected {"results": [...]} or a list of memories',
            field="import",
        )
    if not isinstance(items, list):
        raise InvalidInput(f"{label} must be a list of memories", field="results")
    target = None if scope is None else scope if isinstance(scope, Scope) else Scope.parse(scope)
    return [_item(item, f"{label}[{n}]", target) for n, item in enumerate(items)]


def _item(item: object, where: str, target: Scope | None) -> Incoming:
    try:
        return _parse(item, where, target)
    except InvalidInput as exc:
        raise InvalidInput(f"{where}: {exc}", field=exc.field) from None


def _parse(item: object, where: str, target: Scope | None) -> Incoming:
    if not isinstance(item, Mapping):
        raise InvalidInput("a mem0 memory must be an object", field="results")
    mem_id = item.get("id")
    if isinstance(mem_id, bool) or not isinstance(mem_id, str | int) or mem_id == "":
        raise InvalidInput(f"id must be a non-empty string, got {mem_id!r}", field="id")
    ids = {name: _optional_str(item, name) for name in ("user_id", "agent_id", "run_id")}
    owners = owner_scope(ids["user_id"], ids["agent_id"], names=_NAMES)
    metadata = item.get("metadata")
    if metadata is not None and not isinstance(metadata, Mapping):
        raise InvalidInput("metadata must be an object or null", field="metadata")
    meta = dict(metadata or {})
    for name in _PAYLOAD_KEYS:
        if item.get(name) is not None:
            meta[name] = item[name]
    fields: dict[str, Any] = {
        "content": item.get("memory"),
        "scope": target or owners,
        "metadata": meta,
        "source": MEM0_SOURCE,
        "memory_type": "semantic",
    }
    if ids["agent_id"] is not None:
        fields["agent_id"] = ids["agent_id"]
    if ids["run_id"] is not None:
        fields["session_id"] = ids["run_id"]
    if item.get("expiration_date") is not None:
        fields["valid_to"] = _day_end(item["expiration_date"])
    if item.get("categories") is not None:
        fields["tags"] = item["categories"]
    provenance: dict[str, Any] = {k: v for k, v in ids.items() if v is not None}
    if item.get("hash") is not None:
        provenance["hash"] = item["hash"]
    extra = {k: v for k, v in item.items() if k not in _KNOWN}
    if extra:
        provenance["extra"] = extra
    return Incoming(
        where=where,
        fields=fields,
        origin=MEM0_SOURCE,
        origin_id=str(mem_id),
        digest=digest(item),
        created_at=clean_time(item.get("created_at"), "created_at"),
        updated_at=clean_time(item.get("updated_at"), "updated_at"),
        provenance=provenance,
        names=_NAMES,
    )


def _optional_str(item: Mapping[str, Any], name: str) -> str | None:
    value = item.get(name)
    if value is None or value == "":
        return None
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise InvalidInput(f"{name} must be a string, got {value!r}", field=name)
    return str(value)


def _day_end(value: object) -> datetime:
    """mem0's ``expiration_date`` (the last day the memory is shown) as the moment
    it stops being valid: midnight UTC after that day."""
    try:
        day = date.fromisoformat(str(value)[:10])
    except ValueError:
        raise InvalidInput(
            f"expiration_date must be a YYYY-MM-DD date, got {value!r}", field="expiration_date"
        ) from None
    return datetime.combine(day + timedelta(days=1), time(), tzinfo=UTC)


def _load(source: Mem0Source) -> object:
    if isinstance(source, str | os.PathLike):
        path = Path(source)
        try:
            return json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError) as exc:
            raise InvalidInput(f"cannot read {path}: {exc}", field="file") from None
        except ValueError as exc:
            raise InvalidInput(f"{path}: not JSON ({exc})", field="file") from None
    return source


def _count(result: object, args: tuple[Any, ...]) -> str | None:
    return f"{result.read} memories" if isinstance(result, ImportReport) else None


@audited("memory.import", target=_count)
def import_mem0(
    mem: Memory,
    source: Mem0Source,
    *,
    scope: Scope | str | None = None,
    principal: Principal | None = None,
    progress: Callable[[int], None] | None = None,
) -> ImportReport:
    """Import mem0's ``get_all`` output: a JSON file's path, or the parsed data.

    Every item is checked (fields, and the caller's right to write its scope)
    before anything is written; then the new memories and the ones mem0 changed
    since an earlier import are written in one transaction, and the ones an
    earlier import already holds unchanged are skipped. ``scope``: put every
    item there instead of the scope its ``user_id``/``agent_id`` name.

    >>> import_mem0(mem, m.get_all(filters={"user_id": "alice"}))  # doctest: +SKIP
    """
    who = mem.core.who(principal)
    items = read_mem0(_load(source), scope=scope)
    return run_import(mem, items, who, MEM0_SOURCE, progress)
