"""Reconcile-on-write accuracy on hand-written cases (``kenning bench reconcile``).

Each case is a new memory, its existing neighbours and the decision a careful
human would take (see ``data/reconcile_cases.json``). Every text is embedded
with the real local model, each neighbour gets its cosine to the new memory,
and the reconciler decides; a case counts as right when both the action and
the target are right.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np

from ..embeddings import Embedder, create_embedder
from ..errors import InvalidInput
from ..lifecycle.reconcile import Action, Incoming, Neighbour, Reconciler, RuleReconciler

__all__ = ["DEFAULT_CASES", "load_cases", "run_reconcile_bench"]

#: The shipped cases (package data).
DEFAULT_CASES = Path(__file__).parent / "data" / "reconcile_cases.json"

_CATEGORIES = (
    "duplicate",
    "paraphrase",
    "update",
    "contradiction",
    "elaboration",
    "unrelated",
    "related",
)


def load_cases(path: Path | str | None = None) -> list[dict[str, Any]]:
    """The cases at ``path`` (default :data:`DEFAULT_CASES`), checked for shape."""
    cases = json.loads(Path(path or DEFAULT_CASES).read_text(encoding="utf-8"))
    if not isinstance(cases, list) or not cases:
        raise InvalidInput("the cases file must hold a non-empty JSON list", field="cases")
    seen: set[str] = set()
    for case in cases:
        cid = case.get("id")
        if not isinstance(cid, str) or cid in seen:
            raise InvalidInput(f"missing or repeated case id {cid!r}", field="cases")
        seen.add(cid)
        if case.get("category") not in _CATEGORIES:
            raise InvalidInput(f"{cid}: unknown category {case.get('category')!r}", field="cases")
        ids = [e["id"] for e in case["existing"]]
        action = Action(case["expected"]["action"])
        target = case["expected"].get("target")
        if (action is Action.ADD) != (target is None) or (target and target not in ids):
            raise InvalidInput(f"{cid}: expected target {target!r} does not fit", field="cases")
    return cases


def _when(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value) if value else None


def _items(
    cases: Sequence[dict[str, Any]], embedder: Embedder
) -> list[tuple[Incoming, list[Neighbour]]]:
    texts = sorted(
        {c["new"]["content"] for c in cases} | {e["content"] for c in cases for e in c["existing"]}
    )
    rows = np.asarray(embedder.embed_batch(texts), dtype=np.float32)
    vec = {t: rows[i] for i, t in enumerate(texts)}
    items = []
    for case in cases:
        new = case["new"]
        v = vec[new["content"]]
        near = [
            Neighbour(
                id=e["id"],
                content=e["content"],
                similarity=float(vec[e["content"]] @ v),
                key=e.get("key"),
                said_at=_when(e.get("said_at")),
            )
            for e in case["existing"]
        ]
        items.append(
            (Incoming(new["content"], key=new.get("key"), said_at=_when(new.get("said_at"))), near)
        )
    return items


def run_reconcile_bench(
    cases_path: Path | str | None = None,
    reconciler: Reconciler | None = None,
    *,
    embedder: Embedder | None = None,
) -> dict[str, Any]:
    """Accuracy of ``reconciler`` (default :class:`RuleReconciler`) on the cases.

    Returns ``{"cases", "accuracy", "by_category": {cat: {"n", "accuracy"}},
    "by_split": {split: {"n", "accuracy"}}, "confusion": {expected: {got: count}},
    "errors": [...], "decided_by": {...}, "reconciler"}``. A case's optional
    ``split`` is ``"dev"`` (written together with the rules) or ``"holdout"``
    (written after the first version of the rules, to see how they generalise);
    ``embedder`` defaults to the local MiniLM model.
    """
    cases = load_cases(cases_path)
    rec = reconciler or RuleReconciler()
    decisions = rec.decide_many(_items(cases, embedder or create_embedder("minilm")))
    right: dict[str, list[bool]] = defaultdict(list)
    by_split: dict[str, list[bool]] = defaultdict(list)
    confusion: dict[str, Counter[str]] = defaultdict(Counter)
    errors = []
    for case, got in zip(cases, decisions, strict=True):
        want = case["expected"]
        ok = got.action.value == want["action"] and got.target == want.get("target")
        right[case["category"]].append(ok)
        by_split[case.get("split", "all")].append(ok)
        confusion[want["action"]][got.action.value] += 1
        if not ok:
            errors.append(
                {
                    "id": case["id"],
                    "expected": {"action": want["action"], "target": want.get("target")},
                    "got": {"action": got.action.value, "target": got.target},
                    "reason": got.reason,
                }
            )
    n_right = sum(sum(v) for v in right.values())
    return {
        "cases": len(cases),
        "accuracy": round(n_right / len(cases), 4),
        "by_category": {
            cat: {"n": len(right[cat]), "accuracy": round(sum(right[cat]) / len(right[cat]), 4)}
            for cat in _CATEGORIES
            if right[cat]
        },
        "by_split": {
            split: {"n": len(oks), "accuracy": round(sum(oks) / len(oks), 4)}
            for split, oks in sorted(by_split.items())
        },
        "confusion": {want: dict(sorted(c.items())) for want, c in sorted(confusion.items())},
        "errors": errors,
        "decided_by": dict(Counter(d.decided_by for d in decisions)),
        "reconciler": repr(rec),
    }
