"""Retrieval ablation on LoCoMo: what each ranking component contributes.

Every configuration runs the same task as :mod:`kenning.bench.locomo`; the
embedder (and its content-hash cache) is shared, so turns and questions are
embedded once for the whole table.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..config import ScoringWeights, Settings
from ..embeddings import CachedEmbedder, MiniLMEmbedder
from .locomo import run_locomo

__all__ = ["CONFIGS", "run_ablation"]

_RELEVANCE_ONLY = {"confidence": 0.0, "temporal": 0.0, "relevance": 1.0}

#: name -> (settings overrides, scoring overrides)
CONFIGS: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
    "bm25 only": ({"fusion_alpha": 0.0, "common_term_ratio": 0.0}, _RELEVANCE_ONLY),
    "dense only": ({"fusion_alpha": 1.0, "common_term_ratio": 0.0}, _RELEVANCE_ONLY),
    "hybrid rrf k=60": ({"fusion": "rrf", "common_term_ratio": 0.0}, _RELEVANCE_ONLY),
    "hybrid convex 0.7": ({"common_term_ratio": 0.0}, _RELEVANCE_ONLY),
    "+ common-term suppression": ({}, _RELEVANCE_ONLY),
    "+ seed priority, relevance score/max": ({}, {"relevance_norm": "max"}),
    "+ seed priority, relevance rank": ({}, {"relevance_norm": "rank"}),
    "full (default: seed priority, min-max top-20)": ({}, {}),
}


def run_ablation(
    data: str | Path,
    splits: tuple[str, ...] = ("dev", "holdout"),
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """``{config: {split: metrics}}`` for every configuration in :data:`CONFIGS`."""
    embedder = CachedEmbedder(MiniLMEmbedder())
    out: dict[str, Any] = {}
    for name, (flat, scoring) in CONFIGS.items():
        settings = Settings(**flat, scoring=ScoringWeights(**scoring))
        out[name] = {}
        for split_name in splits:
            result = run_locomo(data, split_name, settings=settings, embedder=embedder)  # type: ignore[arg-type]
            out[name][split_name] = {
                key: result[key]
                for key in ("recall@1", "recall@5", "recall@10", "recall@20", "all_hit@10",
                            "all_hit@20", "questions", "latency_ms")
            } | {"by_category_recall@10": {c: round(v["recall@10"], 3)
                                           for c, v in result["by_category"].items()}}  # fmt: skip
            if progress:
                progress(f"{name} / {split_name}: R@10 {result['recall@10']:.3f}")
    return out
