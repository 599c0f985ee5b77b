"""What one single write costs as the writer's scope grows: wall time and CPU.

    python bench/write_cpu.py --sizes 500,2000,20000 --writes 200

For each size, a fresh SQLite store gets that many memories in one user's
scope (one batch, real model), then ``--writes`` single ``remember`` calls of
new text go into the same scope, one after another. Prints JSON per size: the
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


def measure(size: int, writes: int, seed: int) -> dict[str, Any]:
    """Fill one scope with ``size`` memories, then time ``writes`` single writes."""
    tick_ms = 1000 / os.sysconf("SC_CLK_TCK")
    rng = random.Random(seed)
    text = LoadText(rng, "u1")
    with tempfile.TemporaryDirectory(prefix="kenning-write-cpu-") as tmp:
        mem = Memory(Path(tmp) / "k.db")
        try:
            mem.warm_up()
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
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",") if s]
    report = {
        "cores": os.cpu_count(),
        "runs": [measure(size, args.writes, args.seed) for size in sizes],
    }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
