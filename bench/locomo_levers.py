"""Trial levers for LoCoMo multi-hop recall, on one ingest of a split (dev tunes).

Each lever is a trial, not a kenning feature; the figures are in BENCHMARKS.md
("Reranking (opt-in)", the table of levers tried and dropped). One JSON object
per lever is printed, with recall@10/@20, recall@10 per category, multi-hop
all-hit@20 and recall p50:

* ``default`` — today's settings;
* ``expansion-0.3`` / ``expansion-0.6`` — graph relation expansion on, the
  admitted memories competing for slots (``graph.relax_gamma``,
  ``graph.expand_merge_seed=false``);
* ``neighbours-0.1`` / ``neighbours-0.2`` — a trial signal: the conversation
  neighbours (``temporal_next`` links) of the best 10 candidates join the pool
  and gain that share of their neighbour's relevance;
* ``context-0.3`` / ``context-0.6`` — each turn stored with its vector mixed
  with its session neighbours' (``v + a * (prev + next)``, normalised): a turn
  indexed with its context;
* ``no-question-words`` — the question embedded without its opening question
  word and auxiliary ("What did Melanie paint?" -> "Melanie paint");
* ``decompose`` — a question naming two people ("X and Y") is also asked once
  per person, the three rankings interleaved (post hoc, over the default's store);
* ``mmr-0.8`` — the best 40 reordered by maximal marginal relevance (rank-based
  relevance, turn-vector redundancy, lambda 0.8; post hoc).

    python bench/locomo_levers.py --split dev [--only default,context-0.3]
"""

from __future__ import annotations

import argparse
import json
import re
import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from kenning.bench.locomo import Recall, ask_questions, load_conversations
from kenning.bench.locomo_data import Conversation, Question, load_locomo, score, split
from kenning.bench.stores import open_bench_memory
from kenning.bench.timing import percentiles
from kenning.clock import FixedClock
from kenning.config import Settings
from kenning.embeddings import Embedder, create_embedder
from kenning.embeddings.base import Vectors, WrappingEmbedder
from kenning.engine import Memory
from kenning.models import Hit, Principal
from kenning.retrieval.signals import BUILTINS, RecallContext, register_signal

LOCOMO = Path(__file__).resolve().parents[2] / "shared" / "bench" / "locomo10.json"
_WH = re.compile(
    r"^(what|which|where|when|who|whom|whose|how|why)( (kind|type|sort) of)?"
    r"( (did|does|do|is|was|are|were|has|have|had|would|will|can|could|might))?\b\s*",
    re.IGNORECASE,
)
_PAIR = re.compile(r"\b(both )?([A-Z][a-z]+) and ([A-Z][a-z]+)('s)?\b( both)?")


class Neighbours:
    """Trial signal: the conversation neighbours of the best candidates join the pool."""

    name = "neighbours"
    stage = "context"
    reads: tuple[str, ...] = ()
    weight = 0.1
    seeds = 10

    def contribute(self, ctx: RecallContext, scores: Mapping[str, float]) -> dict[str, float]:
        if ctx.store is None or ctx.view is None or not scores:
            return {}
        seeds = sorted(scores, key=lambda i: -scores[i])[: self.seeds]
        best = max(scores.values()) or 1.0
        lift: dict[str, float] = {}
        for e in ctx.store.graph_edges(seeds, ctx.view, relations=("temporal_next",)):
            for seed, other in ((e.src, e.dst), (e.dst, e.src)):
                if seed in seeds:
                    lift[other] = max(lift.get(other, 0.0), self.weight * scores[seed] / best)
        missing = [i for i in lift if i not in ctx.records]
        ctx.records.update((r.id, r) for r in ctx.store.get(missing, ctx.view))
        return {i: v for i, v in lift.items() if i in ctx.records}


class Rewriting(WrappingEmbedder):
    """The model, with each text rewritten (or replaced by a stored vector) first."""

    def __init__(
        self, inner: Embedder, table: Mapping[str, np.ndarray], rewrite: Callable[[str], str]
    ) -> None:
        super().__init__(inner)
        self.table, self.rewrite = table, rewrite

    def embed_batch(self, texts: Sequence[str]) -> Vectors:
        out = np.array(self.inner.embed_batch([self.rewrite(t) for t in texts]), copy=True)
        for i, t in enumerate(texts):
            if t in self.table:
                out[i] = self.table[t]
        return out


def _context_vectors(
    convs: Sequence[Conversation], model: Embedder, a: float
) -> dict[str, np.ndarray]:
    table: dict[str, np.ndarray] = {}
    for conv in convs:
        docs = [t.document for t in conv.turns]
        tv = np.asarray(model.embed_batch(docs))
        sess = [t.session for t in conv.turns]
        for i, doc in enumerate(docs):
            v = tv[i].copy()
            for j in (i - 1, i + 1):
                if 0 <= j < len(docs) and sess[j] == sess[i]:
                    v += a * tv[j]
            table[doc] = v / np.linalg.norm(v)
    return table


def _hits(mem: Memory, text: str, who: Principal, k: int) -> list[Hit]:
    return mem.recall(text, k, principal=who).hits


