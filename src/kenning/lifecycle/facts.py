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
2. **Skips.** Questions (ending in "?"), greetings, thanks, agreement fillers
   ("I totally agree"), suggestions and imperatives ("Let's ...", "We should
   ..."), hypotheticals ("if ...", "I wish", "I'd be", "would have") and
   fragments under four words are dropped, as are sentences with no first
   person at all (nothing in them is said about the speaker).
3. **Dropped subjects.** Chat often drops the "I": "Lost my job yesterday",
   "Been busy volunteering", "Gonna continue my edu", "Researching adoption
   agencies", "Excited to start", "Love that painting" are read as "I lost",
   "I've been", "I'm going to", "I'm researching", "I'm excited", "I love".
   A gerund followed by its own verb ("Taking care of ourselves is vital")
   is a subject, not a dropped "I'm"; "Reminds me ..." drops an "it".
4. **Kind**, first match wins:
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
5. **Time.** Expressions are resolved against ``Turn.at`` with
   :func:`kenning.retrieval.timeq.content_times` ("yesterday", "last week",
   "next month", "on May 5"); the first gives ``event_at`` (its window's
   start, or the turn's time for a rolling "recently") and each whole-day,
   week, month or year window is written out absolutely in the content
   ("yesterday" said on 8 May 2023 -> "on 7 May 2023").
6. **Third person.** I -> <name>, me -> <name>, my/mine -> <name>'s, I'm ->
   <name> is, I've -> <name> has, I'd -> <name> would/had, I'll -> <name>
   will, myself -> themself; the verb after "I" (past an adverb or two) agrees:
   love -> loves, have -> has, go -> goes, do -> does, don't -> doesn't; past
   tense and modals stay. "we/us" -> "<name> and others", "our" -> <name>'s
   (the speaker is the subject). "you/your" -> the addressee (the nearest
   other speaker before the turn, else after it), with are/were/have agreeing.
   "gonna", "wanna", "gotta", "'cause" are spelled out.
7. **Scores.** importance 4 for relationships, identity statements ("I'm a",
   "I work", "I live", "my name is") and life events (married, moved, lost my
   job, adopted ...); 3 for plans, preferences, skills, habits, dated events; 2
   otherwise. confidence 0.7, 0.6 for a dropped subject, 0.55 for hedged
   sentences ("maybe", "might", "hopefully") or an unresolved "you".
   ``memory_type`` follows the kind: episodic for events and plans,
   procedural for habits and skills, semantic otherwise.

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
from datetime import datetime, timedelta
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..errors import ConfigError, InvalidInput
from ..llm.base import ChatModel, Message
from ..models import MemoryType, as_utc
from ..retrieval.timeq import TimeSpan, content_times

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
    "statement", "preference", "plan", "event", "relationship", "habit", "skill", "opinion",
    "goal",
)  # fmt: skip

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


# --------------------------------------------------------------------------- word lists

_REL_WORDS = (
    "husband wife partner spouse boyfriend girlfriend fiance fiancee fiancé fiancée bf gf sister "
    "brother sibling siblings mom mother mum dad father parents son daughter kids children child "
    "baby babies grandma grandmother grandpa grandfather grandparents aunt uncle cousin niece "
    "nephew friend friends bff boss manager coworker coworkers colleague colleagues neighbor "
    "neighbour roommate teacher mentor family in-laws dog dogs cat cats pet pets puppy kitten "
    "stepmom stepdad stepson stepdaughter twin team teammates crew"
).split()
_IRREGULAR_PAST = frozenset(
    """went ran saw made got took had was were did felt found bought gave met left told said
    thought began came knew wrote won lost sent spent built brought caught taught drove flew ate
    drank swam sang sat stood wore chose broke fell held kept paid heard led meant slept sold woke
    became forgot understood hung rode hid shot threw grew drew fought sought stuck struck swore
    shook spoke stole tore overcame gotten""".split()
)
_PARTICIPLES = frozenset(
    "been gone done seen had got gotten made known taken given written begun come run".split()
)
_NOT_PAST_ED = frozenset(
    "need feed bleed breed speed proceed succeed exceed heed seed weed shed embed bed wed red "
    "indeed".split()
)
_ADJ_HEAD = frozenset(
    """excited thrilled stoked blessed pleased amazed impressed surprised tired bored interested
    scared worried relieved stressed obsessed inspired motivated determined delighted honored
    honoured overwhelmed exhausted swamped engaged married divorced retired hooked glad happy proud
    grateful thankful lucky ready busy sure""".split()
)
_MODALS = frozenset("can could will would shall should must might may".split())
_ADVERBS = frozenset(
    """also just still even never always often sometimes usually really totally actually
    definitely finally recently already only mostly kinda truly especially generally currently
    now then too so super pretty absolutely completely seriously literally honestly personally
    normally typically regularly occasionally rarely ever def gradually slowly quickly""".split()
)
_LY_VERBS = frozenset("apply reply rely supply multiply comply imply fly ally bully rally".split())
_ING_NOT_GERUND = frozenset(
    """thing something anything everything nothing morning evening spring king ring wedding
    building meeting wing sibling ceiling string darling during according including amazing
    interesting exciting inspiring touching stunning annoying surprising charming relaxing
    refreshing fascinating outstanding promising rewarding challenging heartwarming exhausting
    boring frustrating confusing disappointing encouraging satisfying thrilling uplifting
    overwhelming breathtaking astonishing pleasing morning""".split()
)
_INTERJECTIONS = (
    r"(?:hey|hi|hello|hiya|yo|wow|woah|whoa|woohoo|yay|oh|ooh|ah|aw+|omg|gosh|yeah|yea|yes|yep"
    r"|yup|nope|ok|okay|well|and|but|plus|also|haha|lol|hmm|um|uh|btw|by the way|anyways?"
    r"|sure thing|guess what"
    r"|honestly|actually|luckily|sadly|unfortunately|thankfully|fortunately)\b"
    r"|(?:no|so|sure|cool|great|nice|awesome|absolutely|totally|definitely|indeed|right|true|man"
    r"|dude|girl)(?=\s*[,!.])|so(?=\s+(?:i|we)\b)"
)
_LEAD = re.compile(rf"^(?:(?:{_INTERJECTIONS})[\s,!.:;-]*)+", re.IGNORECASE)
_GREETING = re.compile(
    r"^(?:thanks|thank you|thx|good (?:morning|afternoon|evening|night|to see|to hear|luck)"
    r"|nice to (?:meet|see|hear)|see you|talk (?:to you )?(?:soon|later)|take care|bye|goodbye"
    r"|congrat|long time no|same here|me too|happy (?:birthday|holidays)|sorry (?:to hear|about))",
    re.IGNORECASE,
)
_FILLER = re.compile(
    r"^(?:i|we)(?: (?:totally|completely|fully|really|so|100%|absolutely|definitely))* "
    r"(?:agree|know(?: what you mean| right| that feeling| the feeling)?(?=\s*[,.!;]|$)"
    r"|hear you|feel you|get (?:it|that|you)|understand|see what you mean"
    r"|appreciate (?:it|that|you)|bet)\b",
    re.IGNORECASE,
)
_IMPERATIVE = re.compile(
    r"^(?:let'?s|let me|let us|take|check|look|tell|keep|give|go|come|try|see|make sure"
    r"|remember|imagine|suppose|don't|do not|please|have a|enjoy your|stay|hang|show|send|text"
    r"|call|ping|shoot|hit me)\b",
    re.IGNORECASE,
)
_HYPOTHETICAL = re.compile(
    r"^(?:if|what if|unless|suppose|assuming|in case|imagine)\b|\bif (?:i|we) (?:were|was|had)\b"
    r"|\bif only\b|\bi wish\b|\bwish i\b|\b(?:would|could|should|must|might)(?: have|'ve)\b"
    r"|(?:^|[,;]\s*|\b(?:and|but|so)\s+)(?:i|we)(?:'d| would| could)(?:\s+\w+ly)?+"
    r"(?! (?:love|like|prefer|rather|been|better|gone|had|recommend)\b)"
    r"|\b(?:we|you) (?:should|could)\b",
    re.IGNORECASE,
)
_FIRST_PERSON = re.compile(
    r"(?<![\w'])(?:i|me|my|mine|myself|we|us|our|ours|ourselves)(?![\w])"
    r"|(?<![\w'])(?:i|we)'(?:m|ve|d|ll|re)\b",
    re.IGNORECASE,
)
_TAG_QUESTION = re.compile(
    r"^(?P<stem>[^?]{12,}?),\s+(?:how|what|wanna|want|do|did|have|are|is|can|could|would|right"
    r"|isn't|don't|any|anything|you)\b[^,?]*\?$",
    re.IGNORECASE,
)
_HEDGE = re.compile(r"\b(?:maybe|might|perhaps|probably|hopefully|possibly)\b", re.IGNORECASE)


# --------------------------------------------------------------------------- sentences


_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[\"'(\[]?[A-Z0-9])|\n+")
_ABBREV = re.compile(r"\b(Mr|Mrs|Ms|Dr|St|Jr|Sr|vs|etc|e\.g|i\.e)\.$", re.IGNORECASE)
_CAPTION = re.compile(r"\s*\[image:\s*(?P<cap>[^\]]+)\]\s*$", re.IGNORECASE)


def _sentences(text: str) -> list[str]:
    """Split on sentence-final punctuation followed by a capital, keeping abbreviations."""
    parts: list[str] = []
    for piece in _SENTENCE_END.split(text.strip()):
        piece = piece.strip()
        if not piece:
            continue
        if parts and _ABBREV.search(parts[-1]):
            parts[-1] = f"{parts[-1]} {piece}"
        else:
            parts.append(piece)
    return parts


def _vocative_names(turns: Sequence[Turn]) -> frozenset[str]:
    return frozenset(t.speaker.strip().lower() for t in turns if t.speaker.strip())


def _is_vocative(word: str, names: frozenset[str]) -> bool:
    w = word.lower()
    return len(w) >= 3 and any(n.startswith(w) for n in names)


def _strip_discourse(sentence: str, names: frozenset[str]) -> str:
    """Drop leading interjections/vocatives and a trailing vocative."""
    s = sentence.strip()
    for _ in range(3):
        before = s
        s = _LEAD.sub("", s).lstrip(" ,!.-–—")
        m = re.match(r"^([A-Z][a-z]+)\s*[,!.]+\s*", s)
        if m and (_is_vocative(m[1], names) or (s != before and m[0].rstrip().endswith(","))):
            s = s[m.end() :]
        if s == before:
            break
    m = re.search(r",?\s+([A-Z][a-z]+)\s*([.!?]*)$", s)
    if m and _is_vocative(m[1], names) and "," in m[0]:
        s = s[: m.start()] + m[2]
    return s.strip()


# --------------------------------------------------------------------------- dropped subjects

_SLANG = (
    (re.compile(r"\bgonna\b", re.IGNORECASE), "going to"),
    (re.compile(r"\bwanna\b", re.IGNORECASE), "want to"),
    (re.compile(r"\bgotta\b", re.IGNORECASE), "have to"),
    (re.compile(r"(?<![\w'])'cause\b|\bcuz\b", re.IGNORECASE), "because"),
    (re.compile(r"\bi\b(?=[\s',;:!.]|$)"), "I"),
)
_PREF_BASE = frozenset("love like enjoy hate adore miss need want hope think feel prefer".split())
_EXPLICIT = re.compile(r"(?<![\w'])(?:I|[Ww]e)(?![\w])|(?<![\w'])(?:I|[Ww]e)'(?:m|ve|d|ll|re)\b")
_GERUND_VERB = re.compile(
    r"^[^,;:—–]*?\b(?:is|was|are|were|'s|makes|made|has|helps|gives|keeps|can|will|would"
    r"|could|should|might|must|takes|looks|sounds|seems|feels|means|brings|gets|reminds|does"
    r"|did|needs|works)\b|^\w+'s\b|\b[a-z]+[^s\W]s (?:me|my|us|our)\b",
    re.IGNORECASE,
)
_MODAL_HEAD = frozenset("can't cannot won't will can".split())


def _with_subject(s: str) -> tuple[str, bool] | None:
    """``s`` in explicit first person: ``(sentence, implicit)``; ``None`` if not about the speaker.

    A sentence that starts with a dropped-subject verb gets an "I" ("Lost my
    job" -> "I lost my job"); one with "me" as an object is skipped ("Made me
    think": the dropped subject is "it").
    """
    for rx, repl in _SLANG:
        s = rx.sub(repl, s)
    explicit = bool(_EXPLICIT.search(s))
    words = s.split()
    k = 0
    while k < len(words) - 1 and words[k].lower() in _ADVERBS:
        k += 1
    head = words[k].lower().rstrip(",.!;:") if words else ""
    rest = " ".join(words[k:])
    adv = " ".join(w.lower() for w in words[:k])
    lead = f"{adv} {rest[:1].lower()}{rest[1:]}".lstrip()
    verb_next = re.match(r"^\S+\s+(?:is|was|are|were|'s|has|can|will)\b", rest, re.IGNORECASE)
    object_me = re.search(r"\b(?:me|myself)\b", rest, re.IGNORECASE)
    if not head.isalpha() and head not in _MODAL_HEAD and "'" not in head[1:]:
        head = ""
    if re.match(r"^\w+s\s+(?:me|us)\b", rest, re.IGNORECASE) and not explicit:
        return None  # "Reminds me ...": the dropped subject is "it"
    dropped = head == "been" or head in _ADJ_HEAD or head in _PREF_BASE or _is_past(head)
    if object_me and dropped and not explicit:  # "Been hectic for me", "Made me think"
        return None
    if head == "been":
        return f"I've {lead}", True
    if head == "going" and rest.lower().startswith("going to") and not _GERUND_VERB.search(rest):
        return f"I'm {lead}", True
    if head in _ADJ_HEAD and not verb_next:
        return f"I'm {lead}", True
    if (head in _PREF_BASE or head in _MODAL_HEAD or _is_past(head)) and not verb_next:
        return f"I {lead}", True
    if not explicit and head.endswith("ing") and len(head) > 4 and head not in _ING_NOT_GERUND:
        if not _GERUND_VERB.search(rest):
            return f"I'm {lead}", True
    if explicit or (_FIRST_PERSON.search(s) and not re.match(r"^(?:you|your)\b", s, re.I)):
        return s, False
    return None


# --------------------------------------------------------------------------- third person

_TOKEN = re.compile(r"[A-Za-z0-9%]+(?:'[A-Za-z]+)?|\s+|[^\sA-Za-z0-9%]")
_THIRD = {"have": "has", "do": "does", "go": "goes", "be": "is", "am": "is", "don't": "doesn't"}
_THIRD |= {"haven't": "hasn't", "ain't": "isn't", "'m": "is", "'ve": "has"}
_NOT_VERBS = frozenset("the a an to and or but too all both guys and".split())
_SUBORDINATORS = frozenset("how that when if what because since where why while and but so".split())
_SECOND_PERSON = frozenset("you your yours yourself you're you've you'd you'll".split())
_PRONOUNS = _SECOND_PERSON | frozenset(
    "i i'm i've i'd i'll me myself my mine we us we're we've we'd we'll our ours ourselves".split()
)
_YOU_AGREE = {"are": "is", "were": "was", "have": "has", "aren't": "isn't", "weren't": "wasn't"}
_YOU_AGREE |= {"haven't": "hasn't", "don't": "doesn't"}


def _is_adverb(word: str) -> bool:
    w = word.lower()
    if w in _ADVERBS or not any(c.isalpha() for c in w):
        return True
    return w.endswith("ly") and len(w) > 4 and w not in _LY_VERBS


def _is_past(word: str) -> bool:
    w = word.lower()
    return w in _IRREGULAR_PAST or (w.endswith("ed") and w not in _NOT_PAST_ED)


def _third_person(word: str) -> str:
    """The third-person singular present of the verb ``word`` (past tense and modals stay)."""
    w = word.lower()
    if w in _THIRD:
        return _THIRD[w]
    if not w.isalpha() or w != word or _is_past(w) or w in _MODALS:
        return word
    if w.endswith("s") and not w.endswith("ss"):
        return word
    if w.endswith(("ss", "sh", "ch", "x", "z", "o")):
        return w + "es"
    if len(w) > 2 and w.endswith("y") and w[-2] not in "aeiou":
        return w[:-1] + "ies"
    return w + "s"


@dataclass(frozen=True, slots=True)
class _Names:
    """How the speaker and the addressee are written in a fact."""

    speaker: str
    addressee: str | None


def _pronoun(low: str, tokens: Sequence[str], k: int, names: _Names) -> tuple[str, str | None]:
    """The replacement of the pronoun ``low`` (``tokens[k]``) and the agreement it sets up."""
    n, a, rest = names.speaker, names.addressee, tokens[k + 1 :]
    plural = _after_and(tokens[:k])
    if low == "i":
        return n, None if plural else "i"
    if low in ("i'm", "i've", "i'd", "i'll"):
        return f"{n} {_contraction(low[1:], rest, plural)}", None
    if low in ("me", "myself", "my", "mine"):
        return {"me": n, "myself": "themself"}.get(low, f"{n}'s"), None
    if low in ("we", "us"):
        return f"{n} and others", None
    if low in ("we're", "we've", "we'd", "we'll"):
        return f"{n} and others {_contraction(low[2:], rest, True)}", None
    if low in ("our", "ours", "ourselves"):
        return ("themselves" if low == "ourselves" else f"{n}'s"), None
    assert a is not None
    if low == "you":
        prev = [w.lower() for w in tokens[:k] if w.strip()][-1:]
        return a, "you+" if prev and prev[0] in _SUBORDINATORS else "you"
    if low in ("your", "yours", "yourself"):
        return ("themself" if low == "yourself" else f"{a}'s"), None
    return f"{a} {_contraction(low[3:], rest, False)}", None


def _rewrite(s: str, names: _Names) -> tuple[str, bool]:
    """``s`` (first person) in the third person; also whether a "you" was left unresolved."""
    tokens = _TOKEN.findall(s)
    out: list[str] = []
    agree: str | None = None  # conjugate the next verb after "i"; "you": only are/were/have;
    # "you+" (a "you" subject after how/that/when...): both
    unresolved = False
    for k, tok in enumerate(tokens):
        low = tok.lower()
        if tok.isspace():
            out.append(tok)
        elif agree is not None and tok[:1].isalnum():
            if agree != "you" and _is_adverb(low):
                out.append(tok)
                continue
            if low in _YOU_AGREE and agree != "i":
                tok = _YOU_AGREE[low]
            elif agree != "you" and low not in _NOT_VERBS:
                tok = _third_person(tok)
            agree = None
            out.append(tok)
        elif low in _PRONOUNS and tok not in ("US", "ME") and not (low == "i" and tok != "I"):
            if low in _SECOND_PERSON and names.addressee is None:
                unresolved, agree = True, None
                out.append(tok)
                continue
            word, agree = _pronoun(low, tokens, k, names)
            out.append(word)
        else:
            agree = None
            out.append(tok)
    return "".join(out), unresolved


def _after_and(before: Sequence[str]) -> bool:
    """Whether a pronoun follows "<Name> and" or "my <relative> and" (a plural subject)."""
    words = [w for w in before if not w.isspace()]
    if len(words) < 2 or words[-1].lower() not in ("and", "&"):
        return False
    named = words[-2][:1].isupper() and words[-2] not in ("I", "Me")
    owner = [w.lower() for w in words[-3:-2]]
    return named or (words[-2].lower() in _REL_WORDS and owner in (["my"], ["our"]))


def _contraction(suffix: str, rest: Sequence[str], plural: bool) -> str:
    """Spell out 'm / 've / 'd / 'll / 're for a third-person subject."""
    if suffix in ("'m", "'re"):
        return "are" if plural else "is"
    if suffix == "'ve":
        return "have" if plural else "has"
    if suffix == "'ll":
        return "will"
    following = [w.lower() for w in rest if w.strip() and w[:1].isalpha() and not _is_adverb(w)]
    nxt = following[0] if following else ""
    return "had" if nxt in _PARTICIPLES or nxt.endswith(("ed", "en")) else "would"


# --------------------------------------------------------------------------- time

_MONTHS = (
    "January February March April May June July August September October November December"
).split()
_PREPS = frozenset("around over throughout within for".split())  # kept before a date


@dataclass(frozen=True, slots=True)
class _When:
    """The first time expression of a sentence, resolved."""

    at: datetime
    relation: str  # "past" | "now" | "future"
    spans: tuple[TimeSpan, ...]


def _day(dt: datetime) -> str:
    return f"{dt.day} {_MONTHS[dt.month - 1]} {dt.year}"


def _phrase(span: TimeSpan) -> tuple[str, str] | None:
    """``(preposition, absolute date)`` for a whole day, week, weekend, month or year."""
    start, end = span.start, span.end
    if start is None or end is None:
        return None
    if start.date() == (end - timedelta(microseconds=1)).date():
        return "on", _day(start)
    if (start.hour, start.minute) != (0, 0) or (end.hour, end.minute) != (0, 0):
        return None
    length = end - start
    if length == timedelta(days=7) and start.weekday() == 0:
        return "in", f"the week of {_day(start)}"
    if length == timedelta(days=2) and start.weekday() == 5:
        return "on", f"the weekend of {_day(start)}"
    if (
        start.day == 1
        and end.day == 1
        and (end.year * 12 + end.month) - (start.year * 12 + start.month) == 1
    ):
        return "in", f"{_MONTHS[start.month - 1]} {start.year}"
    if (start.month, start.day, end.month, end.day) == (1, 1, 1, 1) and end.year == start.year + 1:
        return "in", str(start.year)
    return None


def _resolve_time(s: str, at: datetime | None) -> _When | None:
    if at is None:
        return None
    spans = tuple(sp for sp in content_times(s, at) if sp.start is not None or sp.end is not None)
    if not spans:
        return None
    first = spans[0]
    if first.end is not None and first.end <= at:
        relation = "past"
    elif first.start is not None and first.start > at:
        relation = "future"
    else:
        relation = "now"
    rolling = first.end == at or first.start is None
    when = at if rolling else first.start
    assert when is not None
    return _When(when, relation, spans)


def _absolute_dates(content: str, spans: Sequence[TimeSpan]) -> str:
    """Replace each whole-unit time expression in ``content`` by its absolute date.

    A governing "around"/"over"/"for"... is kept; "in/on/at/during" and a bare
    expression get the date's own preposition. A possessive ("today's") stays.
    """
    for span in spans:
        phrase, pos = _phrase(span), content.find(span.text)
        end = pos + len(span.text)
        if phrase is None or pos < 0 or content[end : end + 1] == "'":
            continue
        first = span.text.split()[0].lower()
        prep = first if first in _PREPS else phrase[0]
        content = f"{content[:pos]}{prep} {phrase[1]}{content[end:]}"
    return content


# --------------------------------------------------------------------------- kinds

_ADV = r"(?:\s+(?:" + "|".join(sorted(_ADVERBS)) + r"|\w+ly|100%))*"
_REL = "|".join(sorted(_REL_WORDS, key=len, reverse=True))
_PLAN = re.compile(
    r"\b(?:going to|will|'ll|plan(?:s|ning)? (?:to|on)|planning|want(?:s)? to|hop(?:e|ing) to"
    r"|thinking (?:about|of)|looking forward|can't wait|cannot wait|intend(?:ing)? to"
    r"|aim(?:ing)? to|about to|off to|(?:'d|would) (?:love|like) to|have to|need to"
    r"|next (?:week|month|year|weekend|time)|tomorrow|tonight|soon|upcoming"
    r"|(?:keen|eager|excited|ready) to)\b",
    re.IGNORECASE,
)
_NOT_PLAN = re.compile(r"\b(?:was|were|wasn't|weren't) going to\b", re.IGNORECASE)
_PREFERENCE = re.compile(
    rf"\b(?:i|we){_ADV}\s+(?:love|like|enjoy|prefer|hate|adore|dislike|can't stand"
    r"|cannot stand)\b|\bfavou?rite\b|\b(?:my|our) (?:\w+ )?(?:fave|fav|top pick|go-to)\b"
    rf"|\b(?:i'm|i am|we're|we are|i've been|i got){_ADV}\s+(?:a\s+)?(?:(?:big|huge)\s+)?"
    r"(?:into|keen on|passionate about|obsessed with|fond of|crazy about|fan of|enjoying"
    r"|loving)\b",
    re.IGNORECASE,
)
_RELATIONSHIP = re.compile(
    rf"\b(?:my|our) (?:(?:best|close|old|little|big|younger|older|new|dear|lovely|amazing)\s+)?"
    rf"(?P<rel>{_REL})\b|\b(?:i'm|i am|we're|we are|i got|we got|i've been|we've been|i was)"
    r"(?:\s+\w+ly)? (?P<state>married|engaged|divorced|single|dating|separated|widowed)\b",
    re.IGNORECASE,
)
_NAMED_REL = re.compile(rf"\b[Mm]y (?P<rel>{_REL}),? (?P<name>[A-Z][a-z]+)\b")
_NOT_NAMES = frozenset("I The A An And But So Is Was Has Had Who We They It".split())
_HABIT = re.compile(
    rf"\b(?:i|we){_ADV}?\s*(?:usually|always|often|regularly|normally|typically|tend to)\b"
    r"|\b(?:every|each) (?:day|morning|night|evening|week|weekend|month|year|monday|tuesday"
    r"|wednesday|thursday|friday|saturday|sunday)\b|\b(?:daily|weekly)\b|\bmy (?:daily )?routine\b"
    r"|\bwhenever (?:i|we)\b",
    re.IGNORECASE,
)
_SKILL = re.compile(
    rf"\b(?:i|we){_ADV}\s+(?:know how to|learned how to|learnt how to|taught (?:myself|ourselves))"
    r"|\bthe (?:trick|secret) (?:is|to)\b"
    r"|\bmy (?:recipe|method|technique|trick|secret) (?:is|for)\b",
    re.IGNORECASE,
)
_OPINION = re.compile(rf"^(?:i|we){_ADV}\s+(?:think|believe|reckon|feel that)\b", re.IGNORECASE)
_IDENTITY = re.compile(
    r"\b(?:i'm|i am) (?:a|an) (?!fan|big|huge|bit|little|lot)\w+|\bmy name is\b"
    r"|\bi (?:work|live|study|grew up|was born)\b"
    r"|\bi(?:'ve| have)(?: got)? (?:a|an|two|three|four|\d+) (?:kids?|children|sons?|daughters?"
    r"|sisters?|brothers?|dogs?|cats?|pets?)\b",
    re.IGNORECASE,
)
_LIFE_EVENT = re.compile(
    r"\b(?:married|wedding|divorc\w*|engaged|pregnan\w*|born|died|passed away|funeral|moved"
    r"|adopt\w*|graduat\w*|diagnos\w*|promot\w*|hired|fired|lost (?:my|our) job|new job|retir\w*"
    r"|accident|surgery|hospital|broke up|breakup|transition\w*)\b",
    re.IGNORECASE,
)
_SUBJECT_VERB = re.compile(
    r"(?<![\w'])(?:i|we)(?P<aux>'ve|'m|'re|'d|'ll| have| has| am| are| was| were)?"
    rf"(?P<adv>{_ADV})\s+(?P<verb>[a-z']+)",
    re.IGNORECASE,
)


def _tense(fp: str) -> str:
    """ "past", "perfect" or "present" for the first first-person subject's verb."""
    m = _SUBJECT_VERB.search(fp)
    if m is None:
        return "present"
    aux, verb = (m["aux"] or "").strip().lower(), m["verb"].lower()
    if aux in ("was", "were"):
        return "past"
    if aux in ("'ve", "have", "has"):
        return "perfect" if verb in _PARTICIPLES or verb.endswith(("ed", "en")) else "present"
    if aux:
        return "present"
    return "past" if verb in ("was", "were") or _is_past(verb) else "present"


def _kind(fp: str, when: _When | None) -> str:
    tense = _tense(fp)
    past_tense = tense == "past" or (tense == "perfect" and when is not None)
    if when is not None and (when.relation == "past" or (when.relation == "now" and past_tense)):
        return "event"
    if when is not None and when.relation == "future":
        return "plan"
    if _PLAN.search(fp) and not _NOT_PLAN.search(fp):
        return "plan"
    if _PREFERENCE.search(fp):
        return "preference"
    if _RELATIONSHIP.search(fp):
        return "relationship"
    if _SKILL.search(fp):
        return "skill"
    if _HABIT.search(fp) and tense != "past":
        return "habit"
    if tense == "past":
        return "event"
    if _OPINION.search(fp):
        return "opinion"
    return "statement"


def _importance(kind: str, fp: str, dated: bool) -> int:
    score = {"relationship": 4, "plan": 3, "preference": 3, "habit": 3, "skill": 3}.get(kind, 2)
    if kind == "event" and dated:
        score = 3
    if _IDENTITY.search(fp):
        score = max(score, 4)
    if _LIFE_EVENT.search(fp):
        score += 1
    return min(score, 5)


# --------------------------------------------------------------------------- the rules


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
        _finish(content), kind, memory_type_for(kind), evidence=(turn.index,), subject=who.speaker,
        **fields,
    )  # fmt: skip


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
        s = _strip_discourse(sentence, names)
        if tag := _TAG_QUESTION.match(s):  # "I can bring it tomorrow, how does that sound?"
            s = tag["stem"]
        if len(s.split()) < 4 or s.rstrip().endswith("?") or len(s) > _MAX_CONTENT:
            return []
        if _GREETING.match(s) or _IMPERATIVE.match(s) or _FILLER.match(s):
            return []
        if _HYPOTHETICAL.search(s) or re.search(r"\blet'?s\b", s, re.IGNORECASE):
            return []
        found = _with_subject(s)
        if found is None:
            return []
        fp, implicit = found
        when = _resolve_time(fp, at)
        kind = _kind(fp, when)
        content, unresolved = _rewrite(fp, who)
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
            content, kind, turn, who,
            importance=_importance(kind, fp, when is not None),
            event_at=event_at,
            tags=((rel["rel"] or rel["state"]).lower(),) if rel else (),
            confidence=confidence,
        )  # fmt: skip
        return [fact, *_named_relations(fp, turn, who)]


def _named_relations(fp: str, turn: Turn, who: _Names) -> list[Fact]:
    """ "my sister Anna" -> "Anna is Caroline's sister." (one fact per named relative)."""
    return [
        _fact(f"{m['name']} is {who.speaker}'s {m['rel'].lower()}", "relationship", turn, who,
              importance=4, tags=(m["rel"].lower(), m["name"].lower()))
        for m in _NAMED_REL.finditer(fp)
        if m["name"] not in _NOT_NAMES and m["name"].lower() not in _REL_WORDS
    ]  # fmt: skip


def _image_fact(caption: str, turn: Turn, who: _Names, at: datetime | None) -> Fact:
    cap = " ".join(caption.split()).rstrip(".")
    cap = re.sub(r"^(?:a |an )?(?:photography|photo|picture|image|pic) of\s+", "", cap, flags=re.I)
    return _fact(
        f"{who.speaker} shared a photo of {cap}", "event", turn, who,
        event_at=at, tags=("image",), confidence=0.5,
    )  # fmt: skip


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
