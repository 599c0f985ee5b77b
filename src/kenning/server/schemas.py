"""Request and response bodies of the REST API (pydantic models; the OpenAPI
document is generated from them). Values are checked again by the engine,
which owns the rules; these models give clients a precise schema."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ..validation import MAX_INT32

__all__ = [
    "MemoryIn",
    "BatchIn",
    "UpsertIn",
    "UpdateIn",
    "RecallIn",
    "ListIn",
    "FeedbackIn",
    "IngestIn",
    "ConsolidateIn",
    "HintIn",
    "LinkIn",
    "ApproveIn",
    "RejectIn",
    "BulkReviewIn",
    "MemoryOut",
    "WriteOut",
    "PageOut",
    "HitOut",
    "RecallOut",
    "HistoryOut",
    "StatsOut",
    "HintOut",
    "BulkReviewOut",
    "StrengthOut",
    "ConfidenceOut",
    "SectorOut",
    "OrgIn",
    "UserIn",
    "GroupIn",
    "MemberIn",
    "GrantIn",
    "EraseIn",
    "KeyIn",
    "PolicyIn",
    "SectorIn",
    "LimitsOut",
    "KEY_CHARS",
    "TAGS",
    "BATCH",
    "MeOut",
    "KeyOut",
    "NewKeyOut",
    "AuditOut",
    "Loose",
]

Loose = dict[str, Any]
Id = Field(min_length=1, max_length=128)
#: The schemas' own caps (a server's limits are the lower of these and the settings').
KEY_CHARS = 200
TAGS = 64
BATCH = 1000


class _In(BaseModel):
    model_config = ConfigDict(extra="forbid")


class _Fields(_In):
    """The optional fields of a memory, as remember, upsert and update take them."""

    memory_type: Literal["episodic", "semantic", "procedural", "working"] | None = None
    importance: int | None = Field(None, ge=1, le=5)
    confidence: float | None = Field(None, ge=0, le=1)
    tags: list[str] | None = Field(None, max_length=TAGS)
    metadata: dict[str, Any] | None = None
    event_at: datetime | None = None
    valid_from: datetime | None = None
    valid_to: datetime | None = None
    sector_id: str | None = Field(None, max_length=256)


class MemoryIn(_Fields):
    """A memory to store. ``scope`` defaults to the caller's personal scope
    (``persona_user`` when a persona is active)."""

    content: str = Field(min_length=1)
    scope: str | None = Field(None, max_length=300, examples=["user:alice", "team:eng", "org:acme"])
    key: str | None = Field(None, max_length=KEY_CHARS)
    source: str | None = Field(None, max_length=64)
    source_channel_id: str | None = Field(None, max_length=256)
    agent_id: str | None = Field(None, max_length=256)
    session_id: str | None = Field(None, max_length=256)
    episode_id: str | None = Field(None, max_length=256)
    status: Literal["active", "pending_review"] | None = None


class BatchIn(_In):
    """Several memories, stored in one transaction (all or nothing)."""

    items: list[MemoryIn] = Field(min_length=1, max_length=BATCH)
    reconcile: bool = True


class UpsertIn(_Fields):
    """Create the memory with ``key`` in ``scope``, or update it when one exists (one
    memory per key and scope). The provenance fields describe the first write: an
    update keeps them."""

    key: str = Field(min_length=1, max_length=KEY_CHARS)
    content: str = Field(min_length=1)
    scope: str | None = Field(None, max_length=300)
    source: str | None = Field(None, max_length=64)
    source_channel_id: str | None = Field(None, max_length=256)
    agent_id: str | None = Field(None, max_length=256)
    session_id: str | None = Field(None, max_length=256)
    episode_id: str | None = Field(None, max_length=256)


class UpdateIn(_Fields):
    """Fields to change; ``expected_version`` makes the update conditional."""

    content: str | None = Field(None, min_length=1)
    key: str | None = Field(None, max_length=KEY_CHARS)
    expected_version: int | None = Field(None, ge=1)


class RecallIn(_In):
    """A recall: the ``k`` best memories for ``query`` (see ``Memory.recall``)."""

    query: str = Field(min_length=1)
    k: int = Field(10, ge=1)
    scopes: list[str] | Literal["all"] | None = None
    layers: list[Literal["personal", "shared", "organization"]] | None = None
    filters: dict[str, Any] | None = None
    min_confidence: float | None = Field(None, ge=0, le=1)
    explain: bool = False
    sector: str | None = Field(None, max_length=256)
    #: Leave out hits whose calibrated score is below this (None: the server's default).
    min_score: float | None = Field(None, ge=0, le=1)


class ListIn(_In):
    """A listing with every filter ``Memory.list`` takes (see ``MemoryFilter``)."""

    scopes: list[str] | Literal["all"] | None = None
    layers: list[Literal["personal", "shared", "organization"]] | None = None
    filters: dict[str, Any] | None = None
    limit: int = Field(50, ge=1)
    cursor: str | None = Field(None, max_length=500)


class FeedbackIn(_In):
    """Feedback on a memory: each kind raises or lowers its confidence by a fixed step."""

    kind: Literal["upvote", "downvote", "validate", "contradict", "confirm"]


class IngestIn(_In):
    """Conversation messages: strings, or objects with ``content`` (and ``role``,
    ``name``, ``at``)."""

    messages: list[str | dict[str, Any]] = Field(min_length=1, max_length=BATCH)
    scope: str | None = Field(None, max_length=300)
    episode_id: str | None = Field(None, max_length=256)
    extract: bool = True


class ConsolidateIn(_In):
    """A consolidation pass over the scopes the caller may write."""

    dry_run: bool = False
    scopes: list[str] | Literal["all"] = "all"


class HintIn(_In):
    """A memory block for a system prompt."""

    #: Blank or absent: the top memories by priority.
    query: str | None = None
    persona: str | None = Field(None, max_length=128)
    max_chars: int = Field(6000, ge=200)


class LinkIn(_In):
    """A typed, weighted link between two memories of one scope."""

    a: str = Field(min_length=1, max_length=64)
    b: str = Field(min_length=1, max_length=64)
    relation: str = Field(min_length=1, max_length=64)
    weight: float = Field(1.0, ge=0, le=1)


class ApproveIn(_In):
    """Approve a pending memory, optionally editing it."""

    changes: UpdateIn | None = None


class RejectIn(_In):
    """Reject (delete) a pending memory."""

    reason: str | None = Field(None, max_length=1000)


class BulkReviewIn(_In):
    """Approve or reject several pending memories; each is done or reported on its own."""

    ids: list[str] = Field(min_length=1, max_length=500)
    action: Literal["approve", "reject"]
    reason: str | None = Field(None, max_length=1000)


class OrgIn(_In):
    """Organization settings to change."""

    name: str | None = Field(None, min_length=1, max_length=200)
    mode: Literal["personal", "org", "org_no_global"] | None = None
    memory_enabled: bool | None = None
    review: bool | None = None


class UserIn(_In):
    """A user to create or change."""

    name: str | None = Field(None, min_length=1, max_length=200)
    role: Literal["member", "team_lead", "admin"] | None = None
    disabled: bool | None = None


class GroupIn(_In):
    """A team or persona to create or change."""

    name: str | None = Field(None, min_length=1, max_length=200)
    memory_enabled: bool | None = None
    review: bool | None = None


class MemberIn(_In):
    """A user's role in a team."""

    role: Literal["reader", "member", "lead"]


