"""LoCoMo loader, dev/held-out splits and retrieval scoring.

LoCoMo (Maharana et al., 2024, ``data/locomo10.json``) holds ten long
two-person conversations with question/answer pairs whose ``evidence`` names
the dialogue turns (``dia_id`` such as ``"D3:14"``) that support the answer.

The retrieval benchmark built on it treats every turn as one memory document
(see :attr:`Turn.document`), with the session date as its event time, and for
each question of categories 1-4 ranks the turns of that conversation. Rankings
are scored against the evidence ids by :func:`score`.

The published ``evidence`` lists have a few defects, which :func:`load_locomo`
repairs or drops and counts in a :class:`LoadReport`:

* several ids in one string (``"D8:6; D9:17"``, ``"D9:1 D4:4 D4:6"``) are split;
* malformed ids are normalised (``"D:11:26"`` -> ``"D11:26"``,
  ``"D30:05"`` -> ``"D30:5"``);
* ids that cannot be parsed (``"D"``) or name no turn of the conversation
  (``D10:19`` in conv-42, ``D4:36`` in conv-47) are dropped;
* repeated ids within one question are kept once.

Importing this module has no side effects; nothing is read until
:func:`load_locomo` is called.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Final, Literal

__all__ = [
    "CATEGORY_NAMES",
    "DEV",
    "HOLDOUT",
    "RETRIEVAL_CATEGORIES",
    "Conversation",
    "LoadReport",
    "Question",
    "Turn",
    "combined_report",
    "load_locomo",
    "load_locomo_with_report",
    "parse_session_date",
    "score",
    "split",
]

#: Conversations the retrieval scheme may be tuned on.
DEV: Final[tuple[str, ...]] = ("conv-26", "conv-30", "conv-41", "conv-42", "conv-43", "conv-44")
#: Conversations only ever reported on, never tuned on.
HOLDOUT: Final[tuple[str, ...]] = ("conv-47", "conv-48", "conv-49", "conv-50")

#: LoCoMo category codes to names. Category 5 (adversarial) has no retrieval target.
CATEGORY_NAMES: Final[Mapping[int, str]] = {
    4: "single-hop",
    1: "multi-hop",
    2: "temporal",
    3: "open-domain",
    5: "adversarial",
}
#: Categories whose questions are scored for retrieval, in report order.
RETRIEVAL_CATEGORIES: Final[tuple[int, ...]] = (4, 1, 2, 3)

_DATE_FORMAT: Final = "%I:%M %p on %d %B, %Y"
_SESSION_KEY: Final = re.compile(r"session_(\d+)")
_EVIDENCE_SEPARATORS: Final = re.compile(r"[;,\s]+")
_EVIDENCE_ID: Final = re.compile(r"D:?(\d+):(\d+)")


def parse_session_date(text: str) -> datetime:
    """Parse a LoCoMo session date such as ``"1:56 pm on 8 May, 2023"``.

    The result is a naive :class:`~datetime.datetime` to be read as UTC.

    Raises:
        ValueError: if ``text`` is not in that format.
    """
    return datetime.strptime(text.strip(), _DATE_FORMAT)


@dataclass(frozen=True, slots=True)
class Turn:
    """One dialogue turn, the unit stored as a memory."""

    dia_id: str
    speaker: str
    text: str
    session: int
    session_date: datetime
    """Date of the turn's session, naive, meaning UTC."""
    image_caption: str | None = None

    @property
    def document(self) -> str:
        """The memory text: ``"speaker: text"`` plus ``" [image: caption]"`` if shared."""
        doc = f"{self.speaker}: {self.text}"
        if self.image_caption:
            doc += f" [image: {self.image_caption}]"
        return doc


@dataclass(frozen=True, slots=True)
class Question:
    """A question with its answer and the (repaired) evidence turn ids."""

    question: str
    answer: str
    category: int
    evidence: tuple[str, ...]

    @property
    def category_name(self) -> str:
        """Human name of :attr:`category` (``"single-hop"``, ``"multi-hop"``, ...)."""
        return CATEGORY_NAMES.get(self.category, f"category-{self.category}")

    @property
    def scorable(self) -> bool:
        """True if the question counts for retrieval: category 1-4 with evidence."""
        return self.category in RETRIEVAL_CATEGORIES and bool(self.evidence)


