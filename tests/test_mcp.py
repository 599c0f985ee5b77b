"""The MCP door (kenning.mcp): tools, prompt and resource through the SDK's own clients.

In process with ``mcp.Client(server)`` on a real SQLite file and the session's
real embedder; over streamable HTTP (headers reach the resolver); and over real
stdio against ``python -m kenning.mcp`` and the ``kenning mcp`` command function.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from anyio import CapacityLimiter
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.server.mcpserver import MCPServer
from mcp.shared.exceptions import MCPError
from mcp_types import CallToolResult, TextContent

from kenning import FixedClock, Memory
from kenning.embeddings import Embedder
from kenning.errors import NotFound, PermissionDenied, Unauthenticated
from kenning.lanes import EngineLanes
from kenning.mcp import TOOL_NAMES, build_mcp, fixed_resolver, key_resolver
from kenning.models import Principal, Role

pytestmark = pytest.mark.anyio

MEMBER = frozenset({Role.MEMBER})
ALICE = Principal(user_id="alice", roles=MEMBER)
BOB = Principal(user_id="bob", roles=MEMBER)
HELPDESK = Principal(
    user_id="alice",
    roles=MEMBER,
    personas=frozenset({"helpdesk", "sales"}),
    active_persona="helpdesk",
)
SALES = Principal(
    user_id="alice",
    roles=MEMBER,
    personas=frozenset({"helpdesk", "sales"}),
    active_persona="sales",
)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def memory(tmp_path: Path, embedder: Embedder, clock: FixedClock) -> Iterator[Memory]:
    """A Memory on a fresh SQLite file, the session's real embedder, a fixed clock."""
    mem = Memory(tmp_path / "kenning.db", embedder=embedder, clock=clock)
    yield mem
    mem.close()


@pytest.fixture
def serve(memory: Memory) -> Callable[[Principal], MCPServer]:
    """``serve(principal)``: an MCP server over ``memory`` acting for ``principal``."""
    return lambda who: build_mcp(memory, fixed_resolver(who))


async def call(server: MCPServer, tool: str, **args: Any) -> CallToolResult:
    async with Client(server) as client:
        return await client.call_tool(tool, args)


def ok(result: CallToolResult) -> Any:
    """The structured result of a successful call (lists come wrapped as ``result``)."""
    assert not result.is_error, result.content
    data = result.structured_content
    assert data is not None
    return data["result"] if set(data) == {"result"} else data


def error(result: CallToolResult) -> str:
    """The text of a tool error."""
    assert result.is_error
    content = result.content[0]
    assert isinstance(content, TextContent)
    assert "Traceback" not in content.text
    return content.text


def visible(memory: Memory, who: Principal) -> list[str]:
    return [r.content for r in memory.list(principal=who, scopes="all").items]


# -- listing ---------------------------------------------------------------------------------


async def test_lists_four_tools_with_schemas_a_prompt_and_a_resource(
    serve: Callable[[Principal], MCPServer],
) -> None:
    async with Client(serve(ALICE)) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        prompts = (await client.list_prompts()).prompts
        templates = (await client.list_resource_templates()).resource_templates
    assert (
        set(tools)
        == set(TOOL_NAMES)
        == {"memory_save", "memory_recall", "memory_forget", "memory_list"}
    )
    save = tools["memory_save"].input_schema
    assert save["required"] == ["key", "value"]
    assert set(save["properties"]) == {"key", "value", "confidence", "tags"}
    assert save["properties"]["confidence"]["default"] == 1.0
    recall = tools["memory_recall"].input_schema
    assert recall.get("required", []) == []
    bounds = recall["properties"]["max_results"]
    assert (bounds["minimum"], bounds["maximum"], bounds["default"]) == (1, 100, 20)
    assert tools["memory_list"].input_schema["properties"]["limit"]["maximum"] == 100
    assert tools["memory_forget"].input_schema["required"] == ["memory_id"]
    for tool in tools.values():
        assert tool.description and tool.input_schema["properties"]
    assert "persona" in (tools["memory_save"].description or "")
    hints = {name: tool.annotations for name, tool in tools.items()}
    assert hints["memory_recall"] and hints["memory_recall"].read_only_hint
    assert hints["memory_forget"] and hints["memory_forget"].destructive_hint
    [prompt] = prompts
    assert prompt.name == "memory_hint"
    assert [(a.name, a.required) for a in prompt.arguments or []] == [("query", False)]
    assert [t.uri_template for t in templates] == ["memory://hint{?query}"]


