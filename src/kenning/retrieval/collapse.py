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

from ..models import Hit, MemoryRecord

__all__ = ["collapse_restatements", "restated_turn"]

#: The ``source`` of the facts ``ingest`` draws from a conversation's turns.
EXTRACTION = "extraction"


def restated_turn(record: MemoryRecord) -> str | None:
    """The id of the one turn ``record`` was drawn from, or None when it is not a
    fact drawn from a single turn."""
    if record.source != EXTRACTION:
        return None
    evidence = record.metadata.get("evidence")
    if isinstance(evidence, list) and len(evidence) == 1:
        return str(evidence[0])
    return None


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
