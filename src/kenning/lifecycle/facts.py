"""Conversation turns to facts: rules by default, a chat model when one is configured.

A :class:`FactExtractor` turns :class:`Turn` objects into :class:`Fact` objects:
self-contained third-person sentences that point back at the turns they came
from (``evidence``). Facts are *extra* memories and retrieval keys; the caller
stores the turns themselves separately, so extraction may miss things without
losing them. Pure logic: no I/O except the chat model call of
:class:`LLMFactExtractor`.

:class:`RuleFactExtractor` (no model, deterministic) reads the turns whose role
is not ``assistant``/``system`` (those only serve as context: who "you" is):

1. **Sentences.** A turn is split into sentences. A trailing ``[image: ...]``
   caption (the form of ``kenning.bench.locomo_data.Turn.document``) becomes a
   "shared a photo" event. Leading interjections and vocatives ("Wow, Mel!",
   "Yeah Jon,") and a trailing vocative (", Mel") are stripped.
2. **Asked to keep.** A leading request to keep what follows, or a flag that it
   is information ("Remember that ...", "Please note: ...", "Don't forget that
   ...", "Just so you know, ...", "FYI", "For the record, ..."), is dropped and
   what follows read as the sentence, with importance at least 4 and a fragment
   of two words kept ("Remember, I'm vegan"). "Remember to buy milk" asks for
   an action, not a fact to keep, and goes on to the skips.
3. **Skips.** Questions (ending in "?"), greetings, thanks, agreement fillers
   ("I totally agree"), suggestions, imperatives and requests ("Let's ...",
   "We should ...", "Help me ..."), hypotheticals ("if ...", "I wish", "I'd
   be", "would have") and fragments under four words are dropped (not a
   short statement of who the speaker is: "I'm vegan", "I'm a nurse", "I'm
   34"; "I'm fine", "I'm sorry", "I'm listening" are small talk), as are
   sentences with no first person at all (nothing in them is said about the
   speaker), unless they tell of a named one's death or ending ("Luna passed
   away", "Dr. Meier retired", "Akelius sold the flat to Mrs. Patel"): the
   end of something the speaker had, which reconcile reads.
4. **Dropped subjects.** Chat often drops the "I": "Lost my job yesterday",
   "Been busy volunteering", "Gonna continue my edu", "Researching adoption
   agencies", "Excited to start", "Love that painting" are read as "I lost",
   "I've been", "I'm going to", "I'm researching", "I'm excited", "I love".
   A gerund followed by its own verb ("Taking care of ourselves is vital")
   is a subject, not a dropped "I'm"; "Reminds me ..." drops an "it".
5. **Kind**, first match wins:
   *event* (dated) — a past-tense first-person sentence, or one whose time
   expression lies before the turn ("I went to a support group yesterday");
   *plan* — going to / will / 'll / plan to / want to / hope to / thinking
   about / looking forward / I'd love to / a future time expression;
   *preference* — like / love / enjoy / prefer / hate / can't stand /
   favourite / into / keen on / passionate about / fan of;
   *relationship* — "my sister/husband/friend/boss ...", "I'm married"
   (plus "Anna is <name>'s sister." for "my sister Anna");
   *skill* — "I know how to", "I learned how to", "the trick is";
   *habit* — usually / always / every day / each morning / my routine;
   *event* (undated) — any other simple past ("I painted a sunrise"), with
   ``event_at`` the turn's time; *opinion* — "I think / believe ...";
   *statement* — everything else that is first person ("I'm a nurse",
   "I have two kids", "my job is ...", "we ..." statements).
6. **Time.** A date that comes back every year ("My birthday is March 3rd",
   "Our anniversary is on June 12") stays as said: a standing fact, no event.
   Other expressions are resolved against ``Turn.at`` with
   :func:`kenning.retrieval.timeq.content_times` ("yesterday", "last week",
   "next month", "on May 5"); the first gives ``event_at`` (its window's
   start, or the turn's time for a rolling "recently") and each whole-day,
   week, month or year window is written out absolutely in the content
   ("yesterday" said on 8 May 2023 -> "on 7 May 2023").
7. **Third person.** I -> <name>, me -> <name>, my/mine -> <name>'s, I'm ->
   <name> is, I've -> <name> has, I'd -> <name> would/had, I'll -> <name>
   will, myself -> themself; the verb after "I" (past an adverb or two) agrees:
   love -> loves, have -> has, go -> goes, do -> does, don't -> doesn't; past
   tense and modals stay. "we/us" -> "<name> and others", "our" -> <name>'s
   (the speaker is the subject). "you/your" -> the addressee (the nearest
   other speaker before the turn, else after it), with are/were/have agreeing.
   "gonna", "wanna", "gotta", "'cause" are spelled out.
8. **Scores.** importance 4 for relationships, identity statements ("I'm a",
   "I work", "I live", "my name is") and life events (married, moved, lost my
   job, adopted ...); 3 for plans, preferences, skills, habits, dated events; 2
   otherwise. confidence 0.7, 0.6 for a dropped subject, 0.55 for hedged
   sentences ("maybe", "might", "hopefully") or an unresolved "you".
   ``memory_type`` follows the kind: episodic for events and plans,
   procedural for habits and skills, semantic otherwise.

The word lists, patterns and sentence-level helpers behind these rules live in
the private module :mod:`kenning.lifecycle._fact_rules`.

:class:`LLMFactExtractor` asks a :class:`~kenning.llm.base.ChatModel` for one
JSON object per window of turns, validates every fact on its own (dropping bad
ones) and falls back to the rules for a window whose answer is unusable.
"""

