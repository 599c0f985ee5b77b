"""Fit the calibrated score's coefficients on dev data only: the LoCoMo dev split
(the shipped coefficients), with ``--with-currency`` also the currency
benchmark's dev kinds.

    python bench/fit_calibration.py --data /work/shared/bench/locomo10.json \\
        [--cache /tmp/cal/dev.npz] [--k 20] [--with-currency]

Ingests the dev conversations (as ``kenning bench locomo`` does), asks every
question of categories 1-5 with ``explain=True``, and reads each hit's
calibration inputs (:mod:`kenning.retrieval.calibration`). It also asks each
user every other answerable question of the next dev conversation ("foreign"
questions: about people and events this user's memories do not hold). Labels:
a hit is positive when its turn is evidence for a question of categories 1-4;
every other hit is negative, and so is every hit of a category-5
(adversarial, unanswerable) or foreign question. A logistic regression (L2 1e-3, Newton/IRLS, numpy
only) is fit on them; the script prints the coefficients to paste into
``calibration.py``, the fit's log loss and AUC, and for a range of thresholds
the share of category-5 questions with no top-10 hit at or above it and the
recall@10 of the answerable questions counted over those hits only.
The features are cached (``--cache``) so a refit needs no new run.

With ``--with-currency`` the currency users (``kenning bench currency``; loaded
through ``write`` and through ``ingest``) add the other kind of memory a service holds: short
first-person facts. Their questions about the dev kinds only: a hit is positive
when it states the value asked for (the current one for "now", the previous one
for "before"); an older value for "now" and the current one for "before" are
left out (relevant, but not the answer); every other hit is negative, and so is
every hit of an unanswerable question about a dev kind (a kind the user never
stated, or a relative nobody described). Questions about no kind at all are
left out: the held-out report asks them too. The threshold table then also
shows, per threshold, the share of those unanswerable questions with no top-10
hit at or above it (``currency_abstain``) and of answerable ones whose answer
stays (``currency_kept@10``).
"""

from __future__ import annotations

import argparse
import json
import math
import tempfile
from collections.abc import Callable, Iterable
from datetime import timedelta
from pathlib import Path
from typing import Any

import numpy as np

from kenning.bench.currency import Labels, load_users, user_principal
from kenning.bench.currency_data import DEV_KINDS, NOW, Question, generate
from kenning.bench.locomo import conversation_user, load_conversations
from kenning.bench.locomo_data import load_locomo, split
from kenning.bench.stores import open_bench_memory
from kenning.clock import FixedClock
from kenning.models import Hit
from kenning.retrieval.calibration import INPUTS, calibrate


class _Hits:
    """What the fit reads: per hit its inputs, label, question, rank and category;
    per question its number of evidence items. Question indices start at ``first``."""

    def __init__(self, first: int = 0) -> None:
        self.q = first
        self.rows: list[list[float]] = []
        self.labels: list[int] = []
        self.qidx: list[int] = []
        self.ranks: list[int] = []
        self.cats: list[int] = []
        self.n_evidence: list[int] = []

    def question(
        self, hits: Iterable[Hit], label: Callable[[Hit], int | None], cat: int, evidence: int
    ) -> None:
        """One question's hits (``label`` None: the hit is left out of the fit)."""
        for rank, h in enumerate(hits, 1):
            y = label(h)
            if y is None:
                continue
            assert h.explain is not None
            inputs = h.explain.calibration["inputs"]
            self.rows.append([inputs[name] for name in INPUTS])
            self.ranks.append(rank)
            self.labels.append(y)
            self.qidx.append(self.q)
            self.cats.append(cat)
        self.n_evidence.append(evidence)
        self.q += 1

    def arrays(self) -> dict[str, np.ndarray]:
        """The collected rows as the arrays :func:`fit` and :func:`thresholds` read."""
        return {
            "x": np.asarray(self.rows, dtype=float),
            "y": np.asarray(self.labels, dtype=float),
            "q": np.asarray(self.qidx),
            "rank": np.asarray(self.ranks),
            "cat": np.asarray(self.cats),
            "n_evidence": np.asarray(self.n_evidence),
        }


def _turn_label(evidence: set[str]) -> Callable[[Hit], int | None]:
    """A LoCoMo hit is positive when its turn is evidence."""
    return lambda h: int(h.memory.metadata["dia_id"] in evidence)


