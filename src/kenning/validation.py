"""Input validation shared by every door: precise errors, nothing written.

Each function either returns the cleaned value or raises
:class:`~kenning.errors.InvalidInput` naming the field and what was wrong.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeVar

from .errors import InvalidInput
from .models import FeedbackKind, MemoryFilter, MemoryType, Principal, Status, as_utc

__all__ = [
    "Limits",
    "UNBOUNDED",
    "UPDATABLE",
    "NEW_FIELDS",
    "check_principal",
    "clean_item",
    "clean_batch",
    "check_updatable",
    "clean_changes",
    "check_window",
    "clean_feedback",
    "clean_recall",
    "check_texts",
    "clean_content",
    "clean_key",
    "clean_tags",
    "clean_metadata",
    "clean_importance",
    "clean_confidence",
    "clean_memory_type",
    "clean_time",
    "clean_k",
    "build_filter",
]

_MAX_METADATA_BYTES = 16_384
T = TypeVar("T")


def clean_text(value: object, field: str, max_chars: int) -> str:
    """A non-empty, valid-Unicode string of at most ``max_chars`` characters."""
    if isinstance(value, bytes | bytearray):
        try:
            value = bytes(value).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InvalidInput(
                f"{field} is not valid UTF-8 (byte {exc.start})", field=field
            ) from None
    if not isinstance(value, str):
        raise InvalidInput(f"{field} must be a string, got {type(value).__name__}", field=field)
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InvalidInput(
            f"{field} is not valid Unicode (lone surrogate at position {exc.start})", field=field
        ) from None
    if "\x00" in value:
        raise InvalidInput(f"{field} contains a NUL character", field=field)
    stripped = value.strip()
    if not stripped:
        raise InvalidInput(f"{field} must not be empty", field=field)
    if len(stripped) > max_chars:
        raise InvalidInput(
            f"{field} is {len(stripped)} characters; the limit is {max_chars}", field=field
        )
    return stripped


def clean_content(value: object, max_chars: int) -> str:
    """Memory content: non-empty valid text within the size limit."""
    return clean_text(value, "content", max_chars)


def clean_key(value: object, max_chars: int) -> str | None:
    """An optional short label (seed 001 suggests 2-6 words)."""
    if value is None:
        return None
    return " ".join(clean_text(value, "key", max_chars).split())


def clean_tags(value: object, max_tags: int) -> tuple[str, ...]:
    """Tags: short strings, deduplicated, order kept."""
    if value is None:
        return ()
    if isinstance(value, str) or not isinstance(value, Iterable):
        raise InvalidInput("tags must be a list of strings", field="tags")
    out: dict[str, None] = {}
    for tag in value:
        out.setdefault(clean_text(tag, "tag", 64), None)
    if len(out) > max_tags:
        raise InvalidInput(f"at most {max_tags} tags are allowed, got {len(out)}", field="tags")
    return tuple(out)


def clean_metadata(value: object) -> dict[str, Any]:
    """A JSON object with string keys, at most 16 KiB serialised."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise InvalidInput("metadata must be a JSON object", field="metadata")
    if not all(isinstance(k, str) for k in value):
        raise InvalidInput("metadata keys must be strings", field="metadata")
    try:
        text = json.dumps(value, allow_nan=False, sort_keys=True)
    except (TypeError, ValueError) as exc:
        raise InvalidInput(f"metadata is not JSON-serialisable: {exc}", field="metadata") from None
    if len(text.encode()) > _MAX_METADATA_BYTES:
        raise InvalidInput(f"metadata is larger than {_MAX_METADATA_BYTES} bytes", field="metadata")
    result: dict[str, Any] = json.loads(text)
    return result


def clean_importance(value: object) -> int:
    """Importance 1 (trivial) to 5 (critical)."""
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 5:
        raise InvalidInput(
            f"importance must be an integer from 1 to 5, got {value!r}", field="importance"
        )
    return value


