"""What the per-organization memory quota costs a write, on a copy of a database.

    python bench/quota_cost.py --db /tmp/k22/scale100k.db [--org bench] [--writes 40]

The database (a ``kenning bench scale --db`` one: organization ``bench``) is
copied first with SQLite's backup API (writes go to the copy). Prints JSON:

* ``open_ms``: opening the copy, which counts every organization's memories
  once when the database has no kept counts yet (a one-time cost);
* ``count_ms``: the quota's count (``store.count_memories``) at several caps,
  median of 20 calls each: what the check costs when the organization holds
  that many memories or more;
* ``remember_ms``: the median ``Memory.remember`` of one short memory without a
  quota and with one just above the organization's size, alternating the two
  (``--writes`` each), so drift of the machine's speed falls on both alike.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from kenning import Memory, Principal, Settings
from kenning.bench.stores import copy_sqlite
from kenning.models import Role


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", type=Path, required=True)
    parser.add_argument("--org", default="bench")
    parser.add_argument("--writes", type=int, default=40)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="quota-cost-"))
    try:
        path = work / "kenning.db"
        copy_sqlite(args.db, path)
        out: dict[str, Any] = {"db": str(args.db), "org": args.org}
        admin = Principal(org_id=args.org, user_id="admin", roles=frozenset({Role.ADMIN}))
        plain = Settings(lifecycle={"reinforce_on_recall": False})
        t = time.perf_counter()
        mem = Memory(path, settings=plain)  # (a database without kept counts: counted now)
        out["open_ms"] = round((time.perf_counter() - t) * 1000, 1)
        held = mem.store.footprint(args.org).memories
        out["memories"] = held
        counts: dict[str, float] = {}
        for cap in (1_000, 10_000, held + 1):
            times = []
            for _ in range(20):
                t = time.perf_counter()
                mem.store.count_memories(args.org, cap)  # type: ignore[attr-defined]
                times.append((time.perf_counter() - t) * 1000)
            counts[str(cap)] = round(statistics.median(times), 3)
        out["count_ms"] = counts
        quota = mem.settings.modelcopy_sqlite(
            update={"max_memories_per_org": held + 10 * args.writes}
        )
        with_quota, without = [], []
        for i in range(args.writes):
            for side, settings in (("off", plain), ("on", quota)):
                mem.settings = settings
                t = time.perf_counter()
                mem.remember(
                    f"Quota bench note {i} {side}: the kettle is in cupboard {i}", principal=admin
                )
                (with_quota if side == "on" else without).append((time.perf_counter() - t) * 1000)
        out["remember_ms"] = {
            "no_quota_p50": round(statistics.median(without), 2),
            "quota_p50": round(statistics.median(with_quota), 2),
            "writes_each": args.writes,
        }
        mem.close()
        print(json.dumps(out, indent=2))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
