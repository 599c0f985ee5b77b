"""Value types of kenning: scopes, principals, memory records, filters and hits.

Everything here is plain data with validation; no I/O. The record fields follow
DESIGN.md §1. Scopes are written as short strings in the doors:

=================  ==================================  =========
string             meaning                             layer
=================  ==================================  =========
``user:alice``     alice's own memories                personal
``persona_user:helpdesk/alice``  helpdesk acting for alice  personal
``team:eng``       team (or project) eng               shared
``persona:helpdesk``  the persona's shared memory      shared
``org:acme``       the whole organization              organization
=================  ==================================  =========
"""

from __future__ import annotations

import os
import re
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import Enum
from typing import Any, TypeAlias

from .errors import InvalidInput
from .graph.model import GraphPath

__all__ = [
    "EXTRACTED",
    "ScopesArg",
    "ScopeKind",
    "Layer",
    "MemoryType",
    "Status",
    "Role",
    "TeamRole",
    "RecallMode",
    "FeedbackKind",
    "Scope",
    "Principal",
    "MemoryRecord",
    "MemoryFilter",
    "Hit",
    "ScoreBreakdown",
    "RecallResult",
    "HistoryEntry",
    "Page",
    "LayerStats",
    "DEFAULT_ORG",
    "DEFAULT_USER",
    "ALL_SCOPES",
    "LAYER_OF",
    "as_utc",
    "new_id",
]

DEFAULT_ORG = "default"
DEFAULT_USER = "default"
#: Pass as ``scopes=`` to recall/list every scope the principal may read.
ALL_SCOPES = "all"


#: What a ``scopes`` argument takes: None (the default view), ``"all"``, one scope or
#: several (each a :class:`Scope` or its string form).
ScopesArg: TypeAlias = "Scope | str | Iterable[Scope | str] | None"

_RANDOM_BITS = 80
_id_lock = threading.Lock()
_id_last = (0, 0)  # (ms, random part) of the latest id made in this process


def new_id() -> str:
    """A 32-hex-digit id that sorts by creation time (48-bit ms + 80 random bits).

    Monotonic within a process (as ULIDs are): an id made in the same
    millisecond as the one before takes that one's random part plus one. So
    the ids of one batch sort in the order its items were given, and what
    breaks ties by id (two turns of one session with the same event time, say)
    follows the order they were written in, not chance.
    """
    global _id_last
    ms = time.time_ns() // 1_000_000
    with _id_lock:
        last_ms, last_rand = _id_last
        if ms <= last_ms:  # same millisecond (or the wall clock stepped back)
            ms, rand = last_ms, last_rand + 1
            if rand >> _RANDOM_BITS:  # the random part ran out: borrow the next ms
                ms, rand = ms + 1, int.from_bytes(os.urandom(10), "big") >> 1
        else:
            rand = int.from_bytes(os.urandom(10), "big") >> 1  # room to count up
        _id_last = (ms, rand)
    return f"{ms:012x}{rand:020x}"


_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.@\-]{0,127}$")


class ScopeKind(str, Enum):
    """Who a memory belongs to."""

    USER = "user"
    PERSONA_USER = "persona_user"
    TEAM = "team"
    PERSONA = "persona"
    ORG = "org"


class Layer(str, Enum):
    """The three layers: personal (user), shared (team, persona) and global (org)."""

    PERSONAL = "personal"
    SHARED = "shared"
    ORGANIZATION = "organization"


LAYER_OF: Mapping[ScopeKind, Layer] = {
    ScopeKind.USER: Layer.PERSONAL,
    ScopeKind.PERSONA_USER: Layer.PERSONAL,
    ScopeKind.TEAM: Layer.SHARED,
    ScopeKind.PERSONA: Layer.SHARED,
    ScopeKind.ORG: Layer.ORGANIZATION,
}


class MemoryType(str, Enum):
    """Memory types: working (a live conversation), episodic (what happened),
    semantic (facts), procedural (how to)."""

    EPISODIC = "episodic"
    SEMANTIC = "semantic"
    PROCEDURAL = "procedural"
    WORKING = "working"


class Status(str, Enum):
    """Lifecycle status; recall sees ``active`` unless asked otherwise."""

    ACTIVE = "active"
    PENDING_REVIEW = "pending_review"
    ARCHIVED = "archived"
    SUPERSEDED = "superseded"


class Role(str, Enum):
    """Organization roles: what each may read and write is in ``kenning.access``."""

    MEMBER = "member"
    TEAM_LEAD = "team_lead"
    ADMIN = "admin"


