"""How long an online SQLite backup takes, and what it costs the writers meanwhile.

    python bench/backup_speed.py --db /tmp/kb/scale.db [--rounds 3] [--writes 200]

On a copy of ``--db`` (the original is only read): per round, the backup API
in one step, ``VACUUM INTO`` and ``PRAGMA integrity_check`` of the copy, each
timed alone; then the latency of small write transactions (one row into a
scratch table, as a stand-in for a memory write) with no backup running and
with backups running back to back in another thread. Prints JSON: medians of
the timings, bytes of both copies, p50/p95 write latency without and during
backups.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from kenning.stores.sqlite.driver import sqlite3


def _timed(fn: Any) -> float:
    started = time.perf_counter()
    fn()
    return time.perf_counter() - started


def _writes(db: Path, count: int) -> list[float]:
    conn = sqlite3.connect(db, isolation_level=None, timeout=60)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")  # as the store runs
    conn.execute("CREATE TABLE IF NOT EXISTS bench_backup_writes (x TEXT)")
    out = []
    for i in range(count):
        out.append(
            _timed(
                lambda i=i: conn.execute(
                    "INSERT INTO bench_backup_writes VALUES (?)", (f"write {i}",)
                )
            )
        )
    conn.close()
    return out


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1e3, 3)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--db", type=Path, required=True)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--writes", type=int, default=200)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "source.db"
        src = sqlite3.connect(args.db)  # a consistent copy of the original to work on
        with sqlite3.connect(db) as out:
            src.backup(out)
        src.close()
        source = sqlite3.connect(db, isolation_level=None)
        source.execute("PRAGMA journal_mode=WAL")
        api, vacuum, check = [], [], []
        for n in range(args.rounds):
            api_copy, vac_copy = Path(tmp) / f"api{n}.db", Path(tmp) / f"vac{n}.db"

            def backup(api_copy: Path = api_copy) -> None:
                with sqlite3.connect(api_copy) as out:
                    source.backup(out, pages=-1)

            api.append(_timed(backup))
            vacuum.append(_timed(lambda v=vac_copy: source.execute(f"VACUUM INTO '{v}'")))
            copy = sqlite3.connect(api_copy)
            check.append(_timed(lambda c=copy: c.execute("PRAGMA integrity_check").fetchall()))
            copy.close()
        source.close()
        sizes = {
            "backup_api_bytes": api_copy.stat().st_size,
            "vacuum_bytes": vac_copy.stat().st_size,
        }
        quiet = _writes(db, args.writes)
        stop = threading.Event()

        def keep_backing_up() -> None:
            reader = sqlite3.connect(db, isolation_level=None)
            while not stop.is_set():
                with sqlite3.connect(Path(tmp) / "loop.db") as out:
                    reader.backup(out, pages=-1)
            reader.close()

        looper = threading.Thread(target=keep_backing_up)
        looper.start()
        busy = _writes(db, args.writes)
        stop.set()
        looper.join()
        shutil.rmtree(tmp, ignore_errors=True)
    print(
        json.dumps(
            {
                "db": str(args.db),
                "rounds": args.rounds,
                "backup_api_s": round(statistics.median(api), 3),
                "vacuum_into_s": round(statistics.median(vacuum), 3),
                "integrity_check_s": round(statistics.median(check), 3),
                **sizes,
                "write_ms_quiet": {"p50": _pct(quiet, 0.5), "p95": _pct(quiet, 0.95)},
                "write_ms_during_backups": {"p50": _pct(busy, 0.5), "p95": _pct(busy, 0.95)},
            }
        )
    )


if __name__ == "__main__":
    main()
