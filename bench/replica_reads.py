"""What read replicas cost on one machine: recall and remember, with and without.

    python bench/replica_reads.py [--memories 2000] [--queries 200] [--block 10]

Starts a throwaway PostgreSQL primary and a ``pg_basebackup -R`` hot standby
(same binaries as the tests), loads ``--memories`` sentences with the real
model, then opens two engines on the database: ``primary`` (no replicas) and
``replica`` (``database_read_urls`` = the standby). Query blocks go to both in
turn (A then B, then B then A, ...), so the machine's drift falls on both.
Recall is timed per call (reinforcement off: no access writes); remember too
(with replicas a write also reads the primary's WAL position after its commit:
one round trip more). Both servers run on this machine, so this measures the
routing's own cost, not the capacity a separate replica host adds.
Prints JSON (p50/p95 ms per side, the replica's share of reads).
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from kenning import Memory, Principal, Role
from kenning.config import Lifecycle, Settings, StoreOptions
from kenning.stores.postgres.store import PostgresStore
from kenning.stores.postgres.throwaway import ThrowawayPostgres, free_port

WHO = Principal(org_id="bench", user_id="u1", roles=frozenset({Role.ADMIN}))
_SUBJECTS = ["Chen", "Ana", "the team", "Priya", "our client", "Marco", "the lab", "Sofia"]
_VERBS = ["prefers", "moved", "reviewed", "bought", "scheduled", "cancelled", "fixed", "wrote"]
_OBJECTS = [
    "the river trip",
    "tax law notes",
    "a blue bicycle",
    "the quarterly report",
    "green tea",
    "the Lisbon office",
    "the database migration",
    "a piano lesson",
]


def _sentence(rng: random.Random, n: int) -> str:
    return (
        f"{rng.choice(_SUBJECTS)} {rng.choice(_VERBS)} {rng.choice(_OBJECTS)} "
        f"on day {n % 365} (note {n})"
    )


def _stats(xs: list[float]) -> dict[str, float]:
    xs = sorted(xs)
    return {
        "p50": round(statistics.median(xs), 2),
        "p95": round(xs[int(0.95 * (len(xs) - 1))], 2),
        "mean": round(statistics.fmean(xs), 2),
        "n": len(xs),
    }


def _home(mem: Memory) -> PostgresStore:
    store = getattr(mem.store, "home", mem.store)
    assert isinstance(store, PostgresStore)
    return store


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--memories", type=int, default=2000)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--block", type=int, default=10)
    args = ap.parse_args()
    rng = random.Random(7)
    base = Path(tempfile.mkdtemp(prefix="kenning-bench-replica-"))
    base.chmod(0o755)
    primary = ThrowawayPostgres(base / "primary", free_port()).start()
    standby: ThrowawayPostgres | None = None
    opened: list[Memory] = []
    try:
        standby = primary.start_standby(base / "standby", free_port())
        quiet = Lifecycle(reinforce_on_recall=False, reconcile="off")
        plain = Settings(database_url=primary.url(), lifecycle=quiet)
        loader = Memory(settings=plain, principal=WHO)
        opened.append(loader)
        t = time.perf_counter()
        for start in range(0, args.memories, 500):
            stop = min(start + 500, args.memories)
            loader.remember_many([{"content": _sentence(rng, n)} for n in range(start, stop)])
        load_s = time.perf_counter() - t
        with_replica = plain.model_copy(
            update={
                "database_read_urls": (standby.url(),),
                "store": StoreOptions(replica_check_s=1.0),
            }
        )
        sides = {"primary": loader, "replica": Memory(settings=with_replica, principal=WHO)}
        opened.append(sides["replica"])
        time.sleep(1.5)  # the standby replays the load; the first check has run
        for mem in sides.values():
            mem.recall("warm up", 10)
        recall: dict[str, list[float]] = {k: [] for k in sides}
        write: dict[str, list[float]] = {k: [] for k in sides}
        queries = [_sentence(rng, rng.randrange(10**6)) for _ in range(args.queries)]
        order = list(sides)
        for b in range(0, len(queries), args.block):
            for side in order:
                for q in queries[b : b + args.block]:
                    t = time.perf_counter()
                    sides[side].recall(q, 10)
                    recall[side].append((time.perf_counter() - t) * 1000)
                t = time.perf_counter()
                sides[side].remember(f"{side} wrote block {b}: " + queries[b])
                write[side].append((time.perf_counter() - t) * 1000)
            order.reverse()
        status = _home(sides["replica"]).replicas
        assert status is not None
        out: dict[str, Any] = {
            "memories": args.memories,
            "load_s": round(load_s, 1),
            "recall_ms": {k: _stats(v) for k, v in recall.items()},
            "remember_ms": {k: _stats(v) for k, v in write.items()},
            "replica_reads": sum(s.reads for s in status.status()),
            "replica_healthy": [s.healthy for s in status.status()],
            "note": "primary and standby on this shared 2-core machine: routing cost, "
            "not added capacity",
        }
        print(json.dumps(out, indent=2))
    finally:
        for mem in opened:
            mem.close()
        if standby is not None:
            standby.stop()
        primary.stop()
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