def _decompose(mem: Memory, text: str, who: Principal, k: int) -> list[Hit]:
    base = _hits(mem, text, who, k)
    m = _PAIR.search(text)
    if not m:
        return base
    subs = []
    for name in (m.group(2), m.group(3)):
        sub = text[: m.start()] + name + (m.group(4) or "") + text[m.end() :]
        subs.append(_hits(mem, re.sub(r"\bboth\b\s*", "", sub), who, k))
    merged: dict[str, Hit] = {}
    for trio in zip(base, *subs, strict=False):
        merged.update((h.memory.id, h) for h in trio if h.memory.id not in merged)
    return list(merged.values())[:k]


def _mmr(per_conv: Mapping[str, Mapping[str, np.ndarray]], lam: float) -> Recall:
    def query(mem: Memory, text: str, who: Principal, k: int) -> list[Hit]:
        vectors = per_conv[who.user_id or ""]
        ranked = _hits(mem, text, who, 40)
        hits = [h for h in ranked if h.memory.metadata.get("dia_id") in vectors]
        if not hits:
            return ranked[:k]
        v = np.stack([vectors[h.memory.metadata["dia_id"]] for h in hits])
        rel = 10.0 / (np.arange(len(hits)) + 10.0)
        chosen: list[int] = []
        left = list(range(len(hits)))
        while left and len(chosen) < k:
            sim = (v[left] @ v[chosen].T).max(1) if chosen else np.zeros(len(left))
            j = left[int(np.argmax(lam * rel[left] - (1 - lam) * sim))]
            chosen.append(j)
            left.remove(j)
        return [hits[j] for j in chosen]

    return query


def _report(
    name: str, rankings: list[list[str]], qs: list[Question], lat: list[float]
) -> dict[str, Any]:
    r = score(rankings, qs, ks=(10, 20))
    cats = r["by_category"]
    return {
        "lever": name,
        "recall@10": round(r["recall@10"], 4),
        "recall@20": round(r["recall@20"], 4),
        "by_category_recall@10": {c: round(v["recall@10"], 3) for c, v in cats.items()},
        "multi_hop_all_hit@20": round(cats["multi-hop"]["all_hit@20"], 3),
        "recall_p50_ms": percentiles(lat)["p50"],
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default=str(LOCOMO))
    ap.add_argument("--split", default="dev", choices=("dev", "holdout"))
    ap.add_argument("--only", default="", help="comma-separated lever names")
    args = ap.parse_args()
    convs = split(load_locomo(args.data), args.split)
    only = {n for n in args.only.split(",") if n}
    model = create_embedder("minilm")
    register_signal("neighbours", Neighbours)
    builtins = list(BUILTINS)

    def settings(**dotted: Any) -> Settings:
        values = Settings().model_dump()
        for key, value in dotted.items():
            group, _, last = key.rpartition("__")
            target = values
            for part in filter(None, group.split("__")):
                target = target[part]
            target[last] = value
        return Settings.model_validate(values)

    plain = settings()
    read_side: dict[str, Settings] = {
        "default": plain,
        "expansion-0.3": settings(graph__relax_gamma=0.3, graph__expand_merge_seed=False),
        "expansion-0.6": settings(graph__relax_gamma=0.6, graph__expand_merge_seed=False),
        "neighbours-0.1": settings(retrieval__signals=(*builtins, "neighbours")),
        "neighbours-0.2": settings(retrieval__signals=(*builtins, "neighbours")),
    }
    stores: dict[str, Embedder] = {
        "context-0.3": Rewriting(model, _context_vectors(convs, model, 0.3), str),
        "context-0.6": Rewriting(model, _context_vectors(convs, model, 0.6), str),
        "no-question-words": Rewriting(model, {}, lambda t: _WH.sub("", t).rstrip("?") or t),
    }
    # each conversation's turn vectors, for the MMR lever's redundancy
    per_conv: dict[str, dict[str, np.ndarray]] = {}
    for c in convs:
        vectors = np.asarray(model.embed_batch([t.document for t in c.turns]))
        per_conv[c.sample_id] = {t.dia_id: v for t, v in zip(c.turns, vectors, strict=True)}

    def run(name: str, embedder: Embedder, asks: Mapping[str, Any]) -> None:
        clock = FixedClock(convs[0].last_session_date)
        with tempfile.TemporaryDirectory(prefix="kenning-levers-") as tmp:
            mem = open_bench_memory(None, Path(tmp) / "l.db", None, embedder=embedder, clock=clock)
            try:
                load_conversations(mem, convs)
                for lever, (conf, query) in asks.items():
                    if only and lever not in only:
                        continue
                    mem.settings = conf
                    Neighbours.weight = 0.2 if lever == "neighbours-0.2" else 0.1
                    rankings, _, questions, latencies = ask_questions(
                        mem, convs, clock, 20, recall=query
                    )
                    print(json.dumps(_report(lever, rankings, questions, latencies)))
            finally:
                mem.close()

    asks: dict[str, Any] = {name: (conf, _hits) for name, conf in read_side.items()}
    asks["decompose"] = (plain, _decompose)
    asks["mmr-0.8"] = (plain, _mmr(per_conv, 0.8))
    run("default store", model, asks)
    for name, embedder in stores.items():
        if not only or name in only:
            run(name, embedder, {name: (plain, _hits)})


if __name__ == "__main__":
    main()