from __future__ import annotations

import json
import logging
import re
import threading
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..errors import ConfigError, InvalidInput
from ..llm.base import ChatModel, Message
from ..models import MemoryType, as_utc
from ._fact_rules import (
    _CAPTION,
    _FILLER,
    _GREETING,
    _HEDGE,
    _HYPOTHETICAL,
    _IMPERATIVE,
    _NAMED_REL,
    _NOT_NAMES,
    _RECURRING,
    _REL_WORDS,
    _RELATIONSHIP,
    _TAG_QUESTION,
    _absolute_dates,
    _directive,
    _importance,
    _kind,
    _named_death,
    _named_end,
    _Names,
    _resolve_time,
    _rewrite,
    _sentences,
    _short_identity,
    _short_named,
    _strip_discourse,
    _with_subject,
    _without_self_naming,
)

__all__ = [
    "FACT_KINDS",
    "SYSTEM_PROMPT",
    "Fact",
    "FactExtractor",
    "LLMFactExtractor",
    "RuleFactExtractor",
    "Turn",
    "extractor_for",
    "memory_type_for",
]

logger = logging.getLogger("kenning.lifecycle.facts")

#: Fact kinds an extractor may produce (the rules use all but "skill" and "goal").
FACT_KINDS: tuple[str, ...] = (
    "statement",
    "preference",
    "plan",
    "event",
    "relationship",
    "habit",
    "skill",
    "opinion",
    "goal",
)

_MAX_CONTENT = 2000
_CONTEXT_ROLES = frozenset({"assistant", "system"})


@dataclass(frozen=True, slots=True)
class Turn:
    """One conversation turn: ``index`` is its 0-based position (the evidence pointer).

    ``at`` is when it was said (naive values are read as UTC); ``role`` is
    ``"user"``, ``"assistant"``, ``"system"`` or another speaker label.
    """

    index: int
    speaker: str
    text: str
    at: datetime | None = None
    role: str = "user"


