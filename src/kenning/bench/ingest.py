"""LoCoMo through ``ingest``: conversations in, facts extracted, questions recalled.

Each session of each conversation of the split is ingested as one
conversation (``Memory.ingest``: turns kept, facts extracted by the
configured extractor — rules unless an LLM is set — and reconciled), into one
store, each conversation as its own user. Reported:

* ``evidence_coverage``: the share of the questions' evidence turns from which
  at least one fact was extracted (the facts' ``metadata.evidence``);
* the retrieval metrics of the resulting store on the same questions
  (categories 1-4), where a recalled fact stands for the turns it came from
  (its evidence, in order) and a recalled turn for itself. The main figures
  count the first k distinct turns of the best ``k_max`` hits;
  ``within_k_hits`` counts the turns of the first k hits only, which is what
  a caller asking for k hits gets (a turn and a fact drawn from it take two
  hits unless recall collapses them).
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable, Sequence
from datetime import timedelta
from itertools import groupby
from pathlib import Path
from typing import Any, Literal

from ..clock import FixedClock
from ..config import Settings
from ..embeddings import Embedder
from .locomo import conversation_user
from .locomo_data import Question, load_locomo, score, split
from .stores import open_bench_memory

__all__ = ["run_ingest_locomo"]


def run_ingest_locomo(
    data: str | Path,
    split_name: Literal["dev", "holdout", "all"] = "dev",
    *,
    settings: Settings | None = None,
    embedder: Embedder | None = None,
    store: str | None = None,
    k_max: int = 20,
    progress: Callable[[str, int], None] | None = None,
) -> dict[str, Any]:
    """Ingest the split's conversations and score recall on their questions."""
    convs = split(load_locomo(data), split_name)
    clock = FixedClock(convs[0].last_session_date)
    with tempfile.TemporaryDirectory(prefix="kenning-ingest-") as tmp:
        mem = open_bench_memory(
            store, Path(tmp) / "ingest.db", settings, embedder=embedder, clock=clock
        )
        try:
            dia_of: dict[str, str] = {}
            hit_turns: list[list[list[str]]] = []  # per question, the turns of each hit
            fact_evidence: dict[str, list[str]] = {}
            actions: dict[str, int] = {}
            turns = facts = 0
            started = time.perf_counter()
            for conv in convs:
                who = conversation_user(conv)
                for session, group in groupby(conv.turns, key=lambda t: t.session):
                    said = list(group)
                    clock.set(said[0].session_date + timedelta(hours=1))
                    done = mem.ingest(
                        [
                            {"content": t.document, "name": t.speaker, "at": t.session_date}
                            for t in said
                        ],
                        f"{conv.sample_id}/session_{session}",
                        principal=who,
                    )
                    for t, record in zip(said, done.turns, strict=True):
                        dia_of[record.id] = t.dia_id
                    for f in done.facts:
                        actions[f.action.value] = actions.get(f.action.value, 0) + 1
                        ids = [
                            dia_of[e] for e in f.record.metadata.get("evidence", []) if e in dia_of
                        ]
                        fact_evidence.setdefault(f.record.id, []).extend(ids)
                    turns += len(said)
                    facts += len(done.facts)
                    if progress:
                        progress("ingest", len(said))
            ingest_s = time.perf_counter() - started
            questions: list[Question] = []
            for conv in convs:
                who = conversation_user(conv)
                clock.set(conv.last_session_date + timedelta(days=1))
                for q in conv.questions:
                    if not q.scorable:
                        continue
                    hits = mem.recall(q.question, k_max, principal=who).hits
                    per_hit = [
                        fact_evidence.get(h.memory.id)
                        or ([dia_of[h.memory.id]] if h.memory.id in dia_of else [])
                        for h in hits
                    ]
                    hit_turns.append(per_hit)
                    questions.append(q)
                    if progress:
                        progress("recall", 1)
        finally:
            mem.close()
    result = score([_turns(h) for h in hit_turns], questions, ks=(1, 5, 10, 20))
    result["within_k_hits"] = _within_k_hits(hit_turns, questions, (5, 10, 20))
    evidence = {e for q in questions for e in q.evidence}
    covered = {d for ids in fact_evidence.values() for d in ids}
    result.update(
        {
            "split": split_name,
            "conversations": [c.sample_id for c in convs],
            "turns": turns,
            "facts": facts,
            "fact_actions": actions,
            "evidence_turns": len(evidence),
            "evidence_turns_with_fact": len(evidence & covered),
            "evidence_coverage": round(len(evidence & covered) / max(1, len(evidence)), 4),
            "ingest_per_s": round(turns / ingest_s, 1),
        }
    )
    return result


def _turns(per_hit: Sequence[Sequence[str]]) -> list[str]:
    """The turns the hits stand for, in order, each once."""
    out: list[str] = []
    for turns in per_hit:
        out.extend(t for t in turns if t not in out)
    return out


def _within_k_hits(
    hit_turns: Sequence[Sequence[Sequence[str]]], questions: Sequence[Question], ks: Sequence[int]
) -> dict[str, float]:
    """Recall and all-hit over the turns of the first ``k`` hits (what a caller
    asking for ``k`` hits sees), where the main figures count the first ``k``
    distinct turns of up to ``k_max`` hits."""
    out: dict[str, float] = {}
    for k in ks:
        got = score([_turns(h[:k]) for h in hit_turns], questions, ks=(k,))
        out[f"recall@{k}"] = got[f"recall@{k}"]
        out[f"all_hit@{k}"] = got[f"all_hit@{k}"]
    return out
