"""What the HTTP door costs a recall: ``kenning.Client`` against a local uvicorn server
versus the embedded ``Memory.recall``, on the same data; and the same recall sent by
a plain keep-alive ``http.client`` connection (the server's and the wire's share,
without the client library's).

    .venv/bin/python bench/client_overhead.py [--memories 1000] [--queries 300]
        [--warmup 30] [--server thread|process]

Each query is recalled both ways back to back (the order alternating), so a busy
machine slows both alike; the overhead is reported as the difference of the p50s
and as the p50/p95 of the per-query differences. ``--server thread`` runs uvicorn
in a thread of this process (client and server share one GIL, as in the first
version of this bench); ``--server process`` runs it in a child process on a copy
of the database, as a real client meets it.

Prints one JSON object (milliseconds). Targets: overhead p50 through the client
<= 5 ms; plain HTTP within 3 ms of the embedded recall.
"""

from __future__ import annotations

import argparse
import http.client
import json
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import uvicorn

from kenning import Client, Memory, Principal
from kenning.server import create_app

NAMES = ["Alice", "Bruno", "Chen", "Dana", "Emeka", "Farah", "Goran", "Hana", "Ivan", "Julia"]
TOPICS = ["jazz", "hiking", "baking", "chess", "fishing", "painting", "running", "sailing"]
VERBS = ["likes", "studies", "teaches", "avoids", "writes about"]
TARGET_MS = 5.0
HTTP_TARGET_MS = 3.0


def texts(n: int) -> list[str]:
    """``n`` distinct short sentences."""
    out = []
    for i in range(n):
        name, topic = NAMES[i % len(NAMES)], TOPICS[(i // len(NAMES)) % len(TOPICS)]
        verb = VERBS[(i // (len(NAMES) * len(TOPICS))) % len(VERBS)]
        out.append(f"{name} {verb} {topic} (note {i})")
    return out


def _quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def summary(values: list[float]) -> dict[str, float]:
    """p50 and p95 of ``values``, rounded to the microsecond."""
    return {
        "p50": round(statistics.median(values), 3),
        "p95": round(_quantile(values, 0.95), 3),
    }


def paired_times(
    runs: dict[str, Callable[[str], object]], queries: list[str], warmup: int
) -> dict[str, list[float]]:
    """Wall time in ms of each run on each query, the runs taking turns per query
    (their order alternating) after ``warmup`` untimed queries."""
    names = list(runs)
    for q in queries[:warmup]:
        for name in names:
            runs[name](q)
    times: dict[str, list[float]] = {name: [] for name in names}
    for i, q in enumerate(queries):
        for name in names if i % 2 == 0 else reversed(names):
            started = time.perf_counter()
            runs[name](q)
            times[name].append((time.perf_counter() - started) * 1000)
    return times


def _socket() -> socket.socket:
    # proto IPPROTO_TCP, as uvicorn's own bind makes it: asyncio sets TCP_NODELAY only on
    # such sockets, and without it each keep-alive answer waits for a delayed ACK (~40 ms)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind(("127.0.0.1", 0))
    return sock


class PlainHttp:
    """Recalls over one keep-alive ``http.client`` connection (no client library)."""

    def __init__(self, url: str, key: str) -> None:
        host, _, port = url.removeprefix("http://").partition(":")
        self.conn = http.client.HTTPConnection(host, int(port))
        self.conn.connect()
        assert self.conn.sock is not None
        self.conn.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}

    def close(self) -> None:
        """Close the connection."""
        self.conn.close()

    def recall(self, query: str, k: int) -> object:
        body = json.dumps({"query": query, "k": k}).encode()
        self.conn.request("POST", "/v1/recall", body=body, headers=self.headers)
        answer = self.conn.getresponse()
        data = answer.read()
        if answer.status != 200:
            raise RuntimeError(f"recall answered {answer.status}: {data[:200]!r}")
        return json.loads(data)


def _uvicorn(mem: Memory) -> uvicorn.Server:
    return uvicorn.Server(
        uvicorn.Config(create_app(memory=mem), log_level="warning", access_log=False)
    )


@contextmanager
def server_thread(mem: Memory) -> Iterator[str]:
    """uvicorn serving ``mem`` in a thread of this process; yields its URL."""
    sock = _socket()
    server = _uvicorn(mem)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(10)


@contextmanager
def server_process(db: Path) -> Iterator[str]:
    """uvicorn serving the database ``db`` in a child process; yields its URL."""
    child = subprocess.Popen(
        [sys.executable, __file__, "--serve", str(db)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert child.stdout is not None
        port = int(child.stdout.readline())
        yield f"http://127.0.0.1:{port}"
    finally:
        child.terminate()
        child.wait(30)


def serve(db: Path) -> None:
    """The child of ``--server process``: serve ``db``, print the port, run until killed."""
    mem = Memory(db)
    sock = _socket()
    server = _uvicorn(mem)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.05)
    print(sock.getsockname()[1], flush=True)
    thread.join()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--memories", type=int, default=1000)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--warmup", type=int, default=30)
    parser.add_argument("--server", choices=["thread", "process"], default="thread")
    parser.add_argument("--serve", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve is not None:
        serve(args.serve)
        return
    where = Path(tempfile.mkdtemp(prefix="kenning-bench-client-"))
    mem = Memory(where / "kenning.db")
    admin = Principal(org_id="bench", user_id="root", roles=frozenset({"admin"}))
    _, key = mem.directory.bootstrap("bench", "root", "bench")
    mem.remember_many([{"content": t} for t in texts(args.memories)], principal=admin)
    queries = [f"who {VERBS[i % 5]} {TOPICS[i % 8]}?" for i in range(args.queries)]
    if args.server == "process":  # one SQLite database serves one process: a copy each
        mem.close()
        (where / "server").mkdir()
        shutil.copy(where / "kenning.db", where / "server" / "kenning.db")
        mem = Memory(where / "kenning.db")
        door = server_process(where / "server" / "kenning.db")
    else:
        door = server_thread(mem)
    with door as url:
        client = Client(url, key)
        plain = PlainHttp(url, key)
        runs: dict[str, Callable[[str], object]] = {
            "embedded": lambda q: mem.recall(q, 10, principal=admin),
            "client": lambda q: client.recall(q, 10),
            "http": lambda q: plain.recall(q, 10),
        }
        times = paired_times(runs, queries, args.warmup)
        client.close()
        plain.close()
    mem.close()
    embedded, over_http, plain_http = times["embedded"], times["client"], times["http"]
    overhead = statistics.median(over_http) - statistics.median(embedded)
    paired = [c - e for c, e in zip(over_http, embedded, strict=True)]
    http_overhead = statistics.median(plain_http) - statistics.median(embedded)
    print(
        json.dumps(
            {
                "server": args.server,
                "memories": args.memories,
                "queries": args.queries,
                "embedded_recall_ms": summary(embedded),
                "client_recall_ms": summary(over_http),
                "overhead_p50_ms": round(overhead, 3),
                "overhead_per_query_ms": summary(paired),
                "target_ms": TARGET_MS,
                "meets_target": overhead <= TARGET_MS,
                "http_recall_ms": summary(plain_http),
                "http_overhead_p50_ms": round(http_overhead, 3),
                "http_target_ms": HTTP_TARGET_MS,
                "http_meets_target": http_overhead <= HTTP_TARGET_MS,
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
