"""Copy a whole store into another one, losslessly, and prove it.

:func:`copy_store` moves every organization's memories (record, vector, the
model id, the full history) and the trails of its deleted memories (who and
when, no content) from one :class:`~kenning.stores.Store` to another in
batches, each one transaction of the destination's ``import_rows``, then
re-reads both sides and compares, per organization, the counts and a sha256
over a canonical form of every exported row. :func:`open_stores` opens two
databases by URL without the embedding model (each database records which
model its vectors come from), which is what ``kenning migrate`` uses.

It refuses, before writing anything, when the destination already holds an
organization being copied or when both sides are the same database. A copy
that fails part-way leaves the organizations it reached in the destination;
the refusal then names them, so a retry starts from a fresh database. Stop
writers to the source first: a write during the copy fails the verification.

Sectors and retention/capacity/review policies are copied and compared too,
and so is the directory: each organization's entries of every kind, its API
keys (hashes included) and its audit log, in order (the destination numbers
the lines anew; the comparison ignores ``seq``). An organization that lives
only in the directory (no memory yet) is copied like any other. Not copied:
the PostgreSQL embedding cache (content-addressed, rebuilt on demand), the
access log (usage telemetry) and the graph (``kenning graph rebuild``
re-derives it on the destination).
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from .access import ScopeFilter
from .config import Settings
from .directory.model import ENTRY_KINDS, ApiKey, AuditEntry, DirectoryEntry
from .errors import ConfigError, Conflict, InvalidInput, StoreError
from .models import ScopeKind
from .stores import Store, database_url, display_url, inspect_database, open_store
from .stores.registry import backend_for

if TYPE_CHECKING:
    from .stores.moves import MoveReport

__all__ = [
    "move_org",
    "CopyReport",
    "OrgReport",
    "VerificationError",
    "copy_store",
    "count_memories",
    "open_stores",
    "org_digest",
]

Progress = Callable[[int], None]

#: Audit lines read (and written, one transaction each) per page.
_AUDIT_PAGE = 1000


class VerificationError(StoreError):
    """The destination does not hold what the source holds after a copy.

    ``org_id`` names the organization, ``detail`` what differs.
    """

    def __init__(self, org_id: str, detail: str) -> None:
        super().__init__(f"verification failed for organization {org_id!r}: {detail}")
        self.org_id = org_id
        self.detail = detail


@dataclass(frozen=True, slots=True)
class OrgReport:
    """What was copied for one organization and the checksum both sides agree on."""

    org_id: str
    memories: int
    history: int
    checksum: str
    sectors: int = 0
    policies: int = 0
    entries: int = 0
    api_keys: int = 0
    audit: int = 0

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {
            "org_id": self.org_id,
            "memories": self.memories,
            "history": self.history,
            "checksum": self.checksum,
            "sectors": self.sectors,
            "policies": self.policies,
            "entries": self.entries,
            "api_keys": self.api_keys,
            "audit": self.audit,
        }


@dataclass(frozen=True, slots=True)
class CopyReport:
    """The verified result of :func:`copy_store`, one :class:`OrgReport` per organization."""

    organizations: list[OrgReport] = field(default_factory=list)

    @property
    def memories(self) -> int:
        """Memories copied in all."""
        return sum(o.memories for o in self.organizations)

    @property
    def history(self) -> int:
        """History entries copied in all."""
        return sum(o.history for o in self.organizations)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {
            "memories": self.memories,
            "history": self.history,
            "verified": True,
            "organizations": [o.to_dict() for o in self.organizations],
        }


# -- canonical form and checksums -------------------------------------------------------


def whole_org(org_id: str) -> ScopeFilter:
    """Every scope of every kind in ``org_id``."""
    return ScopeFilter(org_id, kinds=frozenset(ScopeKind))


def canonical_row(row: Mapping[str, Any]) -> bytes:
    """One exported row as canonical JSON: sorted keys, the vector's bytes, no ``seq``.

    ``seq`` numbers history rows within one database, so it differs between
    stores by design; everything else must survive a copy exactly.
    """
    vector = base64.b64decode(row["vector"])
    history = [{k: v for k, v in h.items() if k != "seq"} for h in row.get("history", [])]
    data = {
        "record": row["record"],
        "vector": vector.hex(),
        "model_id": row.get("model_id"),
        "history": history,
    }
    return json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode()


@dataclass(slots=True)
class _Digest:
    """Per-row digests of one organization on one side, sorted by memory id."""

    rows: list[tuple[str, str]]
    history: int
    tombstones: int = 0

    @property
    def memories(self) -> int:
        return len(self.rows) - self.tombstones

    @property
    def checksum(self) -> str:
        total = hashlib.sha256()
        for memory_id, digest in self.rows:
            total.update(f"{memory_id}:{digest}\n".encode())
        return total.hexdigest()


def canonical_tombstone(row: Mapping[str, Any]) -> bytes:
    """A deleted memory's trail (:meth:`Store.iter_tombstones`) as canonical JSON, no ``seq``."""
    history = [{k: v for k, v in h.items() if k != "seq"} for h in row["history"]]
    data = {
        "memory_id": row["memory_id"],
        "org_id": row["org_id"],
        "scope": row["scope"],
        "history": history,
    }
    return json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode()


