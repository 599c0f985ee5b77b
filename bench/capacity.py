"""Capacity model of a large deployment: organizations on databases, recalls on cores.

    python bench/capacity.py [--memories 1e9] [--orgs 100000] [--recalls-per-s 2000]
        [--sigma 2.0] [--db-ram-gb 256] [--db-disk-gb 4000] [--targets-ms 250,50]
        [--seconds 30] [--seed 1]

Two simulations, both seeded (numpy and the standard library only), printing one
JSON document; docs/capacity.md walks through the arithmetic around them.

* **Placement.** ``--orgs`` organizations with heavy-tailed sizes (lognormal with
  ``--sigma``, and a Zipf stress case) summing to ``--memories`` are placed the
  way kenning routes them: a whole organization in one database, largest first
  onto the least-full database. A database holds as many memories as its RAM
  budget for the HNSW index and its disk budget allow, from the bytes per memory
  measured on PostgreSQL. Reported: databases needed, max/mean fill, the
  largest organization's share of its database, organizations too big for one.
* **Queues.** Recalls arrive as a Poisson stream at ``--recalls-per-s`` over K
  servers (FCFS, one queue): a server is one core's worth of recall work, and a
  recall's service time is lognormal with the spread of the recall latency
  measured here (sigma from its p50 and p95) and the mean of the CPU a recall
  costs on that side (API process: query embedding + ranking; database: the
  searches). For each p99 target the smallest K that meets it, found by
  simulation, then checked on a fresh seed.
"""

from __future__ import annotations

import argparse
import heapq
import json
import math
import statistics
from dataclasses import dataclass
from typing import Any

import numpy as np

# --- The deployment to size (issue 23, item 5) --------------------------------------
MEMORIES = 1_000_000_000
ORGS = 100_000
RECALLS_PER_S = 2_000.0
WRITES_PER_S = 200.0

# --- Organization sizes (stated, not measured) --------------------------------------
# Lognormal: log-size has this standard deviation; sigma 2.0 puts about half the
# memories in the largest ~3% of organizations.
ORG_SIZE_SIGMA = 2.0
# Stress case: size proportional to rank ** -ZIPF_S (s = 1: the largest organization
# holds 1/H(100,000) = 8.3% of everything).
ZIPF_S = 1.0

# --- Bytes per memory on PostgreSQL, measured here -----------------------------------
# `python bench/footprint.py --store postgresql://postgres@…/syn30k` on a database
# `kenning bench scale --n 30000 --synthetic-vectors --store …` built (384-dimension
# vectors, 12-word texts of 86 characters on average, graph on):
# bench/results/footprint_postgresql_30k.json. (At 1M the HNSW index was 1,950 bytes
# per memory: docs/benchmarks-history.md.)
PG_BYTES_PER_MEMORY = 9_940.0  # the whole database: heaps, B-trees, postings, caches, HNSW
PG_HNSW_BYTES_PER_MEMORY = 2_050.0  # the HNSW index alone

# --- How PostgreSQL's vector search chooses (kenning and pgvector defaults) -----------
# A reader who sees at most KENNING_STORE_PG_EXACT_SEARCH_MAX rows is scanned exactly;
# above that the shared HNSW index is walked with the reader's filter, and pgvector's
# iterative scan gives up after hnsw.max_scan_tuples index tuples (20,000, checked
# with SHOW here); with fewer than the dense candidates (KENNING_RETRIEVAL_CANDIDATES_DENSE,
# 40) found, kenning falls back to the exact scan of every row the reader sees.
PG_EXACT_SEARCH_MAX = 2_000
HNSW_MAX_SCAN_TUPLES = 20_000
DENSE_CANDIDATES = 40

# --- A database node's budget (stated, not measured) ---------------------------------
DB_RAM_GB = 256.0
HNSW_RAM_SHARE = 0.5  # of RAM kept for the HNSW index (shared_buffers + page cache)
DB_DISK_GB = 4_000.0
DISK_FILL = 0.6  # of disk for the database: the rest is WAL, vacuum, a move's copy, growth

