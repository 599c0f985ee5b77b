"""Fit the learned relevance's weights (:mod:`kenning.retrieval.order`) on the
LoCoMo dev split only, and check them by leaving one dev conversation out at a time.

    python bench/fit_order.py --data /work/shared/bench/locomo10.json \\
        [--cache /tmp/order/dev.npz] [--k 10] [--l2 1e-3] [--weights 0.5,1] [--drop F,G]

Ingests the dev conversations (as ``kenning bench locomo`` does) and asks
every question of categories 1-4 with ``k`` hits (the default recall: its
candidate pool is the pool the step reads). Inside each recall the step's
features are read for the whole pool, best relevance of the signals first, and
the relevance is left as it was. Labels: a candidate is positive when its turn
is evidence for the question.

The fit: for every question, every pair of an evidence candidate and another
candidate gives the difference of their standardised features; a logistic
loss on the model's score difference (L2 ``--l2``, Newton steps, numpy only;
each question weighs the same) is minimised over all pairs, with the weights
of :data:`~kenning.retrieval.order.MONOTONE` held to their signs (a weight fit
on the wrong side is fixed at 0 and the rest refit). The script prints

* recall@10 per category and multi-hop all-hit@20 over the pools in the
  signals' order and, for each ``--weights`` blend, in the order of the
  signals' relevance blended with the model's (both normalised), the model
  fit on the other dev conversations each time (leave one conversation out);
* ``MEAN``, ``SCALE`` and ``WEIGHTS`` fit on the whole dev split, to paste
  into ``src/kenning/retrieval/order.py``.

``--drop`` leaves features out (an ablation). The features are cached
(``--cache``) so a refit needs no new run.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from collections.abc import Callable, Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

import numpy as np

import kenning.retrieval.pipeline as pipeline
from kenning.bench.locomo import conversation_user, load_conversations
from kenning.bench.locomo_data import CATEGORY_NAMES, Question, load_locomo, split
from kenning.bench.stores import open_bench_memory
from kenning.clock import FixedClock
from kenning.config import ScoringWeights
from kenning.models import MemoryRecord
from kenning.retrieval.order import FEATURES, MONOTONE, features, ranked_pool, runs_for
from kenning.scoring import normalise


class _Recorder:
    """Stands in for the step inside the pipeline: keeps each pool's features and
    records (best relevance first), and leaves the relevance as it was."""

    def __init__(self) -> None:
        self.last: tuple[np.ndarray, list[MemoryRecord]] | None = None

    def __call__(
        self, ctx: Any, adjusted: Any, relevance: dict[str, float], question: Any
    ) -> dict[str, float]:
        if not runs_for(ctx, question):
            return relevance  # the step leaves these as they are
        ids = ranked_pool(adjusted, ctx)
        if len(ids) >= 2:
            self.last = (features(ctx, ids, adjusted, relevance), [ctx.records[i] for i in ids])
        return relevance


class _Pools:
    """The collected pools: feature rows and labels per candidate, and per pool its
    conversation's index, category and evidence count."""

    def __init__(self) -> None:
        self.rows: list[np.ndarray] = []
        self.labels: list[np.ndarray] = []
        self.qidx: list[np.ndarray] = []
        self.group: list[int] = []
        self.cats: list[int] = []
        self.n_evidence: list[int] = []
        self.recorder = _Recorder()

    def ask(self, mem: Any, question: Question, who: Any, k: int, conv: int) -> None:
        """Recall ``question`` and keep its pool, each candidate labelled 1 when its
        turn is evidence."""
        self.recorder.last = None
        mem.recall(question.question, k, principal=who)
        if self.recorder.last is None:
            return
        x, records = self.recorder.last
        evidence = set(question.evidence)
        self.rows.append(x)
        self.labels.append(np.array([r.metadata.get("dia_id") in evidence for r in records], float))
        self.qidx.append(np.full(len(records), len(self.cats)))
        self.group.append(conv)
        self.cats.append(question.category)
        self.n_evidence.append(len(evidence))

    def arrays(self) -> dict[str, np.ndarray]:
        """The pools as the arrays :func:`fit` and :func:`leave_one_out` read."""
        return {
            "x": np.vstack(self.rows),
            "y": np.concatenate(self.labels),
            "q": np.concatenate(self.qidx),
            "conv": np.asarray(self.group),
            "cat": np.asarray(self.cats),
            "n_evidence": np.asarray(self.n_evidence),
        }