class TeamRole(str, Enum):
    """A principal's role inside one team."""

    READER = "reader"
    MEMBER = "member"
    LEAD = "lead"


class RecallMode(str, Enum):
    """Which layers a recall reaches by default."""

    PERSONAL = "personal"
    ORG_GLOBAL_ON = "org"
    ORG_GLOBAL_OFF = "org_no_global"


class FeedbackKind(str, Enum):
    """How an event moves a memory's confidence (confirmed, contradicted, used, ...)."""

    UPVOTE = "upvote"
    DOWNVOTE = "downvote"
    VALIDATE = "validate"
    CONTRADICT = "contradict"
    CONFIRM = "confirm"


def check_id(value: object, what: str) -> str:
    """Validate an identifier (org, user, team, persona id) and return it."""
    if not isinstance(value, str) or not _ID_RE.match(value):
        raise InvalidInput(
            f"{what} must be 1-128 characters of letters, digits, '_', '.', '@' or '-' "
            f"starting with a letter or digit; got {value!r}",
            field=what,
        )
    return value


def as_utc(value: datetime) -> datetime:
    """Return ``value`` as an aware UTC datetime (naive values are taken as UTC)."""
    if value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    return value.astimezone(UTC)


@dataclass(frozen=True, slots=True)
class Scope:
    """Where a memory lives inside its organization.

    ``owner_id`` is the user, team, persona or organization id; ``user_id`` is
    set only for ``persona_user`` (the user the persona acts for).
    """

    kind: ScopeKind
    owner_id: str
    user_id: str | None = None

    def __post_init__(self) -> None:
        try:
            kind = ScopeKind(self.kind)
        except ValueError:
            known = ", ".join(k.value for k in ScopeKind)
            raise InvalidInput(
                f"unknown scope kind {self.kind!r}; expected one of {known}", field="scope"
            ) from None
        object.__setattr__(self, "kind", kind)
        check_id(self.owner_id, "scope owner")
        if kind is ScopeKind.PERSONA_USER:
            if self.user_id is None:
                raise InvalidInput("a persona_user scope needs a user id", field="scope")
            check_id(self.user_id, "scope user")
        elif self.user_id is not None:
            raise InvalidInput(f"a {kind.value} scope takes no user id", field="scope")

    @property
    def layer(self) -> Layer:
        """The layer of this scope: personal, shared or global."""
        return LAYER_OF[self.kind]

    @property
    def key(self) -> str:
        """Canonical string form, e.g. ``persona_user:helpdesk/alice``."""
        if self.kind is ScopeKind.PERSONA_USER:
            return f"{self.kind.value}:{self.owner_id}/{self.user_id}"
        return f"{self.kind.value}:{self.owner_id}"

    def __str__(self) -> str:
        return self.key

    @classmethod
    def parse(cls, text: str) -> Scope:
        """Parse the canonical string form (see the module docstring)."""
        if not isinstance(text, str) or ":" not in text:
            raise InvalidInput(
                f"scope must look like 'user:ID', 'team:ID', 'persona:ID', 'org:ID' or "
                f"'persona_user:PERSONA/USER'; got {text!r}",
                field="scope",
            )
        kind, _, rest = text.partition(":")
        if kind == ScopeKind.PERSONA_USER.value:
            persona, sep, user = rest.partition("/")
            if not sep:
                raise InvalidInput(
                    f"persona_user scope must be 'persona_user:PERSONA/USER'; got {text!r}",
                    field="scope",
                )
            return cls(ScopeKind.PERSONA_USER, persona, user)
        return cls(ScopeKind(kind) if kind in _KINDS else kind, rest)  # type: ignore[arg-type]

    @classmethod
    def user(cls, user_id: str) -> Scope:
        """A user's personal scope."""
        return cls(ScopeKind.USER, user_id)

    @classmethod
    def team(cls, team_id: str) -> Scope:
        """A team or project scope."""
        return cls(ScopeKind.TEAM, team_id)

    @classmethod
    def persona(cls, persona_id: str) -> Scope:
        """A persona's shared scope."""
        return cls(ScopeKind.PERSONA, persona_id)

    @classmethod
    def persona_user(cls, persona_id: str, user_id: str) -> Scope:
        """A persona's memory about one user."""
        return cls(ScopeKind.PERSONA_USER, persona_id, user_id)

    @classmethod
    def org(cls, org_id: str) -> Scope:
        """The organization-wide scope."""
        return cls(ScopeKind.ORG, org_id)


_KINDS = {k.value for k in ScopeKind}


