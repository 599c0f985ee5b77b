"""The MCP door: kenning's memory as MCP tools, a prompt and a resource.

Thin adapters over :class:`~kenning.engine.Memory` (seed 001 §5 and §6):

* ``memory_save``   upsert by key into the caller's personal scope
  (``persona_user`` when a persona is active), source ``mcp_tool``;
* ``memory_recall`` the best memories for a query, or the newest without one;
* ``memory_forget`` delete one memory the caller may write;
* ``memory_list``   one page of the caller's memories, newest first;
* prompt ``memory_hint`` and resource ``memory://hint`` (``?query=`` optional):
  the fenced memory block for a system prompt (``Memory.build_hint``).

Every call first turns the request's HTTP headers (``None`` on stdio and in
memory) into a :class:`~kenning.models.Principal` with the ``Resolver`` the
server was built with; the engine enforces access from there. Engine calls are
synchronous and run in a worker thread, so the event loop never blocks.

Errors are translated in one place (:func:`error_code`): a
:class:`~kenning.errors.KenningError` becomes a tool error (``is_error``)
reading ``<code>: <message>``, or for the prompt and resource a JSON-RPC error
with that message; anything else is a crash the SDK reports without details.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import partial
from typing import Annotated, Any, TypeVar

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPError
from mcp_types import INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST, ToolAnnotations
from pydantic import Field

from ..audit import door, request_id
from ..engine import Memory
from ..errors import KenningError, error_code
from ..lanes import EngineLanes, Lane, writes_on_read
from ..models import MemoryRecord, Principal
from ..validation import clean_k

__all__ = [
    "Resolver",
    "build_mcp",
    "error_code",
    "fixed_resolver",
    "key_resolver",
    "MAX_RESULTS",
    "TOOL_NAMES",
]

T = TypeVar("T")

#: Turns a request's HTTP headers (``None`` on stdio / in memory) into the caller;
#: raises :class:`~kenning.errors.Unauthenticated` or ``PermissionDenied`` when it cannot.
Resolver = Callable[[Mapping[str, str] | None], Principal]

#: The most results one call returns (``max_results`` and ``limit`` are 1..this).
MAX_RESULTS = 100
#: The tools this door registers.
TOOL_NAMES = ("memory_save", "memory_recall", "memory_forget", "memory_list")

#: JSON-RPC code of each kenning error code, for prompts and resources.
_RPC = {
    "invalid_input": INVALID_PARAMS,
    "not_found": INVALID_PARAMS,
    "unauthenticated": INVALID_REQUEST,
    "permission_denied": INVALID_REQUEST,
    "quota_exceeded": INVALID_REQUEST,
    "conflict": INVALID_REQUEST,
}

_INSTRUCTIONS = (
    "Long-term memory that persists across conversations. Save durable facts about the "
    "user (preferences, decisions, context) with memory_save under a short key; look "
    "them up with memory_recall before answering questions that may depend on them. "
    "Memories are private to the current user (and to the active persona, if any)."
)


def _message(exc: KenningError) -> str:
    return f"{error_code(exc)}: {exc}"


def _rpc_error(exc: KenningError) -> MCPError:
    rpc = _RPC.get(error_code(exc), INTERNAL_ERROR)
    data = {"code": error_code(exc), "field": getattr(exc, "field", None)}
    return MCPError(code=rpc, message=_message(exc), data=data)


def fixed_resolver(principal: Principal) -> Resolver:
    """A resolver that always answers ``principal`` (stdio for the local user)."""

    def resolve(_headers: Mapping[str, str] | None) -> Principal:
        return principal

    return resolve


def key_resolver(memory: Memory, key: str, persona: str | None = None) -> Resolver:
    """A resolver for one API key, checked on every call (revocation applies at once)."""

    def resolve(_headers: Mapping[str, str] | None) -> Principal:
        return memory.directory.authenticate(key, persona)[0]

    return resolve


def _item(record: MemoryRecord, score: float | None = None) -> dict[str, Any]:
    """The compact, JSON-ready view of a memory an LLM needs."""
    out: dict[str, Any] = {
        "id": record.id,
        "content": record.content,
        "key": record.key,
        "scope": record.scope.key,
        "memory_type": record.memory_type.value,
        "tags": list(record.tags),
        "confidence": record.confidence,
        "created_at": record.created_at.isoformat(),
    }
    if score is not None:
        out["score"] = round(score, 4)
    return out


class _Door:
    """Resolves the caller and runs one engine call off the event loop, in its turn
    in ``lanes`` (unbounded by default)."""

    def __init__(self, memory: Memory, resolve: Resolver, lanes: EngineLanes | None) -> None:
        self.memory = memory
        self.resolve = resolve
        self.lanes = lanes or EngineLanes()

    def _call(self, headers: Mapping[str, str] | None, fn: Callable[[Principal], T]) -> T:
        with door("mcp", request_id()):
            return fn(self.resolve(headers))

    @staticmethod
    def _as(who: Principal, fn: Callable[[Principal], T]) -> T:
        with door("mcp", request_id()):
            return fn(who)

    async def _run(self, ctx: Context[Any, Any], fn: Callable[[Principal], T], lane: Lane) -> T:
        if lane == "read" and self.lanes.inline_reads:
            # resolved on the loop, once: an audited admin's read writes, and keeps a
            # thread (see :mod:`kenning.server.inflight`)
            who = self.resolve(ctx.headers)
            inline = not writes_on_read(self.memory, who)
            return await self.lanes.run(partial(self._as, who, fn), lane, inline=inline)
        return await self.lanes.run(partial(self._call, ctx.headers, fn), lane)

    async def tool(
        self, ctx: Context[Any, Any], fn: Callable[[Principal], T], lane: Lane = "read"
    ) -> T:
        """Run ``fn(principal)`` in ``lane``; a kenning error becomes a tool error."""
        try:
            return await self._run(ctx, fn, lane)
        except KenningError as exc:
            raise ToolError(_message(exc)) from None

    async def protocol(self, ctx: Context[Any, Any], fn: Callable[[Principal], T]) -> T:
        """Run ``fn(principal)``; a kenning error becomes a JSON-RPC error."""
        try:
            return await self._run(ctx, fn, "read")
        except KenningError as exc:
            raise _rpc_error(exc) from None


# -- tools -----------------------------------------------------------------------------

_SCOPE_NOTE = (
    "Scope: the current user's personal memory, or, when a persona is active, that "
    "persona's memory about this user."
)
_VIEW_NOTE = (
    "Searches what the caller sees by default: their personal memory (and the active "
    "persona's), plus their teams' and organization's shared memory."
)
_BOUNDS = {"minimum": 1, "maximum": MAX_RESULTS}  # advertised; enforced with kenning's message

# Parameter types (descriptions for the LLM). The SDK reads the tools' annotations with
# typing.get_type_hints, so every name they use must be a module-level name.

_KeyArg = Annotated[
    str, Field(description="A short label of 2-6 words, e.g. 'preferred language'.")
]
_ValueArg = Annotated[str, Field(description="The fact to remember, as a full sentence.")]
_ConfidenceArg = Annotated[float, Field(description="How sure you are, from 0 to 1.")]
_TagsArg = Annotated[list[str] | None, Field(description="Optional topic tags.")]
_QueryArg = Annotated[
    str | None, Field(description="What to look for; leave out for the newest memories.")
]
_MaxArg = Annotated[int, Field(description="How many memories, 1-100.", json_schema_extra=_BOUNDS)]
_MinScoreArg = Annotated[
    float | None,
    Field(
        description=(
            "Leave out memories whose score (calibrated, 0-1: about the chance that the "
            "memory answers the query) is below this; leave out for the server's default."
        )
    ),
]
_LimitArg = Annotated[int, Field(description="Page size, 1-100.", json_schema_extra=_BOUNDS)]
_CursorArg = Annotated[
    str | None, Field(description="next_cursor of the previous page; leave out for the first.")
]
_IdArg = Annotated[str, Field(description="The id of the memory to delete.")]


def _register_writes(server: MCPServer, door: _Door) -> None:
    mem = door.memory

    @server.tool(
        name="memory_save",
        description=(
            "Save a durable fact to long-term memory under a short key. Saving again with "
            "the same key replaces the old value (no duplicates). "
            + _SCOPE_NOTE
            + " Returns the stored memory (version > 1 means an existing one was updated)."
        ),
        annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False),
    )
    async def memory_save(
        key: _KeyArg,
        value: _ValueArg,
        ctx: Context[Any, Any],
        confidence: _ConfidenceArg = 1.0,
        tags: _TagsArg = None,
    ) -> dict[str, Any]:
        fields: dict[str, Any] = {"confidence": confidence, "source": "mcp_tool"}
        if tags is not None:  # an update without tags keeps the old ones
            fields["tags"] = tags

        def save(who: Principal) -> dict[str, Any]:
            record = mem.upsert(key, value, principal=who, **fields)
            return {**_item(record), "status": record.status.value, "version": record.version}

        return await door.tool(ctx, save, "write")

    @server.tool(
        name="memory_forget",
        description=(
            "Delete one memory permanently, by the id memory_save, memory_recall or "
            "memory_list returned. Only memories the caller may change can be deleted."
        ),
        annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True),
    )
    async def memory_forget(memory_id: _IdArg, ctx: Context[Any, Any]) -> dict[str, Any]:
        def forget(who: Principal) -> dict[str, Any]:
            mem.forget(memory_id, principal=who)
            return {"forgotten": memory_id}

        return await door.tool(ctx, forget, "write")


def _register_reads(server: MCPServer, door: _Door) -> None:
    mem = door.memory

    @server.tool(
        name="memory_recall",
        description=(
            "Search long-term memory. With a query: the memories that best answer it, best "
            "first (by meaning, not only keywords), each with a score from 0 to 1 that means "
            "the same for every query (min_score drops the weak ones). Without a query: the "
            "newest memories. " + _VIEW_NOTE
        ),
        annotations=ToolAnnotations(read_only_hint=True),
    )
    async def memory_recall(
        ctx: Context[Any, Any],
        query: _QueryArg = None,
        max_results: _MaxArg = 20,
        min_score: _MinScoreArg = None,
    ) -> list[dict[str, Any]]:
        def recall(who: Principal) -> list[dict[str, Any]]:
            k = clean_k(max_results, MAX_RESULTS, "max_results")
            if query is None or not query.strip():
                return [_item(r) for r in mem.list(limit=k, principal=who).items]
            hits = mem.recall(query, k=k, principal=who, min_score=min_score).hits
            return [_item(h.memory, h.score) for h in hits]

        return await door.tool(ctx, recall)

    @server.tool(
        name="memory_list",
        description=(
            "List memories newest first, one page at a time; pass next_cursor back for the "
            "next page (null when there is none). Same memories as memory_recall sees."
        ),
        annotations=ToolAnnotations(read_only_hint=True),
    )
    async def memory_list(
        ctx: Context[Any, Any], limit: _LimitArg = 20, cursor: _CursorArg = None
    ) -> dict[str, Any]:
        def page(who: Principal) -> dict[str, Any]:
            n = clean_k(limit, MAX_RESULTS, "limit")
            found = mem.list(limit=n, cursor=cursor, principal=who)
            return {"items": [_item(r) for r in found.items], "next_cursor": found.next_cursor}

        return await door.tool(ctx, page)


def _register_hint(server: MCPServer, door: _Door) -> None:
    mem = door.memory
    description = (
        "The caller's most relevant memories as a fenced block for a system prompt "
        "(the best for `query` when given, else the top memories)."
    )

    def hint(query: str | None) -> Callable[[Principal], str]:
        return lambda who: mem.build_hint(query=query, principal=who)

    @server.prompt(name="memory_hint", description=description)
    async def memory_hint(ctx: Context[Any, Any], query: str | None = None) -> str:
        return await door.protocol(ctx, hint(query))

    @server.resource(
        "memory://hint{?query}",
        name="memory_hint",
        description=description,
        mime_type="text/plain",
    )
    async def memory_hint_resource(ctx: Context[Any, Any], query: str | None = None) -> str:
        return await door.protocol(ctx, hint(query))


def build_mcp(
    memory: Memory,
    resolve: Resolver,
    *,
    name: str = "kenning",
    lanes: EngineLanes | None = None,
) -> MCPServer:
    """An MCP server over ``memory``; ``resolve`` names the caller of every request.

    Serve it with ``server.run("stdio")``, mount ``server.streamable_http_app()``
    in an ASGI app, or test it in process with ``mcp.Client(server)``. Every tool is
    one short engine call; ``lanes`` (the REST server's, see
    :mod:`kenning.server.inflight`) bound how many run at once.
    """
    server: MCPServer = MCPServer(name, instructions=_INSTRUCTIONS, log_level="WARNING")
    door = _Door(memory, resolve, lanes)
    _register_writes(server, door)
    _register_reads(server, door)
    _register_hint(server, door)
    return server
