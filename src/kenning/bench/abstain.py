"""Abstention benchmark: does a score threshold separate answers from nothing?

Two question sets, each asked as its user with ``recall(q, k)``:

* **currency** (:mod:`.currency_data`, loaded through ``Memory.write`` or
  ``ingest`` as in the currency benchmark): *answerable* are the
  now-questions (evidence: the current value's memory) and the
  before-questions (evidence: the previous value's memory) of the split's
  kinds; *unanswerable* are, per user, a now-question about each kind the user
  never stated (``unstated``; one of them beside a look-alike fact of that
  kind about someone else), a question about a relative nobody described
  (``other``) and one about nothing any user states (``unknown``; asked in
  every split).
* **LoCoMo** (``locomo=PATH``; every turn a memory, as ``kenning bench
  locomo``; its dev/held-out conversations): *answerable* are the category
  1-4 questions with evidence turns, *unanswerable* the category-5
  (adversarial) questions, whose answer is "not mentioned".

Recall runs without ``min_score`` and with abstention off
(``retrieval.abstain_below``), and each threshold ``t`` is applied here. For
each ``t`` of :data:`GRID` (and ``min_score`` if given):
``unanswerable_abstained`` = share of unanswerable questions with no hit
scoring ``t`` (no hit kept, either way); ``answerable_kept`` = share of
answerable questions whose evidence is among the top-k hits kept as
``min_score`` keeps them (a hit is kept when ``hit.score >= t``);
``answerable_kept_abstaining`` = the same as ``abstain_below`` keeps them (every
hit, unless none scores ``t``). ``at_abstain_below`` gives these at
``abstain_below`` (default :data:`~kenning.config.ABSTAIN_BELOW`, the value the
setting ``retrieval.abstain_below`` is advised to take), and ``recall@k``
(share of evidence turns in the top k) without and with abstaining there.
Also the distribution of the top-1 score per class, and the grid's best
threshold (highest abstained + kept).
"""

from __future__ import annotations

import statistics
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any, Literal

from ..clock import FixedClock
from ..config import ABSTAIN_BELOW, Settings
from ..embeddings import Embedder
from ..engine import Memory
from ..models import Hit
from .currency import Labels, load_users, user_principal
from .currency_data import NOW, User, generate, kinds_of
from .locomo import conversation_user, load_conversations
from .locomo_data import load_locomo, split
from .stores import open_bench_memory

__all__ = ["GRID", "Asked", "report", "run_abstain"]

#: Thresholds every report covers (fine at the low end, where calibrated
#: scores of a large store's hits sit).
GRID: tuple[float, ...] = (0.0, 0.001, 0.002, 0.005, 0.01, 0.02, 0.03, 0.05, 0.1, 0.2, 0.3, 0.5)
Split = Literal["dev", "holdout", "all"]


@dataclass(frozen=True, slots=True)
class Asked:
    """One question's outcome: its class, the top-1 score, the best evidence score,
    the best score of any hit, and the share of its evidence among the hits."""

    answerable: bool
    role: str
    top1: float | None
    evidence: float | None = None
    best: float | None = None
    recall: float = 0.0

    @property
    def highest(self) -> float | None:
        """The best score of any hit (hits are in priority order, not by score)."""
        return self.best if self.best is not None else self.top1


def _asked(
    hits: Sequence[Hit],
    answerable: bool,
    role: str,
    is_evidence: Sequence[bool],
    evidence_count: int = 1,
) -> Asked:
    """The scores of one recall (``is_evidence``: per hit, whether it is evidence;
    ``evidence_count``: how many evidence memories the question has)."""
    top1 = hits[0].score if hits else None
    found = [h.score for h, ok in zip(hits, is_evidence, strict=True) if ok]
    return Asked(
        answerable,
        role,
        top1,
        max(found) if found else None,
        max((h.score for h in hits), default=None),
        len(found) / evidence_count if evidence_count else 0.0,
    )


def _none_reaches(r: Asked, t: float) -> bool:
    high = r.highest
    return high is None or high < t


def _share(flags: Sequence[bool]) -> float | None:
    return round(sum(flags) / len(flags), 4) if flags else None


def _at(rows: Sequence[Asked], t: float) -> dict[str, Any]:
    """Abstained and kept shares at threshold ``t``."""
    unans = [r for r in rows if not r.answerable]
    ans = [r for r in rows if r.answerable]
    roles = sorted({r.role for r in unans})
    return {
        "min_score": t,
        "unanswerable_abstained": _share([_none_reaches(r, t) for r in unans]),
        "answerable_kept": _share([r.evidence is not None and r.evidence >= t for r in ans]),
        "answerable_kept_abstaining": _share(
            [r.evidence is not None and not _none_reaches(r, t) for r in ans]
        ),
        "abstained_by_role": {
            role: _share([_none_reaches(r, t) for r in unans if r.role == role]) for role in roles
        },
    }


def _recall(rows: Sequence[Asked], bar: float | None) -> float | None:
    """Mean share of the answerable questions' evidence among their hits, with the
    hits of a question none of whose hits reaches ``bar`` left out (None: kept)."""
    ans = [r for r in rows if r.answerable]
    if not ans:
        return None
    kept = [0.0 if bar is not None and _none_reaches(r, bar) else r.recall for r in ans]
    return round(statistics.fmean(kept), 4)


def _quantiles(values: Sequence[float]) -> dict[str, float] | None:
    if len(values) < 2:
        return None
    q = statistics.quantiles(values, n=10, method="inclusive")
    return {
        "p10": round(q[0], 4),
        "p50": round(statistics.median(values), 4),
        "p90": round(q[8], 4),
        "mean": round(statistics.fmean(values), 4),
    }