@dataclass(frozen=True, slots=True)
class Fact:
    """A self-contained third-person statement drawn from some turns.

    ``kind`` is one of :data:`FACT_KINDS`; ``evidence`` lists the
    :attr:`Turn.index` values it came from; ``subject`` is who it is about;
    ``event_at`` is the resolved time of a dated event or plan;
    ``importance`` runs 1 (trivial) to 5 (critical), ``confidence`` 0 to 1.
    ``said`` is the speaker's own statement the fact was rewritten from, in the
    first person ("I switched to Dr. Jones" for "Kim switched to Dr. Jones"),
    when the extractor knows it (the rules do; a model's facts have none).
    """

    content: str
    kind: str
    memory_type: MemoryType
    importance: int
    evidence: tuple[int, ...]
    subject: str
    event_at: datetime | None = None
    tags: tuple[str, ...] = ()
    confidence: float = 0.7
    said: str | None = None


def memory_type_for(kind: str) -> MemoryType:
    """The memory type a fact of ``kind`` is stored as (episodic, procedural or semantic)."""
    if kind in ("event", "plan"):
        return MemoryType.EPISODIC
    if kind in ("habit", "skill"):
        return MemoryType.PROCEDURAL
    return MemoryType.SEMANTIC


class FactExtractor(ABC):
    """Turns in, facts out. Implementations override :meth:`extract` only."""

    @abstractmethod
    def extract(self, turns: Sequence[Turn]) -> list[Fact]:
        """The facts stated in ``turns``, in turn order; ``[]`` when there are none."""


def _check_turns(turns: Sequence[Turn]) -> list[Turn]:
    out = list(turns)
    for i, turn in enumerate(out):
        if not isinstance(turn, Turn):
            raise InvalidInput(f"turns[{i}] is {type(turn).__name__}, expected Turn", field="turns")
    return out


# --------------------------------------------------------------------------- the rules


def _vocative_names(turns: Sequence[Turn]) -> frozenset[str]:
    return frozenset(t.speaker.strip().lower() for t in turns if t.speaker.strip())


def _display(turn: Turn) -> str:
    name = " ".join(turn.speaker.split())
    if turn.role == "assistant" and (not name or name.lower() == "assistant"):
        return "the assistant"
    if not name or name.lower() in ("user", "human", "me"):
        return "the user"
    return name


def _addressee(turns: Sequence[Turn], i: int) -> str | None:
    """The nearest other speaker before turn ``i`` (else after it)."""
    me = turns[i].speaker
    for j in (*range(i - 1, -1, -1), *range(i + 1, len(turns))):
        if turns[j].speaker != me:
            return _display(turns[j])
    return None


def _fact(content: str, kind: str, turn: Turn, who: _Names, **fields: Any) -> Fact:
    """A rule fact about the speaker of ``turn``, its memory type following ``kind``."""
    fields.setdefault("importance", 2)
    return Fact(
        _finish(content),
        kind,
        memory_type_for(kind),
        evidence=(turn.index,),
        subject=who.speaker,
        **fields,
    )


def _spoken(sentence: str, names: frozenset[str]) -> tuple[str, bool]:
    """``sentence`` without discourse, vocatives, a request to remember or a tag
    question ("I can bring it tomorrow, how does that sound?"), and whether the
    speaker asked to keep it."""
    s, asked = _directive(_strip_discourse(sentence, names))
    if tag := _TAG_QUESTION.match(s):
        s = tag["stem"]
    return s, asked


def _said(sentence: str, turn: Turn, names: frozenset[str]) -> str | None:
    """What the speaker said in ``sentence`` when a transcript's label of their own
    name opens it ("Melanie: Thanks, Caroline, for letting me join"): the statement
    without the label and what the label hid ("Thanks, Caroline,"), else None."""
    name = " ".join(turn.speaker.split())
    head, colon, rest = sentence.partition(":")
    if not name or not colon or head.strip().casefold() != name.casefold():
        return None
    found = _with_subject(_spoken(rest, names)[0])
    return found[0] if found else None


def _upper_first(text: str) -> str:
    return text[:1].upper() + text[1:]


def _finish(text: str) -> str:
    """One line, the first letter capitalised, ending in a single full stop."""
    text = re.sub(r"[\s!.…,;:–—-]+$", "", " ".join(text.split()))
    return re.sub(r"^\W*[a-z]", lambda m: m[0].upper(), text) + "."


