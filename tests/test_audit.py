"""Audit in the core: the same operation through each door (SDK, CLI, REST, MCP) leaves
exactly one audit line, naming actor, door, action, target and outcome."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp import Client
from serverkit import Api, admin_of, bootstrap_org
from typer.testing import CliRunner

from kenning import FixedClock, Memory, Principal
from kenning.audit import current_door, door
from kenning.cli.app import app
from kenning.directory.model import AuditEntry
from kenning.embeddings import Embedder
from kenning.mcp import build_mcp, fixed_resolver
from kenning.models import Role

ACME = "acme"
ME = Principal()  # the embedded install's own principal: org default, admin


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "kenning.db"


@pytest.fixture
def mem(db: Path, embedder: Embedder, clock: FixedClock) -> Iterator[Memory]:
    with Memory(db, embedder=embedder, clock=clock) as mem:
        yield mem


def _lines(mem: Memory, who: Principal, action: str, target: str) -> list[AuditEntry]:
    return [a for a in mem.directory.audit(who, action=action) if a.target == target]


def _cli(db: Path, *args: str) -> str:
    result = CliRunner().invoke(app, ["--db", str(db), *args], env={"COLUMNS": "220"})
    assert result.exit_code == 0, (result.stdout, result.exception)
    return result.stdout


def test_sdk_and_cli_each_audit_a_write_and_a_forget_once(mem: Memory, db: Path) -> None:
    kept = mem.remember("The SDK wrote this")
    mem.forget(kept.id)
    out = _cli(db, "remember", "The CLI wrote this", "--json")
    cli_id = next(r.id for r in mem.list(scopes="all").items if r.content == "The CLI wrote this")
    assert cli_id in out
    _cli(db, "forget", cli_id, "--yes")
    for memory_id, via in ((kept.id, "sdk"), (cli_id, "cli")):
        for action in ("memory.remember", "memory.forget"):
            (line,) = _lines(mem, ME, action, memory_id)
            assert (line.actor, line.outcome, line.detail["door"]) == ("default", "ok", via)


def test_rest_audits_each_operation_once_and_names_its_request(mem: Memory) -> None:
    keys = bootstrap_org(mem, ACME)
    api = Api(mem)
    try:
        made = api.call("POST", "/v1/memories", key=keys["alice"], json={"content": "Via REST"})
        memory_id = made.json()["memory"]["id"]
        gone = api.call("DELETE", f"/v1/memories/{memory_id}", key=keys["alice"])
        assert gone.status_code == 204
        again = api.call("DELETE", f"/v1/memories/{memory_id}", key=keys["alice"])
        assert again.status_code == 404
    finally:
        api.close()
    root = admin_of(ACME)
    (created,) = _lines(mem, root, "memory.remember", memory_id)
    assert (created.actor, created.detail["door"]) == ("alice", "rest")
    assert created.request_id == made.headers["x-request-id"]
    forgets = _lines(mem, root, "memory.forget", memory_id)
    assert sorted((a.outcome, a.detail["door"]) for a in forgets) == [
        ("not_found", "rest"),
        ("ok", "rest"),
    ]


def test_mcp_audits_each_tool_call_once(mem: Memory) -> None:
    server = build_mcp(mem, fixed_resolver(ME))

    async def save_and_forget() -> str:
        async with Client(server) as client:
            saved = await client.call_tool("memory_save", {"key": "tea", "value": "Oolong"})
            assert saved.structured_content is not None
            memory_id = str(saved.structured_content["id"])
            await client.call_tool("memory_forget", {"memory_id": memory_id})
            return memory_id

    memory_id = asyncio.run(save_and_forget())
    (saved,) = _lines(mem, ME, "memory.upsert", memory_id)
    (forgot,) = _lines(mem, ME, "memory.forget", memory_id)
    assert [saved.detail["door"], forgot.detail["door"]] == ["mcp", "mcp"]
    assert current_door() == "sdk"  # the door does not leak out of the call


def test_nested_calls_are_one_line_and_failures_are_audited(mem: Memory) -> None:
    record = mem.remember("Remember runs write inside: one line")
    assert len(mem.directory.audit(ME, action="memory.")) == 1
    member = Principal(user_id="guest", roles=frozenset({Role.MEMBER}))
    with pytest.raises(Exception, match="not found"):
        mem.forget(record.id, principal=member)
    (denied,) = _lines(mem, ME, "memory.forget", record.id)
    assert (denied.actor, denied.outcome) == ("guest", "not_found")


def test_reads_are_audited_for_admins_of_governed_organizations_only(mem: Memory) -> None:
    record = mem.remember("The embedded user reads their own memory")
    mem.get(record.id)
    mem.recall("own memory")
    assert not mem.directory.audit(ME, action="memory.get")  # nobody governs this org
    bootstrap_org(mem, ACME)
    root, alice = admin_of(ACME), mem.directory.principal(ACME, "alice")
    theirs = mem.remember("Alice's note", principal=alice)
    mem.get(theirs.id, principal=alice)
    mem.get(theirs.id, principal=root)
    reads = _lines(mem, root, "memory.get", theirs.id)
    assert [(a.actor, a.detail["door"]) for a in reads] == [("root", "sdk")]


def test_a_door_must_be_known() -> None:
    with pytest.raises(ValueError, match="unknown door"), door("carrier-pigeon"):
        pass


def test_a_refused_write_is_audited_without_its_content(mem: Memory) -> None:
    with pytest.raises(Exception, match="NUL"):
        mem.remember("secret\x00payload")
    (line,) = mem.directory.audit(ME, action="memory.remember")
    assert (line.outcome, line.target) == ("invalid", None)
    assert "secret" not in str(line.detail)