@dataclass(frozen=True, slots=True)
class Principal:
    """Who is asking: organization, user, roles, teams and personas.

    ``teams`` maps team id to the principal's role in it; ``personas`` are the
    personas the user may use; ``persona_leads`` the personas whose shared
    memory the principal may write. ``active_persona`` selects the persona
    scopes at recall (persona_user > persona > user).
    """

    org_id: str = DEFAULT_ORG
    user_id: str = DEFAULT_USER
    roles: frozenset[Role] = frozenset({Role.ADMIN})
    teams: Mapping[str, TeamRole] = field(default_factory=dict)
    personas: frozenset[str] = frozenset()
    persona_leads: frozenset[str] = frozenset()
    active_persona: str | None = None
    mode: RecallMode = RecallMode.ORG_GLOBAL_ON

    def __post_init__(self) -> None:
        check_id(self.org_id, "org id")
        check_id(self.user_id, "user id")
        object.__setattr__(self, "roles", frozenset(Role(r) for r in self.roles))
        object.__setattr__(
            self, "teams", {check_id(t, "team id"): TeamRole(r) for t, r in self.teams.items()}
        )
        object.__setattr__(
            self, "personas", frozenset(check_id(p, "persona id") for p in self.personas)
        )
        object.__setattr__(
            self, "persona_leads", frozenset(check_id(p, "persona id") for p in self.persona_leads)
        )
        object.__setattr__(self, "mode", RecallMode(self.mode))
        if self.active_persona is not None:
            check_id(self.active_persona, "active persona")
            if self.active_persona not in self.personas and not self.is_admin:
                raise InvalidInput(
                    f"active persona {self.active_persona!r} is not one the user may use",
                    field="active_persona",
                )

    @property
    def is_admin(self) -> bool:
        """True for organization admins."""
        return Role.ADMIN in self.roles

    def __hash__(self) -> int:
        return hash((self.org_id, self.user_id, self.roles, tuple(sorted(self.teams.items()))))

    @classmethod
    def member(cls, user_id: str, org_id: str = DEFAULT_ORG, **kw: Any) -> Principal:
        """A regular member (the common case in a multi-user organization)."""
        return cls(org_id=org_id, user_id=user_id, roles=frozenset({Role.MEMBER}), **kw)


#: The ``source`` of the facts ``ingest`` draws from conversation turns (their
#: turns' ids in ``metadata["evidence"]``).
EXTRACTED = "extraction"