class RuleFactExtractor(FactExtractor):
    """Facts by rules, no model; deterministic. See the module docstring for the rules."""

    def extract(self, turns: Sequence[Turn]) -> list[Fact]:
        """Facts from the non-assistant, non-system turns (the others are context only)."""
        items = _check_turns(turns)
        names = _vocative_names(items)
        out: list[Fact] = []
        seen: set[tuple[str, str]] = set()
        for i, turn in enumerate(items):
            if turn.role in _CONTEXT_ROLES:
                continue
            who = _Names(_display(turn), _addressee(items, i))
            for fact in self._turn_facts(turn, who, names):
                key = (fact.subject, fact.content.casefold())
                if key not in seen:
                    seen.add(key)
                    out.append(fact)
        return out

    def _turn_facts(self, turn: Turn, who: _Names, names: frozenset[str]) -> list[Fact]:
        at = as_utc(turn.at) if turn.at is not None else None
        text = turn.text.replace("\u2019", "'").replace("\u2018", "'")
        facts: list[Fact] = []
        caption = _CAPTION.search(text)
        if caption:
            text = text[: caption.start()]
        for sentence in _sentences(text):
            facts.extend(self._sentence_facts(sentence, turn, who, names, at))
        if caption and caption["cap"].strip(" ."):
            facts.append(_image_fact(caption["cap"], turn, who, at))
        return facts

    def _sentence_facts(
        self, sentence: str, turn: Turn, who: _Names, names: frozenset[str], at: datetime | None
    ) -> list[Fact]:
        s, asked = _spoken(sentence, names)
        # a fragment says too little, unless the speaker asked to keep it ("Remember,
        # I'm vegan"), it says who they are ("I'm vegan", "I'm a nurse") or what they
        # do with a name ("I use Spotify")
        short = _short_identity(s) or _short_named(s) or _named_death(s) or _named_end(s)
        shortest = 2 if asked or short else 4
        if len(s.split()) < shortest or s.rstrip().endswith("?") or len(s) > _MAX_CONTENT:
            return []
        if _GREETING.match(s) or _IMPERATIVE.match(s) or _FILLER.match(s):
            return []
        if _HYPOTHETICAL.search(s) or re.search(r"\blet'?s\b", s, re.IGNORECASE):
            return []
        found = _with_subject(s)
        if found is None:
            return []
        fp, implicit = found
        # a date that comes back every year has no year to resolve ("My birthday is
        # March 3rd", "Our anniversary is on June 12"): the fact stands as said
        when = None if _RECURRING.search(fp) else _resolve_time(fp, at)
        kind = _kind(fp, when)
        content, unresolved = _rewrite(fp, who)
        content = _without_self_naming(content, who.speaker)
        if not content.strip(" .!"):
            return []  # "I'm Kim": the speaker's name, which every fact of theirs names
        if when is not None:
            content = _absolute_dates(content, when.spans)
        event_at = when.at if when is not None and kind in ("event", "plan") else None
        if kind == "event" and event_at is None:
            event_at = at
        confidence = 0.6 if implicit else 0.7
        if unresolved or _HEDGE.search(fp):
            confidence = 0.55
        rel = _RELATIONSHIP.search(fp)
        fact = _fact(
            content,
            kind,
            turn,
            who,
            # what the speaker asks to be kept matters to them at least as much as
            # who they are ("Remember that I'm allergic to peanuts")
            importance=max(_importance(kind, fp, when is not None), 4 if asked else 1),
            event_at=event_at,
            tags=((rel["rel"] or rel["state"]).lower(),) if rel else (),
            confidence=confidence,
            said=_upper_first(_said(sentence, turn, names) or fp),
        )
        return [fact, *_named_relations(fp, turn, who)]