# --- Recall latency measured here (BENCHMARKS.md, "scale" rows) ----------------------
# PostgreSQL, 1M synthetic vectors, worst-case reader, p50 / p95 (ms):
# `kenning bench scale --n 1000000 --synthetic-vectors --queries 200 --repeat 2
#  --store postgresql://…/syn1m --json` (bench/results/scale_1m_synthetic_postgresql_recall.json)
RECALL_P50_MS = 29.2
RECALL_P95_MS = 44.0

# --- CPU per recall, measured here ---------------------------------------------------
# `python bench/recall_cpu.py --store postgresql://…/syn30k --synthetic --queries 200`
# (bench/results/recall_cpu_postgresql_30k.json, run 2 of 2), worst-case reader, on the
# shared 2-core machine (load average 5.6): the kenning process 18.1 ms + the real
# model's query embedding alone 17.4 ms (the synthetic embedder leaves it out); the
# PostgreSQL server's processes 28.2 ms (searches, graph reads, the access bookkeeping
# write). Run 1, beside an autovacuum: 21.0 + 23.9 and 45.8 ms (--api-cpu-ms 45
# --db-cpu-ms 46).
API_CPU_MS = 35.5
DB_CPU_MS = 28.2

TARGETS_MS = (250.0, 50.0)
# Planning headroom (stated): no side planned above this share of busy cores, so a
# lost node or a burst does not tip the queue over.
MAX_UTILISATION = 0.7
SECONDS = 60.0
SEED = 1


# --- Placement -----------------------------------------------------------------------


def org_sizes(
    orgs: int, total: int, *, dist: str = "lognormal", param: float = ORG_SIZE_SIGMA, seed: int = 1
) -> np.ndarray:
    """``orgs`` organization sizes (int64, each >= 1) summing exactly to ``total``.

    ``dist`` is ``lognormal`` (``param`` = sigma of the log-size) or ``zipf``
    (size proportional to rank ** -``param``).
    """
    if orgs < 1 or total < orgs:
        raise ValueError(f"need 1 <= orgs <= total, got orgs={orgs}, total={total}")
    if dist == "lognormal":
        raw = np.random.default_rng(seed).lognormal(0.0, param, orgs)
    elif dist == "zipf":
        raw = np.arange(1, orgs + 1, dtype=np.float64) ** -param
    else:
        raise ValueError(f"dist must be lognormal or zipf, got {dist!r}")
    spare = total - orgs  # every organization gets one memory, the rest in proportion
    share = raw / raw.sum() * spare
    sizes = np.floor(share).astype(np.int64)
    short = spare - int(sizes.sum())
    # the largest remainders get the memories flooring left over
    sizes[np.argsort(share - sizes)[::-1][:short]] += 1
    return sizes + 1


@dataclass(frozen=True)
class Placement:
    """Organizations on databases: ``where[i]`` is organization i's database."""

    where: np.ndarray
    fills: np.ndarray
    capacity: float


def place(sizes: np.ndarray, databases: int, capacity: float) -> Placement | None:
    """Greedy largest-first onto the least-full database; None when one does not fit.

    Every organization goes whole into one database (kenning routes organizations,
    it never splits one), and no database takes more than ``capacity`` memories.
    """
    where = np.full(len(sizes), -1, dtype=np.int64)
    heap = [(0, db) for db in range(databases)]
    for i in np.argsort(sizes, kind="stable")[::-1]:
        size = int(sizes[i])
        fill, db = heap[0]
        if fill + size > capacity:
            return None  # the least-full database cannot take it, so none can
        where[i] = db
        heapq.heapreplace(heap, (fill + size, db))
    fills = np.bincount(where, weights=sizes, minlength=databases)
    return Placement(where, fills, capacity)