def _auc(pos: Sequence[float], neg: Sequence[float]) -> float | None:
    """P(an answerable top-1 score > an unanswerable one), ties half: separation, no threshold."""
    if not pos or not neg:
        return None
    wins = sum((p > n) + 0.5 * (p == n) for p in pos for n in neg)
    return round(wins / (len(pos) * len(neg)), 4)


def report(
    rows: Sequence[Asked], min_score: float | None = None, abstain_below: float | None = None
) -> dict[str, Any]:
    """The abstention figures of a set of questions (see the module docstring);
    ``abstain_below``: the abstention threshold reported as ``at_abstain_below``."""
    grid = [_at(rows, t) for t in GRID]
    best = max(grid, key=lambda g: (g["unanswerable_abstained"] or 0) + (g["answerable_kept"] or 0))
    out: dict[str, Any] = {
        "answerable": sum(r.answerable for r in rows),
        "unanswerable": sum(not r.answerable for r in rows),
        "answerable_with_evidence_in_top_k": _share(
            [r.evidence is not None for r in rows if r.answerable]
        ),
        "top1_score": {
            "answerable": _quantiles([r.top1 for r in rows if r.answerable and r.top1 is not None]),
            "unanswerable": _quantiles(
                [r.top1 for r in rows if not r.answerable and r.top1 is not None]
            ),
        },
        "top1_auc": _auc(
            [r.top1 or 0.0 for r in rows if r.answerable],
            [r.top1 or 0.0 for r in rows if not r.answerable],
        ),
        "grid": grid,
        "best_on_grid": best,
    }
    if min_score is not None:
        out["at_min_score"] = _at(rows, min_score)
    if abstain_below is not None:
        out["at_abstain_below"] = {
            **_at(rows, abstain_below),
            "recall": _recall(rows, None),
            "recall_abstaining": _recall(rows, abstain_below),
        }
    return out


def _ask_currency(
    mem: Memory, users: Sequence[User], kinds: Sequence[str], labels: Labels, k: int
) -> list[Asked]:
    """Every currency question of the split's kinds (and the kind-less ones)."""
    rows: list[Asked] = []
    for user in users:
        who = user_principal(user.uid)
        for q in user.questions:
            if q.kind is not None and q.kind not in kinds:
                continue
            target = q.current if q.role == "now" else q.previous
            hits = mem.recall(q.text, k, principal=who).hits
            marks = [target is not None and target in labels.get(h.memory.id, ()) for h in hits]
            rows.append(_asked(hits, q.answerable, q.role, marks))
    return rows


def _currency(
    split_name: Split,
    via: Literal["write", "ingest"],
    n_users: int,
    k: int,
    open_mem: Callable[..., Memory],
) -> list[Asked]:
    """Load the currency users and ask their questions."""
    data = generate(n_users)
    clock = FixedClock(NOW)
    mem = open_mem("abstain-currency.db", clock)
    try:
        labels, _ = load_users(mem, clock, data.users, via)
        clock.set(NOW)
        return _ask_currency(mem, data.users, kinds_of(split_name), labels, k)
    finally:
        mem.close()


def _locomo(path: Path, split_name: Split, k: int, open_mem: Callable[..., Memory]) -> list[Asked]:
    """LoCoMo's answerable (categories 1-4 with evidence) and adversarial questions."""
    convs = split(load_locomo(path), split_name)
    clock = FixedClock(convs[0].last_session_date)
    mem = open_mem("abstain-locomo.db", clock)
    rows: list[Asked] = []
    try:
        load_conversations(mem, convs)
        for conv in convs:
            who = conversation_user(conv)
            clock.set(conv.last_session_date + timedelta(days=1))
            for q in conv.questions:
                if not q.scorable and q.category != 5:
                    continue
                hits = mem.recall(q.question, k, principal=who).hits
                evidence = set(q.evidence) if q.scorable else set()
                role = "answerable" if q.scorable else "adversarial"
                marks = [h.memory.metadata.get("dia_id") in evidence for h in hits]
                rows.append(_asked(hits, q.scorable, role, marks, len(evidence)))
    finally:
        mem.close()
    return rows


def run_abstain(
    split_name: Split = "dev",
    *,
    locomo: str | Path | None = None,
    min_score: float | None = None,
    abstain_below: float | None = ABSTAIN_BELOW,
    via: Literal["write", "ingest"] = "write",
    n_users: int = 60,
    k: int = 10,
    settings: Settings | None = None,
    embedder: Embedder | None = None,
) -> dict[str, Any]:
    """Ask the currency (and, with ``locomo``, LoCoMo) questions; JSON-ready figures."""
    base = settings or Settings()
    # every hit is read here: the thresholds apply below
    bare = base.model_copy(
        update={"retrieval": base.retrieval.model_copy(update={"abstain_below": None})}
    )
    with tempfile.TemporaryDirectory(prefix="kenning-abstain-") as tmp:

        def open_mem(name: str, clock: FixedClock) -> Memory:
            return open_bench_memory(None, Path(tmp) / name, bare, embedder=embedder, clock=clock)

        out: dict[str, Any] = {
            "benchmark": "abstain",
            "split": split_name,
            "via": via,
            "k": k,
            "min_score": min_score,
            "abstain_below": abstain_below,
            "kinds": list(kinds_of(split_name)),
        }
        rows = _currency(split_name, via, n_users, k, open_mem)
        out["currency"] = report(rows, min_score, abstain_below)
        if locomo is not None:
            rows = _locomo(Path(locomo), split_name, k, open_mem)
            out["locomo"] = report(rows, min_score, abstain_below)
    return out