def _currency_label(stated: Labels, question: Question) -> tuple[Callable[[Hit], int | None], int]:
    """How a currency question's hits are labelled (see the module docstring), and
    its evidence count: positive when the hit states the value asked for; an
    older value for "now" and the current one for "before" are left out."""
    target = question.current if question.role == "now" else question.previous
    if not question.answerable:
        target = None
    aside = set(question.stale) if question.role == "now" else set()
    if question.role == "before" and question.current:
        aside.add(question.current)

    def label(h: Hit) -> int | None:
        said = stated.get(h.memory.id, frozenset())
        answers = target is not None and target in said
        return None if not answers and said & aside else int(answers)

    return label, int(target is not None)


def collect(data: str, k: int) -> dict[str, np.ndarray]:
    """Inputs, labels, question index, rank and category of every dev hit."""
    convs = split(load_locomo(data), "dev")
    clock = FixedClock(convs[0].last_session_date)
    out = _Hits()
    with tempfile.TemporaryDirectory(prefix="kenning-fit-") as tmp:
        mem = open_bench_memory(None, Path(tmp) / "fit.db", None, clock=clock)
        try:
            load_conversations(mem, convs, None)
            for conv in convs:
                who = conversation_user(conv)
                clock.set(conv.last_session_date + timedelta(days=1))
                for question in conv.questions:
                    answerable = question.scorable
                    if not answerable and question.category != 5:
                        continue
                    hits = mem.recall(question.question, k, explain=True, principal=who).hits
                    evidence = set(question.evidence) if answerable else set()
                    out.question(hits, _turn_label(evidence), question.category, len(evidence))
                other = convs[(convs.index(conv) + 1) % len(convs)]
                for question in [x for x in other.questions if x.scorable][::2]:
                    hits = mem.recall(question.question, k, explain=True, principal=who).hits
                    out.question(hits, _turn_label(set()), 0, 0)
        finally:
            mem.close()
    return {"names": np.asarray(INPUTS), **out.arrays()}


def collect_currency(k: int, offset: int) -> dict[str, np.ndarray]:
    """The currency dev kinds' hits (see the module docstring); question indices
    start at ``offset``; category -1 marks a currency question."""
    data = generate()
    out = _Hits(offset)
    for via in ("write", "ingest"):
        with tempfile.TemporaryDirectory(prefix="kenning-fit-") as tmp:
            clock = FixedClock(NOW)
            mem = open_bench_memory(None, Path(tmp) / "currency.db", None, clock=clock)
            try:
                stated, _ = load_users(mem, clock, data.users, via)
                clock.set(NOW)
                for user in data.users:
                    who = user_principal(user.uid)
                    for question in user.questions:
                        if question.kind not in DEV_KINDS:
                            continue
                        label, evidence = _currency_label(stated, question)
                        hits = mem.recall(question.text, k, explain=True, principal=who).hits
                        out.question(hits, label, -1, evidence)
            finally:
                mem.close()
    return out.arrays()


def fit(x: np.ndarray, y: np.ndarray, l2: float = 1e-3, steps: int = 25) -> np.ndarray:
    """Logistic regression by Newton/IRLS; returns [intercept, *coefficients]."""
    a = np.hstack([np.ones((len(x), 1)), x])
    w = np.zeros(a.shape[1])
    reg = l2 * np.eye(a.shape[1])
    reg[0, 0] = 0.0
    for _ in range(steps):
        p = 1.0 / (1.0 + np.exp(-(a @ w)))
        grad = a.T @ (p - y) + reg @ w
        hess = (a * (p * (1 - p))[:, None]).T @ a + reg
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.max(np.abs(step)) < 1e-8:
            break
    return w