@dataclass(frozen=True, slots=True)
class LoadReport:
    """What :func:`load_locomo` changed in the ``evidence`` lists.

    Attributes:
        split_entries: evidence strings that held several ids and were split.
        normalised_ids: ids rewritten to the canonical ``D<session>:<turn>`` form.
        duplicate_ids: repeated ids within one question, kept once.
        dropped: ``(sample_id, raw id)`` for every id dropped as unparsable or
            naming no turn of its conversation.
        questions_without_evidence: category 1-4 questions left with no evidence
            (they are excluded from scoring).
    """

    split_entries: int = 0
    normalised_ids: int = 0
    duplicate_ids: int = 0
    dropped: tuple[tuple[str, str], ...] = ()
    questions_without_evidence: int = 0

    @property
    def dropped_ids(self) -> int:
        """Number of evidence ids dropped."""
        return len(self.dropped)

    def __add__(self, other: LoadReport) -> LoadReport:
        return LoadReport(
            split_entries=self.split_entries + other.split_entries,
            normalised_ids=self.normalised_ids + other.normalised_ids,
            duplicate_ids=self.duplicate_ids + other.duplicate_ids,
            dropped=self.dropped + other.dropped,
            questions_without_evidence=(
                self.questions_without_evidence + other.questions_without_evidence
            ),
        )


@dataclass(frozen=True, slots=True)
class Conversation:
    """One LoCoMo sample: two speakers, their turns in order, and the questions."""

    sample_id: str
    speakers: tuple[str, str]
    turns: tuple[Turn, ...]
    questions: tuple[Question, ...]
    report: LoadReport = field(default_factory=LoadReport, compare=False)
    """Evidence repairs made while loading this conversation."""

    @property
    def last_session_date(self) -> datetime:
        """Date of the latest session (a natural "now" for this conversation)."""
        return max(t.session_date for t in self.turns)


def _repair_evidence(
    sample_id: str, raw: Iterable[Any], known: frozenset[str]
) -> tuple[tuple[str, ...], LoadReport]:
    split_entries = normalised = duplicates = 0
    dropped: list[tuple[str, str]] = []
    out: list[str] = []
    for entry in raw:
        tokens = [t for t in _EVIDENCE_SEPARATORS.split(str(entry).strip()) if t]
        if len(tokens) > 1:
            split_entries += 1
        if not tokens:
            dropped.append((sample_id, str(entry)))
        for token in tokens:
            m = _EVIDENCE_ID.fullmatch(token)
            if m is None:
                dropped.append((sample_id, token))
                continue
            dia_id = f"D{int(m.group(1))}:{int(m.group(2))}"
            if dia_id != token:
                normalised += 1
            if dia_id not in known:
                dropped.append((sample_id, token))
            elif dia_id in out:
                duplicates += 1
            else:
                out.append(dia_id)
    report = LoadReport(
        split_entries=split_entries,
        normalised_ids=normalised,
        duplicate_ids=duplicates,
        dropped=tuple(dropped),
    )
    return tuple(out), report


def _parse_conversation(sample: Mapping[str, Any]) -> Conversation:
    sample_id = str(sample["sample_id"])
    conv: Mapping[str, Any] = sample["conversation"]
    sessions = sorted(
        (int(m.group(1)), key) for key in conv if (m := _SESSION_KEY.fullmatch(key)) is not None
    )
    turns: list[Turn] = []
    for number, key in sessions:
        date = parse_session_date(str(conv[f"{key}_date_time"]))
        for raw in conv[key]:
            caption = raw.get("blip_caption")
            turns.append(
                Turn(
                    dia_id=str(raw["dia_id"]),
                    speaker=str(raw["speaker"]),
                    text=str(raw["text"]),
                    session=number,
                    session_date=date,
                    image_caption=str(caption) if caption else None,
                )
            )
    known = frozenset(t.dia_id for t in turns)

    report = LoadReport()
    questions: list[Question] = []
    for qa in sample.get("qa", ()):
        evidence, fixes = _repair_evidence(sample_id, qa.get("evidence", ()), known)
        report = report + fixes
        category = int(qa["category"])
        if category in RETRIEVAL_CATEGORIES and not evidence:
            report = report + LoadReport(questions_without_evidence=1)
        answer = qa.get("answer")
        if answer is None:
            answer = qa.get("adversarial_answer", "")
        questions.append(
            Question(
                question=str(qa["question"]),
                answer=str(answer),
                category=category,
                evidence=evidence,
            )
        )
    return Conversation(
        sample_id=sample_id,
        speakers=(str(conv["speaker_a"]), str(conv["speaker_b"])),
        turns=tuple(turns),
        questions=tuple(questions),
        report=report,
    )


def load_locomo_with_report(path: str | Path) -> tuple[list[Conversation], LoadReport]:
    """Load ``locomo10.json`` and return the conversations and the summed repairs."""
    with open(path, encoding="utf-8") as fh:
        data = json.load(fh)
    convs = [_parse_conversation(sample) for sample in data]
    return convs, combined_report(convs)