# -- save and recall -------------------------------------------------------------------------


async def test_save_then_recall_finds_it(
    serve: Callable[[Principal], MCPServer], memory: Memory
) -> None:
    server = serve(ALICE)
    saved = ok(
        await call(
            server,
            "memory_save",
            key="favourite drink",
            value="Alice prefers green tea over coffee",
        )
    )
    assert saved["scope"] == "user:alice" and saved["version"] == 1
    assert saved["status"] == "active" and saved["confidence"] == 1.0
    ok(await call(server, "memory_save", key="home town", value="Alice grew up in Lisbon"))
    hits = ok(await call(server, "memory_recall", query="what does Alice like to drink?"))
    assert hits[0]["id"] == saved["id"]
    assert hits[0]["content"] == "Alice prefers green tea over coffee"
    assert hits[0]["key"] == "favourite drink" and hits[0]["memory_type"] == "semantic"
    assert 0 < hits[0]["score"] and hits[0]["created_at"]
    stored = memory.get(saved["id"], principal=ALICE)
    assert stored.source == "mcp_tool" and stored.created_by == "alice"


async def test_save_with_the_same_key_updates_the_one_memory(
    serve: Callable[[Principal], MCPServer], memory: Memory
) -> None:
    server = serve(ALICE)
    first = ok(
        await call(
            server,
            "memory_save",
            key="editor",
            value="Alice uses vim",
            tags=["tools"],
            confidence=0.7,
        )
    )
    second = ok(await call(server, "memory_save", key=" editor", value="Alice switched to Emacs"))
    assert second["id"] == first["id"] and second["version"] == 2
    assert second["content"] == "Alice switched to Emacs"
    assert second["tags"] == ["tools"]  # left out on update: kept
    assert second["confidence"] == 1.0
    assert visible(memory, ALICE) == ["Alice switched to Emacs"]


async def test_persona_saves_into_persona_user_scope_other_persona_cannot_recall(
    serve: Callable[[Principal], MCPServer],
) -> None:
    saved = ok(
        await call(
            serve(HELPDESK),
            "memory_save",
            key="ticket",
            value="Alice's printer ticket is about a paper jam",
        )
    )
    assert saved["scope"] == "persona_user:helpdesk/alice"
    found = ok(await call(serve(HELPDESK), "memory_recall", query="printer paper jam"))
    assert [h["id"] for h in found] == [saved["id"]]
    for other in (SALES, ALICE):
        assert ok(await call(serve(other), "memory_recall", query="printer paper jam")) == []
        assert ok(await call(serve(other), "memory_list"))["items"] == []


async def test_another_user_cannot_recall_list_or_forget(
    serve: Callable[[Principal], MCPServer], memory: Memory
) -> None:
    saved = ok(
        await call(serve(ALICE), "memory_save", key="pin", value="Alice's locker code is 4711")
    )
    bob = serve(BOB)
    assert ok(await call(bob, "memory_recall", query="locker code")) == []
    assert ok(await call(bob, "memory_recall")) == []
    assert ok(await call(bob, "memory_list"))["items"] == []
    text = error(await call(bob, "memory_forget", memory_id=saved["id"]))
    assert text.endswith(f"not_found: memory {saved['id']!r} not found")
    assert memory.get(saved["id"], principal=ALICE).content == "Alice's locker code is 4711"
    assert ok(await call(serve(ALICE), "memory_forget", memory_id=saved["id"])) == {
        "forgotten": saved["id"]
    }
    with pytest.raises(NotFound):
        memory.get(saved["id"], principal=ALICE)


async def test_recall_without_query_lists_the_newest(
    serve: Callable[[Principal], MCPServer], clock: FixedClock
) -> None:
    server = serve(ALICE)
    for n, text in enumerate(["Alice owns a bicycle", "Alice bought a kayak", "Alice sold a car"]):
        ok(await call(server, "memory_save", key=f"vehicle {n}", value=text))
        clock.advance(minutes=5)
    newest = ok(await call(server, "memory_recall"))
    assert [h["content"] for h in newest] == [
        "Alice sold a car",
        "Alice bought a kayak",
        "Alice owns a bicycle",
    ]
    assert all("score" not in h for h in newest)
    assert [
        h["content"] for h in ok(await call(server, "memory_recall", query="  ", max_results=2))
    ] == ["Alice sold a car", "Alice bought a kayak"]
    page = ok(await call(server, "memory_list", limit=2))
    assert len(page["items"]) == 2 and page["next_cursor"]
    rest = ok(await call(server, "memory_list", limit=2, cursor=page["next_cursor"]))
    assert [m["content"] for m in rest["items"]] == ["Alice owns a bicycle"]
    assert rest["next_cursor"] is None


