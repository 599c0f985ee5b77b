"""Forget latency of two versions of kenning on copies of one database.

    python bench/forget_latency.py --db /tmp/k22/scale100k.db --a /path/to/old/src --b src \\
        --forgets 300 --block 10 [--work /tmp/forget-ab]

``forget`` writes, so each side gets its own copy of the database (a
``kenning bench scale --db`` database: organization ``bench``), made with
SQLite's backup API before either side opens it. Two worker processes, one per
source tree (``PYTHONPATH``), open their copy (the time to open, migrations
included, is reported) and forget the same memories (random org and team
memories, the same ids on both sides) in blocks, A then B, then B then A, ...,
so drift of the machine's speed falls on both alike. Each forget is timed inside
its worker, the whole ``Memory.forget`` call (with, on a version that has it,
the write-ahead log's checkpoint). Prints JSON: p50/p95/mean per side and B/A.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

from kenning.bench.stores import copy_sqlite
from kenning.stores.sqlite.driver import sqlite3

_WORKER = r"""
import json, sys, time
t = time.perf_counter()
import kenning
from kenning import Memory, Principal, Settings
from kenning.models import Role
settings = Settings(lifecycle={"reinforce_on_recall": False})
mem = Memory(sys.argv[1], settings=settings)
admin = Principal(org_id="bench", user_id="admin", roles=frozenset({Role.ADMIN}))
mem.get(sys.argv[2], principal=admin)  # opens the store
opened = time.perf_counter() - t
print(json.dumps({"ready": kenning.__file__, "open_s": round(opened, 2)}), flush=True)
for line in sys.stdin:
    out = []
    for memory_id in json.loads(line):
        t = time.perf_counter()
        mem.forget(memory_id, principal=admin)
        out.append((time.perf_counter() - t) * 1000)
    print(json.dumps(out), flush=True)
mem.close()
"""


def _copy(src: str, dst: Path) -> None:
    for old in dst.parent.glob(dst.name + "*"):
        old.unlink()
    copy_sqlite(src, dst)


def _start(src: str, db: Path, probe: str) -> tuple[subprocess.Popen[str], dict[str, Any]]:
    env = {**os.environ, "PYTHONPATH": str(Path(src).resolve())}
    proc = subprocess.Popen(
        [sys.executable, "-c", _WORKER, str(db), probe],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline().strip()
    try:
        info: dict[str, Any] = json.loads(line)
    except json.JSONDecodeError:
        raise SystemExit(f"worker for {src} did not start: {line!r}") from None
    return proc, info


def _ask(proc: subprocess.Popen[str], ids: list[str]) -> list[float]:
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(json.dumps(ids) + "\n")
    proc.stdin.flush()
    return [float(x) for x in json.loads(proc.stdout.readline())]


def _summary(times: list[float]) -> dict[str, float]:
    ordered = sorted(times)
    return {
        "p50": round(statistics.median(ordered), 2),
        "p95": round(ordered[int(0.95 * (len(ordered) - 1))], 2),
        "mean": round(statistics.fmean(ordered), 2),
    }


def _targets(db: str, n: int, seed: int) -> list[str]:
    """``n`` random memory ids of org and team scopes (an admin may forget them)."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        ids = [
            r[0]
            for r in conn.execute(
                "SELECT m.id FROM memories m JOIN scopes s ON s.pk = m.scope_pk "
                "WHERE m.org_id = 'bench' AND s.kind IN ('org', 'team') ORDER BY m.pk"
            )
        ]
    finally:
        conn.close()
    return random.Random(seed).sample(ids, n)


def main() -> None:
    """Run the A/B and print its JSON."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", required=True, help="a `kenning bench scale --db` database")
    parser.add_argument("--a", required=True, help="source tree A (its src/ folder)")
    parser.add_argument("--b", required=True, help="source tree B (its src/ folder)")
    parser.add_argument("--forgets", type=int, default=300, help="forgets per side")
    parser.add_argument("--block", type=int, default=10, help="forgets per block")
    parser.add_argument("--warmup", type=int, default=10, help="forgets per side not counted")
    parser.add_argument("--work", default="/tmp/forget-ab", help="folder for the two copies")
    parser.add_argument("--seed", type=int, default=22)
    args = parser.parse_args()
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    ids = _targets(args.db, args.warmup + args.forgets + 1, args.seed)
    probe, warm, timed = ids[0], ids[1 : 1 + args.warmup], ids[1 + args.warmup :]
    copies = {side: work / f"{side}.db" for side in ("a", "b")}
    for path in copies.values():
        _copy(args.db, path)
    a, info_a = _start(args.a, copies["a"], probe)
    b, info_b = _start(args.b, copies["b"], probe)
    times: dict[str, list[float]] = {"a": [], "b": []}
    try:
        _ask(a, warm)
        _ask(b, warm)
        for n, start in enumerate(range(0, len(timed), args.block)):
            block = timed[start : start + args.block]
            order = [("a", a), ("b", b)] if n % 2 == 0 else [("b", b), ("a", a)]
            for side, proc in order:
                times[side].extend(_ask(proc, block))
    finally:
        for proc in (a, b):
            assert proc.stdin is not None
            proc.stdin.close()
            proc.wait(120)
    sa, sb = _summary(times["a"]), _summary(times["b"])
    out: dict[str, Any] = {
        "db": args.db,
        "a": {"src": info_a["ready"], "open_s": info_a["open_s"], **sa},
        "b": {"src": info_b["ready"], "open_s": info_b["open_s"], **sb},
        "forgets": len(times["a"]),
        "block": args.block,
        "b_over_a_p50": round(sb["p50"] / sa["p50"], 3),
        "b_over_a_p95": round(sb["p95"] / sa["p95"], 3),
    }
    print(json.dumps(out, indent=2))
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