def collect(data: str, k: int) -> dict[str, np.ndarray]:
    """Every dev pool (see the module docstring)."""
    pools = _Pools()
    real, pipeline.learned_relevance = pipeline.learned_relevance, pools.recorder  # type: ignore[assignment]
    try:
        _locomo(pools, data, k)
    finally:
        pipeline.learned_relevance = real  # type: ignore[assignment]
    return pools.arrays()


def _locomo(pools: _Pools, data: str, k: int) -> None:
    convs = split(load_locomo(data), "dev")
    clock = FixedClock(convs[0].last_session_date)
    with tempfile.TemporaryDirectory(prefix="kenning-fit-order-") as tmp:
        mem = open_bench_memory(None, Path(tmp) / "fit.db", None, clock=clock)
        try:
            load_conversations(mem, convs, None)
            for c, conv in enumerate(convs):
                who = conversation_user(conv)
                clock.set(conv.last_session_date + timedelta(days=1))
                for question in conv.questions:
                    if question.scorable:
                        pools.ask(mem, question, who, k, c)
        finally:
            mem.close()


def fit(
    x: np.ndarray,
    y: np.ndarray,
    q: np.ndarray,
    l2: float,
    signs: Sequence[int] | None = None,
    steps: int = 30,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Mean, scale and weights of the pairwise logistic model (see the module
    docstring). ``signs`` (one per column; 0: free) holds weights to a sign: a
    weight fit on the wrong side is fixed at 0 and the rest fit again, until
    none is (an active set)."""
    mean = x.mean(axis=0)
    scale = x.std(axis=0)
    scale[scale < 1e-9] = 1.0
    z = (x - mean) / scale
    pairs, weights = [], []
    for question in np.unique(q):
        at = q == question
        zq, yq = z[at], y[at]
        pos, neg = zq[yq == 1], zq[yq == 0]
        if len(pos) and len(neg):
            pairs.append((pos[:, None, :] - neg[None, :, :]).reshape(-1, z.shape[1]))
            weights.append(np.full(len(pos) * len(neg), 1.0 / (len(pos) * len(neg))))
    d, a = np.vstack(pairs), np.concatenate(weights)  # each question weighs the same
    sign = np.zeros(z.shape[1]) if signs is None else np.asarray(signs, dtype=float)
    free = np.ones(z.shape[1], dtype=bool)
    while True:
        w = np.zeros(z.shape[1])
        w[free] = _newton(d[:, free], a, l2, steps)
        wrong = free & (sign * w < 0)
        if not wrong.any():
            return mean, scale, w
        free &= ~wrong


def _newton(d: np.ndarray, a: np.ndarray, l2: float, steps: int) -> np.ndarray:
    """Weights minimising the weighted logistic loss of the pair differences ``d``."""
    w = np.zeros(d.shape[1])
    reg = l2 * a.sum() * np.eye(d.shape[1])
    for _ in range(steps):
        p = 1.0 / (1.0 + np.exp(-(d @ w)))  # chance the evidence ranks above the other
        grad = -d.T @ (a * (1.0 - p)) + reg @ w
        hess = (d * (a * p * (1.0 - p))[:, None]).T @ d + reg
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.max(np.abs(step)) < 1e-8:
            break
    return w


def _metrics(order_of: Any, arrays: dict[str, np.ndarray], questions: np.ndarray) -> dict[str, Any]:
    """Recall@10 overall and per category, multi-hop all-hit@20, over ``questions``."""
    per: dict[str, list[float]] = {}
    allhit: list[float] = []
    for question in questions:
        at = arrays["q"] == question
        y = arrays["y"][at][order_of(question, at)]
        n = arrays["n_evidence"][question]
        r10 = float(y[:10].sum()) / n
        name = CATEGORY_NAMES[int(arrays["cat"][question])]
        per.setdefault("all", []).append(r10)
        per.setdefault(name, []).append(r10)
        if name == "multi-hop":
            allhit.append(float(y[:20].sum() >= n))
    out: dict[str, Any] = {f"recall@10 {k}": round(float(np.mean(v)), 4) for k, v in per.items()}
    out["multi-hop all-hit@20"] = round(float(np.mean(allhit)), 4) if allhit else None
    return out


def _normalised(scores: np.ndarray) -> np.ndarray:
    """The scores normalised as the pipeline normalises relevance (the default
    ``scoring.relevance_norm`` and ``relevance_window``)."""
    w = ScoringWeights()
    out = normalise(dict(enumerate(scores.tolist())), w.relevance_norm, w.relevance_window)
    return np.array([out[i] for i in range(len(scores))])


def leave_one_out(
    arrays: dict[str, np.ndarray],
    l2: float,
    weights: Sequence[float] = (1.0,),
    names: Sequence[str] = FEATURES,
) -> dict[str, Any]:
    """The signals' relevance order, and each blend of it with the model's at the
    given ``weights``; each conversation scored by a model fit on the others.
    ``names``: the features of ``arrays["x"]``'s columns; ``arrays["relevance"]``
    is the signals' normalised relevance the blends mix in."""
    questions = np.arange(len(arrays["cat"]))
    signs = [MONOTONE.get(name, 0) for name in names]
    models = {}
    for c in np.unique(arrays["conv"]):
        train = np.isin(arrays["q"], questions[arrays["conv"] != c])
        models[int(c)] = fit(arrays["x"][train], arrays["y"][train], arrays["q"][train], l2, signs)

    def blend(weight: float) -> Callable[[int, np.ndarray], np.ndarray]:
        def order(question: int, at: np.ndarray) -> np.ndarray:
            mean, scale, w = models[int(arrays["conv"][question])]
            x = arrays["x"][at]
            scores = np.round(((x - mean) / scale) @ w, 6)
            mixed = (1 - weight) * arrays["relevance"][at] + weight * _normalised(scores)
            return np.argsort(-mixed, kind="stable")

        return order

    out = {"relevance": _metrics(lambda q, at: np.arange(int(at.sum())), arrays, questions)}
    for weight in weights:
        out[f"blend {weight:g}"] = _metrics(blend(weight), arrays, questions)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", required=True)
    ap.add_argument("--cache", default=None, help="npz of the collected features")
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--l2", type=float, default=1e-3)
    ap.add_argument(
        "--weights",
        type=lambda v: [float(x) for x in v.split(",")],
        default=[0.25, 0.5, 0.75, 1.0],
        help="blend weights of the model's relevance to report (comma-separated)",
    )
    ap.add_argument(
        "--drop", default="", help="comma-separated features to leave out (an ablation)"
    )
    args = ap.parse_args()
    if args.cache and Path(args.cache).exists():
        arrays = dict(np.load(args.cache))
    else:
        arrays = collect(args.data, args.k)
        if args.cache:
            Path(args.cache).parent.mkdir(parents=True, exist_ok=True)
            np.savez(args.cache, **arrays)
    dropped = [f for f in args.drop.split(",") if f]
    unknown = set(dropped) - set(FEATURES)
    if unknown:
        ap.error(f"unknown features: {', '.join(sorted(unknown))}")
    arrays["relevance"] = arrays["x"][:, FEATURES.index("relevance")]  # the blends read it
    keep = [i for i, f in enumerate(FEATURES) if f not in dropped]
    names = [FEATURES[i] for i in keep]
    arrays["x"] = arrays["x"][:, keep]
    report = {
        "dropped": dropped,
        "questions": len(arrays["cat"]),
        "candidates": len(arrays["y"]),
        "leave_one_conversation_out": leave_one_out(arrays, args.l2, args.weights, names),
    }
    print(json.dumps(report, indent=2))
    signs = [MONOTONE.get(name, 0) for name in names]
    mean, scale, w = fit(arrays["x"], arrays["y"], arrays["q"], args.l2, signs)
    for name, values in (("MEAN", mean), ("SCALE", scale), ("WEIGHTS", w)):
        print(f"{name}: Mapping[str, float] = {{")
        for feature, value in zip(names, values, strict=True):
            print(f'    "{feature}": {value:.6g},')
        print("}")


if __name__ == "__main__":
    main()