# -- errors change nothing -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tool", "args", "message"),
    [
        ("memory_save", {"key": "k", "value": ""}, "invalid_input: content must not be empty"),
        (
            "memory_save",
            {"key": "k", "value": "v", "confidence": 2},
            "invalid_input: confidence must be from 0 to 1, got 2",
        ),
        ("memory_save", {"key": " ", "value": "v"}, "invalid_input: key must not be empty"),
        (
            "memory_recall",
            {"query": "tea", "max_results": 0},
            "invalid_input: max_results must be an integer from 1 to 100, got 0",
        ),
        (
            "memory_recall",
            {"max_results": 1000},
            "invalid_input: max_results must be an integer from 1 to 100, got 1000",
        ),
        ("memory_list", {"limit": 0}, "invalid_input: limit must be an integer from 1 to 100"),
        ("memory_list", {"cursor": "???"}, "invalid_input: invalid cursor"),
        ("memory_forget", {"memory_id": "nope"}, "not_found: memory 'nope' not found"),
    ],
)
async def test_invalid_input_is_a_precise_tool_error_and_writes_nothing(
    serve: Callable[[Principal], MCPServer],
    memory: Memory,
    db_counts: Callable[[Memory], dict[str, int]],
    tool: str,
    args: dict[str, Any],
    message: str,
) -> None:
    server = serve(ALICE)
    ok(await call(server, "memory_save", key="k", value="Alice likes tea"))
    before = db_counts(memory)
    text = error(await call(server, tool, **args))
    assert text.startswith(f"Error executing tool {tool}: ")
    assert message in text
    assert db_counts(memory) == before
    assert visible(memory, ALICE) == ["Alice likes tea"]


@pytest.mark.parametrize(
    ("exc", "code"),
    [
        (Unauthenticated("an API key is required"), "unauthenticated"),
        (
            PermissionDenied("memory is switched off for organization 'default'"),
            "permission_denied",
        ),
    ],
)
async def test_a_resolver_that_refuses_fails_every_call_and_writes_nothing(
    memory: Memory, db_counts: Callable[[Memory], dict[str, int]], exc: Exception, code: str
) -> None:
    def refuse(headers: Mapping[str, str] | None) -> Principal:
        raise exc

    server = build_mcp(memory, refuse)
    before = db_counts(memory)
    calls: list[tuple[str, dict[str, Any]]] = [
        ("memory_save", {"key": "k", "value": "v"}),
        ("memory_recall", {"query": "v"}),
        ("memory_recall", {"max_results": 0}),
        ("memory_list", {}),
        ("memory_forget", {"memory_id": "x"}),
    ]
    async with Client(server) as client:
        for tool, args in calls:
            assert error(await client.call_tool(tool, args)).endswith(f"{code}: {exc}")
        with pytest.raises(MCPError, match=f"{code}: "):
            await client.get_prompt("memory_hint", {})
        with pytest.raises(MCPError, match=f"{code}: "):
            await client.read_resource("memory://hint")
    assert db_counts(memory) == before


# -- the hint --------------------------------------------------------------------------------


async def test_hint_prompt_and_resource_return_the_fenced_hint(
    serve: Callable[[Principal], MCPServer], memory: Memory
) -> None:
    server = serve(ALICE)
    ok(await call(server, "memory_save", key="diet", value="Alice is vegetarian"))
    ok(await call(serve(BOB), "memory_save", key="diet", value="Bob is allergic to nuts"))
    expected = memory.build_hint(principal=ALICE)
    async with Client(server) as client:
        prompt = await client.get_prompt("memory_hint", {})
        queried = await client.get_prompt("memory_hint", {"query": "what does Alice eat?"})
        resource = await client.read_resource("memory://hint")
        by_query = await client.read_resource("memory://hint?query=what%20does%20Alice%20eat")
    texts = []
    for result in (prompt, queried):
        [message] = result.messages
        assert isinstance(message.content, TextContent)
        texts.append(message.content.text)
    for contents in (resource.contents, by_query.contents):
        [item] = contents
        texts.append(item.text)
    assert texts[0] == texts[2] == expected
    for text in texts:
        assert "<memories>" in text and "</memories>" in text
        assert "Alice is vegetarian" in text and "Bob" not in text


