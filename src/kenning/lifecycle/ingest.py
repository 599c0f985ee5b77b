"""Conversations in (seed 004's conversational memory, seed 001's extraction).

``Memory.ingest(messages, session_id)`` in one transaction:

* every message becomes a **working** memory of the session (speaker, role and
  position in metadata; the episode is the session unless named), so the raw
  turn is never lost (DESIGN.md §2);
* the session keeps a **context window** of its last ``context_window``
  messages as working memory; older ones become **episodic** (they stay
  searchable, and decay like episodes);
* **facts** are extracted from the new messages (an LLM when configured,
  rules otherwise: :mod:`kenning.lifecycle.facts`) and written as extra
  memories through reconcile, each linked (``reference``) to the turns it
  came from, with ``source="extraction"`` and its evidence in metadata.
  Facts start as ``pending_review`` where a policy (or
  ``lifecycle.review_extracted_layers``) asks for it.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ..access import ScopeFilter
from ..decay import type_defaults
from ..errors import InvalidInput
from ..graph.model import MemoryLink, Relation
from ..models import EXTRACTED, MemoryFilter, MemoryRecord, MemoryType, Principal, Scope
from ..stores import Replacement
from ..validation import clean_text, clean_time
from .facts import Fact, FactExtractor, Turn, extractor_for
from .writer import WritePlan, WriteResult

if TYPE_CHECKING:
    from ..core import Core
    from ..write import WritePipeline

__all__ = ["IngestResult", "Ingestor", "parse_messages"]

log = logging.getLogger("kenning.ingest")

_ROLES = ("user", "assistant", "system", "tool")


@dataclass(slots=True)
class IngestResult:
    """What one ingest stored: the turns, the facts (with reconcile outcomes), and how
    many older turns left the context window for episodic memory."""

    session_id: str
    episode_id: str
    turns: list[MemoryRecord] = field(default_factory=list)
    facts: list[WriteResult] = field(default_factory=list)
    aged: int = 0
    #: What went wrong without stopping the ingest (e.g. fact extraction failing).
    errors: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {
            "session_id": self.session_id,
            "episode_id": self.episode_id,
            "turns": [t.to_dict() for t in self.turns],
            "facts": [f.to_dict() for f in self.facts],
            "aged": self.aged,
            "errors": self.errors,
        }


def parse_messages(messages: object, max_chars: int) -> list[dict[str, Any]]:
    """Validate messages: strings, or objects with ``content`` and optional ``role``
    (user, assistant, system, tool), ``name`` / ``speaker`` and ``at`` (a time)."""
    if isinstance(messages, str | bytes | Mapping) or not isinstance(messages, Sequence):
        raise InvalidInput("messages must be a list of messages", field="messages")
    if not messages:
        raise InvalidInput("messages must not be empty", field="messages")
    out: list[dict[str, Any]] = []
    for i, raw in enumerate(messages):
        msg: Mapping[str, Any] = {"content": raw} if isinstance(raw, str) else raw
        if not isinstance(msg, Mapping):
            raise InvalidInput(f"messages[{i}] must be a string or an object", field="messages")
        unknown = set(msg) - {"content", "role", "name", "speaker", "at"}
        if unknown:
            raise InvalidInput(
                f"messages[{i}]: unknown field(s) {sorted(unknown)}", field="messages"
            )
        try:
            content = clean_text(msg.get("content"), "content", max_chars)
            role = msg.get("role", "user")
            if role not in _ROLES:
                raise InvalidInput(
                    f"role must be one of {', '.join(_ROLES)}; got {role!r}", field="role"
                )
            name = msg.get("name") or msg.get("speaker") or role
            name = clean_text(name, "name", 128)
            at = clean_time(msg.get("at"), "at")
        except InvalidInput as exc:
            raise InvalidInput(f"messages[{i}]: {exc}", field="messages") from None
        if not content.strip():
            raise InvalidInput(f"messages[{i}]: content is empty", field="messages")
        out.append({"content": content, "role": role, "name": name, "at": at})
    return out


class Ingestor:
    """Runs ``ingest`` over one :class:`~kenning.core.Core`; turns and facts are written
    through the write pipeline (scope check, review gate, one transaction)."""

    def __init__(self, core: Core, writes: WritePipeline) -> None:
        self.core = core
        self.writes = writes
        self._extractor: FactExtractor | None = None

    @property
    def extractor(self) -> FactExtractor:
        """The fact extractor (LLM when configured, rules otherwise), made on first use."""
        if self._extractor is None:
            self._extractor = extractor_for(self.core.chat)
        return self._extractor

    def run(
        self,
        who: Principal,
        messages: object,
        session_id: str,
        scope: Scope,
        episode_id: str | None,
        extract: bool,
    ) -> IngestResult:
        """Store the messages, age the window, extract and reconcile facts (one write)."""
        core = self.core
        settings = core.settings
        sid = clean_text(session_id, "session_id", 256)
        eid = clean_text(episode_id, "episode_id", 256) if episode_id is not None else sid
        parsed = parse_messages(messages, settings.max_content_chars)
        if len(parsed) > settings.max_batch:
            raise InvalidInput(
                f"at most {settings.max_batch} messages per ingest", field="messages"
            )
        core.policy.check_write(who, scope)
        now = core.clock.now()
        view = ScopeFilter(who.org_id, frozenset({scope}))
        window = self._window(view, sid)
        offset = 1 + max((int(r.metadata.get("turn", -1)) for r in window), default=-1)
        items: list[dict[str, Any]] = [
            {
                "content": m["content"],
                "scope": scope,
                "memory_type": "working",
                "session_id": sid,
                "episode_id": eid,
                "source": "conversation",
                "event_at": m["at"] or now,
                "metadata": {"speaker": m["name"], "role": m["role"], "turn": offset + i},
            }
            for i, m in enumerate(parsed)
        ]
        records = [self.writes.build(who, item, now) for item in items]
        aging = self._age(window, records, now)
        facts, errors = self._facts(parsed, now) if extract else ([], [])
        fact_records = [
            self.writes.build(
                who,
                {
                    "content": fact.content,
                    "scope": scope,
                    "memory_type": fact.memory_type,
                    "importance": fact.importance,
                    "confidence": fact.confidence,
                    "tags": list(fact.tags),
                    "event_at": fact.event_at or _said(items, fact.evidence, now),
                    "source": EXTRACTED,
                    "session_id": sid,
                    "episode_id": eid,
                    "metadata": _fact_metadata(fact, records),
                },
                now,
            )
            for fact in facts
        ]

        def link_evidence(plan: WritePlan) -> None:
            # each fact points at the turns it came from; aged turns change with it
            for result, record in zip(plan.results[len(records) :], fact_records, strict=True):
                for turn_id in record.metadata["evidence"]:
                    plan.links.append(
                        MemoryLink(result.record.id, turn_id, Relation.REFERENCE, 1.0)
                    )
            plan.replacements += aging

        results = self.writes.write(who, records + fact_records, extend=link_evidence)
        aged = len(aging) + sum(r.memory_type is MemoryType.EPISODIC for r in records)
        return IngestResult(
            sid,
            eid,
            [r.record for r in results[: len(records)]],
            results[len(records) :],
            aged,
            errors,
        )

    def _facts(
        self, parsed: Sequence[Mapping[str, Any]], now: datetime
    ) -> tuple[list[Fact], list[str]]:
        """Facts from the new messages; a failing extractor costs the facts, not the turns."""
        try:
            turns = [
                Turn(i, m["name"], m["content"], m["at"] or now, m["role"])
                for i, m in enumerate(parsed)
            ]
            return self.extractor.extract(turns), []
        except Exception as exc:  # fail-open: the turns are stored whatever happens
            log.exception("fact extraction failed; storing the turns only")
            return [], [f"fact extraction failed: {exc}"]

    def _window(self, view: ScopeFilter, session_id: str) -> list[MemoryRecord]:
        """The session's working memory now, oldest first."""
        lc = self.core.settings.lifecycle
        flt = MemoryFilter(session_id=session_id, types=frozenset({MemoryType.WORKING}))
        rows = self.core.store.list(
            view, flt, limit=lc.context_window + self.core.settings.max_batch, cursor=None
        )
        return sorted(rows, key=_turn_order)

    def _age(
        self, window: Sequence[MemoryRecord], new: Sequence[MemoryRecord], now: datetime
    ) -> list[Replacement]:
        """Turns past the context window become episodic: stored ones by a change,
        new ones (a long conversation ingested at once) before they are written."""
        lc = self.core.settings.lifecycle
        fresh = {r.id for r in new}
        ordered = sorted([*window, *new], key=_turn_order)
        past = ordered[: max(0, len(ordered) - lc.context_window)]
        _, rate = type_defaults(MemoryType.EPISODIC, lc.initial_strength, lc.decay_rate)
        out = []
        for r in past:
            if r.id in fresh:
                r.memory_type, r.decay_rate = MemoryType.EPISODIC, rate
                continue
            aged = replace(r, memory_type=MemoryType.EPISODIC, decay_rate=rate, updated_at=now)
            out.append(Replacement(aged, None, "consolidate", r.changes_to(aged, ("memory_type",))))
        return out

    def context(self, who: Principal, session_id: str, scope: Scope) -> list[MemoryRecord]:
        """The session's context window: its working-memory messages, oldest first."""
        self.core.policy.check_read(who, scope)
        sid = clean_text(session_id, "session_id", 256)
        view = ScopeFilter(who.org_id, frozenset({scope}))
        return self._window(view, sid)[-self.core.settings.lifecycle.context_window :]


def _fact_metadata(fact: Fact, turns: Sequence[MemoryRecord]) -> dict[str, Any]:
    """A drawn fact's metadata: the turns it came from (``evidence``), its kind and
    subject, and, for a fact of one turn, the speaker's own statement it was
    rewritten from (``said``: reconcile reads a change as the speaker said it)."""
    meta: dict[str, Any] = {
        "evidence": [turns[i].id for i in fact.evidence if 0 <= i < len(turns)],
        "kind": fact.kind,
        "subject": fact.subject,
    }
    if fact.said and len(meta["evidence"]) == 1:
        meta["said"] = fact.said
    return meta


def _said(items: Sequence[Mapping[str, Any]], evidence: Sequence[int], now: datetime) -> datetime:
    """When a fact with no time of its own was said: at its latest evidence turn.

    A conversation ingested after the fact (a backfill, an import) keeps its
    order: "I live in Berlin" from 2022 is older than "we moved to Lisbon"
    from 2024, whenever the two were ingested."""
    times = [items[i]["event_at"] for i in evidence if 0 <= i < len(items)]
    return max(times, default=now)


def _turn_order(r: MemoryRecord) -> tuple[datetime, int, str]:
    return r.said_at, int(r.metadata.get("turn", 0)), r.id
