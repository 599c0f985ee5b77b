"""LoCoMo retrieval benchmark: every turn a memory, every question a recall.

All conversations of the split go into ONE store, each as its own user; every
question is asked as that user, so the scope filter is part of what is
measured (as a multi-user deployment would run). Event time of a turn is its
session date; the clock during questions is the conversation's last session
date plus one day.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any, Literal

from ..clock import FixedClock
from ..config import Settings
from ..embeddings import Embedder
from ..engine import Memory
from ..models import Hit, Principal, Role
from .locomo_data import Conversation, Question, combined_report, load_locomo, score, split
from .stores import open_bench_memory
from .timing import percentiles

__all__ = [
    "Recall",
    "ask_questions",
    "conversation_user",
    "load_conversations",
    "run_locomo",
    "run_locomo_variants",
]


def run_locomo(
    data: str | Path,
    split_name: Literal["dev", "holdout", "all"] = "all",
    *,
    settings: Settings | None = None,
    embedder: Embedder | None = None,
    db_path: str | Path | None = None,
    store: str | None = None,
    k_max: int = 20,
    progress: Callable[[str, int], None] | None = None,
    min_score: float | None = None,
) -> dict[str, Any]:
    """Run the retrieval task and return the metrics dict (see module docstring).

    With ``min_score``, the dict also holds ``min_score``: the metrics counted
    over the hits whose calibrated score reaches it only, ``abstain``, the
    share of the adversarial (category 5, unanswerable) questions with no
    top-10 hit at or above it, and ``abstain_foreign``, the same for every
    other answerable question of the next conversation of the split, asked
    as this conversation's user.
    """
    results = run_locomo_variants(
        data,
        split_name,
        {"default": None},
        settings=settings,
        embedder=embedder,
        db_path=db_path,
        store=store,
        k_max=k_max,
        progress=progress,
        min_score=min_score,
    )
    return results["default"]


def run_locomo_variants(
    data: str | Path,
    split_name: Literal["dev", "holdout", "all"],
    variants: Mapping[str, Settings | None],
    *,
    settings: Settings | None = None,
    embedder: Embedder | None = None,
    db_path: str | Path | None = None,
    store: str | None = None,
    k_max: int = 20,
    progress: Callable[[str, int], None] | None = None,
    on_result: Callable[[str, dict[str, Any]], None] | None = None,
    min_score: float | None = None,
) -> dict[str, dict[str, Any]]:
    """Ingest the split once (under ``settings``), then ask every question under
    each variant's settings (read-side knobs; None = ``settings``): ``{name: metrics}``."""
    convs = split(load_locomo(data), split_name)
    report = combined_report(convs)
    clock = FixedClock(convs[0].last_session_date)
    out: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory(prefix="kenning-locomo-") as tmp:
        path = Path(db_path) if db_path else Path(tmp) / "locomo.db"
        mem = open_bench_memory(store, path, settings, embedder=embedder, clock=clock)
        base = mem.settings
        try:
            started = time.perf_counter()
            n_turns = load_conversations(mem, convs, progress)
            ingest_s = time.perf_counter() - started
            for name, variant in variants.items():
                mem.settings = variant or base
                rankings, scores, questions, latencies = ask_questions(
                    mem, convs, clock, k_max, progress
                )
                result = score(rankings, questions, ks=(1, 5, 10, 20))
                if min_score is not None:
                    result["min_score"] = _thresholded(
                        mem, convs, clock, rankings, scores, questions, min_score
                    )
                result["latency_ms"] = percentiles(latencies)
                result["split"] = split_name
                result["conversations"] = [c.sample_id for c in convs]
                result["turns"] = n_turns
                result["ingest_per_s"] = round(n_turns / ingest_s, 1)
                result["evidence_repairs"] = {
                    "split_entries": report.split_entries,
                    "normalised_ids": report.normalised_ids,
                    "dropped_ids": report.dropped_ids,
                    "questions_without_evidence": report.questions_without_evidence,
                }
                result["settings"] = _settings_summary(mem.settings)
                out[name] = result
                if on_result:
                    on_result(name, result)
        finally:
            mem.close()
    return out


def conversation_user(conv: Conversation) -> Principal:
    """The principal a conversation's memories belong to (one user per conversation)."""
    return Principal(org_id="locomo", user_id=conv.sample_id, roles=frozenset({Role.MEMBER}))


