"""A/B of the HTTP server: two source trees serve copies of one database, each in its
own process, and the same recalls are sent to both, interleaved, over plain
keep-alive ``http.client`` connections (so the client's own cost is out of the
picture).

    .venv/bin/python bench/ab_server.py --a OLD/src --b src [--memories 1000]
        [--queries 600] [--warmup 30]

``OLD`` is a checkout of the code before (``git worktree add /tmp/old REV``). A busy
machine slows both sides alike: the order of the two alternates per query. Prints
one JSON object (milliseconds): each side's p50 and p95 and the per-query
difference b - a.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from kenning import Memory, Principal

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the sibling bench script
from client_overhead import TOPICS, VERBS, PlainHttp, summary, texts  # noqa: E402

SERVE = Path(__file__).with_name("client_overhead.py")


class Side:
    """One server process on its own copy of the database, running ``src``'s code,
    and a plain keep-alive connection to it."""

    def __init__(self, src: Path, db: Path, key: str) -> None:
        env = dict(os.environ, PYTHONPATH=str(src.resolve()))
        self.child = subprocess.Popen(
            [sys.executable, str(SERVE), "--serve", str(db)],
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )
        assert self.child.stdout is not None
        port = int(self.child.stdout.readline())
        self.http = PlainHttp(f"http://127.0.0.1:{port}", key)

    def close(self) -> None:
        self.http.close()
        self.child.terminate()
        self.child.wait(30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--a", type=Path, required=True, help="source tree of side a")
    parser.add_argument("--b", type=Path, required=True, help="source tree of side b")
    parser.add_argument("--memories", type=int, default=1000)
    parser.add_argument("--queries", type=int, default=600)
    parser.add_argument("--warmup", type=int, default=30)
    args = parser.parse_args()
    where = Path(tempfile.mkdtemp(prefix="kenning-bench-ab-server-"))
    mem = Memory(where / "kenning.db")
    admin = Principal(org_id="bench", user_id="root", roles=frozenset({"admin"}))
    _, key = mem.directory.bootstrap("bench", "root", "bench")
    mem.remember_many([{"content": t} for t in texts(args.memories)], principal=admin)
    mem.close()
    sides: dict[str, Side] = {}
    try:
        for name, src in (("a", args.a), ("b", args.b)):
            (where / name).mkdir()
            shutil.copy(where / "kenning.db", where / name / "kenning.db")
            sides[name] = Side(src, where / name / "kenning.db", key)
        queries = [f"who {VERBS[i % 5]} {TOPICS[i % 8]}?" for i in range(300)]
        for q in queries[: args.warmup]:
            for side in sides.values():
                side.http.recall(q, 10)
        times: dict[str, list[float]] = {"a": [], "b": []}
        for i in range(args.queries):
            q = queries[i % len(queries)]
            for name in ("a", "b") if i % 2 == 0 else ("b", "a"):
                started = time.perf_counter()
                sides[name].http.recall(q, 10)
                times[name].append((time.perf_counter() - started) * 1000)
    finally:
        for side in sides.values():
            side.close()
        shutil.rmtree(where, ignore_errors=True)
    diffs = [b - a for a, b in zip(times["a"], times["b"], strict=True)]
    print(
        json.dumps(
            {
                "a": str(args.a),
                "b": str(args.b),
                "queries": args.queries,
                "recall_ms": {name: summary(v) for name, v in times.items()},
                "b_minus_a_per_query_ms": summary(diffs),
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
