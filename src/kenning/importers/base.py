"""What every importer shares: the incoming item, the report, and the one import run.

An importer (:mod:`.mem0`, :mod:`.tabular`) only *reads*: it turns its input
into :class:`Incoming` items, each a set of ``remember`` fields plus where it
came from (its origin's id, a digest of the item as read, the origin's own
times). :func:`run_import` does the rest for all of them:

1. **validate** every item into a record through the one write pipeline's
   validation (:meth:`kenning.write.WritePipeline.build`), the scope's write
   permission included, before anything is written; an error names the item
   (``results[3]``, ``line 7``, ``row 2``) and the field;
2. **match** each record with what an earlier import of the same origin left in
   the same scope (the memory whose ``metadata["import"]`` has the same
   ``from`` and ``id``): same digest, the item is unchanged and skipped (a
   re-import changes nothing); another digest, the memory is updated;
3. **write** the new records and the updates through the write pipeline in one
   transaction (embedding, review switch, sectors, graph projection, history),
   without reconciliation: an import copies what the origin holds, it does
   not merge it.

The origin's creation and update times are kept (``created_at``,
``updated_at``), so a memory imported today that was said last year is dated
last year (its ``said_at``, which recall's time handling reads). Its strength
counts from the import (``last_accessed``), as a memory just learned.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any

import numpy as np

from ..access import ScopeFilter
from ..embeddings import content_hash
from ..errors import InvalidInput, PermissionDenied
from ..models import MemoryFilter, MemoryRecord, Principal, Scope, Status, check_id
from ..stores import Replacement
from ..write import UPDATABLE

if TYPE_CHECKING:
    from ..engine import Memory

__all__ = ["IMPORT_KEY", "ImportReport", "Incoming", "digest", "owner_scope", "run_import"]

#: The metadata key under which an imported memory records its origin:
#: ``{"from": "mem0", "id": "...", "digest": "...", ...}``.
IMPORT_KEY = "import"

#: The fields an update from the origin may change (kenning's own bookkeeping,
#: the sector and the confidence feedback moved, is left alone).
_FROM_ORIGIN = tuple(f for f in UPDATABLE if f not in ("sector_id", "confidence"))
_ALL_STATUSES = frozenset(Status)
_PAGE = 1000


@dataclass(frozen=True, slots=True)
class Incoming:
    """One memory an importer read, before validation.

    ``fields`` are :meth:`kenning.Memory.remember` fields (``content``,
    ``scope``, ``metadata``, ...; ``metadata`` without the import record, which
    :func:`run_import` adds). ``where`` names the item in error messages;
    ``origin`` is the format (``mem0``, ``jsonl``, ``csv``), ``origin_id`` the
    item's id there, ``digest`` a hash of the item as read (a changed digest
    means the origin changed it). ``provenance`` is kept beside them in
    ``metadata["import"]`` (mem0's own ``hash``, say).
    """

    where: str
    fields: Mapping[str, Any]
    origin: str
    origin_id: str
    digest: str
    created_at: datetime | None = None
    updated_at: datetime | None = None
    provenance: Mapping[str, Any] = field(default_factory=dict)
    #: Field name -> the origin's name for it (``session_id`` -> ``run_id``), so an
    #: error names what the input calls it.
    names: Mapping[str, str] = field(default_factory=dict)


@dataclass(slots=True)
class ImportReport:
    """What an import did: the ids of the memories it added and updated, and how
    many items were already there unchanged."""

    origin: str
    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: int = 0

    @property
    def read(self) -> int:
        """How many items the input held."""
        return len(self.added) + len(self.updated) + self.unchanged

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (counts and ids)."""
        return {
            "from": self.origin,
            "read": self.read,
            "added": len(self.added),
            "updated": len(self.updated),
            "unchanged": self.unchanged,
            "ids": [*self.added, *self.updated],
        }


def digest(item: object) -> str:
    """A stable hash of a JSON-ready item (keys sorted): what decides "changed"."""
    text = json.dumps(item, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def owner_scope(
    user: str | None, agent: str | None, team: str | None = None, *, names: Mapping[str, str]
) -> Scope | None:
    """The scope an item's owners name: ``persona_user:AGENT/USER`` for a user and an
    agent, ``user:USER``, ``persona:AGENT``, ``team:TEAM``; None when it names none.
    ``names`` maps ``user``/``agent``/``team`` to the input's names for the errors."""
    for role, value in (("user", user), ("agent", agent), ("team", team)):
        if value is not None:
            check_id(value, names.get(role, role))
    if team is not None:
        if user is not None or agent is not None:
            raise InvalidInput(
                f"{names.get('team', 'team')} cannot be combined with a user or agent",
                field=names.get("team", "team"),
            )
        return Scope.team(team)
    if user is not None and agent is not None:
        return Scope.persona_user(agent, user)
    if user is not None:
        return Scope.user(user)
    if agent is not None:
        return Scope.persona(agent)
    return None


def run_import(
    mem: Memory,
    items: Sequence[Incoming],
    who: Principal,
    origin: str,
    progress: Callable[[int], None] | None = None,
) -> ImportReport:
    """Validate every item, match it with earlier imports, write the rest in one
    transaction (see the module docstring); nothing is written on any error."""
    records = _build(mem, items, who)
    mem.writes.check_scopes(who, {r.scope for r in records})
    earlier = _earlier(mem, who, origin, {r.scope for r in records})
    report = ImportReport(origin)
    adds: list[MemoryRecord] = []
    changed: list[tuple[MemoryRecord, MemoryRecord, Incoming]] = []
    for item, record in zip(items, records, strict=True):
        old = earlier.get((record.scope, item.origin_id))
        if old is None:
            adds.append(record)
        elif _import_record(old).get("digest") == item.digest:
            report.unchanged += 1
        else:
            changed.append((old, record, item))
    replacements = _replacements(mem, changed)

    def extend(plan: Any) -> None:
        plan.replacements.extend(replacements)

    if adds:
        results = mem.writes.write(who, adds, reconcile=False, progress=progress, extend=extend)
        report.added = [r.record.id for r in results]
    elif replacements:
        mem.store.replace_many(replacements, who.user_id)
    report.updated = [r.record.id for r in replacements]
    return report


def _build(mem: Memory, items: Sequence[Incoming], who: Principal) -> list[MemoryRecord]:
    """Every item validated into a record with its origin's times and import record;
    the first error names its item."""
    now = mem.clock.now()
    seen: dict[tuple[Scope, str], str] = {}
    records: list[MemoryRecord] = []
    for item in items:
        try:
            meta = dict(item.fields.get("metadata") or {})
            if IMPORT_KEY in meta:
                raise InvalidInput(
                    f"metadata key {IMPORT_KEY!r} is reserved for the import record",
                    field="metadata",
                )
            meta[IMPORT_KEY] = {
                "from": item.origin,
                "id": item.origin_id,
                "digest": item.digest,
                **item.provenance,
            }
            record = mem.writes.build(who, {**item.fields, "metadata": meta}, now)
        except InvalidInput as exc:
            origin_name = item.names.get(exc.field or "")
            named = f" (from {origin_name!r})" if origin_name and origin_name != exc.field else ""
            raise InvalidInput(f"{item.where}: {exc}{named}", field=exc.field) from None
        except PermissionDenied as exc:
            raise PermissionDenied(f"{item.where}: {exc}") from None
        created = item.created_at or now
        record.created_at = created
        record.updated_at = max(item.updated_at or created, created)
        # strength decays from the last use: counted from the import, an old memory
        # starts as one just learned (else consolidation would forget a whole import)
        record.last_accessed = now
        key = (record.scope, item.origin_id)
        if key in seen:
            raise InvalidInput(
                f"{item.where}: the same item as {seen[key]} "
                f"(id {item.origin_id!r} in {record.scope})",
                field="id",
            )
        seen[key] = item.where
        records.append(record)
    return records


def _import_record(record: MemoryRecord) -> Mapping[str, Any]:
    found = record.metadata.get(IMPORT_KEY)
    return found if isinstance(found, Mapping) else {}


def _earlier(
    mem: Memory, who: Principal, origin: str, scopes: set[Scope]
) -> dict[tuple[Scope, str], MemoryRecord]:
    """The memories an earlier import from ``origin`` left in ``scopes`` (any status),
    by (scope, origin id)."""
    if not scopes:
        return {}
    view = ScopeFilter(who.org_id, frozenset(scopes))  # (write permission checked before)
    flt = MemoryFilter(statuses=_ALL_STATUSES)
    found: dict[tuple[Scope, str], MemoryRecord] = {}
    cursor: tuple[float, str] | None = None
    while True:
        rows = mem.store.list(view, flt, limit=_PAGE, cursor=cursor)
        for record in rows:
            meta = _import_record(record)
            if meta.get("from") == origin and isinstance(meta.get("id"), str):
                found.setdefault((record.scope, meta["id"]), record)
        if len(rows) < _PAGE:
            return found
        cursor = (rows[-1].created_at.timestamp(), rows[-1].id)


def _replacements(
    mem: Memory, changed: Sequence[tuple[MemoryRecord, MemoryRecord, Incoming]]
) -> list[Replacement]:
    """The updates of memories the origin changed since the last import (re-embedded
    and re-projected where the content changed). The origin's update time is kept
    when it has one and it is not older than the memory's, else the update is now."""
    now = mem.clock.now()
    news: list[MemoryRecord] = []
    for old, built, item in changed:
        new = replace(old, **{name: getattr(built, name) for name in _FROM_ORIGIN})
        new.updated_at = max(item.updated_at, old.updated_at) if item.updated_at else now
        new.content_hash = content_hash(new.content)
        news.append(new)
    texts = [
        n.content for (old, _, _), n in zip(changed, news, strict=True) if n.content != old.content
    ]
    vectors: Iterator[np.ndarray] = iter(mem.embedder.embed_many(texts) if texts else [])
    out: list[Replacement] = []
    for (old, _, _), new in zip(changed, news, strict=True):
        vector = next(vectors) if new.content != old.content else None
        diff = old.changes_to(new, _FROM_ORIGIN)
        graph = None
        if "content" in diff or "tags" in diff:
            graph = mem.core.projector.for_update(new, vector)
        out.append(Replacement(new, vector, "import", diff, graph))
    return out