def load_conversations(
    mem: Memory,
    convs: Sequence[Conversation],
    progress: Callable[[str, int], None] | None = None,
) -> int:
    """Every turn of every conversation as a memory of that conversation's user; the
    number of turns."""
    n_turns = 0
    for conv in convs:
        items = [
            {
                "content": t.document,
                "event_at": t.session_date,
                "memory_type": "episodic",
                "metadata": {"dia_id": t.dia_id, "speaker": t.speaker},
                "source": "user_input",
                "session_id": f"{conv.sample_id}/session_{t.session}",
            }
            for t in conv.turns
        ]
        mem.remember_many(items, principal=conversation_user(conv))
        n_turns += len(items)
        if progress:
            progress("ingest", len(items))
    return n_turns


#: How a question is recalled: (memory, question, principal, k) -> hits, best first.
Recall = Callable[[Memory, str, Principal, int], Sequence[Hit]]


def _recall(mem: Memory, text: str, who: Principal, k: int) -> Sequence[Hit]:
    return mem.recall(text, k, principal=who).hits


def ask_questions(
    mem: Memory,
    convs: Sequence[Conversation],
    clock: FixedClock,
    k_max: int,
    progress: Callable[[str, int], None] | None = None,
    recall: Recall = _recall,
) -> tuple[list[list[str]], list[list[float]], list[Question], list[float]]:
    """Every scorable question, recalled as its conversation's user (by ``recall``,
    the memory's own by default): rankings, the hits' scores, the questions and
    the latencies."""
    rankings: list[list[str]] = []
    scores: list[list[float]] = []
    questions: list[Question] = []
    latencies: list[float] = []
    for conv in convs:
        who = conversation_user(conv)
        clock.set(conv.last_session_date + timedelta(days=1))
        for q in conv.questions:
            if not q.scorable:
                continue
            t = time.perf_counter()
            hits = recall(mem, q.question, who, k_max)
            latencies.append((time.perf_counter() - t) * 1000)
            rankings.append([h.memory.metadata["dia_id"] for h in hits])
            scores.append([h.score for h in hits])
            questions.append(q)
            if progress:
                progress("recall", 1)
    return rankings, scores, questions, latencies


def _thresholded(
    mem: Memory,
    convs: Sequence[Conversation],
    clock: FixedClock,
    rankings: Sequence[Sequence[str]],
    scores: Sequence[Sequence[float]],
    questions: Sequence[Question],
    min_score: float,
) -> dict[str, Any]:
    """The metrics over the hits scoring at least ``min_score`` (a hit below it
    keeps its place, empty, so the others' ranks stay), and the share of
    category-5 questions, and of questions from another conversation, with no
    top-10 hit at or above it."""
    kept = [
        [i if s >= min_score else "" for i, s in zip(ids, ss, strict=True)]
        for ids, ss in zip(rankings, scores, strict=True)
    ]
    out = score(kept, questions, ks=(1, 5, 10, 20))
    out["threshold"] = min_score
    adversarial = [(c, [q.question for q in c.questions if q.category == 5]) for c in convs]
    out["adversarial_questions"] = sum(len(qs) for _, qs in adversarial)
    out["abstain"] = _abstain(mem, clock, adversarial, min_score)
    # every other answerable question of the next conversation: about people
    # and events this user's memories do not hold
    foreign = [
        (c, [q.question for q in convs[(i + 1) % len(convs)].questions if q.scorable][::2])
        for i, c in enumerate(convs)
    ]
    out["foreign_questions"] = sum(len(qs) for _, qs in foreign) if len(convs) > 1 else 0
    out["abstain_foreign"] = _abstain(mem, clock, foreign, min_score) if len(convs) > 1 else None
    return out


def _abstain(
    mem: Memory,
    clock: FixedClock,
    asked: Sequence[tuple[Conversation, Sequence[str]]],
    min_score: float,
) -> float | None:
    """The share of ``asked`` questions (each of its conversation's user) with no
    top-10 hit scoring at least ``min_score``."""
    n = abstained = 0
    for conv, texts in asked:
        who = conversation_user(conv)
        clock.set(conv.last_session_date + timedelta(days=1))
        for text in texts:
            hits = mem.recall(text, 10, principal=who)
            n += 1
            abstained += all(h.score < min_score for h in hits)
    return abstained / n if n else None


def _settings_summary(s: Settings) -> Mapping[str, Any]:
    return {
        "fusion": s.retrieval.fusion,
        "fusion_alpha": s.retrieval.fusion_alpha,
        "candidates": [s.retrieval.candidates_dense, s.retrieval.candidates_keyword],
        "scoring": s.scoring.model_dump(),
    }
