"""kenning for the OpenAI Agents SDK: memory tools and a conversation ``Session``.

* :func:`memory_tools` — ``save_memory``, ``recall_memories`` and
  ``forget_memory`` as ``function_tool`` s bound to a memory and a principal:
  ``Agent(tools=memory_tools(mem, principal=alice))``.
* :class:`KenningSession` — the SDK's session protocol (``get_items``,
  ``add_items``, ``pop_item``, ``clear_session``) on kenning's conversation
  memory: ``Runner.run(agent, "hi", session=KenningSession("chat-1", mem))``.

How a session is stored: every item is one turn of the kenning session
``session_id`` (``source="conversation"``, ``metadata.turn`` its position).
Chat messages (user, assistant, system; ``developer`` counts as system) go
through :meth:`kenning.Memory.ingest`, so the last turns stay working memory
(``Memory.context``), older ones become episodic, and facts are extracted from
what was said ("I moved to Lisbon") into long-term memory that
:func:`memory_tools` and ``recall`` find in later sessions. Other items
(function calls and their outputs, reasoning) are written as turns of the same
session. The item itself is kept in ``metadata.agents_item`` when it does not
read back from the turn's role and text alone, so ``get_items`` returns what
``add_items`` was given. ``pop_item`` and ``clear_session`` delete turns; the
facts extracted from them stay (forget them with ``forget_memory``).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping, Sequence
from typing import Any, cast

from ..aio import AsyncMemory
from ..engine import Memory
from ..errors import InvalidInput, KenningError
from ..models import MemoryRecord, MemoryType, Principal, Scope, Status
from ._extra import MissingExtra
from ._tools import FORGET_DOC, RECALL_DOC, SAVE_DOC, MemoryToolbox

try:
    from agents import FunctionTool, RunContextWrapper, function_tool
    from agents.items import TResponseInputItem
    from agents.memory import SessionSettings
except ImportError as exc:  # pragma: no cover - exercised by a test that hides the SDK
    raise MissingExtra("openai-agents", "kenning's OpenAI Agents SDK integration") from exc

__all__ = ["KenningSession", "memory_tools"]

_ITEM_KEY = "agents_item"
_ROLES = {"user": "user", "assistant": "assistant", "system": "system", "developer": "system"}
_ALL_STATUSES = [s.value for s in Status]
# what kenning's metadata holds (16 KiB) less room for the turn's own fields
_MAX_ITEM_BYTES = 15_000


def memory_tools(
    memory: Memory | AsyncMemory,
    *,
    principal: Principal | None = None,
    scope: Scope | str | None = None,
    k: int = 5,
    agent_id: str | None = None,
) -> list[FunctionTool]:
    """``save_memory``, ``recall_memories`` and ``forget_memory`` for an ``Agent``.

    They act for ``principal`` (the memory's own without one) with kenning's
    access rules; saves go to ``scope`` (the principal's personal scope by
    default); a recall returns at most ``k`` memories. Each runs the engine in
    a worker thread and returns JSON.
    """
    box = MemoryToolbox(memory, principal=principal, scope=scope, k=k, agent_id=agent_id)

    async def save_memory(
        content: str, key: str | None = None, tags: list[str] | None = None
    ) -> str:
        """Save a memory.

        Args:
            content: The fact to remember, as one self-contained sentence.
            key: Optional label; saving again with the same key replaces the memory.
            tags: Optional topic tags.
        """
        return _json(await asyncio.to_thread(box.save, content, key=key, tags=tags))

    async def recall_memories(query: str, k: int | None = None) -> str:
        """Recall memories.

        Args:
            query: What to look for, as a question or keywords.
            k: How many memories to return at most.
        """
        return _json(await asyncio.to_thread(box.recall, query, k))

    async def forget_memory(memory_id: str) -> str:
        """Forget a memory.

        Args:
            memory_id: The id of the memory to delete.
        """
        return _json(await asyncio.to_thread(box.forget, memory_id))

    return [
        function_tool(fn, description_override=doc, failure_error_function=_tool_error)
        for fn, doc in (
            (save_memory, SAVE_DOC),
            (recall_memories, RECALL_DOC),
            (forget_memory, FORGET_DOC),
        )
    ]


def _tool_error(ctx: RunContextWrapper[Any], error: Exception) -> str:
    """What the model reads when a tool fails: kenning's own message (written to be
    shown: a memory the caller may not see is "not found"), a fixed text otherwise."""
    cause: BaseException | None = error
    while cause is not None and not isinstance(cause, KenningError):
        cause = cause.__cause__
    if cause is not None:
        return f"error: {cause}"
    return "error: the memory tool failed; try again."


class KenningSession:
    """A conversation session of the OpenAI Agents SDK kept in kenning (module docstring).

    ``session_id``: the kenning session id; ``memory``: a
    :class:`~kenning.Memory` (or :class:`~kenning.AsyncMemory`); ``principal``:
    whose conversation it is (the memory's own without one); ``scope``: where
    its turns live (the principal's personal scope by default); ``user_name`` /
    ``assistant_name``: the speakers facts are attributed to (default: the
    role); ``extract``: extract facts from the messages (default true);
    ``session_settings``: the SDK's settings (``limit``).
    """

    def __init__(
        self,
        session_id: str,
        memory: Memory | AsyncMemory,
        *,
        principal: Principal | None = None,
        scope: Scope | str | None = None,
        user_name: str | None = None,
        assistant_name: str | None = None,
        extract: bool = True,
        session_settings: SessionSettings | None = None,
    ) -> None:
        self.session_id = session_id
        self.memory: Memory = memory.sync if isinstance(memory, AsyncMemory) else memory
        self.principal = principal
        who = self.memory.core.who(principal)
        #: Where the session's turns live.
        self.scope: Scope = self.memory.core.write_scope(scope, who)
        self.names = {"user": user_name, "assistant": assistant_name}
        self.extract = extract
        self.session_settings = session_settings or SessionSettings()

    # -- the session protocol -----------------------------------------------------------

    async def get_items(self, limit: int | None = None) -> list[TResponseInputItem]:
        """The session's items, oldest first (the latest ``limit`` when given)."""
        limit = limit if limit is not None else self.session_settings.limit
        turns = await asyncio.to_thread(self.turns)
        if limit is not None:
            turns = turns[-limit:] if limit > 0 else []
        return [cast("TResponseInputItem", _item_of(t)) for t in turns]

    async def add_items(self, items: list[TResponseInputItem]) -> None:
        """Append ``items`` to the session (messages through ``ingest``)."""
        if items:
            await asyncio.to_thread(self.add, [dict(cast(Mapping[str, Any], i)) for i in items])

    async def pop_item(self) -> TResponseInputItem | None:
        """Delete and return the latest item (None when the session is empty)."""
        return await asyncio.to_thread(self.pop)

    async def clear_session(self) -> None:
        """Delete every turn of the session (facts extracted from them stay)."""
        await asyncio.to_thread(self.clear)

    # -- the same, synchronously --------------------------------------------------------

    def turns(self) -> list[MemoryRecord]:
        """The session's turns as kenning memories, oldest first."""
        flt = {
            "session_id": self.session_id,
            "source": "conversation",
            "types": [MemoryType.WORKING.value, MemoryType.EPISODIC.value],
            "statuses": _ALL_STATUSES,
        }
        out: list[MemoryRecord] = []
        cursor: str | None = None
        while True:
            page = self.memory.list(
                scopes=[self.scope],
                filters=flt,
                limit=min(200, self.memory.settings.max_k),
                cursor=cursor,
                principal=self.principal,
            )
            out.extend(page.items)
            if page.next_cursor is None:
                break
            cursor = page.next_cursor
        return sorted(out, key=lambda r: (r.said_at, int(r.metadata.get("turn", 0)), r.id))

    def add(self, items: Sequence[dict[str, Any]]) -> None:
        """Store items in order: runs of chat messages through ``ingest``, the rest as turns."""
        i = 0
        while i < len(items):
            message = _message(items[i])
            j = i + 1
            while j < len(items) and (_message(items[j]) is None) == (message is None):
                j += 1
            if message is not None:
                self._ingest(items[i:j])
            else:
                self._write(items[i:j])
            i = j

    def pop(self) -> TResponseInputItem | None:
        """Delete and return the latest item."""
        turns = self.turns()
        if not turns:
            return None
        last = turns[-1]
        self.memory.forget(last.id, principal=self.principal)
        return cast("TResponseInputItem", _item_of(last))

    def clear(self) -> None:
        """Delete every turn of the session."""
        for turn in self.turns():
            self.memory.forget(turn.id, principal=self.principal)

    # -- writing ------------------------------------------------------------------------

    def _ingest(self, items: Sequence[dict[str, Any]]) -> None:
        messages = []
        for item in items:
            role, text = cast(tuple[str, str], _message(item))
            name = self.names.get(role)
            messages.append({"role": role, "content": text, **({"name": name} if name else {})})
        result = self.memory.ingest(
            messages,
            self.session_id,
            scope=self.scope,
            extract=self.extract,
            principal=self.principal,
        )
        for item, turn in zip(items, result.turns, strict=True):
            # keep the item itself unless the turn's role and text read it back as it was
            if _item_of(turn) != item and _fits(item):
                meta = {**turn.metadata, _ITEM_KEY: item}
                self.memory.update(turn.id, metadata=meta, principal=self.principal)

    def _write(self, items: Sequence[dict[str, Any]]) -> None:
        window = self.memory.context(self.session_id, scope=self.scope, principal=self.principal)
        offset = 1 + max((int(t.metadata.get("turn", -1)) for t in window), default=-1)
        now = self.memory.clock.now()
        max_chars = self.memory.settings.max_content_chars
        records = []
        for n, item in enumerate(items):
            if not _fits(item):
                raise InvalidInput(
                    f"a session item of {len(_json(item))} characters is larger than kenning "
                    f"keeps ({_MAX_ITEM_BYTES} bytes of JSON)",
                    field="items",
                )
            role = "tool" if str(item.get("type", "")).endswith("_output") else "assistant"
            records.append(
                {
                    "content": _describe(item)[:max_chars],
                    "scope": self.scope,
                    "memory_type": MemoryType.WORKING.value,
                    "session_id": self.session_id,
                    "episode_id": self.session_id,
                    "source": "conversation",
                    "event_at": now,
                    "metadata": {
                        "speaker": role,
                        "role": role,
                        "turn": offset + n,
                        _ITEM_KEY: item,
                    },
                }
            )
        self.memory.write(records, reconcile=False, principal=self.principal)


# -- items ------------------------------------------------------------------------------


def _message(item: Mapping[str, Any]) -> tuple[str, str] | None:
    """(kenning role, text) of a chat message with text; None for any other item."""
    if item.get("type", "message") != "message" or item.get("role") not in _ROLES:
        return None
    content = item.get("content")
    if isinstance(content, str):
        text = content
    elif isinstance(content, list):
        parts = [p.get("text") for p in content if isinstance(p, Mapping)]
        text = "\n".join(p for p in parts if isinstance(p, str))
    else:
        return None
    if not text.strip():
        return None
    return _ROLES[str(item["role"])], text


def _item_of(turn: MemoryRecord) -> dict[str, Any]:
    """The SDK item a turn holds: kept as given, or read back from role and text."""
    kept = turn.metadata.get(_ITEM_KEY)
    if isinstance(kept, dict):
        return kept
    return {"role": str(turn.metadata.get("role", "user")), "content": turn.content}


def _describe(item: Mapping[str, Any]) -> str:
    """A turn's text for an item that is not a chat message (what recall searches)."""
    kind = str(item.get("type", "item"))
    if kind == "function_call":
        return f"called {item.get('name')}({item.get('arguments', '')})"
    output = item.get("output")
    if isinstance(output, str) and output.strip():
        return output
    return _json(item)


def _fits(item: Mapping[str, Any]) -> bool:
    return len(_json(item).encode()) <= _MAX_ITEM_BYTES


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)