def load_locomo(path: str | Path) -> list[Conversation]:
    """Load ``locomo10.json`` into :class:`Conversation` objects, evidence repaired.

    Each conversation's repairs are in :attr:`Conversation.report`; see
    :func:`combined_report` or :func:`load_locomo_with_report` for the totals.
    """
    return load_locomo_with_report(path)[0]


def combined_report(convs: Iterable[Conversation]) -> LoadReport:
    """Sum the :attr:`Conversation.report` of several conversations."""
    total = LoadReport()
    for conv in convs:
        total = total + conv.report
    return total


def split(
    convs: Iterable[Conversation], name: Literal["dev", "holdout", "all"]
) -> list[Conversation]:
    """The conversations of one split, in their original order.

    Raises:
        ValueError: for an unknown split name.
    """
    if name == "all":
        return list(convs)
    if name == "dev":
        wanted = DEV
    elif name == "holdout":
        wanted = HOLDOUT
    else:
        raise ValueError(f"unknown split {name!r}; expected 'dev', 'holdout' or 'all'")
    return [c for c in convs if c.sample_id in wanted]


def _metrics(
    rows: Sequence[tuple[Sequence[str], tuple[str, ...]]], ks: Sequence[int]
) -> dict[str, float | int]:
    n = len(rows)
    out: dict[str, float | int] = {}
    recall = {k: 0.0 for k in ks}
    any_hit = {k: 0 for k in ks}
    all_hit = {k: 0 for k in ks}
    for ranked, evidence in rows:
        gold = set(evidence)
        for k in ks:
            found = len(gold.intersection(ranked[:k]))
            recall[k] += found / len(gold)
            any_hit[k] += found > 0
            all_hit[k] += found == len(gold)
    for k in ks:
        out[f"recall@{k}"] = recall[k] / n
    for k in ks:
        out[f"any_hit@{k}"] = any_hit[k] / n
    for k in ks:
        out[f"all_hit@{k}"] = all_hit[k] / n
    out["questions"] = n
    return out


def score(
    ranked_ids_per_question: Sequence[Sequence[str]],
    questions: Sequence[Question],
    ks: Sequence[int] = (1, 5, 10, 20),
) -> dict[str, Any]:
    """Score rankings of turn ids against the questions' evidence.

    ``ranked_ids_per_question[i]`` is the ranking (best first) returned for
    ``questions[i]``. Only category 1-4 questions with evidence are scored;
    the others are excluded and counted.

    Per question, with E its evidence ids and T_k the first k ranked ids,
    recall@k = |E ∩ T_k| / |E|, any_hit@k = [|E ∩ T_k| > 0] and
    all_hit@k = [E ⊆ T_k]; each is averaged over the scored questions.

    Returns:
        ``{"recall@k": ..., "any_hit@k": ..., "all_hit@k": ... for every k in ks,
        "questions": n, "skipped_no_evidence": m, "skipped_other_category": c,
        "by_category": {"single-hop": {...}, "multi-hop": {...}, "temporal": {...},
        "open-domain": {...}}}``; a category with no scored question is left out.
        With no scored question at all, the overall metrics are absent too.

    Raises:
        ValueError: if the two sequences differ in length or ``ks`` is empty or
            holds a non-positive k.
    """
    if len(ranked_ids_per_question) != len(questions):
        raise ValueError(f"{len(ranked_ids_per_question)} rankings for {len(questions)} questions")
    if not ks or any(k <= 0 for k in ks):
        raise ValueError(f"ks must be positive cut-offs, got {tuple(ks)}")
    ks = sorted(set(ks))
    skipped_no_evidence = skipped_other = 0
    rows: list[tuple[Sequence[str], tuple[str, ...]]] = []
    per_category: dict[int, list[tuple[Sequence[str], tuple[str, ...]]]] = {
        c: [] for c in RETRIEVAL_CATEGORIES
    }
    for ranked, question in zip(ranked_ids_per_question, questions, strict=True):
        if question.category not in RETRIEVAL_CATEGORIES:
            skipped_other += 1
            continue
        if not question.evidence:
            skipped_no_evidence += 1
            continue
        row = (list(ranked), question.evidence)
        rows.append(row)
        per_category[question.category].append(row)

    result: dict[str, Any] = _metrics(rows, ks) if rows else {"questions": 0}
    result["skipped_no_evidence"] = skipped_no_evidence
    result["skipped_other_category"] = skipped_other
    result["by_category"] = {
        CATEGORY_NAMES[c]: _metrics(cat_rows, ks)
        for c, cat_rows in per_category.items()
        if cat_rows
    }
    return result