# -- how the caller is named -----------------------------------------------------------------


async def test_the_resolver_gets_no_headers_in_process(memory: Memory) -> None:
    seen: list[Mapping[str, str] | None] = []

    def resolve(headers: Mapping[str, str] | None) -> Principal:
        seen.append(headers)
        return ALICE

    server = build_mcp(memory, resolve)
    async with Client(server) as client:
        await client.call_tool("memory_list", {})
        await client.get_prompt("memory_hint", {})
        await client.read_resource("memory://hint")
    assert seen == [None, None, None]


async def test_an_api_key_resolver_checks_the_key_on_every_call(memory: Memory) -> None:
    directory = memory.directory
    key, token = directory.bootstrap("acme", "carol", "mcp")
    server = build_mcp(memory, key_resolver(memory, token))
    async with Client(server) as client:
        saved = ok(await client.call_tool("memory_save", {"key": "k", "value": "Carol codes"}))
        assert saved["scope"] == "user:carol"
        admin = Principal(org_id="acme", user_id="carol", roles=frozenset({Role.ADMIN}))
        directory.revoke_key(admin, key.id)
        text = error(await client.call_tool("memory_recall", {"query": "codes"}))
        assert text.endswith(f"unauthenticated: API key {key.id!r} was revoked")
    with pytest.raises(Unauthenticated, match="malformed API key"):
        key_resolver(memory, "not-a-key")(None)


async def test_http_headers_name_the_caller(memory: Memory) -> None:
    keys = {"key-a": ALICE, "key-b": BOB}

    def resolve(headers: Mapping[str, str] | None) -> Principal:
        who = keys.get((headers or {}).get("x-api-key", ""))
        if who is None:
            raise Unauthenticated("unknown API key")
        return who

    server = build_mcp(memory, resolve)
    app = server.streamable_http_app(stateless_http=True, json_response=True)

    async def as_caller(api_key: str | None, tool: str, **args: Any) -> CallToolResult:
        headers = {"X-API-Key": api_key} if api_key else {}
        async with httpx2.AsyncClient(
            transport=httpx2.ASGITransport(app=app),
            base_url="http://127.0.0.1:8000",
            headers=headers,
        ) as http:
            transport = streamable_http_client("http://127.0.0.1:8000/mcp", http_client=http)
            async with Client(transport) as client:
                return await client.call_tool(tool, args)

    async with server.session_manager.run():
        saved = ok(await as_caller("key-a", "memory_save", key="pet", value="Alice has a cat"))
        assert saved["scope"] == "user:alice"
        assert ok(await as_caller("key-b", "memory_recall", query="cat")) == []
        denied = error(await as_caller(None, "memory_save", key="pet", value="a dog"))
        assert denied.endswith("unauthenticated: unknown API key")
    assert visible(memory, ALICE) == ["Alice has a cat"]


# -- real stdio ------------------------------------------------------------------------------


def _env(home: Path) -> dict[str, str]:
    keep = ("PATH", "HOME", "LANG", "KENNING_LIFECYCLE_RECONCILE")
    env = {k: os.environ[k] for k in keep if k in os.environ}
    return {**env, "KENNING_HOME": str(home), "PYTHONUNBUFFERED": "1"}


async def _save_and_recall(params: StdioServerParameters) -> tuple[dict[str, Any], list[Any]]:
    async with Client(params) as client:
        fact = {"key": "drink", "value": "Alice drinks oolong tea"}
        saved = ok(await client.call_tool("memory_save", fact))
        hits = ok(await client.call_tool("memory_recall", {"query": "which tea?"}))
    return saved, hits


async def test_python_m_kenning_mcp_serves_over_stdio(tmp_path: Path) -> None:
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "kenning.mcp"], env=_env(tmp_path)
    )
    saved, hits = await _save_and_recall(params)
    assert saved["scope"] == "user:default"
    assert [h["content"] for h in hits] == ["Alice drinks oolong tea"]
    assert (tmp_path / "kenning.db").exists()


_CLI = "from kenning.cli import main; main()"  # the installed `kenning` entry point


