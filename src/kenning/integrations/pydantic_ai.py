"""kenning for pydantic-ai: memory tools for an ``Agent``.

``Agent(model, toolsets=[memory_toolset(mem, principal=alice)])`` gives the
agent ``save_memory``, ``recall_memories`` and ``forget_memory`` bound to a
memory and a principal (kenning's access rules apply: a toolset bound to one
user never reads another's personal memories). With ``hint=True`` the toolset
also adds the memory hint (:meth:`kenning.Memory.build_hint` for the run's
prompt, fenced as data) to the agent's instructions, so relevant memories are
in the model's context before it calls any tool. :func:`memory_tools` returns
the three ``Tool`` s for ``Agent(tools=...)``.

A kenning error (an unknown id, a refused scope, invalid input) is returned to
the model as ``{"error": message}`` rather than raised, so the run goes on.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, TypeVar

from ..aio import AsyncMemory
from ..engine import Memory
from ..errors import KenningError
from ..models import Principal, Scope
from ._extra import MissingExtra
from ._tools import FORGET_DOC, RECALL_DOC, SAVE_DOC, MemoryToolbox

try:
    from pydantic_ai import FunctionToolset, RunContext, Tool
except ImportError as exc:  # pragma: no cover - exercised by a test that hides pydantic-ai
    raise MissingExtra("pydantic-ai", "kenning's pydantic-ai integration") from exc

__all__ = ["memory_tools", "memory_toolset"]

T = TypeVar("T")


def memory_tools(
    memory: Memory | AsyncMemory,
    *,
    principal: Principal | None = None,
    scope: Scope | str | None = None,
    k: int = 5,
    agent_id: str | None = None,
) -> list[Tool[Any]]:
    """``save_memory``, ``recall_memories`` and ``forget_memory`` as pydantic-ai tools.

    They act for ``principal`` (the memory's own without one); saves go to
    ``scope`` (the principal's personal scope by default); a recall returns at
    most ``k`` memories. Each runs the engine in a worker thread.
    """
    box = MemoryToolbox(memory, principal=principal, scope=scope, k=k, agent_id=agent_id)

    async def save_memory(
        content: str, key: str | None = None, tags: list[str] | None = None
    ) -> dict[str, Any]:
        """Save a memory.

        Args:
            content: The fact to remember, as one self-contained sentence.
            key: Optional label; saving again with the same key replaces the memory.
            tags: Optional topic tags.
        """
        return await _call(lambda: box.save(content, key=key, tags=tags))

    async def recall_memories(query: str, k: int | None = None) -> dict[str, Any]:
        """Recall memories.

        Args:
            query: What to look for, as a question or keywords.
            k: How many memories to return at most.
        """
        return await _call(lambda: {"memories": box.recall(query, k)})

    async def forget_memory(memory_id: str) -> dict[str, Any]:
        """Forget a memory.

        Args:
            memory_id: The id of the memory to delete.
        """
        return await _call(lambda: box.forget(memory_id))

    return [
        Tool(save_memory, takes_ctx=False, description=SAVE_DOC),
        Tool(recall_memories, takes_ctx=False, description=RECALL_DOC),
        Tool(forget_memory, takes_ctx=False, description=FORGET_DOC),
    ]


def memory_toolset(
    memory: Memory | AsyncMemory,
    *,
    principal: Principal | None = None,
    scope: Scope | str | None = None,
    k: int = 5,
    agent_id: str | None = None,
    hint: bool = False,
) -> FunctionToolset[Any]:
    """The tools of :func:`memory_tools` as one toolset; ``hint=True`` adds the memory
    hint for the run's prompt to the agent's instructions."""
    tools = memory_tools(memory, principal=principal, scope=scope, k=k, agent_id=agent_id)
    sync = memory.sync if isinstance(memory, AsyncMemory) else memory

    async def memory_hint(ctx: RunContext[Any]) -> str:
        query = ctx.prompt if isinstance(ctx.prompt, str) else None
        return await asyncio.to_thread(sync.build_hint, query=query, principal=principal)

    return FunctionToolset(tools, instructions=memory_hint if hint else None)


async def _call(work: Callable[[], T]) -> T | dict[str, Any]:
    """Run ``work`` in a worker thread; a kenning error becomes the tool's result."""
    try:
        return await asyncio.to_thread(work)
    except KenningError as exc:
        return {"error": str(exc)}
