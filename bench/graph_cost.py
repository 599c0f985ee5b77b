"""Ingest cost of the graph projection (on vs off) on LoCoMo turns, SQLite and PostgreSQL.

Run from the repository root: ``python bench/graph_cost.py [path/to/locomo10.json]``.
Each conversation is one user scope, each session one episode and one write batch;
vectors are embedded once up front (cached), so the timings are store + projection.
Also prints how many turns have an earlier turn of their conversation at cosine >=
0.6/0.7/0.8/0.9 (what ``graph_semantic_min`` lets through).
"""

import json
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

import numpy as np
import onnxruntime  # noqa: F401

from kenning import Memory, Settings
from kenning.bench.locomo_data import load_locomo
from kenning.embeddings import CachedEmbedder, MemoryCacheBackend, MiniLMEmbedder
from kenning.stores.postgres.throwaway import ThrowawayPostgres, free_port

convs = load_locomo(sys.argv[1] if len(sys.argv) > 1 else "../shared/bench/locomo10.json")
batches = []
for ci, conv in enumerate(convs):
    by_session = {}
    for n, t in enumerate(conv.turns):
        by_session.setdefault(t.session, []).append(
            {
                "content": t.document,
                "scope": f"user:c{ci}",
                "episode_id": f"c{ci}-s{t.session}",
                "event_at": t.session_date + timedelta(seconds=n),
            }
        )
    batches.extend(by_session.values())
texts = [i["content"] for b in batches for i in b]
print("turns", len(texts), "batches", len(batches))
model = MiniLMEmbedder()
model.load()
emb = CachedEmbedder(model, [MemoryCacheBackend(100_000)])
t = time.perf_counter()
vecs = emb.embed_many(texts, batch_size=256)
print("embed s", round(time.perf_counter() - t, 1))
# semantic threshold: best cosine of each turn to earlier turns of the same conversation
V = np.asarray(vecs)
start = 0
best = []
for conv in convs:
    n = len(conv.turns)
    X = V[start : start + n]
    start += n
    S = X @ X.T
    for i in range(1, n):
        best.append(S[i, :i].max())
best = np.array(best)
frac = {th: round(float((best >= th).mean()), 4) for th in (0.6, 0.7, 0.8, 0.9)}
print(
    "best earlier cosine p50/p90/p99",
    np.percentile(best, [50, 90, 99]).round(3).tolist(),
    "share >=",
    frac,
)


def run(url_or_path, graph):
    s = Settings(graph_enabled=graph)
    mem = Memory(url_or_path, settings=s, embedder=emb)  # a file path or a database URL
    t = time.perf_counter()
    for b in batches:
        mem.remember_many(b)
    dt = time.perf_counter() - t
    out = {"graph": graph, "seconds": round(dt, 2), "per_s": round(len(texts) / dt, 1)}
    if graph:
        st = mem.stats(scopes="all")
        out["entities"] = sum(x.entities_count for x in st)
        out["links"] = sum(x.relationships_count for x in st)
        view = mem.policy.readable(mem.principal)
        ids = [r.id for r in mem.list(scopes="all", limit=1000).items][::20][:50]
        times = []
        for _ in range(20):
            t = time.perf_counter()
            e = mem.store.graph_edges(ids, view)
            times.append(time.perf_counter() - t)
        out["graph_edges_50ids_ms_p50"] = round(1000 * float(np.median(times)), 2)
        out["edges"] = len(e)
        rel = {}
        for x in mem.store.graph_edges(
            [r.id for r in mem.list(scopes="all", limit=1000).items], view
        ):
            rel[x.relation] = rel.get(x.relation, 0) + 1
        out["relations_sample_1000"] = rel
        t = time.perf_counter()
        mem.graph.rebuild(clear_first=True)
        out["rebuild_s"] = round(time.perf_counter() - t, 2)
    mem.close()
    return out


tmp = Path(tempfile.mkdtemp())
for graph in (False, True):
    print("sqlite", json.dumps(run(tmp / f"g{graph}.db", graph)))
pg = ThrowawayPostgres(Path(tempfile.mkdtemp(prefix="kg-")), free_port())
pg.start()
try:
    for graph in (False, True):
        name = f"b{int(graph)}"
        pg.psql("postgres", f"CREATE DATABASE {name} OWNER kenning")
        print("postgresql", json.dumps(run(pg.url(name), graph)))
finally:
    pg.stop()