def auc(p: np.ndarray, y: np.ndarray) -> float:
    """Area under the ROC curve (rank statistic)."""
    order = np.argsort(p)
    ranks = np.empty(len(p))
    ranks[order] = np.arange(1, len(p) + 1)
    pos = y == 1
    n_pos, n_neg = pos.sum(), (~pos).sum()
    return float((ranks[pos].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def thresholds(d: dict[str, np.ndarray], p: np.ndarray, k: int = 10) -> list[dict[str, Any]]:
    """For a range of t: the share of adversarial and of foreign questions with no
    top-``k`` hit at or above t, and recall@10 counted over the hits at or above t."""
    top = d["rank"] <= k
    out = []
    adv = np.unique(d["q"][d["cat"] == 5])
    foreign = np.unique(d["q"][d["cat"] == 0])
    cur = np.unique(d["q"][d["cat"] == -1])
    cur_unanswerable = [q for q in cur if d["n_evidence"][q] == 0]
    cur_answerable = [q for q in cur if d["n_evidence"][q] > 0]
    in_currency = set(cur.tolist())
    ans = [q for q in np.flatnonzero(d["n_evidence"] > 0) if q not in in_currency]
    for t in [
        0.0,
        *np.round(np.arange(0.002, 0.02, 0.002), 3),
        *np.round(np.arange(0.02, 0.31, 0.01), 2),
    ]:
        keep = top & (p >= t)
        adv_hit = np.unique(d["q"][keep & (d["cat"] == 5)])
        foreign_hit = np.unique(d["q"][keep & (d["cat"] == 0)])
        spoke = set(np.unique(d["q"][keep & (d["cat"] == -1)]).tolist())
        top10 = (d["rank"] <= 10) & (p >= t) & (d["y"] == 1)
        found = np.bincount(d["q"][top10], minlength=len(d["n_evidence"]))
        recall = np.mean([min(1.0, found[q] / d["n_evidence"][q]) for q in ans])
        row = {
            "t": float(t),
            "abstain_adversarial": round(1 - len(adv_hit) / max(1, len(adv)), 4),
            "abstain_foreign": round(1 - len(foreign_hit) / max(1, len(foreign)), 4),
            "recall@10": round(float(recall), 4),
        }
        if cur_unanswerable:
            quiet = sum(q not in spoke for q in cur_unanswerable)
            row["currency_abstain"] = round(quiet / len(cur_unanswerable), 4)
            kept = sum(found[q] > 0 for q in cur_answerable)
            row["currency_kept@10"] = round(kept / max(1, len(cur_answerable)), 4)
        out.append(row)
    return out


def main() -> None:
    """Collect (or load) the dev features, fit, print the coefficients and figures."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", required=True)
    ap.add_argument("--cache", default=None)
    ap.add_argument("--k", type=int, default=20)
    ap.add_argument(
        "--with-currency", action="store_true", help="also the currency benchmark's dev kinds"
    )
    args = ap.parse_args()
    if args.cache and Path(args.cache).exists():
        d = dict(np.load(args.cache))
        names = [str(n) for n in d["names"]]
        d["x"] = d["x"][:, [names.index(n) for n in INPUTS]]
    else:
        d = collect(args.data, args.k)
        if args.with_currency:
            extra = collect_currency(args.k, len(d["n_evidence"]))
            d = {key: np.concatenate([d[key], extra[key]]) if key in extra else d[key] for key in d}
        if args.cache:
            np.savez(args.cache, **d)
    w = fit(d["x"], d["y"])
    a = np.hstack([np.ones((len(d["x"]), 1)), d["x"]])
    p = 1.0 / (1.0 + np.exp(-(a @ w)))
    eps = 1e-12
    loss = -np.mean(d["y"] * np.log(p + eps) + (1 - d["y"]) * np.log(1 - p + eps))
    current = np.array([calibrate(dict(zip(INPUTS, row, strict=True)))[0] for row in d["x"]])
    print(
        json.dumps(
            {
                "hits": len(d["y"]),
                "positives": int(d["y"].sum()),
                "questions": len(d["n_evidence"]),
                "INTERCEPT": round(float(w[0]), 3),
                "COEFFICIENTS": {n: round(float(c), 3) for n, c in zip(INPUTS, w[1:], strict=True)},
                "log_loss": round(float(loss), 4),
                "auc": round(auc(p, d["y"]), 4),
                "base_rate": round(float(d["y"].mean()), 4),
                "mean_p": round(float(p.mean()), 4),
                "thresholds_fit": thresholds(d, p),
                "thresholds_current_constants": thresholds(d, current),
                "thresholds_current_constants_top20": thresholds(d, current, 20),
                "base_log_loss": round(-math.log(0.5), 4),
            },
            indent=1,
        )
    )


if __name__ == "__main__":
    main()
