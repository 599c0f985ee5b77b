"""CPU one recall costs, split between the kenning process and a local PostgreSQL server.

    python bench/recall_cpu.py --store postgresql://kenning@127.0.0.1:PORT/DB --synthetic
    python bench/recall_cpu.py --store sqlite:///PATH   # real model, the whole recall in-process

The database is one ``kenning bench scale`` built (organization ``bench``; add
``--synthetic`` when it was built with ``--synthetic-vectors``). After a warm-up,
``--queries`` recalls run one after another, for the worst-case reader (an admin
over every scope) and the typical one (a member of two teams). Prints JSON per
reader: wall time per recall (p50 / p95 / mean), CPU of this process per recall
(every thread: ranking, parsing, the query embedding) and, when the PostgreSQL
server runs on this machine, the CPU its processes spent per recall (read from
``/proc``: the postmaster's children, before and after). ``query_embedding``
times the real model alone on one query at a time (wall and CPU): what the
synthetic embedder leaves out of the kenning side. ``--writes N`` also times N
single ``remember`` calls (a user's scope; they stay in the database) the same way.
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

from kenning import Settings
from kenning.bench.scale import BagOfWordsEmbedder, synthetic_text
from kenning.bench.stores import open_bench_memory
from kenning.embeddings import Embedder, MiniLMEmbedder
from kenning.models import ALL_SCOPES, Principal, Role, Scope, TeamRole

ADMIN = Principal(org_id="bench", user_id="admin", roles=frozenset({Role.ADMIN}))
TYPICAL = Principal(
    org_id="bench",
    user_id="u3",
    roles=frozenset({Role.MEMBER}),
    teams={"t0": TeamRole.MEMBER, "t1": TeamRole.MEMBER},
)
TICK_MS = 1000.0 / os.sysconf("SC_CLK_TCK")


def _postmaster(url: str) -> int | None:
    """The local postmaster's pid, or None when the server is not on this machine."""
    import psycopg

    with psycopg.connect(url) as conn:  # read while the backend is alive
        row = conn.execute("SELECT pg_backend_pid()").fetchone()
        stat = Path(f"/proc/{row[0]}/stat") if row else None
        if stat is None or not stat.exists():
            return None
        return int(stat.read_text().rsplit(")", 1)[1].split()[1])


def _server_cpu_ms(postmaster: int) -> float:
    """CPU (user + system, ms) of the postmaster's live children and of those it reaped."""
    total = 0.0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        pid, ppid = int(entry.name), int(fields[1])
        if ppid == postmaster:
            total += int(fields[11]) + int(fields[12])  # utime, stime
        elif pid == postmaster:
            total += int(fields[11]) + int(fields[12]) + int(fields[13]) + int(fields[14])
    return total * TICK_MS


def _measure(mem: Any, texts: list[str], who: Principal, postmaster: int | None) -> dict[str, Any]:
    scopes = ALL_SCOPES if who is ADMIN else None
    walls: list[float] = []
    server0 = _server_cpu_ms(postmaster) if postmaster else 0.0
    cpu0 = time.process_time()
    for text in texts:
        t = time.perf_counter()
        mem.recall(text, 10, scopes=scopes, principal=who)
        walls.append((time.perf_counter() - t) * 1000)
    cpu = (time.process_time() - cpu0) * 1000 / len(texts)
    server = (_server_cpu_ms(postmaster) - server0) / len(texts) if postmaster else None
    ordered = sorted(walls)
    return {
        "wall_ms": {
            "p50": round(statistics.median(ordered), 2),
            "p95": round(ordered[int(0.95 * len(ordered))], 2),
            "mean": round(statistics.fmean(ordered), 2),
        },
        "kenning_cpu_ms": round(cpu, 2),
        "server_cpu_ms": None if server is None else round(server, 2),
    }


def _measure_writes(mem: Any, writes: int, postmaster: int | None) -> dict[str, Any]:
    """``writes`` single ``remember`` calls into one user's scope, one after another."""
    rng = random.Random(33)
    texts = [synthetic_text(rng) for _ in range(writes)]
    walls: list[float] = []
    server0 = _server_cpu_ms(postmaster) if postmaster else 0.0
    cpu0 = time.process_time()
    for i, text in enumerate(texts):
        t = time.perf_counter()
        mem.remember(text, scope=Scope.user("u3"), principal=TYPICAL, session_id=f"cpu/{i // 20}")
        walls.append((time.perf_counter() - t) * 1000)
    cpu = (time.process_time() - cpu0) * 1000 / writes
    server = (_server_cpu_ms(postmaster) - server0) / writes if postmaster else None
    return {
        "wall_ms": {
            "p50": round(statistics.median(walls), 2),
            "mean": round(statistics.fmean(walls), 2),
        },
        "kenning_cpu_ms": round(cpu, 2),
        "server_cpu_ms": None if server is None else round(server, 2),
    }


def _query_embedding(queries: int) -> dict[str, float]:
    model = MiniLMEmbedder()
    rng = random.Random(9)
    model.embed_batch([synthetic_text(rng, 8) for _ in range(8)])  # load the model
    texts = [synthetic_text(rng, 8) for _ in range(queries)]
    cpu0, wall0 = time.process_time(), time.perf_counter()
    for text in texts:
        model.embed_batch([text])
    return {
        "wall_ms": round((time.perf_counter() - wall0) * 1000 / queries, 2),
        "cpu_ms": round((time.process_time() - cpu0) * 1000 / queries, 2),
    }


def run(store: str, synthetic: bool, queries: int, writes: int = 0) -> dict[str, Any]:
    """The measurements the module docstring describes."""
    embedder: Embedder = BagOfWordsEmbedder() if synthetic else MiniLMEmbedder()
    postmaster = _postmaster(store) if store.startswith("postgresql") else None
    with tempfile.TemporaryDirectory() as tmp:
        mem = open_bench_memory(
            store, Path(tmp) / "unused.db", Settings(), require_empty=False, embedder=embedder
        )
        try:
            rng = random.Random(21)
            warm = [synthetic_text(rng, 8) for _ in range(20)]
            for text in warm:
                mem.recall(text, 10, scopes=ALL_SCOPES, principal=ADMIN)
                mem.recall(text, 10, principal=TYPICAL)
            out: dict[str, Any] = {"store": mem.store.kind, "synthetic_vectors": synthetic}
            for name, who in (("worst", ADMIN), ("typical", TYPICAL)):
                texts = [synthetic_text(rng, 8) for _ in range(queries)]
                out[name] = _measure(mem, texts, who, postmaster)
            if writes:
                out["remember"] = _measure_writes(mem, writes, postmaster)
            out["memories"] = sum(
                s.total_memories for s in mem.stats(scopes=ALL_SCOPES, principal=ADMIN)
            )
        finally:
            mem.close()
    out["query_embedding"] = _query_embedding(max(50, queries // 2))
    out["queries"] = queries
    out["load_average"] = [round(x, 2) for x in os.getloadavg()]
    return out


def main() -> None:
    """Parse the flags and print the JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", required=True, help="postgresql://… or sqlite:///…")
    parser.add_argument("--synthetic", action="store_true", help="built with --synthetic-vectors")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--writes", type=int, default=0, help="single remembers to time too")
    args = parser.parse_args()
    print(json.dumps(run(args.store, args.synthetic, args.queries, args.writes), indent=2))


if __name__ == "__main__":
    main()
