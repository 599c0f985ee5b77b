"""One statement, one hit: a fact drawn from a turn and that turn count once.

``ingest`` keeps each conversation turn and also stores the facts it draws
from them ("I support Arsenal." and "Eva supports Arsenal."). When a recall
finds both a turn and a fact drawn from that turn alone, they say the same
thing, and the second of the two would take a top-k slot that a different
memory could use. :func:`collapse_restatements` keeps the better-ranked one and
leaves the other out, so the ``k`` hits are ``k`` different statements.

Only a fact drawn from exactly one turn (``source="extraction"``, one id in
``metadata["evidence"]``) restates it: a fact combining several turns says
something none of them says alone, and two facts drawn from one turn say two
different things. A kept fact still names its turn in ``metadata["evidence"]``.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..models import EXTRACTED, Hit, MemoryRecord

__all__ = ["collapse_restatements", "evidence_turns", "restated_turn"]


def evidence_turns(record: MemoryRecord) -> list[str]:
    """The ids of the turns ``record`` names as drawn from (``metadata["evidence"]``)."""
    evidence = record.metadata.get("evidence")
    return [str(e) for e in evidence] if isinstance(evidence, list) else []


def restated_turn(record: MemoryRecord) -> str | None:
    """The id of the one turn ``record`` was drawn from, or None when it is not a
    fact ``ingest`` drew from a single turn."""
    if record.source != EXTRACTED:
        return None
    turns = evidence_turns(record)
    return turns[0] if len(turns) == 1 else None


def collapse_restatements(hits: Sequence[Hit]) -> tuple[list[Hit], int]:
    """``hits`` (in rank order) without any that restates a better-ranked one:
    (the hits kept, how many were left out)."""
    kept: list[Hit] = []
    turns: set[str] = set()  # ids of the hits kept
    restated: set[str] = set()  # the turns that kept facts were drawn from
    for hit in hits:
        turn = restated_turn(hit.memory)
        if turn is not None and turn in turns:
            continue  # its turn ranks above it
        if hit.memory.id in restated:
            continue  # a fact drawn from it ranks above it
        kept.append(hit)
        turns.add(hit.memory.id)
        if turn is not None:
            restated.add(turn)
    return kept, len(hits) - len(kept)
