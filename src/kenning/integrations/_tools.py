"""The memory tools' logic, shared by the framework modules (no framework here).

Each framework module wraps :class:`MemoryToolbox`'s three calls in its own tool
type; the descriptions below are what the model reads.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..aio import AsyncMemory
from ..engine import Memory
from ..models import MemoryRecord, MemoryType, Principal, Scope

__all__ = ["MemoryToolbox", "SAVE_DOC", "RECALL_DOC", "FORGET_DOC"]

#: What the save tool tells the model.
SAVE_DOC = (
    "Save one fact, preference or decision to long-term memory so it can be recalled "
    "in later conversations. Write it as a short self-contained sentence "
    "(e.g. 'Alice prefers green tea'). Give a key to replace an earlier memory with "
    "the same key (e.g. 'favourite drink'). Returns the stored memory with its id."
)
#: What the recall tool tells the model.
RECALL_DOC = (
    "Search long-term memory for what is known about a topic or question. Returns the "
    "best memories first, each with its id, content and a score from 0 to 1 (how "
    "likely it answers the query)."
)
#: What the forget tool tells the model.
FORGET_DOC = (
    "Delete one memory for good, by the id that save_memory or recall_memories "
    "returned. Use it when the user asks to forget something or it is wrong."
)


class MemoryToolbox:
    """Save, recall and forget for one principal, returning JSON-ready dicts.

    ``memory``: a :class:`~kenning.Memory` (or :class:`~kenning.AsyncMemory`);
    ``principal``: who the tools act for (the memory's own without one);
    ``scope``: where saves go (default: the principal's personal scope) — recall
    reads the principal's default view; ``k``: how many memories a recall
    returns at most; ``agent_id``: recorded on every memory saved.
    """

    def __init__(
        self,
        memory: Memory | AsyncMemory,
        *,
        principal: Principal | None = None,
        scope: Scope | str | None = None,
        k: int = 5,
        agent_id: str | None = None,
    ) -> None:
        self.memory: Memory = memory.sync if isinstance(memory, AsyncMemory) else memory
        self.principal = principal
        self.scope = scope
        self.k = k
        self.agent_id = agent_id

    def save(
        self, content: str, *, tags: Sequence[str] | None = None, key: str | None = None
    ) -> dict[str, Any]:
        """Store ``content`` (an upsert when ``key`` is given); the memory as a dict."""
        fields: dict[str, Any] = {"source": "agent_tool", "agent_id": self.agent_id}
        if tags:
            fields["tags"] = list(tags)
        if key:
            record = self.memory.upsert(
                key, content, scope=self.scope, principal=self.principal, **fields
            )
        else:
            record = self.memory.remember(
                content, scope=self.scope, principal=self.principal, **fields
            )
        return _brief(record)

    def recall(self, query: str, k: int | None = None) -> list[dict[str, Any]]:
        """The best memories for ``query`` (at most ``k``, default the toolbox's), working
        memory (the turns of conversations in progress) left out."""
        limit = min(k or self.k, self.k * 4)
        # working memory is the conversation in progress, which the model already has
        flt = {"types": [t.value for t in MemoryType if t is not MemoryType.WORKING]}
        hits = self.memory.recall(query, max(1, limit), filters=flt, principal=self.principal)
        return [{**_brief(h.memory), "score": round(h.score, 3)} for h in hits]

    def forget(self, memory_id: str) -> dict[str, Any]:
        """Delete one memory the principal may write; what was deleted."""
        record = self.memory.get(memory_id, principal=self.principal)
        self.memory.forget(memory_id, principal=self.principal)
        return {"forgotten": record.id, "content": record.content}


def _brief(record: MemoryRecord) -> dict[str, Any]:
    """What a model needs to see of a memory."""
    out: dict[str, Any] = {
        "id": record.id,
        "content": record.content,
        "scope": str(record.scope),
        "created_at": record.created_at.isoformat(),
    }
    if record.key:
        out["key"] = record.key
    if record.tags:
        out["tags"] = list(record.tags)
    return out