def databases_needed(sizes: np.ndarray, capacity: float) -> Placement | None:
    """The fewest databases the greedy placement fits into (None: an organization
    is larger than one database)."""
    if int(sizes.max()) > capacity:
        return None
    n = max(1, math.ceil(int(sizes.sum()) / capacity))
    while (placed := place(sizes, n, capacity)) is None:
        n += 1
    return placed


def database_capacity(
    *,
    ram_gb: float = DB_RAM_GB,
    hnsw_share: float = HNSW_RAM_SHARE,
    disk_gb: float = DB_DISK_GB,
    disk_fill: float = DISK_FILL,
    bytes_per_memory: float = PG_BYTES_PER_MEMORY,
    hnsw_bytes_per_memory: float = PG_HNSW_BYTES_PER_MEMORY,
) -> dict[str, float]:
    """Memories one database holds: the smaller of its RAM bound (HNSW in memory)
    and its disk bound."""
    by_ram = ram_gb * 1e9 * hnsw_share / hnsw_bytes_per_memory
    by_disk = disk_gb * 1e9 * disk_fill / bytes_per_memory
    return {"by_ram": by_ram, "by_disk": by_disk, "memories": min(by_ram, by_disk)}


def placement_report(sizes: np.ndarray, capacity: float) -> dict[str, Any]:
    """Databases needed for ``sizes`` at ``capacity`` and how full they are."""
    largest = int(sizes.max())
    out: dict[str, Any] = {
        "largest_org": largest,
        "largest_org_share_of_all": round(largest / int(sizes.sum()), 5),
        "orgs_over_capacity": int((sizes > capacity).sum()),
        "lower_bound_databases": math.ceil(int(sizes.sum()) / capacity),
    }
    placed = databases_needed(sizes, capacity)
    if placed is None:
        return {**out, "databases": None}
    db = int(placed.where[int(np.argmax(sizes))])
    # organizations whose admin sees too small a share of their database for the
    # filtered HNSW walk to find its candidates: the walk, then an exact scan
    share = sizes / placed.fills[placed.where]
    band = (sizes > PG_EXACT_SEARCH_MAX) & (share * HNSW_MAX_SCAN_TUPLES < DENSE_CANDIDATES)
    return {
        **out,
        "databases": len(placed.fills),
        "max_fill": round(float(placed.fills.max()) / capacity, 4),
        "mean_fill": round(float(placed.fills.mean()) / capacity, 4),
        "largest_org_share_of_its_db": round(largest / float(placed.fills[db]), 4),
        "largest_org_share_of_capacity": round(largest / capacity, 4),
        "orgs_walk_then_exact": int(band.sum()),
        "memories_share_walk_then_exact": round(float(sizes[band].sum() / sizes.sum()), 4),
        "largest_exact_fallback_rows": int(sizes[band].max()) if band.any() else 0,
        # recalls follow memories: the rows a recall scans exactly, on average over all
        # recalls (an admin's view, the organization's every row)
        "exact_rows_per_recall": round(float((sizes[band] ** 2).sum() / sizes.sum()), 1),
    }


# --- Queues --------------------------------------------------------------------------


def lognormal_from_quantiles(p50: float, p95: float) -> tuple[float, float]:
    """(mu, sigma) of the lognormal whose median and 95th percentile these are."""
    if not 0 < p50 <= p95:
        raise ValueError(f"need 0 < p50 <= p95, got {p50}, {p95}")
    z95 = statistics.NormalDist().inv_cdf(0.95)
    return math.log(p50), (math.log(p95) - math.log(p50)) / z95


def service_ms(mean_ms: float, sigma: float) -> tuple[float, float]:
    """(mu, sigma) of a lognormal with this mean and spread."""
    return math.log(mean_ms) - sigma * sigma / 2, sigma