def _named_relations(fp: str, turn: Turn, who: _Names) -> list[Fact]:
    """ "my sister Anna" -> "Anna is Caroline's sister." (one fact per named relative)."""
    return [
        _fact(
            f"{m['name']} is {who.speaker}'s {m['rel'].lower()}",
            "relationship",
            turn,
            who,
            importance=4,
            tags=(m["rel"].lower(), m["name"].lower()),
        )
        for m in _NAMED_REL.finditer(fp)
        if m["name"] not in _NOT_NAMES and m["name"].lower() not in _REL_WORDS
    ]


def _image_fact(caption: str, turn: Turn, who: _Names, at: datetime | None) -> Fact:
    cap = " ".join(caption.split()).rstrip(".")
    cap = re.sub(r"^(?:a |an )?(?:photography|photo|picture|image|pic) of\s+", "", cap, flags=re.I)
    return _fact(
        f"{who.speaker} shared a photo of {cap}",
        "event",
        turn,
        who,
        event_at=at,
        tags=("image",),
        confidence=0.5,
    )


# --------------------------------------------------------------------------- with a chat model

SYSTEM_PROMPT = """You extract durable facts about the people in a conversation.
Answer with ONE JSON object and nothing else, exactly of this shape:
{"facts": [{"content": <str>, "kind": <KIND>, "subject": <str>, "importance": <1-5>,
  "evidence": [<turn index>, ...], "event_at": <ISO 8601 date or date-time, or null>,
  "tags": [<str>, ...], "confidence": <0..1>}]}
- content: one self-contained third-person sentence that names the person (no bare
  I, you, he, she); resolve relative dates against the turn's "at" time ("yesterday"
  said on 2023-05-08 becomes "on 7 May 2023").
- KIND is one of statement, preference, plan, event, relationship, habit, skill,
  opinion, goal.
- subject: the name of the person the fact is about.
- evidence: the "index" of every turn the fact comes from.
- event_at: when a dated event happened or a plan is due; null otherwise.
- importance: 1 trivial ... 5 critical (identity, relationships, major life events 4-5;
  passing remarks 1-2).
- Skip greetings, thanks, questions, small talk and hypotheticals. Assistant turns are
  context: take facts from them only when the user confirms them. [] is a fine answer."""


class _LLMFact(BaseModel):
    model_config = ConfigDict(extra="ignore")
    content: str = Field(min_length=1, max_length=_MAX_CONTENT)
    kind: str
    subject: str = Field("", max_length=200)
    importance: int = Field(3, ge=1, le=5)
    evidence: list[int] = Field(min_length=1)
    event_at: str | None = None
    tags: list[str] = Field(default_factory=list, max_length=20)
    confidence: float = Field(0.7, ge=0.0, le=1.0)


def _parse_when(value: str | None) -> datetime | None:
    """An ISO 8601 date or date-time as aware UTC; ``ValueError`` if it is not one."""
    if value is None or not value.strip():
        return None
    return as_utc(datetime.fromisoformat(value.strip()))


def _valid_fact(raw: Any, window: dict[int, Turn]) -> Fact | None:
    """One model-proposed fact, validated; ``None`` if any field is unusable."""
    try:
        item = _LLMFact.model_validate(raw)
        event_at = _parse_when(item.event_at)
    except (ValidationError, ValueError, TypeError):
        return None
    kind = item.kind.strip().lower()
    content = " ".join(item.content.split())
    if kind not in FACT_KINDS or not content or any(i not in window for i in item.evidence):
        return None
    evidence = tuple(sorted(set(item.evidence)))
    subject = " ".join(item.subject.split()) or _display(window[evidence[0]])
    tags = tuple(dict.fromkeys(t.strip().lower() for t in item.tags if t.strip()))
    return Fact(
        content=content,
        kind=kind,
        memory_type=memory_type_for(kind),
        importance=item.importance,
        evidence=evidence,
        subject=subject,
        event_at=event_at,
        tags=tags,
        confidence=float(item.confidence),
    )