def clean_confidence(value: object, field: str = "confidence") -> float:
    """A finite number in [0, 1]."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise InvalidInput(f"{field} must be a number from 0 to 1, got {value!r}", field=field)
    if not 0.0 <= float(value) <= 1.0:
        raise InvalidInput(f"{field} must be from 0 to 1, got {value!r}", field=field)
    return float(value)


def clean_memory_type(value: object) -> MemoryType:
    """One of episodic, semantic, procedural, working."""
    try:
        return MemoryType(value)
    except ValueError:
        known = ", ".join(t.value for t in MemoryType)
        raise InvalidInput(
            f"memory_type must be one of {known}; got {value!r}", field="memory_type"
        ) from None


def clean_status(value: object) -> Status:
    """One of the lifecycle statuses."""
    try:
        return Status(value)
    except ValueError:
        known = ", ".join(s.value for s in Status)
        raise InvalidInput(
            f"status must be one of {known}; got {value!r}", field="status"
        ) from None


def clean_time(value: object, field: str) -> datetime | None:
    """A datetime or ISO-8601 string (naive = UTC), or None; one whose UTC time falls
    outside years 1-9999 (``9999-12-31T23:00-05:00``) is invalid, not an overflow."""
    if value is None:
        return None
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            raise InvalidInput(
                f"{field} must be an ISO-8601 date/time, got {value!r}", field=field
            ) from None
    if not isinstance(value, datetime):
        raise InvalidInput(f"{field} must be a datetime, got {type(value).__name__}", field=field)
    try:
        return as_utc(value)
    except OverflowError:
        raise InvalidInput(
            f"{field} is out of range in UTC (years 1 to 9999), got {value.isoformat()}",
            field=field,
        ) from None


def clean_k(value: object, max_k: int, field: str = "k") -> int:
    """A count of results: 1..max_k."""
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= max_k:
        raise InvalidInput(
            f"{field} must be an integer from 1 to {max_k}, got {value!r}", field=field
        )
    return value


def clean_number(
    value: object, field: str, *, above: float = 0.0, at_most: float = math.inf
) -> float:
    """A finite number in (``above``, ``at_most``]."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise InvalidInput(f"{field} must be a number, got {value!r}", field=field)
    if not above < value <= at_most:
        bound = "" if at_most == math.inf else f" and at most {at_most:g}"
        raise InvalidInput(f"{field} must be above {above:g}{bound}, got {value!r}", field=field)
    return float(value)


#: The largest integer both stores hold (SQLite INTEGER, PostgreSQL bigint).
MAX_INT64 = 2**63 - 1
#: The largest PostgreSQL ``integer`` (policy capacity and sector size columns).
MAX_INT32 = 2**31 - 1