def simulate_queue(
    rate_per_s: float,
    servers: int,
    mu: float,
    sigma: float,
    *,
    seconds: float = SECONDS,
    seed: int = SEED,
    warmup: float = 0.1,
) -> dict[str, float]:
    """FCFS queue of Poisson arrivals over ``servers`` servers, lognormal(mu, sigma)
    service times in ms: response-time quantiles (wait + service) and utilisation.
    The first ``warmup`` share of arrivals is left out of the quantiles."""
    if servers < 1 or rate_per_s <= 0:
        raise ValueError("need servers >= 1 and a positive rate")
    rng = np.random.default_rng(seed)
    n = max(1, int(rate_per_s * seconds))
    arrivals = np.cumsum(rng.exponential(1000.0 / rate_per_s, n))
    service = rng.lognormal(mu, sigma, n)
    free = [0.0] * servers
    response = np.empty(n)
    for i in range(n):
        a = float(arrivals[i])
        start = max(a, free[0])
        done = start + float(service[i])
        heapq.heapreplace(free, done)
        response[i] = done - a
    kept = response[int(n * warmup) :]
    span = float(arrivals[-1])
    return {
        "p50": round(float(np.percentile(kept, 50)), 2),
        "p95": round(float(np.percentile(kept, 95)), 2),
        "p99": round(float(np.percentile(kept, 99)), 2),
        "utilisation": round(float(service.sum()) / (servers * span), 3),
    }


def smallest_servers(
    rate_per_s: float,
    mu: float,
    sigma: float,
    target_p99_ms: float,
    *,
    seconds: float = SECONDS,
    seed: int = SEED,
) -> dict[str, Any]:
    """The fewest servers whose simulated p99 is under the target on three seeds
    (``seed`` to ``seed + 2``: next to saturation one run can pass by luck);
    ``servers`` is None when even an idle server's p99 service time is over it."""
    own_p99 = math.exp(mu + sigma * statistics.NormalDist().inv_cdf(0.99))
    if own_p99 >= target_p99_ms:
        return {"servers": None, "service_p99": round(own_p99, 2)}
    mean = math.exp(mu + sigma * sigma / 2)
    k = max(1, math.floor(rate_per_s * mean / 1000.0) + 1)  # the least that is stable
    # past a third busy there is next to no queue: a target still missed there is
    # within the sampling noise of the service time's own p99
    last = max(k + 10, math.ceil(3 * rate_per_s * mean / 1000.0))
    while k <= last:
        sim = simulate_queue(rate_per_s, k, mu, sigma, seconds=seconds, seed=seed)
        if sim["p99"] < target_p99_ms and all(
            simulate_queue(rate_per_s, k, mu, sigma, seconds=seconds, seed=seed + i)["p99"]
            < target_p99_ms
            for i in (1, 2)
        ):
            return {"servers": k, **sim}
        k += 1
    return {"servers": None, "service_p99": round(own_p99, 2)}


def size_side(
    rate_per_s: float,
    cpu_mean_ms: float,
    sigma: float,
    targets_ms: tuple[float, ...],
    *,
    seconds: float = SECONDS,
    seed: int = SEED,
) -> dict[str, Any]:
    """Servers (cores) one side of a recall needs for each target: the fewest that
    meet it in simulation (re-run on another seed at that size), and ``planned``,
    that many or enough to stay under ``MAX_UTILISATION``, whichever is more."""
    mu, sigma = service_ms(cpu_mean_ms, sigma)
    busy = rate_per_s * cpu_mean_ms / 1000.0
    out: dict[str, Any] = {
        "rate_per_s": round(rate_per_s, 1),
        "cpu_mean_ms": cpu_mean_ms,
        "busy_cores": round(busy, 2),
    }
    for target in targets_ms:
        found = smallest_servers(rate_per_s, mu, sigma, target, seconds=seconds, seed=seed)
        if found["servers"] is not None:
            found["rerun_p99"] = simulate_queue(
                rate_per_s, found["servers"], mu, sigma, seconds=seconds, seed=seed + 1000
            )["p99"]
            found["planned"] = max(found["servers"], math.ceil(busy / MAX_UTILISATION))
        out[f"p99_under_{target:g}ms"] = found
    return out


# --- The whole model -----------------------------------------------------------------