class LLMFactExtractor(FactExtractor):
    """Facts from a chat model, one JSON request per ``window`` turns.

    Every proposed fact is validated on its own (non-empty content of at most
    2000 characters, a known kind, evidence among the window's turn indexes,
    importance 1-5, ``event_at`` ISO 8601 or null) and dropped if invalid. A
    window whose answer is unusable — :class:`~kenning.errors.LLMError`,
    malformed JSON, no ``facts`` list, or only invalid facts — is extracted by
    ``fallback`` (the rules by default) and logged; a bad model answer never
    raises. ``calls``, ``fallbacks`` and ``dropped`` count requests, windows
    that fell back and facts dropped as invalid.
    """

    def __init__(
        self,
        chat: ChatModel,
        fallback: FactExtractor | None = None,
        window: int = 20,
        *,
        max_chars: int = 2000,
        max_tokens: int | None = 2048,
    ) -> None:
        """Check the options; the model is first called by :meth:`extract`."""
        if not isinstance(chat, ChatModel):
            raise ConfigError(f"chat must be a ChatModel, got {type(chat).__name__}")
        if fallback is not None and not isinstance(fallback, FactExtractor):
            raise ConfigError("fallback must be a FactExtractor")
        if window < 1 or max_chars < 1:
            raise ConfigError("window and max_chars must be >= 1")
        self.chat = chat
        self.fallback: FactExtractor = fallback if fallback is not None else RuleFactExtractor()
        self.window = int(window)
        self.max_chars = int(max_chars)
        self.max_tokens = max_tokens
        self._lock = threading.Lock()
        self.calls = 0
        self.fallbacks = 0
        self.dropped = 0

    def __repr__(self) -> str:
        """The chat model, the window and the fallback."""
        return (
            f"LLMFactExtractor(chat={self.chat!r}, window={self.window}, "
            f"fallback={self.fallback!r})"
        )

    def extract(self, turns: Sequence[Turn]) -> list[Fact]:
        """Facts from ``turns``, a window at a time; never raises for a bad model answer."""
        items = _check_turns(turns)
        out: list[Fact] = []
        for start in range(0, len(items), self.window):
            out.extend(self._window(items[start : start + self.window]))
        return out

    def _window(self, turns: list[Turn]) -> list[Fact]:
        with self._lock:
            self.calls += 1
        try:
            return self._ask(turns)
        except Exception as exc:  # any model failure: fall back for this window
            with self._lock:
                self.fallbacks += 1
            logger.warning(
                "LLM fact extraction failed for %d turn(s), using %r instead: %s: %s",
                len(turns),
                self.fallback,
                type(exc).__name__,
                str(exc)[:300],
            )
            return self.fallback.extract(turns)

    def _ask(self, turns: list[Turn]) -> list[Fact]:
        payload = [
            {
                "index": t.index,
                "speaker": t.speaker,
                "role": t.role,
                "at": as_utc(t.at).isoformat() if t.at is not None else None,
                "text": t.text[: self.max_chars],
            }
            for t in turns
        ]
        messages = [
            Message("system", SYSTEM_PROMPT),
            Message("user", "Turns:\n" + json.dumps(payload, ensure_ascii=False)),
        ]
        raw, _ = self.chat.complete_json(messages, max_tokens=self.max_tokens)
        if not isinstance(raw, dict) or not isinstance(raw.get("facts"), list):
            raise ValueError("answer has no 'facts' list")
        window = {t.index: t for t in turns}
        facts = [f for f in (_valid_fact(item, window) for item in raw["facts"]) if f is not None]
        dropped = len(raw["facts"]) - len(facts)
        with self._lock:
            self.dropped += dropped
        if dropped:
            logger.info("dropped %d invalid fact(s) of %d", dropped, len(raw["facts"]))
        if raw["facts"] and not facts:
            raise ValueError(f"all {dropped} proposed facts were invalid")
        return facts


def extractor_for(chat: ChatModel | None) -> FactExtractor:
    """An :class:`LLMFactExtractor` over ``chat`` when one is given, else the rules."""
    return LLMFactExtractor(chat) if chat is not None else RuleFactExtractor()