def clean_count(value: object, field: str, minimum: int = 0, maximum: int = MAX_INT64) -> int:
    """An integer from ``minimum`` to ``maximum`` (by default: what a 64-bit column holds,
    so a huge number is a precise error rather than a store overflow)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise InvalidInput(f"{field} must be an integer >= {minimum}, got {value!r}", field=field)
    if value > maximum:
        raise InvalidInput(f"{field} must be at most {maximum}, got {value!r}", field=field)
    return value


def clean_flag(value: object, field: str) -> bool:
    """True or false (not a truthy stand-in)."""
    if not isinstance(value, bool):
        raise InvalidInput(f"{field} must be true or false, got {value!r}", field=field)
    return value


def _set_of(value: object, field: str, convert: Any) -> frozenset[Any]:
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, Iterable):
        raise InvalidInput(f"{field} must be a string or a list of strings", field=field)
    return frozenset(convert(v) for v in items)


_FILTER_KEYS = {
    "types",
    "statuses",
    "tags_any",
    "tags_all",
    "tags",
    "created_after",
    "created_before",
    "event_after",
    "event_before",
    "metadata",
    "min_importance",
    "source",
    "agent_id",
    "session_id",
    "episode_id",
    "sector_id",
    "key",
    "sectors",
}


def build_filter(filters: MemoryFilter | Mapping[str, Any] | None) -> MemoryFilter:
    """Validate a filter given as a :class:`MemoryFilter` or a plain mapping."""
    if filters is None:
        return MemoryFilter()
    if isinstance(filters, MemoryFilter):
        filters = {n: getattr(filters, n) for n in MemoryFilter.__dataclass_fields__}
    if not isinstance(filters, Mapping):
        raise InvalidInput("filters must be a mapping", field="filters")
    unknown = set(filters) - _FILTER_KEYS
    if unknown:
        raise InvalidInput(
            f"unknown filter(s) {sorted(unknown)}; known: {sorted(_FILTER_KEYS)}", field="filters"
        )
    out: dict[str, Any] = {}
    for name, value in filters.items():
        if value is None:
            continue
        if name == "types":
            out[name] = _set_of(value, name, clean_memory_type)
        elif name == "statuses":
            out[name] = _set_of(value, name, clean_status)
            if not out[name]:
                raise InvalidInput("statuses must name at least one status", field=name)
        elif name in ("tags_any", "tags_all", "tags"):
            out["tags_all" if name == "tags" else name] = frozenset(
                clean_tags([value] if isinstance(value, str) else value, 64)
            )
        elif name.endswith(("_after", "_before")):
            out[name] = clean_time(value, name)
        elif name == "metadata":
            meta = clean_metadata(value)
            for k, v in meta.items():
                if isinstance(v, dict | list):
                    raise InvalidInput(
                        f"metadata filter {k!r} must be a string, number, boolean or null",
                        field="filters",
                    )
                if isinstance(v, int) and not -MAX_INT64 - 1 <= v <= MAX_INT64:
                    # SQLite binds it as a 64-bit integer; both stores refuse it alike
                    raise InvalidInput(
                        f"metadata filter {k!r} is outside the 64-bit integer range",
                        field="filters",
                    )
            out[name] = meta
        elif name == "min_importance":
            out[name] = clean_importance(value)
        elif name == "sectors":
            out[name] = _set_of(value, name, lambda v: clean_text(v, "sectors", 256))
        else:
            out[name] = clean_text(value, name, 256)
    return MemoryFilter(**out)


def check_texts(texts: Sequence[str]) -> list[str]:
    """Return ``texts`` as a list, raising :class:`InvalidInput` unless all are ``str``.

    A bare ``str`` is rejected too: it is a ``Sequence[str]`` to the type
    checker, but embedding its characters one by one is never what was meant.
    """
    if isinstance(texts, str | bytes):
        raise InvalidInput("expected a sequence of strings, got a single string", field="texts")
    out = list(texts)
    for i, text in enumerate(out):
        if not isinstance(text, str):
            raise InvalidInput(f"texts[{i}] is {type(text).__name__}, expected str", field="texts")
    return out


# -- whole calls: the checks of a write, an update, a recall (pure, shared by every door) --


@dataclass(frozen=True, slots=True)
class Limits:
    """The size limits of the checks that have one (the ``max_*`` settings): the
    engine's own, or a server's (``GET /v1/limits``); :data:`UNBOUNDED` when not known
    (every other check still applies)."""

    content_chars: int
    key_chars: int
    tags: int
    batch: int
    k: int

    @classmethod
    def of(cls, settings: Any) -> Limits:
        """The limits of a :class:`~kenning.config.Settings`."""
        return cls(
            settings.max_content_chars,
            settings.max_key_chars,
            settings.max_tags,
            settings.max_batch,
            settings.max_k,
        )


#: No size limit known.
UNBOUNDED = Limits(MAX_INT64, MAX_INT64, MAX_INT64, MAX_INT64, MAX_INT64)

#: The fields :meth:`kenning.Memory.update` may change.
UPDATABLE = (
    "content",
    "key",
    "memory_type",
    "importance",
    "confidence",
    "tags",
    "metadata",
    "event_at",
    "valid_from",
    "valid_to",
    "sector_id",
)
#: The fields a new memory may set: the updatable ones, its scope, its status and
#: its provenance (which describes the first write and never changes).
NEW_FIELDS = frozenset(
    {
        *UPDATABLE,
        "scope",
        "status",
        "source",
        "source_channel_id",
        "agent_id",
        "session_id",
        "episode_id",
    }
)


def check_principal(value: object) -> Principal | None:
    """``principal=`` as the engine takes it: a :class:`Principal` or None."""
    if value is not None and not isinstance(value, Principal):
        raise InvalidInput("principal must be a Principal", field="principal")
    return value


def check_window(valid_from: datetime | None, valid_to: datetime | None) -> None:
    """A validity window does not end before it starts."""
    if valid_from and valid_to and valid_to < valid_from:
        raise InvalidInput("valid_to is before valid_from", field="valid_to")


def clean_item(
    item: Mapping[str, Any], limits: Limits, write_scope: Callable[[Any], Any]
) -> dict[str, Any]:
    """One new memory's fields, checked in the engine's order (``write_scope`` turns the
    item's ``scope`` into the scope written, checking what only the caller's door can).
    ``confidence`` is None when not given (the engine derives it from the source)."""
    unknown = set(item) - NEW_FIELDS
    if unknown:
        raise InvalidInput(f"unknown field(s) {sorted(unknown)}", field=sorted(unknown)[0])
    content = clean_content(item.get("content"), limits.content_chars)
    scope = write_scope(item.get("scope"))
    source = clean_text(item.get("source", "api"), "source", 64)
    confidence = item.get("confidence")
    confidence = None if confidence is None else clean_confidence(confidence)
    status = item.get("status", Status.ACTIVE)
    if status not in (Status.ACTIVE, Status.PENDING_REVIEW, "active", "pending_review"):
        raise InvalidInput("a new memory is 'active' or 'pending_review'", field="status")
    valid_from = clean_time(item.get("valid_from"), "valid_from")
    valid_to = clean_time(item.get("valid_to"), "valid_to")
    check_window(valid_from, valid_to)

    def optional(name: str) -> str | None:
        value = item.get(name)
        return None if value is None else clean_text(value, name, 256)

    memory_type = clean_memory_type(item.get("memory_type", "semantic"))
    return {
        "scope": scope,
        "content": content,
        "key": clean_key(item.get("key"), limits.key_chars),
        "memory_type": memory_type,
        "importance": clean_importance(item.get("importance", 3)),
        "confidence": confidence,
        "status": Status(status),
        "tags": clean_tags(item.get("tags"), limits.tags),
        "metadata": clean_metadata(item.get("metadata")),
        "source": source,
        "event_at": clean_time(item.get("event_at"), "event_at"),
        "valid_from": valid_from,
        "valid_to": valid_to,
        "source_channel_id": optional("source_channel_id"),
        "agent_id": optional("agent_id"),
        "session_id": optional("session_id"),
        "episode_id": optional("episode_id"),
        "sector_id": optional("sector_id"),
    }


def clean_batch(
    items: Sequence[Mapping[str, Any]], limit: int, clean: Callable[[Mapping[str, Any]], T]
) -> list[T]:
    """A batch of at most ``limit`` items, each checked by ``clean`` (errors name the item)."""
    if isinstance(items, Mapping) or not isinstance(items, Sequence):
        raise InvalidInput("items must be a list of memory objects", field="items")
    if len(items) > limit:
        raise InvalidInput(
            f"a batch holds at most {limit} memories, got {len(items)}", field="items"
        )
    out: list[T] = []
    for index, item in enumerate(items):
        if not isinstance(item, Mapping):
            raise InvalidInput(f"items[{index}] must be an object", field="items")
        try:
            out.append(clean(item))
        except InvalidInput as exc:
            if len(items) == 1:
                raise
            raise InvalidInput(f"items[{index}]: {exc}", field=exc.field) from None
    return out


def check_updatable(changes: Mapping[str, Any]) -> None:
    """Only fields of :data:`UPDATABLE` change."""
    unknown = set(changes) - set(UPDATABLE)
    if unknown:
        raise InvalidInput(
            f"cannot update {sorted(unknown)}; updatable: {list(UPDATABLE)}",
            field=sorted(unknown)[0],
        )


def clean_changes(changes: Mapping[str, Any], limits: Limits) -> dict[str, Any]:
    """The new values of an update's fields (each of :data:`UPDATABLE`), in its order."""
    cleaners: dict[str, Callable[[Any], Any]] = {
        "content": lambda v: clean_content(v, limits.content_chars),
        "key": lambda v: clean_key(v, limits.key_chars),
        "memory_type": clean_memory_type,
        "importance": clean_importance,
        "confidence": clean_confidence,
        "tags": lambda v: clean_tags(v, limits.tags),
        "metadata": clean_metadata,
        "event_at": lambda v: clean_time(v, "event_at"),
        "valid_from": lambda v: clean_time(v, "valid_from"),
        "valid_to": lambda v: clean_time(v, "valid_to"),
        "sector_id": lambda v: None if v is None else clean_text(v, "sector_id", 256),
    }
    return {name: cleaners[name](value) for name, value in changes.items()}


def clean_feedback(kind: object) -> FeedbackKind:
    """One of the feedback kinds."""
    try:
        return FeedbackKind(kind)
    except ValueError:
        known = ", ".join(k.value for k in FeedbackKind)
        raise InvalidInput(f"feedback must be one of {known}; got {kind!r}", field="kind") from None


def clean_recall(
    query: object,
    k: object,
    min_confidence: object,
    min_score: object,
    filters: MemoryFilter | Mapping[str, Any] | None,
    limits: Limits,
) -> tuple[str, int, float | None, float | None, MemoryFilter]:
    """A recall's query, ``k``, confidence floor and score cut (None: the settings') and
    filter, checked in the engine's order."""
    text = clean_text(query, "query", limits.content_chars)
    count = clean_k(k, limits.k)
    floor = None if min_confidence is None else clean_confidence(min_confidence, "min_confidence")
    cut = None if min_score is None else clean_confidence(min_score, "min_score")
    return text, count, floor, cut, build_filter(filters)
