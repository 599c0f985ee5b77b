"""How well a big scope's nearest memories are found: through the organization's
vector graph, and through a graph of the scope alone.

    python bench/scope_graph.py --db /tmp/kb/s1m.db --queries 400

``--db`` is a ``kenning bench scale --synthetic-vectors --db`` database
(organization ``bench``, whose organization scope holds a tenth of the
memories). For ``--queries`` fresh synthetic texts, the true five nearest active
memories of that scope (an exact scan) against: the organization graph's answer
with the pool it first asks for, under several floors of that pool (the code's
is 32), and a graph of the scope's rows alone asked for 16-128 neighbours.
Prints JSON: per variant the share of the true five found and ms per query
(a batch of every query on every core, as the write path asks).
"""

from __future__ import annotations

import argparse
import json
import random
import time
from typing import Any

import numpy as np

from kenning import Memory, Settings
from kenning.bench.scale import BagOfWordsEmbedder, synthetic_text
from kenning.models import Scope
from kenning.stores.sqlite import vectors as sqlite_vectors


def _found(keys: list[set[int]], truth: list[set[int]]) -> float:
    return round(float(np.mean([len(k & t) / 5 for k, t in zip(keys, truth, strict=True)])), 4)


def _top5(found: Any, mask: np.ndarray, vecs: np.ndarray, queries: np.ndarray) -> list[set[int]]:
    """Per query, the five best of a graph search's rows that ``mask`` allows, by
    their float32 cosine (the graph holds int8 vectors)."""
    keys = []
    for j in range(len(queries)):
        got = np.asarray(found.keys[j][: found.counts[j]], dtype=np.int64)
        got = got[mask[got]]
        order = np.argsort(-(vecs[got] @ queries[j]))[:5]
        keys.append({int(got[i]) for i in order})
    return keys


def main() -> None:
    """Measure and print the JSON report."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--db", required=True)
    ap.add_argument("--queries", type=int, default=400)
    args = ap.parse_args()
    embedder = BagOfWordsEmbedder()
    mem = Memory(args.db, settings=Settings(graph_extractor="rules"), embedder=embedder)
    rng = random.Random(77)
    queries = np.asarray(
        embedder.embed_batch([synthetic_text(rng) for _ in range(args.queries)]), dtype=np.float32
    )
    org = Scope.org("bench")
    first = mem.store.scope_neighbours("bench", [(org, queries[0])], 5)  # loads the mirror
    index = mem.store.vectors
    part = index._parts["bench"]
    scope_pk = int(part.scope[part.pos_of[first[0][0][0]]])
    active = sqlite_vectors.STATUS_CODES["active"]
    rows = np.flatnonzero((part.scope[: part.n] == scope_pk) & (part.status[: part.n] == active))
    sims = part.vecs[rows] @ queries.T
    truth = [{int(rows[i]) for i in np.argsort(-sims[:, j])[:5]} for j in range(len(queries))]
    report: dict[str, Any] = {"scope_rows": len(rows), "organization_rows": part.live}
    mask = np.zeros(part.n, dtype=bool)
    mask[rows] = True
    if part.ann is None:
        part.build_ann(index.connectivity, index.expansion)
    assert part.ann is not None
    for floor in (32, 24, 16, 8):
        count = min(part.live, int(max(5, floor) / (len(rows) / part.live) * 2) + 16)
        t = time.perf_counter()
        found = part.ann.search(queries, count, exact=False, threads=0)
        spent = time.perf_counter() - t
        keys = _top5(found, mask, part.vecs, queries)
        report[f"organization_graph_floor{floor}"] = {
            "pool": count,
            "found_of_true_5": _found(keys, truth),
            "ms_per_query": round(spent / len(queries) * 1000, 3),
        }
    t = time.perf_counter()
    part.build_scope_ann(scope_pk, index.connectivity, index.expansion)
    report["scope_graph_build_s"] = round(time.perf_counter() - t, 1)
    graph = part.scope_ann[scope_pk]
    for count in (16, 64, 80, 128):
        t = time.perf_counter()
        found = graph.search(queries, count, exact=False, threads=0)
        spent = time.perf_counter() - t
        keys = _top5(found, mask, part.vecs, queries)
        report[f"scope_graph_{count}"] = {
            "found_of_true_5": _found(keys, truth),
            "ms_per_query": round(spent / len(queries) * 1000, 3),
        }
    mem.close()
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