def _digest(store: Store, org_id: str) -> _Digest:
    """Digests of the live memories and of the deleted memories' trails of one organization."""
    rows: list[tuple[str, str]] = []
    history = 0
    for row in store.iter_export(whole_org(org_id)):
        rows.append((str(row["record"]["id"]), hashlib.sha256(canonical_row(row)).hexdigest()))
        history += len(row.get("history", []))
    tombstones = 0
    for row in store.iter_tombstones(whole_org(org_id)):
        digest = hashlib.sha256(canonical_tombstone(row)).hexdigest()
        rows.append((f"deleted:{row['memory_id']}", digest))
        history += len(row["history"])
        tombstones += 1
    rows.sort()
    return _Digest(rows, history, tombstones)


def org_digest(store: Store, org_id: str) -> tuple[int, int, str]:
    """``(memories, history entries, sha256)`` of one organization in ``store``.

    The checksum covers every row's canonical form (:func:`canonical_row`) in
    memory-id order, so two stores holding the same data agree on it.
    """
    d = _digest(store, org_id)
    return d.memories, d.history, d.checksum


def _first_difference(source: _Digest, dest: _Digest) -> str:
    """Which memory differs first (by id) between two digests of one organization."""
    src, dst = dict(source.rows), dict(dest.rows)
    for memory_id in sorted(src.keys() | dst.keys()):
        if memory_id not in dst:
            return f"memory {memory_id!r} is missing from the destination"
        if memory_id not in src:
            return f"memory {memory_id!r} is in the destination only"
        if src[memory_id] != dst[memory_id]:
            return f"memory {memory_id!r} differs (record, vector, model id or history)"
    return "the checksums differ"


def _verify(source: Store, dest: Store, org_id: str) -> OrgReport:
    """Re-read one organization on both sides; raise :class:`VerificationError` on a difference."""
    src, dst = _digest(source, org_id), _digest(dest, org_id)
    if src.memories != dst.memories:
        raise VerificationError(
            org_id, f"{src.memories} memories in the source, {dst.memories} in the destination"
        )
    if src.tombstones != dst.tombstones:
        raise VerificationError(
            org_id,
            f"{src.tombstones} deleted memories' trails in the "
            f"source, {dst.tombstones} in the destination",
        )
    if src.history != dst.history:
        raise VerificationError(
            org_id, f"{src.history} history entries in the source, {dst.history} in the destination"
        )
    if src.checksum != dst.checksum:
        raise VerificationError(
            org_id,
            f"checksum {src.checksum} in the source, "
            f"{dst.checksum} in the destination; "
            f"{_first_difference(src, dst)}",
        )
    src_settings, dst_settings = _org_settings(source, org_id), _org_settings(dest, org_id)
    for what, a, b in zip(("sectors", "policies"), src_settings, dst_settings, strict=True):
        if a != b:
            raise VerificationError(
                org_id, f"{what} differ: {len(a)} in the source, {len(b)} in the destination"
            )
    entries, keys, audit = _verify_directory(source, dest, org_id)
    return OrgReport(
        org_id,
        src.memories,
        src.history,
        src.checksum,
        len(src_settings[0]),
        len(src_settings[1]),
        entries,
        keys,
        audit,
    )


def _verify_directory(source: Store, dest: Store, org_id: str) -> tuple[int, int, int]:
    """Compare one organization's directory entries, API keys and audit log on both sides;
    return how many of each the source holds."""
    counts = []
    for what, read in (("entries", _entries), ("API keys", _keys)):
        a: list[Any] = read(source, org_id)
        b: list[Any] = read(dest, org_id)
        if a != b:
            raise VerificationError(
                org_id,
                f"directory {what} differ: {len(a)} in the source, {len(b)} in the destination",
            )
        counts.append(len(a))
    src_audit, dst_audit = _audit_digest(source, org_id), _audit_digest(dest, org_id)
    if src_audit != dst_audit:
        raise VerificationError(
            org_id,
            f"audit lines differ: {src_audit[0]} in the source, {dst_audit[0]} in the destination",
        )
    return counts[0], counts[1], src_audit[0]


