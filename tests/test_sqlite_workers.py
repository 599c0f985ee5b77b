"""Several server processes on one SQLite file (``kenning serve --workers 2``).

Each worker keeps in-memory mirrors of the file (vectors, keyword postings) and
a short-lived cache of verified keys; a write by one process must be read by
the others. The test process itself is a third process on the same file: what
it writes, the workers must recall, and what they write, it must read.
Requests go on fresh connections, so they land on either worker.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from kenning import Memory
from kenning.embeddings import Embedder
from kenning.lanes import worker_threads
from kenning.models import Principal, Role, Scope
from kenning.stores.postgres.throwaway import free_port

ORG, ADMIN = "acme", "root"
WORKERS = 2


class Server:
    def __init__(self, base: str, key: str, key_id: str, db: Path) -> None:
        self.base, self.key, self.key_id, self.db = base, key, key_id, db

    def call(self, method: str, path: str, **kw: object) -> httpx.Response:
        """One request on a fresh connection (either worker may take it)."""
        headers = {"Authorization": f"Bearer {self.key}", "Connection": "close"}
        return httpx.request(method, self.base + path, headers=headers, timeout=60, **kw)  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, embedder: Embedder) -> Iterator[Server]:
    home = tmp_path_factory.mktemp("workers")
    db = home / "kenning.db"
    mem = Memory(db, embedder=embedder)
    try:
        key, secret = mem.directory.bootstrap(ORG, ADMIN, "workers test")
    finally:
        mem.close()
    port = free_port()
    env = {
        **os.environ,
        "KENNING_HOME": str(home),
        "KENNING_DATABASE_URL": f"sqlite:///{db}",
        "KENNING_GRAPH_EXTRACTOR": "rules",
    }
    log = (home / "server.log").open("w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "kenning.cli", "serve", "--port", str(port)]
        + ["--workers", str(WORKERS)],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        started = 0
        while started < WORKERS:
            assert proc.poll() is None, (home / "server.log").read_text()
            assert time.monotonic() < deadline, (home / "server.log").read_text()
            started = (home / "server.log").read_text().count("Application startup complete")
            time.sleep(0.2)
        yield Server(base, secret, key.id, db)
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        log.close()
    text = (home / "server.log").read_text()
    assert text.count("Application shutdown complete") == WORKERS, text
    assert '"level": "ERROR"' not in text, text
    served = Counter(
        line["pid"]
        for line in map(json.loads, filter(lambda x: x.startswith("{"), text.splitlines()))
        if line.get("logger") == "kenning.access"
    )
    # the premise: requests on fresh connections reached both workers
    assert len(served) == WORKERS, served
    # and so did the keep-alive connections opened together (one worker per connection)
    kept = {
        line["pid"]
        for line in map(json.loads, filter(lambda x: x.startswith("{"), text.splitlines()))
        if line.get("logger") == "kenning.access"
        and str(line.get("request_id", "")).startswith("keepalive-")
    }
    assert len(kept) == WORKERS, kept


def _recall_ids(server: Server, query: str) -> list[str]:
    resp = server.call("POST", "/v1/recall", json={"query": query, "k": 5})
    assert resp.status_code == 200, resp.text
    return [h["memory"]["id"] for h in resp.json()["hits"]]


def test_what_another_process_writes_every_worker_recalls(
    server: Server, embedder: Embedder
) -> None:
    admin = Principal(org_id=ORG, user_id=ADMIN, roles=frozenset({Role.ADMIN}))
    mem = Memory(server.db, embedder=embedder)
    try:
        rec = mem.remember(
            "The Orinoco project ships its firmware on the first Thursday of March",
            scope=Scope.org(ORG),
            principal=admin,
        )
    finally:
        mem.close()
    for _ in range(2 * WORKERS + 2):
        assert _recall_ids(server, "When does Orinoco ship its firmware?")[0] == rec.id


def test_a_workers_change_is_seen_by_the_others(server: Server, embedder: Embedder) -> None:
    made = server.call(
        "POST",
        "/v1/memories",
        json={"content": "The Kestrel team's standup is at 9:15 in room Fjord"},
    )
    assert made.status_code == 201, made.text
    mid = made.json()["memory"]["id"]
    # another process reads the worker's write from the file
    mem = Memory(server.db, embedder=embedder)
    try:
        admin = Principal(org_id=ORG, user_id=ADMIN, roles=frozenset({Role.ADMIN}))
        assert mem.get(mid, principal=admin).content.startswith("The Kestrel team")
    finally:
        mem.close()
    changed = server.call(
        "PATCH", f"/v1/memories/{mid}", json={"content": "The Kestrel standup moved to 10:30"}
    )
    assert changed.status_code == 200, changed.text
    for _ in range(2 * WORKERS + 2):
        got = server.call("GET", f"/v1/memories/{mid}")
        assert got.json()["content"] == "The Kestrel standup moved to 10:30"
        assert _recall_ids(server, "When is the Kestrel standup?")[0] == mid
    gone = server.call("DELETE", f"/v1/memories/{mid}")
    assert gone.status_code in (200, 204), gone.text
    for _ in range(2 * WORKERS + 2):
        assert mid not in _recall_ids(server, "When is the Kestrel standup?")
        assert server.call("GET", f"/v1/memories/{mid}").status_code == 404


def test_concurrent_writes_through_both_workers_all_land(server: Server) -> None:
    def write(i: int) -> str:
        resp = server.call(
            "POST", "/v1/memories", json={"content": f"Parallel note {i}: rack B{i} holds node {i}"}
        )
        assert resp.status_code == 201, resp.text
        return str(resp.json()["memory"]["id"])

    with ThreadPoolExecutor(8) as pool:
        ids = list(pool.map(write, range(24)))
    assert len(set(ids)) == 24
    for mid in ids:
        assert server.call("GET", f"/v1/memories/{mid}").status_code == 200


def test_keep_alive_clients_connecting_together_spread_over_the_workers(server: Server) -> None:
    """A burst of persistent connections is not swallowed by one worker (the pids that
    served them are checked when the server stops)."""
    clients = [
        httpx.Client(base_url=server.base, headers={"Authorization": f"Bearer {server.key}"})
        for _ in range(16)
    ]
    try:

        def ask(i: int) -> int:
            codes = 0
            for j in range(3):
                r = clients[i].get("/v1/me", headers={"X-Request-Id": f"keepalive-{i}-{j}"})
                codes += r.status_code == 200
            return codes

        with ThreadPoolExecutor(16) as pool:
            assert sum(pool.map(ask, range(16))) == 48
    finally:
        for c in clients:
            c.close()


def test_each_worker_runs_its_share_of_the_cores_in_its_engine_lane(server: Server) -> None:
    """``serve`` sizes each worker's lane for its share of the cores (the workers'
    environment does not know how many of them there are)."""
    expected = worker_threads(WORKERS) + 1
    sizes = set()
    for _ in range(2 * WORKERS + 2):
        text = server.call("GET", "/metrics").text
        (line,) = [
            s for s in text.splitlines() if s.startswith('kenning_engine_lane_size{lane="engine"}')
        ]
        sizes.add(int(float(line.split()[1])))
    assert sizes == {expected}


def test_a_key_revoked_elsewhere_stops_working_on_every_worker(
    server: Server, embedder: Embedder
) -> None:
    assert server.call("GET", "/v1/me").status_code == 200
    mem = Memory(server.db, embedder=embedder)
    try:
        admin = Principal(org_id=ORG, user_id=ADMIN, roles=frozenset({Role.ADMIN}))
        mem.directory.revoke_key(admin, server.key_id)
    finally:
        mem.close()
    # each worker keeps a verified key for at most 2 seconds
    time.sleep(2.5)
    for _ in range(2 * WORKERS + 2):
        assert server.call("GET", "/v1/me").status_code == 401