class GrantIn(_In):
    """May the user use the persona (and curate its shared memory)?"""

    use: bool = True
    lead: bool = False


class EraseIn(_In):
    """How to erase a user: ``include_shared`` also deletes the memories they wrote in
    shared scopes (by default those stay, their author replaced by ``(erased)``)."""

    include_shared: bool = False


class KeyIn(_In):
    """A new API key (for yourself; admins for anyone in the organization)."""

    name: str = Field(min_length=1, max_length=200)
    user_id: str | None = Field(None, min_length=1, max_length=128)
    persona: str | None = Field(None, min_length=1, max_length=128)


class PolicyIn(_In):
    """A retention / capacity / review policy."""

    target: str = Field("*", min_length=1, max_length=300)
    memory_type: str = Field("*", min_length=1, max_length=32)
    retention_days: float | None = Field(None, gt=0)
    capacity: int | None = Field(None, ge=0, le=MAX_INT32)
    review: bool = False


class SectorIn(_In):
    """A sector to add to a scope's hierarchy (``scope`` defaults to the caller's own;
    ``max_size`` to the server's ``lifecycle.sector_max_size``)."""

    name: str = Field(min_length=1, max_length=128)
    scope: str | None = Field(None, max_length=300)
    parent_id: str | None = Field(None, min_length=1, max_length=128)
    decay_multiplier: float = Field(1.0, gt=0, le=100)
    topics: list[str] = Field([], max_length=TAGS)
    max_size: int | None = Field(None, ge=4, le=MAX_INT32)


# -- responses -----------------------------------------------------------------------