def _entries(store: Store, org_id: str) -> list[DirectoryEntry]:
    """Every directory entry of the organization, kind by kind."""
    return [e for kind in ENTRY_KINDS for e in store.entries(org_id, kind)]


def _keys(store: Store, org_id: str) -> list[ApiKey]:
    """Every API key of the organization, oldest first."""
    return store.api_keys(org_id)


def _audit_lines(store: Store, org_id: str) -> Iterator[AuditEntry]:
    """The organization's whole audit log, newest first, read page by page."""
    before: int | None = None
    while page := store.audit(org_id, before_seq=before, limit=_AUDIT_PAGE):
        yield from page
        if len(page) < _AUDIT_PAGE:
            return
        before = page[-1].seq


def _audit_digest(store: Store, org_id: str) -> tuple[int, str]:
    """``(lines, sha256)`` of the organization's audit log, in order, without ``seq``."""
    total, count = hashlib.sha256(), 0
    for line in _audit_lines(store, org_id):
        data = {k: v for k, v in line.to_dict().items() if k != "seq"}
        total.update(json.dumps(data, sort_keys=True, default=str).encode() + b"\n")
        count += 1
    return count, total.hexdigest()


def _org_settings(store: Store, org_id: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The organization's sectors (with their centroids) and policies, comparable."""
    sectors = [
        {
            **s.to_dict(),
            "centroid": None
            if s.centroid is None
            else hashlib.sha256(s.centroid.astype("<f4").tobytes()).hexdigest(),
        }
        for s in store.sectors(whole_org(org_id))
    ]
    return (sorted(sectors, key=lambda d: d["id"]), [p.to_dict() for p in store.policies(org_id)])


# -- copying ------------------------------------------------------------------------------


def count_memories(store: Store, org_ids: Iterable[str] | None = None) -> int:
    """How many memories (every status) ``store`` holds in ``org_ids`` (default: all)."""
    now = datetime.now(UTC)  # only the age buckets depend on it; totals do not
    orgs = store.organizations() if org_ids is None else org_ids
    return sum(s.total_memories for org in orgs for s in store.stats(whole_org(org), now))


def _refuse_occupied(dest: Store, org_ids: Sequence[str]) -> None:
    """Conflict when the destination already holds any of ``org_ids`` (nothing written yet)."""
    taken = sorted((set(dest.organizations()) | set(dest.directory_orgs())) & set(org_ids))
    if taken:
        held = count_memories(dest, taken)
        raise Conflict(
            f"the destination already holds organization(s) {', '.join(map(repr, taken))} "
            f"({held} memories); migrate into an empty database"
        )


def _batches(rows: Iterable[dict[str, Any]], size: int) -> Iterator[list[dict[str, Any]]]:
    batch: list[dict[str, Any]] = []
    for row in rows:
        batch.append(row)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


def _copy_org(
    source: Store, dest: Store, org_id: str, batch_size: int, progress: Progress | None
) -> int:
    """Copy one organization's memories (record, vector, history) in batches; return how many.

    The trails of its deleted memories (who deleted what, when; no content)
    follow in one more transaction.
    """
    copied = 0
    for batch in _batches(source.iter_export(whole_org(org_id)), batch_size):
        copied += dest.import_rows(batch, progress)
    dest.import_tombstones(list(source.iter_tombstones(whole_org(org_id))))
    sectors = source.sectors(whole_org(org_id))
    placed: set[str | None] = {None}
    while sectors:  # parents before children (a parent outside the list counts as placed)
        known = {s.id for s in sectors}
        ready = [s for s in sectors if s.parent_id in placed or s.parent_id not in known]
        ready = ready or sectors  # a cycle (never written by kenning): keep every row
        for sector in ready:
            dest.put_sector(sector)
            placed.add(sector.id)
        sectors = [s for s in sectors if s.id not in placed]
    for policy in source.policies(org_id):
        dest.put_policy(policy)
    _copy_directory(source, dest, org_id)
    return copied


def _copy_directory(source: Store, dest: Store, org_id: str) -> None:
    """Copy one organization's directory entries, API keys and audit log.

    The audit log is read newest first, page by page; the pages are written
    oldest first (one transaction each), so the destination's ``seq`` keeps
    the source's order without holding the whole log in memory.
    """
    for entry in _entries(source, org_id):
        dest.put_entry(entry)
    for key in _keys(source, org_id):
        dest.put_api_key(key)
    for before in reversed(_audit_pages(source, org_id)):
        dest.append_audit(source.audit(org_id, before_seq=before, limit=_AUDIT_PAGE)[::-1])


def _audit_pages(store: Store, org_id: str) -> list[int | None]:
    """The ``before_seq`` of each page of the organization's audit log, newest page first."""
    bounds: list[int | None] = [None]
    while len(page := store.audit(org_id, before_seq=bounds[-1], limit=_AUDIT_PAGE)) == _AUDIT_PAGE:
        bounds.append(page[-1].seq)
    return bounds


def copy_store(
    source: Store, dest: Store, *, batch_size: int = 500, progress: Progress | None = None
) -> CopyReport:
    """Copy every organization of ``source`` into ``dest``, then verify both sides agree.

    Each batch of ``batch_size`` memories is one transaction in ``dest``;
    ``progress(n)`` is called as memories are written. Raises
    :class:`~kenning.errors.InvalidInput` when both are the same store,
    :class:`~kenning.errors.Conflict` (writing nothing) when ``dest`` already
    holds one of the organizations, and :class:`VerificationError` when the
    re-read destination differs from the source.
    """
    if batch_size < 1:
        raise InvalidInput(f"batch size must be at least 1; got {batch_size}", field="batch_size")
    if source is dest:
        raise InvalidInput("source and destination are the same store", field="to")
    org_ids = sorted(set(source.organizations()) | set(source.directory_orgs()))
    _refuse_occupied(dest, org_ids)
    for org_id in org_ids:
        _copy_org(source, dest, org_id, batch_size, progress)
    # Seam: when the graph lands (entities, topics, edges), copy its tables per
    # organization here, after the memories they point at, and add them to
    # canonical_row / _verify so the checksum covers them too.
    return CopyReport([_verify(source, dest, org_id) for org_id in org_ids])


# -- opening two databases by URL ---------------------------------------------------------


def _settings() -> Settings:
    try:
        return Settings()
    except ValidationError as exc:
        raise ConfigError(f"invalid KENNING_* setting: {exc}") from None


def _check_pair(from_url: str, to_url: str) -> tuple[str, str, tuple[str, int]]:
    """Both URLs checked (distinct databases, a source store, one model).

    Returns the normalised source and destination URLs and the source's model.
    """
    src = inspect_database(from_url, field="from")
    dst = inspect_database(to_url, field="to")
    if src.identity == dst.identity:
        raise InvalidInput(
            f"source and destination are the same database ({display_url(src.url)})", field="to"
        )
    if src.model is None:
        raise InvalidInput(f"from: {display_url(src.url)} holds no kenning store", field="from")
    if dst.model is not None and dst.model != src.model:
        raise ConfigError(
            f"the destination's vectors come from {dst.model[0]} ({dst.model[1]}-d), the "
            f"source's from {src.model[0]} ({src.model[1]}-d); migrate into an empty database"
        )
    return src.url, dst.url, src.model


@contextmanager
def open_stores(
    from_url: str, to_url: str, settings: Settings | None = None
) -> Iterator[tuple[Store, Store]]:
    """Open ``(source, destination)`` by URL (or file path) without the embedding model.

    The source must hold a kenning store; the destination is opened (created
    and migrated when new) with the source's recorded model id and dimension.
    Both are closed on exit.
    """
    settings = settings or _settings()
    source_url, dest_url, (model_id, dim) = _check_pair(from_url, to_url)
    source = open_store(settings.model_copy(update={"database_url": source_url}), model_id, dim)
    try:
        dest = open_store(settings.model_copy(update={"database_url": dest_url}), model_id, dim)
        try:
            yield source, dest
        finally:
            dest.close()
    finally:
        source.close()


# -- one organization into another database ----------------------------------------------


def move_org(
    org_id: str, to: str, home: str | None = None, *, write_wait_s: float | None = None
) -> MoveReport:
    """Move one organization to the database ``to`` (``"home"``: back into the home
    database) while the others keep working: copy, verify per-table counts and
    checksums, switch its route, delete the old copy (the home database's
    backend does it: :meth:`~kenning.stores.registry.StoreBackend.move_organization`).
    ``home`` is the home database (default: ``KENNING_DATABASE_URL``), which keeps
    the routing table. ``write_wait_s``: how long the move waits for the
    organization's writes in flight before it is undone (None: the backend's default)."""
    url = database_url(home or _settings().database_url or "", field="from")
    return backend_for(url, "from").move_organization(url, org_id, to, write_wait_s=write_wait_s)
