"""Big-batch write speed of two versions of kenning on copies of one database.

    python bench/batch_write.py --db /tmp/kb/scale100k.db --a /path/to/old/src --b src \\
        --batches 3 --passes 2

``--db`` is a ``kenning bench scale --synthetic-vectors --db`` database (organization
``bench``). Each pass copies it (SQLite's backup API, so it may be in use) once per
side and has a worker process per source tree (``PYTHONPATH``) write the same
``--batches`` batches of ``--batch`` synthetic memories into its copy through
``remember_many`` (the whole write pipeline, synthetic vectors, the rule-based
entity extractor: no model), after one batch that loads the in-process indexes
and is not counted. The sides alternate (A then B, then B then A), so
drift of the machine's speed falls on both alike. Prints JSON: per side the
median per batch of the whole write and of its storage part (``Store.insert``:
records, vectors, keyword rows, graph projection, history), memories/s, and B/A.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from kenning.bench.stores import copy_sqlite

_WORKER = r"""
import json, random, sys, time
from kenning import Memory, Principal, Settings
from kenning.bench.scale import BagOfWordsEmbedder, _layout, synthetic_text
from kenning.models import Role
from kenning.stores.sqlite.store import SQLiteStore

db, batches, size, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
spent = []
insert = SQLiteStore.insert
def timed(self, *a, **k):
    t = time.perf_counter()
    try:
        return insert(self, *a, **k)
    finally:
        spent.append(time.perf_counter() - t)
SQLiteStore.insert = timed
mem = Memory(db, settings=Settings(graph_extractor="rules"), embedder=BagOfWordsEmbedder())
admin = Principal(org_id="bench", user_id="admin", roles=frozenset({Role.ADMIN}))
rng = random.Random(seed)
scopes = _layout((batches + 1) * size)
out = []
for b in range(batches + 1):  # the first one loads the mirrors: a warm-up, not counted
    items = [
        {"content": synthetic_text(rng), "scope": s, "session_id": f"{s.key}/x{seed}-{b}"}
        for s in scopes[b * size : (b + 1) * size]
    ]
    t = time.perf_counter()
    mem.remember_many(items, principal=admin)
    out.append({"write_ms": (time.perf_counter() - t) * 1000, "insert_ms": spent[-1] * 1000})
mem.close()
print(json.dumps(out[1:]))
"""


def _side(src_tree: str, db: Path, tmp: Path, args: argparse.Namespace, seed: int) -> Any:
    copy = tmp / f"copy-{seed}.db"
    copy_sqlite(db, copy)
    env = {**os.environ, "PYTHONPATH": str(Path(src_tree).resolve())}
    try:
        done = subprocess.run(
            [
                sys.executable,
                "-c",
                _WORKER,
                str(copy),
                str(args.batches),
                str(args.batch),
                str(seed),
            ],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
    finally:
        for f in tmp.glob(f"copy-{seed}.db*"):
            f.unlink()
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    """Run the passes and print the JSON report."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--db", required=True, type=Path)
    ap.add_argument("--a", required=True, help="source tree of version A (its src/)")
    ap.add_argument("--b", required=True, help="source tree of version B")
    ap.add_argument("--batches", type=int, default=3, help="batches per side and pass")
    ap.add_argument("--batch", type=int, default=2000)
    ap.add_argument("--passes", type=int, default=2)
    args = ap.parse_args()
    import sqlean

    with sqlean.connect(f"file:{args.db}?mode=ro", uri=True) as conn:
        (held,) = conn.execute("SELECT COUNT(*) FROM memories").fetchone()
    runs: dict[str, list[dict[str, float]]] = {"a": [], "b": []}
    with tempfile.TemporaryDirectory(prefix="kenning-batch-ab-") as tmp:
        for p in range(args.passes):
            order = ("a", "b") if p % 2 == 0 else ("b", "a")
            for side in order:  # the same batches on both sides of a pass
                rows = _side(getattr(args, side), args.db, Path(tmp), args, 100 + p)
                print(json.dumps({"pass": p, "side": side, "batches": rows}), file=sys.stderr)
                runs[side] += rows
    report: dict[str, Any] = {"memories_held": held, "batch": args.batch}
    for side, rows in runs.items():
        write = statistics.median(r["write_ms"] for r in rows)
        insert = statistics.median(r["insert_ms"] for r in rows)
        report[side] = {
            "batches": len(rows),
            "write_ms_p50": round(write, 1),
            "insert_ms_p50": round(insert, 1),
            "per_s": round(args.batch / write * 1000, 1),
            "insert_per_s": round(args.batch / insert * 1000, 1),
        }
    report["b_over_a"] = {
        "write_ms": round(report["b"]["write_ms_p50"] / report["a"]["write_ms_p50"], 3),
        "insert_ms": round(report["b"]["insert_ms_p50"] / report["a"]["insert_ms_p50"], 3),
    }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
