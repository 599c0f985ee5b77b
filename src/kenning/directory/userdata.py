"""Everything stored about one user: erase it (right to erasure), export it (right of
access). Reached through :meth:`Directory.erase_user` and :meth:`Directory.export_user`.

**Erasure** (admins of the user's organization) removes, in one transaction:

* every memory in the user's personal scopes (``user:U`` and every
  ``persona_user:P/U``), whoever wrote it, with its vectors, keyword rows, graph
  rows (mentions, links, and entities no other memory mentions) and access log;
  the sectors and policies of those scopes;
* the user's directory record (and with it their team memberships and persona
  grants) and every API key of theirs.

Memories the user wrote **elsewhere** (team, persona and organization scopes, or
another user's personal scope, where an admin can write) belong to those scopes:
they stay, and their author becomes :data:`ERASED_AUTHOR`. With
``include_shared=True`` they are deleted like the personal ones instead.

What stays is the accountability trail: the history rows of deleted memories
keep the operation, time, actor and memory id with their content and changes
scrubbed (as every delete does), and the audit log keeps its lines and gains
one ``admin.user.erase`` line with the counts. The access log holds no reader
id, so only the rows of the erased memories go.

Erasing a user again is a no-op that returns the first erasure's counts
(``repeated=True``): a retry after a lost answer is safe.

**Export** (the user themselves, or an admin of their organization) is a stream
of JSON-ready dicts, one per line of a JSONL file, each with a ``type``; see
:func:`export_lines` and docs/administration.md.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

from ..access import AccessPolicy, ScopeFilter
from ..errors import InvalidInput, NotFound, PermissionDenied
from ..models import Principal, Role, Scope, ScopeKind, check_id
from .model import User

if TYPE_CHECKING:
    from ..clock import Clock
    from ..stores.base import Store


class Directory(Protocol):
    """What erasure and export need of the directory service (its own methods)."""

    clock: Clock

    def governed(self, org_id: str) -> bool:
        """Whether the directory lists the organization's users."""

    def record(
        self,
        actor: Principal,
        action: str,
        target: str | None = None,
        detail: Mapping[str, Any] | None = None,
    ) -> None:
        """Append one audit line."""


__all__ = [
    "ERASED_AUTHOR",
    "EXPORT_FORMAT",
    "Erasure",
    "erase",
    "export_lines",
    "check_export",
    "jsonl",
]

#: The author of a memory whose writer was erased (not a valid user id, so no user
#: can ever be confused with it).
ERASED_AUTHOR = "(erased)"
#: The ``format`` of an export's first line; ``version`` changes when lines change shape.
EXPORT_FORMAT = "kenning.user-export"
_EXPORT_VERSION = 1
_ERASE_ACTION = "admin.user.erase"
_CHUNK = 200
#: Access-log rows exported per memory (the newest).
_ACCESS_ROWS = 10_000


@dataclass(frozen=True, slots=True)
class Erasure:
    """What an erasure removed (the same counts are in its audit line).

    ``memories``: deleted memories of the user's personal scopes;
    ``shared_deleted``: memories they wrote elsewhere, deleted
    (``include_shared``); ``shared_detached``: those kept with their author set
    to :data:`ERASED_AUTHOR`; ``scope_rows``: sectors and policies of the
    personal scopes; ``api_keys``: keys deleted; ``repeated``: the user was
    already erased and nothing changed now (the counts are the first erasure's).
    """

    org_id: str
    user_id: str
    erased_by: str
    at: datetime
    include_shared: bool
    memories: int
    shared_deleted: int
    shared_detached: int
    scope_rows: int
    api_keys: int
    repeated: bool = False

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        out = asdict(self)
        out["at"] = self.at.isoformat()
        return out


def _personal(scope: Scope, user_id: str) -> bool:
    if scope.kind is ScopeKind.USER:
        return scope.owner_id == user_id
    return scope.kind is ScopeKind.PERSONA_USER and scope.user_id == user_id


def _earlier(store: Store, org_id: str, user_id: str) -> Erasure | None:
    """The erasure of ``user_id`` the audit log recorded, if any."""
    before: int | None = None
    while True:
        lines = store.audit(org_id, action=_ERASE_ACTION, before_seq=before, limit=500)
        for line in lines:
            if line.target == user_id and line.outcome == "ok" and line.action == _ERASE_ACTION:
                d = line.detail
                counts = {k: int(d.get(k, 0)) for k in _COUNTS}
                shared = bool(d.get("include_shared", False))
                return Erasure(
                    org_id, user_id, line.actor, line.at, shared, **counts, repeated=True
                )
        if len(lines) < 500:
            return None
        before = lines[-1].seq


_COUNTS = ("memories", "shared_deleted", "shared_detached", "scope_rows", "api_keys")


def _known(directory: Directory, store: Store, org_id: str, user_id: str) -> bool:
    """Whether the organization knows the user: a directory record, or (in an
    organization the directory does not govern, where users are not listed) data."""
    if store.get_entry(org_id, "user", user_id) is not None:
        return True
    return not directory.governed(org_id) and bool(store.user_memories(org_id, user_id))


