"""An exact vector scan over short runs of rows: run by run or gathered, alone and under threads.

    python bench/exact_scan_runs.py [--threads 4] [--seconds 1] [--rows 100000]

A scope's rows in the SQLite store's vector mirror lie in blocks when they were
loaded together and in short runs when many users wrote at once (each write
appends its row after everyone else's). The exact scan (``_dot_rows``)
multiplies a run in place, one call per run, or gathers the rows and makes one
call; ``_MIN_RUN`` says how long runs must be on average to stay in place.
This times both choices on the same rows — ``--rows`` float32 vectors of 384,
scans of 1,000 and 4,000 rows in runs of 8 to 200 — first on one thread
(microseconds a scan, best of three), then with ``--threads`` threads scanning
at once for ``--seconds`` each (scans a second: every call per run gives up and
takes back Python's interpreter lock). Prints JSON, one row per case.
"""

from __future__ import annotations

import argparse
import json
import threading
import time
from typing import Any

import numpy as np

from kenning.stores.sqlite import vectors


def _rows(rng: np.random.Generator, total: int, scan: int, run: int) -> np.ndarray:
    """``scan`` row numbers in runs of ``run``, each run 100 rows from the next."""
    slots = total // (run + 100)
    starts = np.sort(rng.choice(slots, scan // run, replace=False)) * (run + 100)
    return np.asarray((starts[:, None] + np.arange(run)[None, :]).ravel())


def _alone(vecs: np.ndarray, idx: np.ndarray, q: np.ndarray, reps: int = 50) -> float:
    best = float("inf")
    for _ in range(3):
        t = time.perf_counter()
        for _ in range(reps):
            vectors._dot_rows(vecs, idx, q)
        best = min(best, (time.perf_counter() - t) / reps * 1e6)
    return round(best, 1)


def _threaded(
    vecs: np.ndarray, idx: np.ndarray, q: np.ndarray, threads: int, seconds: float
) -> float:
    counts = [0] * threads
    stop = time.perf_counter() + seconds

    def work(i: int) -> None:
        while time.perf_counter() < stop:
            vectors._dot_rows(vecs, idx, q)
            counts[i] += 1

    pool = [threading.Thread(target=work, args=(i,)) for i in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    return round(sum(counts) / seconds, 1)


def main() -> None:
    """Time every case both ways and print the rows."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=4)
    ap.add_argument("--seconds", type=float, default=1.0)
    ap.add_argument("--rows", type=int, default=100_000)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    vecs = rng.standard_normal((args.rows, 384)).astype(np.float32)
    q = rng.standard_normal(384).astype(np.float32)
    shipped = vectors._MIN_RUN
    out: list[dict[str, Any]] = []
    for scan in (1_000, 4_000):
        for run in (8, 16, 32, 64, 200):
            idx = _rows(rng, args.rows, scan, run)
            row: dict[str, Any] = {"scan_rows": scan, "run_rows": run}
            for name, min_run in (("in_place", 0), ("gathered", 10**9), ("shipped", shipped)):
                vectors._MIN_RUN = min_run
                row[f"{name}_us"] = _alone(vecs, idx, q)
                row[f"{name}_scans_per_s_{args.threads}_threads"] = _threaded(
                    vecs, idx, q, args.threads, args.seconds
                )
            out.append(row)
    vectors._MIN_RUN = shipped
    print(json.dumps({"benchmark": "exact_scan_runs", "min_run": shipped, "cases": out}))


if __name__ == "__main__":
    main()
