"""Fact-extraction coverage on LoCoMo: how many evidence turns yield a fact.

:func:`run_fact_coverage` runs a :class:`~kenning.lifecycle.facts.FactExtractor`
(the rules by default) over every session of the conversations of one split,
each turn with its speaker's name and its session's date as ``at``, and counts

* ``facts`` and ``facts_per_turn``;
* ``evidence_turns``: the distinct dialogue ids cited as evidence by the
  category 1-4 questions of those conversations;
* ``evidence_turns_with_fact`` / ``evidence_coverage``: those of them that
  some fact cites in its ``evidence``.

Coverage is a recall-side proxy (a fact exists where the answers live), not a
judgement of the facts' correctness; ``sample`` holds a few facts to read.
No CLI here; nothing is read until the function is called.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from ..lifecycle.facts import Fact, FactExtractor, RuleFactExtractor, Turn
from ..models import as_utc
from . import locomo_data

__all__ = ["conversation_turns", "run_fact_coverage"]


def conversation_turns(
    conv: locomo_data.Conversation, *, captions: bool = False
) -> list[list[Turn]]:
    """The turns of ``conv`` as fact-extraction input, one list per session.

    ``Turn.index`` is the turn's position in the whole conversation, so a
    fact's evidence maps back to ``conv.turns[index].dia_id``. With
    ``captions`` a shared image's caption is appended as ``[image: ...]``.
    """
    sessions: dict[int, list[Turn]] = {}
    for index, t in enumerate(conv.turns):
        text = t.text
        if captions and t.image_caption:
            text = f"{text} [image: {t.image_caption}]"
        turn = Turn(index=index, speaker=t.speaker, text=text, at=as_utc(t.session_date))
        sessions.setdefault(t.session, []).append(turn)
    return [sessions[k] for k in sorted(sessions)]


def _sample(rows: list[tuple[str, str, Fact]], n: int) -> list[dict[str, Any]]:
    """``n`` facts evenly spread over all of them (deterministic)."""
    if not rows or n <= 0:
        return []
    picks = sorted({i * len(rows) // n for i in range(n)})
    return [
        {
            "conversation": conv_id,
            "dia_id": dia_id,
            "kind": fact.kind,
            "content": fact.content,
            "event_at": fact.event_at.date().isoformat() if fact.event_at else None,
        }
        for conv_id, dia_id, fact in (rows[i] for i in picks)
    ]


def run_fact_coverage(
    data_path: str | Path,
    split: Literal["dev", "holdout", "all"] = "dev",
    *,
    extractor: FactExtractor | None = None,
    captions: bool = False,
    sample: int = 10,
    sample_ids: Sequence[str] | None = None,
) -> dict[str, Any]:
    """Extract facts from the conversations of ``split`` and measure evidence coverage.

    Returns a JSON-able dict: ``conversations``, ``turns``, ``facts``,
    ``facts_per_turn``, ``evidence_turns``, ``evidence_turns_with_fact``,
    ``evidence_coverage``, plus ``turns_with_fact``, ``kinds`` (facts per
    kind), ``dated_facts``, ``seconds`` and ``sample`` (``sample`` facts).
    ``sample_ids`` restricts the run to those conversations of the split.
    """
    ex = extractor if extractor is not None else RuleFactExtractor()
    convs = locomo_data.split(locomo_data.load_locomo(data_path), split)
    if sample_ids is not None:
        convs = [c for c in convs if c.sample_id in set(sample_ids)]
    started = time.perf_counter()
    n_turns = n_evidence = n_covered = n_with_fact = 0
    kinds: Counter[str] = Counter()
    dated = 0
    rows: list[tuple[str, str, Fact]] = []
    for conv in convs:
        covered: set[int] = set()
        for session in conversation_turns(conv, captions=captions):
            for fact in ex.extract(session):
                covered.update(fact.evidence)
                kinds[fact.kind] += 1
                dated += fact.event_at is not None and fact.kind in ("event", "plan")
                rows.append((conv.sample_id, conv.turns[fact.evidence[0]].dia_id, fact))
        evidence = {e for q in conv.questions if q.scorable for e in q.evidence}
        covered_ids = {conv.turns[i].dia_id for i in covered}
        n_turns += len(conv.turns)
        n_with_fact += len(covered_ids)
        n_evidence += len(evidence)
        n_covered += len(evidence & covered_ids)
    n_facts = len(rows)
    return {
        "split": split,
        "captions": captions,
        "conversations": len(convs),
        "turns": n_turns,
        "facts": n_facts,
        "facts_per_turn": round(n_facts / n_turns, 3) if n_turns else 0.0,
        "turns_with_fact": n_with_fact,
        "evidence_turns": n_evidence,
        "evidence_turns_with_fact": n_covered,
        "evidence_coverage": round(n_covered / n_evidence, 4) if n_evidence else 0.0,
        "kinds": dict(sorted(kinds.items())),
        "dated_facts": dated,
        "seconds": round(time.perf_counter() - started, 2),
        "sample": _sample(rows, sample),
    }
