"""Recall latency of two versions of kenning on one database, side by side.

    python bench/ab_recall.py --db /tmp/kb/ab100k.db --a /path/to/old/src --b src \\
        --queries 400 --block 10 [--form question] [--db-b COPY]

Two worker processes, one per source tree (``PYTHONPATH``), open the same
database (a ``kenning bench scale --db`` database: organization ``bench``) with
the real model and reinforcement off, so neither writes (``--db-b``: B opens its
own copy, for a B that migrates the database on open). The driver sends them
the same query blocks in turn (A then B, then B then A, ...), so drift of the
machine's speed falls on both alike. Each recall is timed inside its worker.
Prints JSON: p50/p95/mean per side for the worst-case reader (an admin over
every scope) and the typical one (a member of two teams), and B/A ratios.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

_WORKER = r"""
import json, sys, time
from kenning import Memory, Principal, Settings
from kenning.models import Role, TeamRole
settings = Settings(lifecycle={"reinforce_on_recall": False})
mem = Memory(sys.argv[1], settings=settings)
admin = Principal(org_id="bench", user_id="admin", roles=frozenset({Role.ADMIN}))
typical = Principal(org_id="bench", user_id="u3", roles=frozenset({Role.MEMBER}),
                    teams={"t0": TeamRole.MEMBER, "t1": TeamRole.MEMBER})
mem.recall("warm up the model and the index", 10, scopes="all", principal=admin)
mem.recall("warm up the typical reader", 10, principal=typical)
print("ready", flush=True)
for line in sys.stdin:
    who, texts = json.loads(line)
    out = []
    for text in texts:
        t = time.perf_counter()
        if who == "worst":
            mem.recall(text, 10, scopes="all", principal=admin)
        else:
            mem.recall(text, 10, principal=typical)
        out.append((time.perf_counter() - t) * 1000)
    print(json.dumps(out), flush=True)
mem.close()
"""


def _start(src: str, db: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(Path(src).resolve())}
    proc = subprocess.Popen(
        [sys.executable, "-c", _WORKER, db],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline().strip()
    if line != "ready":
        raise SystemExit(f"worker for {src} did not start: {line!r}")
    return proc


def _ask(proc: subprocess.Popen[str], who: str, texts: list[str]) -> list[float]:
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(json.dumps([who, texts]) + "\n")
    proc.stdin.flush()
    return [float(x) for x in json.loads(proc.stdout.readline())]


def _summary(times: list[float]) -> dict[str, float]:
    ordered = sorted(times)
    return {
        "p50": round(statistics.median(ordered), 2),
        "p95": round(ordered[int(0.95 * (len(ordered) - 1))], 2),
        "mean": round(statistics.fmean(ordered), 2),
    }


def main() -> None:
    """Run the A/B and print its JSON."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", required=True, help="a `kenning bench scale --db` database")
    parser.add_argument("--a", required=True, help="source tree A (its src/ folder)")
    parser.add_argument("--b", required=True, help="source tree B (its src/ folder)")
    parser.add_argument(
        "--db-b",
        help="a copy of --db for B, when B's code migrates the database on open "
        "(A's code may refuse a newer schema)",
    )
    parser.add_argument("--queries", type=int, default=400, help="queries per reader")
    parser.add_argument("--block", type=int, default=10, help="queries per block")
    parser.add_argument(
        "--form",
        choices=("text", "question"),
        default="text",
        help="text: the scale bench's query texts; question: each as a question about "
        'the asker\'s present value ("What is my <text> now?"), which runs the currency step',
    )
    args = parser.parse_args()
    # the scale bench's query texts (their own seed), none repeated: no cache hits
    from kenning.bench.scale import synthetic_text

    rng = random.Random(6)
    texts = [synthetic_text(rng, 8) for _ in range(2 * args.queries)]
    if args.form == "question":
        texts = [f"What is my {t} now?" for t in texts]
    a, b = _start(args.a, args.db), _start(args.b, args.db_b or args.db)
    times: dict[str, dict[str, list[float]]] = {
        side: {"worst": [], "typical": []} for side in ("a", "b")
    }
    try:
        for n, start in enumerate(range(0, args.queries, args.block)):
            for who, offset in (("worst", 0), ("typical", args.queries)):
                block = texts[offset + start : offset + start + args.block]
                order = [("a", a), ("b", b)] if n % 2 == 0 else [("b", b), ("a", a)]
                for side, proc in order:
                    times[side][who].extend(_ask(proc, who, block))
    finally:
        for proc in (a, b):
            assert proc.stdin is not None
            proc.stdin.close()
            proc.wait(60)
    out: dict[str, Any] = {
        "db": args.db,
        "a": args.a,
        "b": args.b,
        "queries": args.queries,
        "block": args.block,
        "form": args.form,
    }
    for who in ("worst", "typical"):
        sa, sb = _summary(times["a"][who]), _summary(times["b"][who])
        out[who] = {"a": sa, "b": sb, "b_over_a_p50": round(sb["p50"] / sa["p50"], 3)}
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
