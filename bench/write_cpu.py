"""What one single write costs as the writer's scope grows: wall time and CPU.

    python bench/write_cpu.py --sizes 500,2000,20000 --writes 200
    python bench/write_cpu.py --sizes 100 --org-memories 100000 --synthetic

For each size, a fresh SQLite store gets that many memories in one user's
scope (batches of 1,000, real model), and ``--org-memories`` more in other
users' scopes of the same organization (100 each), then ``--writes`` single
``remember`` calls of new text go into the first scope, one after another.
``--synthetic`` embeds with the scale benchmark's bag of words instead of the
model (a large organization in minutes; what is left is the store's part). Prints JSON per size: the
wall time per write (p50 / mean) and the CPU per write of every thread of this
process (read from ``/proc/self/task``: the caller, the entity extractor, the
model's and numpy's threads), the caller's own share apart. A write compares
the new text with its scope's nearest memories (reconcile), so the scope's
size is what a single write's cost can grow with. Compare two builds by
running it with ``PYTHONPATH=OLD/src`` and without.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from kenning import Memory
from kenning.bench.load import LoadText
from kenning.bench.scale import BagOfWordsEmbedder
from kenning.models import Scope


def _threads() -> dict[str, int]:
    """CPU ticks (user + system) of each thread of this process."""
    out: dict[str, int] = {}
    for tid in os.listdir("/proc/self/task"):
        try:
            stat = Path(f"/proc/self/task/{tid}/stat").read_text()
        except FileNotFoundError:
            continue  # the thread ended meanwhile
        fields = stat[stat.rindex(")") + 2 :].split()
        out[tid] = int(fields[11]) + int(fields[12])
    return out


def measure(size: int, writes: int, seed: int, others: int, synthetic: bool) -> dict[str, Any]:
    """Fill one scope with ``size`` memories and the organization with ``others``,
    then time ``writes`` single writes into that scope."""
    tick_ms = 1000 / os.sysconf("SC_CLK_TCK")
    rng = random.Random(seed)
    text = LoadText(rng, "u1")
    with tempfile.TemporaryDirectory(prefix="kenning-write-cpu-") as tmp:
        mem = Memory(Path(tmp) / "k.db", embedder=BagOfWordsEmbedder() if synthetic else None)
        try:
            mem.warm_up()
            for start in range(0, others, 1000):
                batch = [
                    {"content": text.memory(), "scope": Scope.user(f"o{(start + i) // 100}")}
                    for i in range(min(1000, others - start))
                ]
                mem.remember_many(batch)
            for start in range(0, size, 1000):
                batch = min(1000, size - start)
                mem.remember_many([{"content": text.memory()} for _ in range(batch)])
            for _ in range(20):  # warm-up writes
                mem.remember(text.memory())
            contents = [text.memory() for _ in range(writes)]
            main = str(os.getpid())
            before = _threads()
            walls = []
            for content in contents:
                t = time.perf_counter()
                mem.remember(content)
                walls.append((time.perf_counter() - t) * 1000)
            after = _threads()
        finally:
            mem.close()
    every = sum(v - before.get(k, 0) for k, v in after.items()) * tick_ms / writes
    caller = (after[main] - before[main]) * tick_ms / writes
    return {
        "scope_memories": size,
        "organization_memories": size + others,
        "embedder": "synthetic" if synthetic else "model",
        "writes": writes,
        "wall_ms_p50": round(statistics.median(walls), 2),
        "wall_ms_mean": round(statistics.fmean(walls), 2),
        "cpu_ms_per_write": round(every, 2),
        "cpu_ms_caller_thread": round(caller, 2),
        "cpu_ms_other_threads": round(every - caller, 2),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="500,2000,20000", help="scope sizes, comma-separated")
    ap.add_argument("--writes", type=int, default=200)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument(
        "--org-memories", type=int, default=0, help="more memories in other users' scopes"
    )
    ap.add_argument("--synthetic", action="store_true", help="a bag-of-words embedder")
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",") if s]
    report = {
        "cores": os.cpu_count(),
        "runs": [
            measure(size, args.writes, args.seed, args.org_memories, args.synthetic)
            for size in sizes
        ],
    }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
