"""Retrieval ablation on LoCoMo: what each ranking component contributes.

Every configuration runs the same task as :mod:`kenning.bench.locomo`. Each
split is ingested once (with the graph projected); the configurations differ
only in read-side settings, so they rank the very same store.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from ..config import Settings
from ..embeddings import CachedEmbedder, MiniLMEmbedder
from .locomo import run_locomo_variants
from .overrides import set_dotted

__all__ = ["CONFIGS", "run_ablation", "variant_settings"]

_RELEVANCE_ONLY = {"confidence": 0.0, "temporal": 0.0, "relevance": 1.0}
_PLAIN = {"retrieval.time.enabled": False, "graph": {"rerank_enabled": False}}
_NO_CONTEXT = {"retrieval.episode.weight": 0.0, "retrieval.author.boost": 0.0}
_BARE = {**_PLAIN, **_NO_CONTEXT}

#: name -> (settings overrides, scoring overrides); nested groups as dicts.
CONFIGS: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
    "bm25 only": (
        {"retrieval.fusion_alpha": 0.0, "retrieval.common_term_ratio": 0.0, **_BARE},
        _RELEVANCE_ONLY,
    ),
    "dense only": (
        {"retrieval.fusion_alpha": 1.0, "retrieval.common_term_ratio": 0.0, **_BARE},
        _RELEVANCE_ONLY,
    ),
    "hybrid rrf k=60": (
        {"retrieval.fusion": "rrf", "retrieval.common_term_ratio": 0.0, **_BARE},
        _RELEVANCE_ONLY,
    ),
    "hybrid convex 0.7": (
        {"retrieval.fusion_alpha": 0.7, "retrieval.common_term_ratio": 0.0, **_BARE},
        _RELEVANCE_ONLY,
    ),
    "+ common-term suppression": ({"retrieval.fusion_alpha": 0.7, **_BARE}, _RELEVANCE_ONLY),
    "+ seed priority (issue 2 default: alpha 0.7, temporal 0.2)": (
        {**_PLAIN, **_NO_CONTEXT, "retrieval.fusion_alpha": 0.7},
        {"temporal": 0.2},
    ),
    "+ seed priority, temporal weight 0.02, alpha 0.6": ({**_PLAIN, **_NO_CONTEXT}, {}),
    "+ context (episode lift, author match) = hybrid": (_PLAIN, {}),
    "hybrid + graph": ({"retrieval.time.enabled": False}, {}),
    "hybrid + time": ({"graph": {"rerank_enabled": False}}, {}),
    "full (default: hybrid + graph + time)": ({}, {}),
    "full + relation expansion (seed gamma 0.3)": ({"graph": {"relax_gamma": 0.3}}, {}),
    "full + co-mention support 0.2": ({"graph": {"mention_support": 0.2}}, {}),
}


def variant_settings(
    base: Settings, flat: Mapping[str, Any], scoring: Mapping[str, Any]
) -> Settings:
    """``base`` with the overrides applied (``graph`` given as a dict, dotted names
    such as ``retrieval.time.enabled`` set into their group)."""
    values = base.model_dump()
    for name, value in flat.items():
        if name == "graph":
            values["graph"] = {**values["graph"], **value}
        else:
            set_dotted(values, name, value)
    values["scoring"] = {**values["scoring"], **scoring}
    return Settings(**values)


def run_ablation(
    data: str | Path,
    splits: tuple[str, ...] = ("dev", "holdout"),
    progress: Callable[[str], None] | None = None,
    base: Settings | None = None,
) -> dict[str, Any]:
    """``{config: {split: metrics}}`` for every configuration in :data:`CONFIGS`."""
    base = base or Settings()
    embedder = CachedEmbedder(MiniLMEmbedder())
    variants = {name: variant_settings(base, flat, sc) for name, (flat, sc) in CONFIGS.items()}
    out: dict[str, Any] = {name: {} for name in CONFIGS}
    for split_name in splits:
        results = run_locomo_variants(
            data,
            split_name,  # type: ignore[arg-type]
            variants,
            settings=base,
            embedder=embedder,
        )
        for name, result in results.items():
            out[name][split_name] = {
                key: result[key]
                for key in (
                    "recall@1",
                    "recall@5",
                    "recall@10",
                    "recall@20",
                    "all_hit@10",
                    "all_hit@20",
                    "questions",
                    "latency_ms",
                )
            } | {
                "by_category": {
                    c: {
                        m: round(v[m], 3)
                        for m in ("recall@10", "recall@20", "all_hit@10", "all_hit@20")
                    }
                    for c, v in result["by_category"].items()
                }
            }
            if progress:
                progress(f"{name} / {split_name}: R@10 {result['recall@10']:.3f}")
    return out