@dataclass(slots=True)
class MemoryRecord:
    """One stored memory (DESIGN.md §1). Times are aware UTC datetimes."""

    id: str
    org_id: str
    scope: Scope
    content: str
    key: str | None = None
    memory_type: MemoryType = MemoryType.SEMANTIC
    importance: int = 3
    confidence: float = 0.8
    status: Status = Status.ACTIVE
    tags: tuple[str, ...] = ()
    metadata: dict[str, Any] = field(default_factory=dict)
    source: str = "api"
    source_channel_id: str | None = None
    agent_id: str | None = None
    session_id: str | None = None
    episode_id: str | None = None
    created_by: str | None = None
    created_at: datetime = field(default_factory=lambda: datetime.now(UTC))
    updated_at: datetime = field(default_factory=lambda: datetime.now(UTC))
    event_at: datetime | None = None
    valid_from: datetime | None = None
    valid_to: datetime | None = None
    strength: float = 0.8
    decay_rate: float = 0.95
    access_count: int = 0
    reinforcement_count: int = 0
    last_accessed: datetime | None = None
    sector_id: str | None = None
    supersedes: str | None = None
    superseded_by: str | None = None
    version: int = 1
    content_hash: str = ""

    @property
    def layer(self) -> Layer:
        """The layer of the record's scope."""
        return self.scope.layer

    @property
    def said_at(self) -> datetime:
        """When the memory happened or was said: its event time, else its creation."""
        return self.event_at or self.created_at

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (ISO times, scope as its string form)."""
        out = {name: getattr(self, name) for name in self.__dataclass_fields__}
        for name in _RECORD_CONVERTERS:  # the fields whose type JSON lacks
            out[name] = _plain(out[name])
        out["layer"] = self.layer.value
        return out

    def changes_to(self, new: MemoryRecord, fields: Iterable[str]) -> dict[str, Any]:
        """``{field: [before, after]}`` (JSON-ready) for each of ``fields`` that differs
        in ``new``: what a history row records, and what undoing a change reads."""
        out: dict[str, Any] = {}
        for name in fields:
            a, b = getattr(self, name), getattr(new, name)
            if a != b:
                out[name] = [_plain(a), _plain(b)]
        return out

    @staticmethod
    def field_value(name: str, plain: Any) -> Any:
        """The typed value of field ``name`` from its JSON-ready form (inverse of the
        form :meth:`to_dict` and :meth:`changes_to` write)."""
        if plain is None:
            return None
        convert = _RECORD_CONVERTERS.get(name)
        return plain if convert is None else convert(plain)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> MemoryRecord:
        """Inverse of :meth:`to_dict` (lossless for everything ``to_dict`` writes)."""
        fields = cls.__dataclass_fields__
        values = {name: plain for name, plain in data.items() if name in fields}
        for name, convert in _RECORD_CONVERTERS.items():
            plain = values.get(name)
            if plain is not None:
                values[name] = convert(plain)
        return cls(**values)


_RECORD_TIMES = frozenset(
    {"created_at", "updated_at", "event_at", "valid_from", "valid_to", "last_accessed"}
)


def _utc_time(plain: str) -> datetime:
    return as_utc(datetime.fromisoformat(plain))


#: The fields whose type JSON lacks, and how :meth:`MemoryRecord.from_dict` turns
#: their JSON-ready form back into it (every other field is the same in both forms).
_RECORD_CONVERTERS: dict[str, Callable[[Any], Any]] = {
    "scope": Scope.parse,
    "memory_type": MemoryType,
    "status": Status,
    "tags": tuple,
    "metadata": dict,
    **dict.fromkeys(_RECORD_TIMES, _utc_time),
}


def _plain(value: Any) -> Any:
    """A field value in JSON-ready form."""
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, Scope):
        return value.key
    if isinstance(value, tuple):
        return list(value)
    return value


@dataclass(frozen=True, slots=True)
class MemoryFilter:
    """Structured filters for recall and list; all given conditions must hold."""

    types: frozenset[MemoryType] | None = None
    statuses: frozenset[Status] = frozenset({Status.ACTIVE})
    tags_any: frozenset[str] = frozenset()
    tags_all: frozenset[str] = frozenset()
    created_after: datetime | None = None
    created_before: datetime | None = None
    event_after: datetime | None = None
    event_before: datetime | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)
    min_importance: int | None = None
    source: str | None = None
    agent_id: str | None = None
    session_id: str | None = None
    episode_id: str | None = None
    sector_id: str | None = None
    key: str | None = None
    #: Any of these sectors (a sector and its children, for ``recall(sector=...)``).
    sectors: frozenset[str] = frozenset()

    @property
    def is_plain(self) -> bool:
        """True when nothing but statuses is filtered (the fast path)."""
        return self == MemoryFilter(statuses=self.statuses)

    @property
    def is_timed_only(self) -> bool:
        """True when nothing but statuses and the event-time window is filtered
        (a recall's time window: stores may check it without SQL)."""
        return self == MemoryFilter(
            statuses=self.statuses, event_after=self.event_after, event_before=self.event_before
        )


@dataclass(slots=True)
class ScoreBreakdown:
    """Why a hit ranked where it did (``explain=True``)."""

    dense: float | None
    keyword: float | None
    fused: float
    relevance: float
    confidence: float
    temporal: float
    strength: float
    layer_boost: float
    scope_boost: float
    exact_match: bool
    final: float
    #: Support from linked memories in the candidate pool (the graph's support step),
    #: added to the fused score before normalisation (``graph``, ``time`` and
    #: ``context`` are on the ``fused`` scale; ``relevance`` is after them).
    graph: float = 0.0
    #: Relevance added because the memory's time matches the query's
    #: ("last May", "when did ...").
    time: float = 0.0
    #: Relevance added by the conversation context: the memory's episode is
    #: among the best, or its author is named in the query.
    context: float = 0.0
    #: Every recall signal's contribution by name (:mod:`kenning.retrieval.signals`;
    #: 0.0 when it added nothing): ``graph``, ``episode``, ``author`` and ``time``
    #: on the ``fused`` scale, ``layer``, ``persona``, ``exact_match`` and
    #: ``high_confidence`` (boosts) on the ``final`` one. The fields above are
    #: sums of these: ``graph``, ``context``, ``time`` per stage, ``layer_boost``
    #: = ``layer``, ``scope_boost`` = ``persona``.
    signals: dict[str, float] = field(default_factory=dict)
    #: The learned relevance's raw score (:mod:`kenning.retrieval.order`): the
    #: model's reading of the evidence above, before it was normalised into
    #: ``relevance``; None when the step did not run (it was off, or the query
    #: is about the asker).
    learned: float | None = None
    #: The ranking value (the priority plus boosts; = ``final``): hits
    #: are ordered by it. The hit's ``score`` is the calibrated one.
    priority: float | None = None
    #: How the calibrated score was computed (:mod:`kenning.retrieval.calibration`):
    #: ``inputs`` (raw cosine, bounded BM25, term coverage, another person named),
    #: ``contributions`` (each coefficient times its input, and the intercept,
    #: to the logit) and ``logit``; score = 1 / (1 + exp(-logit)).
    calibration: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        out = {name: getattr(self, name) for name in self.__dataclass_fields__}
        out["signals"] = dict(self.signals)
        out["calibration"] = {
            k: dict(v) if isinstance(v, dict) else v for k, v in self.calibration.items()
        }
        return out


@dataclass(slots=True)
class Hit:
    """One recalled memory with its score (and breakdown when explained).

    ``score`` is calibrated (:mod:`kenning.retrieval.calibration`): in [0, 1],
    about the chance that the memory answers the query, comparable across
    queries, so a ``min_score`` threshold means the same everywhere. Hits are
    ordered by the ranking value (``explain.priority``), not by ``score``.
    A graph expansion riding on its seed (``related``) keeps its expansion score.
    """

    memory: MemoryRecord
    score: float
    explain: ScoreBreakdown | None = None
    #: Memories that graph expansion attached to this one (merged
    #: into their seed, so they take no top-k slot), each with its ``via`` path.
    related: list[Hit] = field(default_factory=list)
    #: For a memory reached through the graph: the walk from its seed.
    via: GraphPath | None = None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        out: dict[str, Any] = {"score": self.score, "memory": self.memory.to_dict()}
        if self.explain is not None:
            out["explain"] = self.explain.to_dict()
        if self.related:
            out["related"] = [h.to_dict() for h in self.related]
        if self.via is not None:
            out["via"] = self.via.to_dict()
        return out


@dataclass(slots=True)
class RecallResult:
    """The hits of one recall, per-stage timings in ms and, when explained, what
    the candidates, graph and time handling did."""

    hits: list[Hit]
    timings_ms: dict[str, float] = field(default_factory=dict)
    candidates: dict[str, int] = field(default_factory=dict)
    #: Query words left out because most of the reader's memories contain them.
    dropped_terms: list[str] = field(default_factory=list)
    #: Relation paths between the hits, strongest first.
    paths: list[GraphPath] = field(default_factory=list)
    #: What graph post-processing did (edges read, supported, admitted, ...).
    graph: dict[str, float] = field(default_factory=dict)
    #: The time window the query named, as ISO strings (``start``/``end``), if any.
    time_window: dict[str, str | None] = field(default_factory=dict)
    #: No hit scored ``retrieval.abstain_below``: nothing stored answers the
    #: query, so no hit is returned.
    abstained: bool = False

    def __iter__(self) -> Any:
        return iter(self.hits)

    def __len__(self) -> int:
        return len(self.hits)

    def __getitem__(self, index: int) -> Hit:
        return self.hits[index]

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {
            "hits": [h.to_dict() for h in self.hits],
            "timings_ms": self.timings_ms,
            "candidates": self.candidates,
            "dropped_terms": self.dropped_terms,
            "paths": [p.to_dict() for p in self.paths],
            "graph": self.graph,
            "time_window": self.time_window,
            "abstained": self.abstained,
        }


@dataclass(frozen=True, slots=True)
class HistoryEntry:
    """One change to a memory. Deletions keep who and when, never the content."""

    seq: int
    memory_id: str
    op: str
    actor: str | None
    at: datetime
    version: int | None
    content: str | None
    changes: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {
            "seq": self.seq,
            "memory_id": self.memory_id,
            "op": self.op,
            "actor": self.actor,
            "at": self.at.isoformat(),
            "version": self.version,
            "content": self.content,
            "changes": self.changes,
        }


@dataclass(slots=True)
class Page:
    """One page of a listing; pass ``next_cursor`` back to get the next one."""

    items: list[MemoryRecord]
    next_cursor: str | None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {"items": [m.to_dict() for m in self.items], "next_cursor": self.next_cursor}


@dataclass(slots=True)
class LayerStats:
    """Per-layer statistics for what the caller may read."""

    layer: str
    total_memories: int
    by_status: dict[str, int]
    by_type: dict[str, int]
    avg_confidence: float | None
    confidence_distribution: dict[str, int]
    age_distribution: dict[str, int]
    entities_count: int = 0
    relationships_count: int = 0

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {name: getattr(self, name) for name in self.__dataclass_fields__}
