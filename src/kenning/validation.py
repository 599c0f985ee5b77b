"""Input validation shared by every door: precise errors, nothing written.

Each function either returns the cleaned value or raises
:class:`~kenning.errors.InvalidInput` naming the field and what was wrong.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from .errors import InvalidInput
from .models import MemoryFilter, MemoryType, Status, as_utc

__all__ = [
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
