"""Conversation-context signals for recall (no I/O): episode lift, author match.

They add to a candidate's fused relevance before it is normalised (see
:mod:`kenning.retrieval.signals`: the ``episode`` and ``author`` signals), as graph
support and the time bonus do:

* **episode lift** (seed 002 §4, episode recall): episodes (``episode_id``,
  else ``session_id``) are scored by their best candidate; the memories of the
  ``retrieval.episode.top`` best gain ``retrieval.episode.weight * score / best``.
  The evidence of one answer tends to sit in one discussion.
* **author match**: a memory whose author (the first of ``retrieval.author.fields``
  present in its metadata, e.g. the ``speaker`` a conversation turn records)
  is named in the query gains ``retrieval.author.boost``: "What did Caroline paint?"
  is about Caroline's own words.

Chosen on the LoCoMo dev split; see BENCHMARKS.md (ablation).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from ..models import MemoryRecord
from .text import query_terms

__all__ = ["episode_key", "author_of", "speaker_of", "episode_lift", "author_match"]


def episode_key(record: MemoryRecord) -> str | None:
    """The discussion a memory belongs to: its episode, else its session."""
    return record.episode_id or record.session_id


def author_of(record: MemoryRecord, fields: Sequence[str]) -> str | None:
    """The memory's author name from its metadata (first field present), if any."""
    for name in fields:
        value = record.metadata.get(name)
        if isinstance(value, str) and value.strip():
            return value
    return None


def speaker_of(record: MemoryRecord, fields: Sequence[str]) -> str | None:
    """Whose "I" the memory speaks for: its author (:func:`author_of`), or for a
    fact ``ingest`` drew from a conversation, whom it is about (the speaker whose
    "I" it rewrote as a name: "Kim has moved on from cappuccino to mocha")."""
    author = author_of(record, fields)
    if author is None and record.metadata.get("evidence"):
        subject = record.metadata.get("subject")
        return subject if isinstance(subject, str) and subject.strip() else None
    return author


def episode_lift(
    scores: Mapping[str, float],
    records: Mapping[str, MemoryRecord],
    weight: float,
    top: int,
) -> dict[str, float]:
    """Bonus per candidate in one of the ``top`` best-scoring episodes."""
    if weight <= 0 or top <= 0:
        return {}
    best_of: dict[str, float] = {}
    for mid, score in scores.items():
        key = episode_key(records[mid])
        if key is not None and score > best_of.get(key, -math.inf):
            best_of[key] = score
    ranked = sorted(best_of, key=lambda k: (-best_of[k], k))[:top]
    if not ranked or best_of[ranked[0]] <= 0:
        return {}
    best = best_of[ranked[0]]
    lift = {k: weight * best_of[k] / best for k in ranked}
    out: dict[str, float] = {}
    for mid in scores:
        key = episode_key(records[mid])
        if key in lift:
            out[mid] = lift[key]
    return out


def author_match(
    query: str,
    ids: Sequence[str],
    records: Mapping[str, MemoryRecord],
    boost: float,
    fields: Sequence[str],
) -> dict[str, float]:
    """``boost`` for each candidate whose author's every name word is in the query."""
    if boost <= 0 or not fields:
        return {}
    words = set(query_terms(query, keep_stopwords=True))
    if not words:
        return {}
    named: dict[str, bool] = {}
    out: dict[str, float] = {}
    for mid in ids:
        author = author_of(records[mid], fields)
        if author is None:
            continue
        hit = named.get(author)
        if hit is None:
            parts = query_terms(author, keep_stopwords=True)
            hit = named[author] = bool(parts) and all(p in words for p in parts)
        if hit:
            out[mid] = boost
    return out