def run(args: argparse.Namespace) -> dict[str, Any]:
    """Both simulations for the deployment the arguments describe."""
    cap = database_capacity(ram_gb=args.db_ram_gb, disk_gb=args.db_disk_gb)
    capacity = cap["memories"]
    total = int(args.memories)
    placements = {
        f"lognormal_sigma_{args.sigma:g}": placement_report(
            org_sizes(args.orgs, total, dist="lognormal", param=args.sigma, seed=args.seed),
            capacity,
        ),
        f"zipf_s_{ZIPF_S:g}": placement_report(
            org_sizes(args.orgs, total, dist="zipf", param=ZIPF_S), capacity
        ),
    }
    _, spread = lognormal_from_quantiles(RECALL_P50_MS, RECALL_P95_MS)
    targets = tuple(float(t) for t in args.targets_ms.split(","))
    api = size_side(
        args.recalls_per_s, args.api_cpu_ms, spread, targets, seconds=args.seconds, seed=args.seed
    )
    # Recalls follow memories: the fullest database of the lognormal placement sees
    # its share of the recall rate (all of them when there is one database).
    main_placement = placements[f"lognormal_sigma_{args.sigma:g}"]
    dbs = main_placement.get("databases") or 1
    hottest = args.recalls_per_s * min(1.0, main_placement.get("max_fill", 1.0) * capacity / total)
    db_all = size_side(
        args.recalls_per_s, args.db_cpu_ms, spread, targets, seconds=args.seconds, seed=args.seed
    )
    db_one = size_side(
        hottest, args.db_cpu_ms, spread, targets, seconds=args.seconds, seed=args.seed
    )
    return {
        "inputs": {
            "memories": total,
            "orgs": args.orgs,
            "recalls_per_s": args.recalls_per_s,
            "writes_per_s": WRITES_PER_S,
            "pg_bytes_per_memory": PG_BYTES_PER_MEMORY,
            "pg_hnsw_bytes_per_memory": PG_HNSW_BYTES_PER_MEMORY,
            "db_ram_gb": args.db_ram_gb,
            "hnsw_ram_share": HNSW_RAM_SHARE,
            "db_disk_gb": args.db_disk_gb,
            "disk_fill": DISK_FILL,
            "recall_p50_p95_ms": [RECALL_P50_MS, RECALL_P95_MS],
            "service_sigma": round(spread, 4),
            "api_cpu_ms": args.api_cpu_ms,
            "db_cpu_ms": args.db_cpu_ms,
            "max_utilisation": MAX_UTILISATION,
            "seconds": args.seconds,
            "seed": args.seed,
        },
        "database_capacity": {k: round(v) for k, v in cap.items()},
        "placement": placements,
        "api_cores": api,
        "db_cores_all_databases": db_all,
        "db_cores_fullest_database": {"databases": dbs, **db_one},
    }


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    """Command-line flags; the defaults are the constants at the top of the file."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--memories", type=float, default=MEMORIES)
    p.add_argument("--orgs", type=int, default=ORGS)
    p.add_argument("--recalls-per-s", type=float, default=RECALLS_PER_S)
    p.add_argument("--sigma", type=float, default=ORG_SIZE_SIGMA, help="lognormal org sizes")
    p.add_argument("--db-ram-gb", type=float, default=DB_RAM_GB)
    p.add_argument("--db-disk-gb", type=float, default=DB_DISK_GB)
    p.add_argument("--api-cpu-ms", type=float, default=API_CPU_MS)
    p.add_argument("--db-cpu-ms", type=float, default=DB_CPU_MS)
    p.add_argument("--targets-ms", default=",".join(f"{t:g}" for t in TARGETS_MS))
    p.add_argument("--seconds", type=float, default=SECONDS, help="simulated seconds per run")
    p.add_argument("--seed", type=int, default=SEED)
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    """Print the capacity model's JSON."""
    print(json.dumps(run(parse(argv)), indent=2))


if __name__ == "__main__":
    main()
