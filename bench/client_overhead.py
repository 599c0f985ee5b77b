"""What the HTTP door costs a recall: p50 through ``kenning.Client`` against a local
uvicorn server minus p50 of the embedded ``Memory.recall``, on the same data.

    .venv/bin/python bench/client_overhead.py [--memories 1000] [--queries 200]

Prints one JSON object (milliseconds). Target: overhead p50 <= 5 ms.
"""

from __future__ import annotations

import argparse
import json
import socket
import statistics
import tempfile
import threading
import time
from pathlib import Path

import uvicorn

from kenning import Client, Memory, Principal
from kenning.server import create_app

NAMES = ["Alice", "Bruno", "Chen", "Dana", "Emeka", "Farah", "Goran", "Hana", "Ivan", "Julia"]
TOPICS = ["jazz", "hiking", "baking", "chess", "fishing", "painting", "running", "sailing"]
VERBS = ["likes", "studies", "teaches", "avoids", "writes about"]


def texts(n: int) -> list[str]:
    """``n`` distinct short sentences."""
    out = []
    for i in range(n):
        name, topic = NAMES[i % len(NAMES)], TOPICS[(i // len(NAMES)) % len(TOPICS)]
        verb = VERBS[(i // (len(NAMES) * len(TOPICS))) % len(VERBS)]
        out.append(f"{name} {verb} {topic} (note {i})")
    return out


def p50_ms(run: object, queries: list[str]) -> float:
    """Median wall time of ``run(query)`` in ms (after one warm-up pass)."""
    assert callable(run)
    for q in queries[:20]:
        run(q)
    times = []
    for q in queries:
        started = time.perf_counter()
        run(q)
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--memories", type=int, default=1000)
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args()
    where = Path(tempfile.mkdtemp(prefix="kenning-bench-client-"))
    mem = Memory(where / "kenning.db")
    admin = Principal(org_id="bench", user_id="root", roles=frozenset({"admin"}))
    _, key = mem.directory.bootstrap("bench", "root", "bench")
    mem.remember_many([{"content": t} for t in texts(args.memories)], principal=admin)
    queries = [f"who {VERBS[i % 5]} {TOPICS[i % 8]}?" for i in range(args.queries)]

    # proto IPPROTO_TCP, as uvicorn's own bind makes it: asyncio sets TCP_NODELAY only on
    # such sockets, and without it each keep-alive answer waits for a delayed ACK (~40 ms)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(
        uvicorn.Config(create_app(memory=mem), log_level="warning", access_log=False)
    )
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.05)
    client = Client(f"http://127.0.0.1:{port}", key)
    embedded = p50_ms(lambda q: mem.recall(q, 10, principal=admin), queries)
    over_http = p50_ms(lambda q: client.recall(q, 10), queries)
    embedded_again = p50_ms(lambda q: mem.recall(q, 10, principal=admin), queries)
    client.close()
    server.should_exit = True
    thread.join(10)
    mem.close()
    base = min(embedded, embedded_again)
    print(
        json.dumps(
            {
                "memories": args.memories,
                "queries": args.queries,
                "embedded_recall_p50_ms": round(base, 3),
                "client_recall_p50_ms": round(over_http, 3),
                "overhead_p50_ms": round(over_http - base, 3),
                "target_ms": 5.0,
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
