"""``kenning serve`` for real (uvicorn in a subprocess on loopback: the first key
printed, requests served, graceful shutdown) and ``kenning admin`` through the CLI."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
from typer.testing import CliRunner

from kenning.cli import app
from kenning.stores.postgres.throwaway import free_port

runner = CliRunner()


def _wait_ready(base: str, proc: subprocess.Popen[str], timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, "the server exited early"
        try:
            if httpx.get(f"{base}/v1/ready", timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            time.sleep(0.2)
    raise AssertionError("the server did not become ready")


def test_serve_prints_a_first_key_serves_and_stops_gracefully(tmp_path: Path) -> None:
    port = free_port()
    env = {**os.environ, "KENNING_HOME": str(tmp_path), "KENNING_GRAPH_EXTRACTOR": "rules"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "kenning.cli", "serve", "--new-key", "--port", str(port)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        _wait_ready(base, proc)
        assert proc.stderr is not None
        banner = ""
        while "API key" not in banner:
            banner += proc.stderr.readline()
        key = re.search(r"(kn_[0-9a-f]{12}_[A-Za-z0-9_-]{43})", banner)
        assert key, banner
        auth = {"Authorization": f"Bearer {key.group(1)}"}
        me = httpx.get(f"{base}/v1/me", headers=auth, timeout=10).json()
        assert me["user"]["role"] == "admin" and me["org"]["id"] == "default"
        made = httpx.post(
            f"{base}/v1/memories",
            headers=auth,
            timeout=30,
            json={"content": "The server remembers this"},
        )
        assert made.status_code == 201 and made.headers["x-request-id"]
        assert httpx.get(f"{base}/v1/memories", timeout=10).status_code == 401
        ui = httpx.get(f"{base}/", timeout=10, follow_redirects=False)
        assert ui.status_code == 200 and "text/html" in ui.headers["content-type"]
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            out, err = proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            raise
    # uvicorn shuts down gracefully, then re-raises the signal it caught
    assert proc.returncode in (0, -signal.SIGTERM), err
    logs = [json.loads(line) for line in err.splitlines() if line.startswith("{")]
    access = [x for x in logs if x.get("logger") == "kenning.access"]
    assert any(x["route"] == "memory.remember" and x["status"] == 201 for x in access)
    assert any(x.get("msg") == "Application shutdown complete." for x in logs)


def test_admin_commands_manage_the_directory(tmp_path: Path) -> None:
    db = str(tmp_path / "k.db")

    def ok(*args: str) -> object:
        result = runner.invoke(app, ["--db", db, "admin", *args, "--json"])
        assert result.exit_code == 0, (result.stdout, result.stderr, result.exception)
        return json.loads(result.stdout)

    ok("user", "alice", "--name", "Alice")
    ok("team", "eng", "--name", "Engineering", "--review")
    assert ok("member", "eng", "alice", "--role", "lead")["teams"] == {"eng": "lead"}  # type: ignore[index]
    ok("persona", "helper")
    assert ok("grant", "helper", "alice")["personas"] == ["helper"]  # type: ignore[index]
    made = ok("key", "create", "alice", "--name", "agent")
    assert str(made["secret"]).startswith("kn_")  # type: ignore[index]
    listed = ok("key", "list", "--user-id", "alice")
    assert [k["name"] for k in listed] == ["agent"] and "secret" not in listed[0]  # type: ignore[index,union-attr]
    ok("key", "revoke", made["id"])  # type: ignore[index]
    assert ok("org", "--mode", "personal")["mode"] == "personal"  # type: ignore[index]
    actions = [a["action"] for a in ok("audit", "--action", "admin.")]  # type: ignore[union-attr,index]
    assert "admin.key.revoke" in actions and "admin.team.create" in actions
    denied = runner.invoke(app, ["--db", db, "--user", "alice", "admin", "users", "--json"])
    assert denied.exit_code == 0  # members list only themselves
    assert [u["id"] for u in json.loads(denied.stdout)] == ["alice"]
    refused = runner.invoke(app, ["--db", db, "--user", "alice", "admin", "team", "x", "--json"])
    assert refused.exit_code == 3
    other = ok("init-org", "globex", "--admin", "eve", "--mode", "personal")
    assert other["org"] == {
        "id": "globex",
        "name": "globex",
        "mode": "personal",  # type: ignore[index]
        "memory_enabled": True,
        "review": False,
    }
    assert other["user_id"] == "eve" and str(other["secret"]).startswith("kn_")  # type: ignore[index]