class LimitsOut(BaseModel):
    """The size limits this server checks arguments against (clients check them before
    sending): characters of content and keys, tags per memory, memories per batch, and
    the largest ``k`` or page size."""

    content_chars: int
    key_chars: int
    tags: int
    batch: int
    k: int


class MemoryOut(BaseModel):
    """A stored memory."""

    id: str
    org_id: str
    scope: str
    layer: str
    content: str
    key: str | None
    memory_type: str
    importance: int
    confidence: float
    status: str
    tags: list[str]
    metadata: dict[str, Any]
    source: str
    source_channel_id: str | None
    agent_id: str | None
    session_id: str | None
    episode_id: str | None
    created_by: str | None
    created_at: datetime
    updated_at: datetime
    event_at: datetime | None
    valid_from: datetime | None
    valid_to: datetime | None
    strength: float
    decay_rate: float
    access_count: int
    reinforcement_count: int
    last_accessed: datetime | None
    sector_id: str | None
    supersedes: str | None
    superseded_by: str | None
    version: int
    content_hash: str


class WriteOut(BaseModel):
    """What a write did: ``add``, ``update``, ``supersede``, ``shadow`` or ``noop``."""

    action: str
    target: str | None
    reason: str
    memory: MemoryOut


class PageOut(BaseModel):
    """One page; pass ``next_cursor`` back for the next."""

    items: list[MemoryOut]
    next_cursor: str | None


class HitOut(BaseModel):
    """A recalled memory with its score (and breakdown when explained)."""

    score: float
    memory: MemoryOut
    explain: dict[str, Any] | None = None
    related: list[HitOut] = []
    via: dict[str, Any] | None = None


class RecallOut(BaseModel):
    """The hits of a recall, with per-stage timings in ms when explained."""

    hits: list[HitOut]
    timings_ms: dict[str, float]
    candidates: dict[str, int]
    dropped_terms: list[str]
    paths: list[dict[str, Any]]
    graph: dict[str, float]
    time_window: dict[str, str | None]
    #: No hit scored ``retrieval.abstain_below``: nothing stored answers the query.
    abstained: bool = False


class HistoryOut(BaseModel):
    """One change to a memory (deletions keep who and when, not the content)."""

    seq: int
    memory_id: str
    op: str
    actor: str | None
    at: datetime
    version: int | None
    content: str | None
    changes: dict[str, Any]


class StatsOut(BaseModel):
    """Statistics of one layer (personal, shared or organization)."""

    layer: str
    total_memories: int
    by_status: dict[str, int]
    by_type: dict[str, int]
    avg_confidence: float | None
    confidence_distribution: dict[str, int]
    age_distribution: dict[str, int]
    entities_count: int
    relationships_count: int


class HintOut(BaseModel):
    """A fenced memory block for a system prompt."""

    hint: str


class BulkReviewOut(BaseModel):
    """Per id: ``approved``/``rejected``, or the error that stopped it."""

    done: dict[str, str]
    failed: dict[str, str]


class StrengthOut(BaseModel):
    """A memory's current strength (decayed to now, with its sector's multiplier)."""

    memory_id: str
    strength: float


class ConfidenceOut(BaseModel):
    """A memory's component confidence: each component and the confidence they give."""

    source: float
    entities: float
    relationships: float
    validation: float
    feedback: float
    confidence: float


class SectorOut(BaseModel):
    """A sector of a scope's hierarchy (without its centroid, which the server keeps)."""

    id: str
    org_id: str
    scope: str
    name: str
    parent_id: str | None
    decay_multiplier: float
    topics: list[str]
    max_size: int
    size: int
    created_at: datetime | None
    updated_at: datetime | None


class MeOut(BaseModel):
    """Who the caller is."""

    org: dict[str, Any]
    user: dict[str, Any]
    roles: list[str]
    teams: dict[str, str]
    personas: list[str]
    persona_leads: list[str]
    active_persona: str | None
    mode: str
    key_id: str | None


class KeyOut(BaseModel):
    """A stored API key (never its secret)."""

    id: str
    org_id: str
    user_id: str
    name: str
    persona: str | None
    created_at: datetime
    created_by: str
    revoked_at: datetime | None


class NewKeyOut(KeyOut):
    """A new key with its secret: shown this once, never again."""

    secret: str


class AuditOut(BaseModel):
    """One line of the audit log."""

    seq: int
    org_id: str
    at: datetime
    actor: str
    action: str
    target: str | None
    outcome: str
    detail: dict[str, Any]
    request_id: str | None
