"""Pages of memories, newest first, with an opaque cursor (``list``, the review queue)."""

from __future__ import annotations

import base64
import json

from .access import ScopeFilter
from .core import Core
from .errors import InvalidInput
from .models import MemoryFilter, MemoryRecord, Page

__all__ = ["decode_cursor", "encode_cursor", "page"]


def page(core: Core, view: ScopeFilter, flt: MemoryFilter, limit: int, cursor: str | None) -> Page:
    """Up to ``limit`` memories of ``view`` matching ``flt``, after ``cursor``."""
    rows = core.store.list(view, flt, limit=limit + 1, cursor=decode_cursor(cursor))
    more = len(rows) > limit
    rows = rows[:limit]
    return Page(rows, encode_cursor(rows[-1]) if more and rows else None)


def encode_cursor(record: MemoryRecord) -> str:
    """The cursor that continues after ``record``."""
    raw = json.dumps([record.created_at.timestamp(), record.id]).encode()
    return base64.urlsafe_b64encode(raw).decode()


def decode_cursor(cursor: str | None) -> tuple[float, str] | None:
    """(created_at, id) of a cursor; a precise error for anything else."""
    if cursor is None:
        return None
    if not isinstance(cursor, str):
        raise InvalidInput(f"cursor must be a string, got {type(cursor).__name__}", field="cursor")
    try:
        ts, mid = json.loads(base64.urlsafe_b64decode(cursor.encode()))
        return float(ts), str(mid)
    except (ValueError, TypeError):
        raise InvalidInput(f"invalid cursor {cursor!r}", field="cursor") from None