async def test_the_mcp_command_serves_the_root_options_user_over_stdio(
    tmp_path: Path, embedder: Embedder
) -> None:
    db = tmp_path / "cli.db"
    params = StdioServerParameters(
        command=sys.executable,
        args=["-c", _CLI, "--db", str(db), "--user", "alice", "mcp"],
        env=_env(tmp_path),
    )
    saved, hits = await _save_and_recall(params)
    assert saved["scope"] == "user:alice"
    assert [h["id"] for h in hits] == [saved["id"]]
    with Memory(db, embedder=embedder) as mem:
        assert mem.get(saved["id"], principal=ALICE).source == "mcp_tool"


def test_the_mcp_command_rejects_a_bad_key_before_serving(tmp_path: Path) -> None:
    env = {**_env(tmp_path), "KENNING_API_KEY": "not-a-key"}
    done = subprocess.run(
        [sys.executable, "-c", _CLI, "mcp"],
        env=env,
        input="",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 3  # bad credentials exit like a refused permission
    assert "error: malformed API key" in done.stderr
    assert done.stdout == ""


async def test_tool_calls_take_turns_in_the_servers_engine_lane(
    memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Mounted in the REST server, the MCP door shares its engine lane: no more tool
    calls run at once than the lane holds; the others wait, then all answer."""
    lane = CapacityLimiter(1)
    server = build_mcp(memory, fixed_resolver(ALICE), lanes=EngineLanes(lane, CapacityLimiter(1)))
    ok(await call(server, "memory_save", key="tea", value="Alice drinks oolong tea"))
    inside, most, entered = [0], [0], [0]
    gate = threading.Event()
    real = memory.recall

    def held(*args: Any, **kw: Any) -> Any:
        inside[0] += 1
        entered[0] += 1
        most[0] = max(most[0], inside[0])
        try:
            assert gate.wait(30)
            return real(*args, **kw)
        finally:
            inside[0] -= 1

    monkeypatch.setattr(memory, "recall", held)

    async def ask() -> Any:
        return ok(await call(server, "memory_recall", query="which tea?"))

    async def release() -> None:
        for _ in range(3000):
            if entered[0] == 1 and lane.statistics().tasks_waiting == 2:
                break
            await anyio.sleep(0.01)
        gate.set()

    answers: list[Any] = []

    async def collect() -> None:
        answers.append(await ask())

    async with anyio.create_task_group() as tg:
        for _ in range(3):
            tg.start_soon(collect)
        tg.start_soon(release)
    assert most[0] == 1 and entered[0] == 3
    assert [[h["content"] for h in a] for a in answers] == [["Alice drinks oolong tea"]] * 3


async def test_with_reads_on_the_loop_an_audited_read_keeps_a_thread(
    memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Lanes that run reads on the event loop (the REST server's on SQLite): a
    member's tool call reads there; an admin's of a governed organization writes
    its audit line with the read, so it runs in a thread; writes always do."""
    directory = memory.directory
    directory.bootstrap("acme", "carol", "mcp")  # carol administers acme: governed
    admin = Principal(org_id="acme", user_id="carol", roles=frozenset({Role.ADMIN}))
    member = Principal(org_id="acme", user_id="dan", roles=MEMBER)
    directory.put_user(admin, "dan", name="Dan", role="member")
    lanes = EngineLanes(CapacityLimiter(2), CapacityLimiter(1), inline_reads=True)
    seen: dict[str, list[int]] = {"recall": [], "write": []}
    for name in seen:
        real = getattr(memory, name)

        def tracked(*args: Any, _real: Any = real, _name: str = name, **kw: Any) -> Any:
            seen[_name].append(threading.get_ident())
            return _real(*args, **kw)

        monkeypatch.setattr(memory, name, tracked)
    loop_thread = threading.get_ident()
    for who in (member, admin):
        server = build_mcp(memory, fixed_resolver(who), lanes=lanes)
        ok(await call(server, "memory_recall", query="which tea?"))
        ok(await call(server, "memory_save", key="tea", value=f"{who.user_id} drinks oolong"))
    assert [t == loop_thread for t in seen["recall"]] == [True, False]
    assert [t == loop_thread for t in seen["write"]] == [False, False]


async def test_with_reads_on_the_loop_bad_credentials_are_a_tool_error(memory: Memory) -> None:
    def refuse(headers: Mapping[str, str] | None) -> Principal:
        raise Unauthenticated("unknown API key")

    lanes = EngineLanes(CapacityLimiter(2), CapacityLimiter(1), inline_reads=True)
    server = build_mcp(memory, refuse, lanes=lanes)
    assert error(await call(server, "memory_recall", query="tea")).endswith(
        "unauthenticated: unknown API key"
    )
