"""Moving one organization between two PostgreSQL servers, and what routing costs.

    python bench/org_move.py --n 3000 [--recalls 300 --block 25]

Starts two throwaway PostgreSQL servers. The home database gets organization
``big`` (``--n`` memories, real model) and ``small`` (50). Then:

* **routing overhead**: recall p50 of ``big`` through the routed store (what
  ``Memory(url)`` opens) and through a plain ``PostgresStore`` on the same
  database, in interleaved blocks of ``--block`` (A, B, B, A, ...);
* **a move**: ``big`` to the second server while a thread keeps writing to
  ``small``: wall time, how long ``big``'s writes paused, rows per table, and
  the ``small`` writes done meanwhile (errors must be 0);
* **recall after the move** (``big`` now on the second server), p50.

Prints one JSON object. Figures on a shared 2-core machine are noisy.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from kenning import Memory, Principal, Settings
from kenning.models import Role
from kenning.stores.postgres.orgmove import move_organization
from kenning.stores.postgres.store import PostgresStore
from kenning.stores.postgres.throwaway import ThrowawayPostgres, free_port

QUERIES = [
    "who fixed the billing bug",
    "quarterly planning notes",
    "the deploy failed on friday",
    "customer asked about pricing",
    "team offsite location",
]


def admin(org: str) -> Principal:
    return Principal(org_id=org, user_id="root", roles=frozenset({Role.ADMIN}))


def recall_ms(mem: Memory, n: int, offset: int = 0) -> list[float]:
    out = []
    for i in range(n):
        q = f"{QUERIES[(i + offset) % len(QUERIES)]} {i + offset}"
        t = time.perf_counter()
        mem.recall(q, k=10, principal=admin("big"))
        out.append((time.perf_counter() - t) * 1000)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=3000)
    parser.add_argument("--recalls", type=int, default=300)
    parser.add_argument("--block", type=int, default=25)
    args = parser.parse_args()
    servers = [
        ThrowawayPostgres(Path(tempfile.mkdtemp(prefix="kenning-bench-pg")), free_port())
        for _ in range(2)
    ]
    result: dict[str, Any] = {"n": args.n}
    try:
        for s in servers:
            s.start()
        home, far = servers[0].url(), servers[1].url()
        settings = Settings(database_url=home, lifecycle={"reinforce_on_recall": False})
        mem = Memory(settings=settings)
        t = time.perf_counter()
        for start in range(0, args.n, 500):
            items = [
                {"content": f"note {i}: {QUERIES[i % len(QUERIES)]} by person {i % 97}"}
                for i in range(start, min(start + 500, args.n))
            ]
            mem.remember_many(items, principal=admin("big"))
        mem.remember_many(
            [{"content": f"small note {i}"} for i in range(50)], principal=admin("small")
        )
        result["load_s"] = round(time.perf_counter() - t, 1)

        plain = Memory(
            settings=settings,
            store=PostgresStore(home, model_id=mem.embedder.model_id, dim=mem.embedder.dim),
        )
        routed_ms: list[float] = []
        plain_ms: list[float] = []
        recall_ms(mem, 20)
        recall_ms(plain, 20)
        for b in range(0, args.recalls, args.block):
            pair = [(mem, routed_ms), (plain, plain_ms)]
            for m, sink in pair if (b // args.block) % 2 == 0 else pair[::-1]:
                sink.extend(recall_ms(m, args.block, b))
        plain.close()
        result["recall_p50_ms"] = {
            "routed": round(statistics.median(routed_ms), 2),
            "plain_store": round(statistics.median(plain_ms), 2),
        }

        stop, done, errors = threading.Event(), [0], [0]

        def small_writer() -> None:
            while not stop.is_set():
                try:
                    mem.remember(f"small live {done[0]}", principal=admin("small"))
                    done[0] += 1
                except Exception:
                    errors[0] += 1

        writer = threading.Thread(target=small_writer)
        writer.start()
        t = time.perf_counter()
        marks: list[tuple[str, float]] = []
        try:
            report = move_organization(
                home, "big", far, on_table=lambda name, _: marks.append((name, time.perf_counter()))
            )
        finally:
            stop.set()
            writer.join()
        result["move"] = {
            "wall_s": round(time.perf_counter() - t, 2),
            "big_writes_paused_s": round(report.paused_s, 2),
            "copy_s": round(report.copy_s, 2),
            "verify_s": round(report.verify_s, 2),
            "rows": {name: n for name, (n, _) in report.tables.items()},
            "copy_table_s": {
                name: round(at - (marks[i - 1][1] if i else marks[0][1]), 2)
                for i, (name, at) in enumerate(marks)
                if i
            },
            "small_writes_during_move": done[0],
            "small_write_errors": errors[0],
        }
        time.sleep(1.1)
        after = recall_ms(mem, args.recalls // 2)
        result["recall_p50_ms"]["routed_after_move"] = round(statistics.median(after), 2)
        mem.close()
    finally:
        for s in servers:
            s.stop()
    print(json.dumps(result))


if __name__ == "__main__":
    main()