def erase(
    directory: Directory,
    store: Store,
    actor: Principal,
    user_id: str,
    *,
    include_shared: bool = False,
) -> Erasure:
    """Erase ``user_id`` of the actor's organization (see the module docstring)."""
    if not actor.is_admin:
        raise PermissionDenied(f"{actor.user_id!r} is not an admin of {actor.org_id!r}")
    check_id(user_id, "user id")
    if not isinstance(include_shared, bool):
        raise InvalidInput("include_shared must be true or false", field="include_shared")
    org_id = actor.org_id
    if user_id == actor.user_id:
        raise InvalidInput("you cannot erase yourself", field="user_id")
    at = directory.clock.now()
    # Checked inside the transaction: on SQLite it holds the write lock, so of two
    # erasures at once the second sees the first's result.
    with store.atomic():
        if not _known(directory, store, org_id, user_id):
            earlier = _earlier(store, org_id, user_id)
            if earlier is not None:
                return earlier
            raise NotFound(f"no user {user_id!r} in {org_id!r}")
        entry = store.get_entry(org_id, "user", user_id)
        if entry is not None and User.from_entry(entry).role is Role.ADMIN:
            others = [
                u
                for u in map(User.from_entry, store.entries(org_id, "user"))
                if u.role is Role.ADMIN and u.id != user_id and not u.disabled
            ]
            if not others:
                raise InvalidInput("an organization keeps at least one admin", field="user_id")
        rows = store.user_memories(org_id, user_id)
        personal = [mid for mid, scope, _ in rows if _personal(scope, user_id)]
        elsewhere = [mid for mid, scope, _ in rows if not _personal(scope, user_id)]
        for mid in personal + (elsewhere if include_shared else []):
            store.delete(org_id, mid, actor.user_id, at)
        detached = 0 if include_shared else store.set_author(org_id, elsewhere, ERASED_AUTHOR)
        result = Erasure(
            org_id,
            user_id,
            actor.user_id,
            at,
            include_shared,
            len(personal),
            len(elsewhere) if include_shared else 0,
            detached,
            store.forget_user_scopes(org_id, user_id),
            store.delete_api_keys(org_id, user_id),
        )
        if entry is not None:
            store.delete_entry(org_id, "user", user_id)
        detail = {k: getattr(result, k) for k in _COUNTS}
        directory.record(
            actor, _ERASE_ACTION, user_id, {**detail, "include_shared": include_shared}
        )
    return result


def check_export(directory: Directory, store: Store, actor: Principal, user_id: str) -> None:
    """Refuse an export the actor may not make: of another user by a non-admin
    (``PermissionDenied``), of a user the organization does not know (``NotFound``)."""
    check_id(user_id, "user id")
    if user_id != actor.user_id:
        if not actor.is_admin:
            raise PermissionDenied(f"{actor.user_id!r} may only export their own data")
        if not _known(directory, store, actor.org_id, user_id):
            raise NotFound(f"no user {user_id!r} in {actor.org_id!r}")


def export_lines(
    store: Store, actor: Principal, user_id: str, at: datetime
) -> Iterator[dict[str, Any]]:
    """The export of ``user_id`` (checked by :func:`check_export`), line by line.

    Lines, each ``{"type": ..., ...}``: one ``export`` header; the ``user``
    record (role, team memberships, persona grants) when the directory has one;
    each ``api_key`` (metadata, never a secret or its hash); each ``memory``
    (``relation``: ``personal`` for the user's personal scopes, ``authored`` for
    what they wrote elsewhere: every such memory for an admin, those the user
    can still read for the user), each followed by its ``history`` rows and, for
    personal memories, its ``access`` rows; every ``audit`` line whose actor is
    the user; one ``end`` line with the count of each type.
    """
    org_id = actor.org_id
    counts: dict[str, int] = {}

    def line(kind: str, **fields: Any) -> dict[str, Any]:
        counts[kind] = counts.get(kind, 0) + 1
        return {"type": kind, **fields}

    yield {
        "type": "export",
        "format": EXPORT_FORMAT,
        "version": _EXPORT_VERSION,
        "org_id": org_id,
        "user_id": user_id,
        "exported_by": actor.user_id,
        "exported_at": at.isoformat(),
    }
    entry = store.get_entry(org_id, "user", user_id)
    if entry is not None:
        yield line("user", data=User.from_entry(entry).to_dict())
    for key in store.api_keys(org_id, user_id):
        yield line("api_key", data=key.to_dict())
    everything = ScopeFilter(org_id, kinds=frozenset(ScopeKind))
    policy = AccessPolicy()
    rows = store.user_memories(org_id, user_id)
    wanted = [
        (mid, _personal(scope, user_id))
        for mid, scope, _ in rows
        if _personal(scope, user_id) or actor.is_admin or policy.can_read(actor, scope)
    ]
    for start in range(0, len(wanted), _CHUNK):
        chunk = wanted[start : start + _CHUNK]
        personal = dict(chunk)
        for rec in store.get([mid for mid, _ in chunk], everything):
            mine = personal[rec.id]
            yield line("memory", relation="personal" if mine else "authored", data=rec.to_dict())
            for change in store.history(rec.id, everything):
                yield line("history", data=change.to_dict())
            if mine:
                for access in store.access_log(rec.id, everything, _ACCESS_ROWS):
                    yield line("access", data=access.to_dict())
    before: int | None = None
    while True:
        lines = store.audit(org_id, actor=user_id, before_seq=before, limit=500)
        for audit in lines:
            yield line("audit", data=audit.to_dict())
        if len(lines) < 500:
            break
        before = lines[-1].seq
    yield {"type": "end", "counts": dict(sorted(counts.items()))}


def jsonl(lines: Iterable[Mapping[str, Any]]) -> Iterator[str]:
    """The lines of an export as JSONL text (one compact JSON object and a newline each)."""
    for line in lines:
        yield json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n"
