"""Time-aware recall: match the time a query names against the memories' times.

A query like "what did Melanie paint last May?" names a window (see
:mod:`kenning.retrieval.timeq`); "what did she do before the trip?" names an
event, whose time is looked up among the reader's memories; "when did ...?"
asks for a time. This module turns those into relevance bonuses:

* a candidate whose event time (``event_at``, else ``created_at``) falls in
  the window gets ``window_boost``; failing that, one whose text refers to a
  time in the window ("I went there yesterday", said the day after the
  window opened) gets it too (only the best ``content_scan`` candidates are
  read, so the cost stays bounded), and so does a memory whose validity
  (``valid_from``, else its time, to ``valid_to``) overlaps the window: a
  value replaced on write is valid until its replacement was said, so "I go
  to Basic-Fit", said in 2021 and replaced in 2024, answers "Where did I
  work out in 2022?";
* for a "when" question, a candidate whose text names a time gets
  ``when_boost``: an answer to "when" usually carries its date.

Pure functions; the pipeline supplies the records.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta

from ..models import MemoryRecord
from .timeq import TimeQuery, content_times

__all__ = ["Window", "anchored_window", "time_bonus"]

Window = tuple[datetime | None, datetime | None]


def anchored_window(tq: TimeQuery, anchor_at: datetime | None) -> Window | None:
    """The window of "before/after/during <event>" once the event's time is known."""
    if tq.relation is None or anchor_at is None:
        return None
    day = anchor_at.replace(hour=0, minute=0, second=0, microsecond=0)
    if tq.relation == "before":
        return None, day
    if tq.relation == "after":
        return day + timedelta(days=1), None
    return day, day + timedelta(days=1)


def _inside(window: Window, at: datetime) -> bool:
    start, end = window
    return (start is None or at >= start) and (end is None or at < end)


def _spans_overlap(window: Window, start: datetime | None, end: datetime | None) -> bool:
    lo, hi = window
    return (hi is None or start is None or start < hi) and (lo is None or end is None or end > lo)


def time_bonus(
    ranked: Sequence[str],
    records: Mapping[str, MemoryRecord],
    *,
    window: Window | None,
    asks_when: bool,
    window_boost: float,
    when_boost: float,
    content_scan: int,
) -> dict[str, float]:
    """Relevance bonus per candidate id (``ranked`` best first; absent = 0)."""
    out: dict[str, float] = {}
    if window is None and not asks_when:
        return out
    for i, mid in enumerate(ranked):
        record = records.get(mid)
        if record is None:
            continue
        at = record.said_at
        bonus = 0.0
        in_window = window is not None and _inside(window, at)
        if window is not None and not in_window and record.valid_to is not None:
            in_window = _spans_overlap(window, record.valid_from or at, record.valid_to)
        spans = content_times(record.content, at) if i < content_scan else []
        if window is not None and not in_window:
            in_window = any(_spans_overlap(window, s.start, s.end) for s in spans)
        if in_window:
            bonus += window_boost
        if asks_when and spans:
            bonus += when_boost
        if bonus:
            out[mid] = bonus
    return out
