"""Reconcile-on-write: what a new memory does to its nearest neighbours.

When a memory is written, the engine hands its near neighbours of the same
scope (with their cosine similarity to it) to a :class:`Reconciler`, which
returns one :class:`Decision`: ``ADD`` it, ``UPDATE`` the memory with the same
key, ``NOOP`` (an existing memory already says it), ``SUPERSEDE`` the memory
it contradicts, or ``SHADOW`` the memory it restates with more detail. The
decision is pure: no I/O, no clock, the same inputs give the same answer.

:class:`RuleReconciler` needs no model. Rules, in order of precedence (the
first rule with a candidate wins; among candidates, the most similar one):

1. **Key** — the caller named the slot: a neighbour with the same non-null
   key is updated in place (``NOOP`` if the normalised text is unchanged).
   A neighbour with a *different* non-null key is another slot and is left
   out of every later rule ("Favourite team: Arsenal" under ``fav.football``
   does not clash with "Favourite team: Lakers" under ``fav.basketball``).
2. **Duplicate** — same text after :func:`normalise_for_compare`; or cosine
   ``>= duplicate_similarity``; or a paraphrase: cosine
   ``>= paraphrase_similarity`` and most content words shared (Jaccard over
   lightly stemmed content words ``>= paraphrase_overlap``, so "I'm allergic to
   peanuts" = "I have a peanut allergy") without the new one being an
   elaboration. A similarity never makes a duplicate on its own if the pair
   carries a contradiction signal: "meeting at 3pm" / "at 4pm" embed at 0.92.
3. **Contradiction** (gated by cosine ``>= contradiction_similarity`` unless
   said otherwise), any one of these signals:

   * *negation flip* — one side is negated (not, n't, never, no longer,
     anymore, stopped, quit, is gone) and the other is not, over mostly the same
     content words ("I don't drink coffee anymore" / "I drink coffee every
     morning"); both negated is agreement ("doesn't eat meat" = "never eats").
   * *number change* — a number of the old text is gone and the new one has
     another of the same kind (time, year, ordinal, plain, unit), they share a
     content word, and either nothing else changed (the old content words are
     all in the new text: "rent is 1200 euros" / "rent is 1350 euros") or the
     new text says it changed ("my son Leo is 7" / "my son Leo turned 8",
     "standup is at 9am" / "standup moved to 9:30am"; a plain hour counts as
     a time when the text says it changed: "Standup moves to 10"). Without that, "Maya's
     birthday is on 4 July" / "Maya's anniversary is on 12 July" are two facts.
     An age has no word to share: "I'm 34" / "I turned 35", "My son is 6" /
     "My son turned 7" change the age of the same subject. A value is a
     capitalised word or a number, never the name the text is about ("Britt"
     in "Britt has had an account at Deutsche Bank since Britt was a student").
   * *template* — the token sequences share a prefix and suffix around one
     short differing span (``template_max_span`` tokens each, no shared
     content word) and something says the span is a *single-valued slot*:
     the spans hold numbers; or the prefix ends with a copula or a
     functional predicate ("is", "lives in", "works at", "named"); or the
     span is the subject and the rest is a definite role ("X is the team
     lead"); or the new text has a change marker ("now", "switched").
     Change adverbs and phrases of time ("these days") sit outside the slot.
     Without such a cue a different filler is a *different fact*: "Alice
     likes tea" / "Bob likes tea", "I visited Paris in 2019" / "I visited Rome
     in 2019", "Alice speaks French" / "Alice speaks Spanish" stay ``ADD``.
   * *change marker* — the new text says something changed ("moved",
     "switched", "changed", "raised", "instead", "now", "rescheduled"), shares at least
     two content words with the old one (whom they are about and "new" or
     "first" do not count: "Vera's new gym is Pulse Fitness" / "New job:
     Vera is at Adidas now" share nothing) and adds a value the old one lacks
     ("The team switched from Jira to Linear" / "The team uses Jira").
   * *slot family* — both texts fill the same single-valued slot of the same
     subject (residence: lives in / based in / moved to; employer: works
     at / works for / a job at / my first day at) with disjoint objects ("I
     moved to Berlin" / "I live in Paris"). Such pairs embed far apart (0.45),
     so this rule has its own, lower gate ``slot_similarity``, 0.15 lower again
     when the new slot holds a name ("We relocated to Lisbon last month" / "I
     live in Berlin" embed at 0.34, "Today was my first day at Philips" / "I
     work at Nokia" at 0.23; "I moved to the window seat" names nothing). A
     subject that includes the speaker ("we", "my", "the user and others" in
     facts drawn by ``ingest``) is the speaker's slot, and so is one that names
     a person alone on one side and with no relation on the other ("Kim works
     at Nokia" / "On 2 January was Kim's first day at Philips", as ``ingest``
     draws them); the subject match keeps "My wife works at Google" / "I work
     at Google" and "Kim's sister moved to Lisbon" / "Kim lives in Berlin"
     apart. The write path adds the scope's statements of the slot to the
     neighbours (:func:`slot_query`): by embedding they may be far from the
     nearest.

   * *ended* — the new text says in the simple past what the old one says in
     the present, the old words after its opening in the same order ("I used
     to be a software engineer" / "I'm a software engineer", "I lived in Berlin
     for two years" / "I live in Berlin"): the state has ended. Not when a
     period of its own bounds it ("I had a cat when I was a kid" / "I have a
     cat") or a moment in the past sets it ("I loved the sushi we had
     yesterday"; "until last year" still ends it), when the words play another
     role ("I was a teacher's pet"), nor for an event ("I was promoted at
     Nokia"). The reverse, the present after the same
     past ("I live in Berlin" / "I used to live in Berlin"), is no repeat: the
     user is back.
   * *correction* — the new text corrects the speaker's own words ("Actually I
     got that wrong, it's HCF ..., not Bupa"; "I said Telstra before. It's
     actually Optus I'm on"), denying a value the old one names and naming
     another, whoever the old one is about (:func:`_corrected`; same author,
     from cosine 0.25).
   * *update* — both texts in the speaker's own words (:mod:`.slots`; the
     same author when known) or the new one about a value of the old one that
     ends there, with nothing after the ending but when and where from ("Rex
     passed away last month" / "I have a dog named Rex", "Priya left the
     company" / "My manager is Priya"; not "Anna moved to Berlin", "Tom lost
     his job", "Priya left for a conference"), or both about the same other
     person when the new one leaves the old value outright or switches to a
     named one ("Alice left Google for
     Meta" / "Alice works at Google", "My son switched to Elm School"; the
     person's own name is no value they leave; a fact ``ingest`` drew from
     Kim's words is Kim's by name, "A cappuccino in the morning is all Kim
     needs" / "Kim has moved on from cappuccino to mocha", and two speakers'
     facts are never one's), an update cue in the new text ("we relocated",
     "my new home", "first day at", "quit", "adopted") and a changed value
     (each side has words the other lacks, or the new text names the old
     value and adds its own), from cosine ``update_similarity``
     (0.1 lower when the new text repeats one of the old one's values): "We
     moved out of Berlin; our new home is in Lisbon" retires "My home is in
     Berlin" though the two share one content word. A negation that ends a
     value is no denial ("I quit Nokia and joined Philips" retires "I work at
     Nokia"; "I'm not moving to Lisbon" retires nothing). A new text that
     names all of the old one's values with no word that leaves them says the
     old value again ("My first lecture at ETH Zurich" / "I live in Zurich"),
     unless its word of change goes to another value ("I moved back to Berlin
     after two years in Paris" / "I live in Paris");
     one that leaves all the old one says is a change, not an elaboration ("I
     switched from paleo to a sugar-free diet" / "I'm paleo"). An ending
     leaves an old value named after it before anything else it could act on
     (what one holds with a value does not count: "I quit my job at Nokia",
     but "I switched programmes at KU Leuven" leaves KU Leuven), or named just
     before it when nothing it acts on follows ("Dr. Petrov retired"), or only
     a place it is left from ("Priya left the company"), never where it goes
     ("We moved to Berlin", "switched to the Google Maps team"); "Nokia moved our
     team to Espoo" and "Nokia laid off half my team" leave nothing. One that
     leaves a value at once
     is a cue of its own ("Today was my last day at Nokia", "Tom and I split
     up"). Endings are said in passing as often as outright: "No more Tesco for
     me", "I've given up on SAS", "My Bupa policy ran out", "My Trek was stolen",
     and a refusal to go back ("I'm not going back to Tesco"; a trip is none: "We're
     not going back to Berlin for Christmas"). A denied ending is none, and no
     negation either: "I didn't quit Nokia", "I'm not leaving Nokia", "I never
     sold my Volvo" and "I didn't move to Lisbon after all" retire nothing; nor
     does a change not made (a supposition, :func:`.slots.supposes`: "I'm going
     to quit Nokia", "I nearly sold my Volvo") or a trip ("I left Berlin for a
     week of holiday"; "I left Nokia for a startup" is for good). An ending that
     acts on a thing the value only names leaves the value ("I moved my Nokia
     shares", "I left the Nokia party early", "I sold the Volvo's winter tyres";
     a holding or a home goes with it: "I cancelled my Iron Temple membership",
     "We moved out of our Berlin flat"), and so does a value that moves a person
     on ("Nokia moved me to the Espoo office"). An ending alone is a change
     though it adds no word of its own ("We moved out of Berlin"). People in
     general are not the speaker ("Everyone I know is moving out of Berlin").

   A change marker or an update cue needs a changed value: a new text that
   names every value of the old one, anywhere, and leaves none of them says
   more about the same value ("Rex, my dog, turned five today" / "My dog is
   called Rex"; the template rule likewise, unless the differing words are a
   name or numbers). A slot in the simple past is history, not the present value
   ("I lived in Paris for two years" / "I live in Berlin"; "I have lived in
   Lisbon since March" is the present). Only a statement retires or details
   another: a question, a request or a supposition ("I might move to Lisbon",
   "If I sold my Volvo ...") leaves every neighbour as it is. An addition
   changes nothing either: "We also got a kitten, Nala", "a second car"
   (unless it leaves a value too: "Rex died; we adopted another dog").

   No signal links facts about different people: the speaker and someone else
   ("I live in Berlin" / "My sister just moved to Rome"), two different
   relations, or two authors' own "I" (``author`` of the memories). Two
   signals cross that line: a change made to a thing is the thing's, whoever
   makes it ("My boss moved my review to Monday"), and the speaker moving a
   person, or a thing of theirs, to another value of its kind changes their
   fact ("We moved Ava to Elm School" / "Ava goes to Oak School", "Switched
   Ava's piano lessons to Mr. Grant" / "Ava's piano teacher is Mrs. Hill").

   If both said-at times are known and the new memory is *older* than the one
   it contradicts, it must not retire the newer fact: the decision is ``ADD``
   (kept as history) with the reason saying so.
4. **Shadow** — about the same subject (a text about a thing details no fact
   of the speaker's: "The payments team got a new lead" / "I'm on the payments
   team"), cosine ``>= shadow_similarity``, the new text covers at least
   ``shadow_coverage`` of the old one's content words (two at least), adds
   content words of its own and is longer ("Alice has a dog" → "Alice has a dog named Rex, a
   two-year-old beagle").
5. **Add** — anything else.

Neither does a duplicate or an elaboration: "My sister lives in Berlin" is
another fact beside "I live in Berlin", not a repeat of it, so rules 2 and 4
skip neighbours about someone else, a name before a verb included ("Alice is
allergic to peanuts" / "I'm allergic to peanuts"). The LLM's answer is validated the same
way: a ``supersede``, ``noop`` or ``shadow`` between facts about different
people is refused (and the rules decide).

Known limits of the rules: word order is ignored by the paraphrase overlap
("Alice likes Bob" / "Bob likes Alice"), repeated events with a different
date read as a changed number, and paraphrased contradictions outside the
two slot families need an embedding-close template or a change marker.

:class:`LLMReconciler` asks a chat model instead (one JSON request per item),
validates the answer strictly and falls back to the rules on any failure.
"""

from __future__ import annotations

import functools
import itertools
import json
import logging
import re
import threading
import unicodedata
from abc import ABC, abstractmethod
from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from enum import Enum
from typing import Any, NamedTuple

from ..errors import ConfigError
from ..graph.rules import HONORIFICS
from ..llm.base import ChatModel, Message
from ._fact_rules import _sentences
from .knobs import ReconcileKnobs
from .slots import (
    CALENDAR_NAMES,
    RELATIONS,
    SUBJECT_PRONOUNS,
    change_cue,
    company_only,
    denial_before,
    different_things,
    in_lower_case,
    introduced_names,
    is_person,
    kin,
    named_subject,
    now_for_long,
    past_state,
    recased,
    says_changed,
    statement,
    subject_of,
)

__all__ = [
    "Action",
    "Decision",
    "Incoming",
    "LLMReconciler",
    "Neighbour",
    "ReconcileKnobs",
    "Reconciler",
    "RuleReconciler",
    "RECONCILE_PROMPT",
    "changes_slot",
    "names_a_value",
    "names_more",
    "ends_a_value_only",
    "one_name_in_another",
    "time_name",
    "normalise_for_compare",
    "only_ends",
    "ends_too",
    "ends_with_no_news",
    "says_an_end",
    "slot_query",
]

logger = logging.getLogger("kenning.lifecycle.reconcile")


class Action(str, Enum):
    """What a write does: store, update by key, retire by contradiction or detail, or skip."""

    ADD = "add"
    UPDATE = "update"
    SUPERSEDE = "supersede"
    SHADOW = "shadow"
    NOOP = "noop"


@dataclass(frozen=True, slots=True)
class Incoming:
    """The memory being written; ``said_at`` is its event time, else its creation time."""

    content: str
    key: str | None = None
    said_at: datetime | None = None
    #: Who said it (the memory's author), when known: "I" means them.
    author: str | None = None


@dataclass(frozen=True, slots=True)
class Neighbour:
    """An existing active memory of the same scope and its cosine to the incoming one."""

    id: str
    content: str
    similarity: float
    key: str | None = None
    said_at: datetime | None = None
    author: str | None = None


@dataclass(frozen=True, slots=True)
class Decision:
    """The outcome: ``action`` on ``target`` (a neighbour id; ``None`` for ``ADD``).

    ``decided_by`` is ``"rules"``, ``"llm"`` or ``"rules (llm fallback: <why>)"``.
    """

    action: Action
    target: str | None
    reason: str
    similarity: float = 0.0
    decided_by: str = "rules"


class Reconciler(ABC):
    """Decides what a new memory does to its near neighbours."""

    @abstractmethod
    def decide(self, new: Incoming, near: Sequence[Neighbour]) -> Decision:
        """One decision for ``new`` given its neighbours ``near`` (any order)."""

    def decide_many(self, items: Sequence[tuple[Incoming, Sequence[Neighbour]]]) -> list[Decision]:
        """:meth:`decide` for each ``(new, near)`` pair, in order."""
        return [self.decide(new, near) for new, near in items]


# ----------------------------------------------------------------- text analysis

_QUOTES = str.maketrans(
    {
        "\u2018": "'",
        "\u2019": "'",
        "\u02bc": "'",
        "\u0060": "'",
        "\u00b4": "'",
        "\u201c": '"',
        "\u201d": '"',
        "\u201e": '"',
    }
)
_TOKEN = re.compile(r"[0-9]+(?:[.:,/][0-9]+)*[^\W_]*|[^\W_]+(?:'[^\W_]+)*")
_CLOCK = re.compile(r"[0-9]{1,2}(?:[:.][0-9]{2})?")
_TIME = re.compile(r"[0-9:.]+(?:am|pm)|[0-9]{1,2}:[0-9]{2}")
_ORDINAL = re.compile(r"[0-9]+(?:st|nd|rd|th)")
_DIGITS = re.compile(r"^[0-9.,:/]+")
_CLITICS = ("'s", "'m", "'re", "'ve", "'ll", "'d")

_STOP = frozenset(
    "a an the i me my mine we us our ours you your he him his she her hers they them their "
    "it its this that these those is are am was were be been being do does did have has had "
    "will would can could should shall may might must to of in on at for with by from as "
    "and or but so if then than about into over after before up out also just very really "
    "there here what which who whom whose when where how some any all each".split()
)
#: Words that deny a state, or say it stopped ("My son outgrew his egg allergy").
#: Names of a time, not of a thing: months, weekdays and holidays ("Sara and I split
#: up over Christmas" names no value of its own).
_TIME_NAMES = CALENDAR_NAMES | frozenset(
    "christmas xmas easter thanksgiving halloween hanukkah diwali ramadan eid".split()
)
_NEGATIONS = frozenset(
    "not no never cannot anymore stopped stops quit quits outgrew outgrown".split()
)
#: "is gone" both negates a state ("My cat allergy is gone") and ends a value.
_GONE = (("is", "gone"), ("are", "gone"))
_NEG_PHRASES = frozenset({("no", "longer"), ("any", "more"), ("gave", "up"), *_GONE})
#: Verbs of lacking: never done, they affirm a habit ("I never miss a Juventus
#: match" says the speaker follows Juventus); "I don't miss Berlin" still denies.
_LACKING = frozenset("miss misses skip skips fail fails forget forgets".split())
#: Words that leave or change a value rather than begin one ("I quit Nokia", "we
#: moved out of Berlin", "no longer vegan", "I switched from Nokia"): a text
#: with one of them may name the value it ends, and a negated one may still
#: update it.
_ENDINGS = frozenset(
    """anymore stopped stops quit quits left leave leaves leaving sold sells cancelled
    canceled cancels closed closes replaced replaces retired retires retiring resigned
    resigns resigning divorced separated
    died passed ended dropped lost moved relocated switched changed swapped traded
    transferred upgraded graduated fired outgrew outgrown expired ditched stolen finished
    split separating divorcing""".split()
)
_END_PHRASES = frozenset(
    {
        ("no", "longer"),
        ("any", "more"),
        ("gave", "up"),
        ("given", "up"),
        # "Dropped out of pottery", "I dropped out of college"
        ("dropped", "out"),
        # "No more Tesco for me", "My Bupa policy ran out"
        ("no", "more"),
        ("ran", "out"),
        ("broke", "up"),
        ("split", "up"),
        # "Alex and I parted ways", "... went our separate ways"
        ("parted", "ways"),
        ("separate", "ways"),
        # an engagement, a wedding or a deal "called off" / "broken off"
        ("called", "off"),
        ("broke", "off"),
        ("broken", "off"),
        # a role one leaves: "I stepped down as team lead"
        ("stepped", "down"),
        ("out", "of"),
        ("last", "day"),
        ("laid", "off"),
        ("let", "go"),
        ("made", "redundant"),
        ("took", "over"),
        ("taken", "over"),
        # what is taken "instead of" a value leaves it: "My son talked me into
        # supporting Napoli instead of Galatasaray"
        ("instead", "of"),
        # what one is through with is left: "I'm done with Juventus; Galatasaray is my
        # team now"
        ("done", "with"),
        ("finished", "with"),
        *_GONE,
    }
)
#: Endings that cease what one does, whatever it is: what they leave may be named
#: in lower case ("Dropped out of pottery", "No more coffee for me", "I quit
#: yoga", "We called off the engagement"), where a word that moves or loses a
#: thing ("dropped the plates", "left my umbrella on the train") or finishes a
#: task ("I'm done with the dishes") leaves only a value named as one; so does
#: one day's event ("No more newspaper today").
_CEASING = frozenset({"quit", "quits"})
_CEASE_PHRASES = frozenset(
    {
        ("gave", "up"),
        ("given", "up"),
        ("dropped", "out"),
        ("no", "more"),
        ("any", "more"),
        ("no", "longer"),
        ("called", "off"),
        ("broke", "off"),
        ("broken", "off"),
        ("stepped", "down"),
    }
)
#: Words that add a value beside the one there is ("We adopted another dog", "a
#: second car", "We also got a kitten"): an addition changes nothing.
_ADDING = frozenset("another second third".split())
_GETTING = frozenset("have has got get adopted bought own owns".split())
#: Nouns of a change, which "another" repeats rather than adds a value beside:
#: "Another move: we're in Leipzig now".
_CHANGE_NOUNS = frozenset("move change switch relocation".split())


def _adds_another(lows: Sequence[str]) -> bool:
    """Whether a word of :data:`_ADDING` adds a value ("We adopted another dog", "a
    second car"), not another change ("Another move: we're in Leipzig now")."""
    if _ADDING.isdisjoint(lows):
        return False  # most texts
    return any(
        w in _ADDING and (i + 1 == len(lows) or lows[i + 1] not in _CHANGE_NOUNS)
        for i, w in enumerate(lows)
    )


#: Words saying a value changed (checked on the new text only).
_CHANGE_VERBS = frozenset(
    """moved moves switched changed replaced relocated rescheduled postponed delayed slipped
    became turned
    raised increased lowered decreased reduced doubled halved""".split()
)
#: Adverbs of change or time that sit outside the slot ("X is the lead now").
_CHANGE_ADVERBS = frozenset("now currently nowadays instead anymore recently lately".split())
_FILLERS = _CHANGE_ADVERBS | frozenset("just finally also still actually".split())
#: Words that say a value is new, not what it is (the change-marker signal's overlap).
_MARKER_NEUTRAL = frozenset("new first latest".split())
#: Words that say how a fact changed, not what it is about: never content words.
_SIGNALS = _NEGATIONS | _CHANGE_VERBS | _FILLERS | {"longer"}
_AM_PM = frozenset({"am", "pm"})
_NUMBER_WORDS = frozenset(
    "one two three four five six seven eight nine ten eleven twelve twenty thirty forty "
    "fifty hundred thousand".split()
)
_COPULAS = frozenset("is are am was were be".split())
_DETERMINERS = frozenset("a an the my our your his her their its".split())
_SLOT_PREPS = frozenset("in at on for to".split())
#: Stems of predicates that take one value, followed by their preposition.
_FUNCTIONAL_STEMS = frozenset("liv bas locat resid work mov relocat".split())
_NAMING = frozenset("named called".split())
#: Single-valued slots for the slot-family rule: (family, stem, preposition).
_FAMILIES = (
    ("residence", "liv", "in"),
    ("residence", "bas", "in"),
    ("residence", "mov", "to"),
    ("residence", "relocat", "to"),
    ("residence", "resid", "in"),
    ("employer", "work", "at"),
    ("employer", "work", "for"),
    ("employer", "employ", "at"),
    ("employer", "employ", "by"),
    ("employer", "job", "at"),
    ("employer", "job", "with"),
    # "Today was my first day at Philips": where one goes to work or study
    ("employer", "day", "at"),
)


#: Nouns that name a single-valued slot before a copula ("My new home is in Porto",
#: "my job is at Bosch"), per family.
_SLOT_NOUNS = {"residence": "home flat apartment", "employer": "job workplace employer"}


def normalise_for_compare(text: str) -> str:
    """``text`` folded for equality tests: NFKC, one kind of quote, lowercase, words only.

    Punctuation becomes a word break except inside numbers ("22.04", "9:30")
    and apostrophes inside words ("don't"); runs of spaces collapse to one.
    """
    return " ".join(t.low for t in _tokens(text))


class _Tok(NamedTuple):
    """One word: as written, lower-cased, its light stem (the comparison unit),
    whether it is a number (digits or a number word), and whether it is a content
    word (what a fact is about: no stopword, negation, change verb or filler)."""

    text: str
    low: str
    stem: str
    number: bool
    content: bool


def word_stem(word: str) -> str:
    """``word`` folded and lightly stemmed, as the rules compare words: "moving",
    "moved" and "move" → "mov"."""
    return _stem(word.lower())


@functools.lru_cache(maxsize=100_000)
def _stem(low: str) -> str:
    """A light suffix stemmer: enough to match allergic/allergy, lives/living, moved/move."""
    for clitic in _CLITICS:
        if low.endswith(clitic) and len(low) > len(clitic):
            low = low[: -len(clitic)]
            break
    if len(low) <= 3 or not low.isalpha():
        return low
    for suffix, repl in (
        ("ies", "y"),
        ("ied", "y"),
        ("ments", ""),
        ("ment", ""),
        ("ings", ""),
        ("ing", ""),
        ("ed", ""),
        ("es", ""),
        ("s", ""),
    ):
        if low.endswith(suffix) and len(low) - len(suffix) >= 3:
            low = low[: -len(suffix)] + repl
            break
    for suffix in ("ic", "y", "e"):
        if low.endswith(suffix) and len(low) - len(suffix) >= 3:
            return low[: -len(suffix)]
    return low


@functools.lru_cache(maxsize=100_000)
def _tok(word: str) -> _Tok:
    """The token of one word as written (cached: texts share most of their words)."""
    low = word.casefold()
    stem = _stem(low)
    number = low[0].isdigit() or low in _NUMBER_WORDS
    content = not (
        number or low in _STOP or low in _SIGNALS or low.endswith("n't") or stem in _STOP
    )
    return _Tok(word, low, stem, number, content)


def _tokens(text: str) -> list[_Tok]:
    folded = unicodedata.normalize("NFKC", text).translate(_QUOTES)
    found = _TOKEN.findall(folded)
    words = found
    if any(len(w) == 2 and w.casefold() in _AM_PM for w in found[1:]):
        words = []
        for word in found:
            if (
                words
                and len(word) == 2
                and word.casefold() in _AM_PM
                and _CLOCK.fullmatch(words[-1])
            ):
                words[-1] += word  # "1 pm" is "1pm"
            else:
                words.append(word)
    toks = [_tok(w) for w in words]
    for i in [i for i, t in enumerate(toks[:-1]) if t.low in _COMPOUND_HEADS]:
        t = toks[i]
        if (t.low, toks[i + 1].low) in _NOUN_COMPOUNDS:
            toks[i] = _Tok(t.text, t.low, t.low, t.number, t.content)  # a noun, no verb
    return toks


#: Compounds whose first word is no form of a verb: "the living room" says nothing
#: of where one lives.
_NOUN_COMPOUNDS = frozenset({("living", "room"), ("living", "rooms")})
_COMPOUND_HEADS = frozenset(a for a, _ in _NOUN_COMPOUNDS)


def _number_kind(low: str) -> str:
    """time, ordinal, year, plain, or the unit after the digits ("20k" is "k")."""
    if low in _NUMBER_WORDS or (low.isdigit() and not 1900 <= int(low) <= 2099):
        return "plain"
    if low.isdigit():
        return "year"
    if _TIME.fullmatch(low):
        return "time"
    if _ORDINAL.fullmatch(low):
        return "ordinal"
    return _DIGITS.sub("", low) or "plain"


#: The speaker's "I" in its forms: capitalised, yet no value.
_I_FORMS = frozenset("i i'm i've i'd i'll".split())
#: A word opening a sentence after the first, capitalised.
_OPENER = re.compile(r"[.!?]\s+([A-Z][a-z']*)")


def _sentence_openers(text: str) -> frozenset[str]:
    """Words capitalised only for opening a later sentence, folded: a function word or
    a verb of change ("Closed the Commonwealth Bank accounts too", "My main client
    now is Mr Black"), no value."""
    found = {m.group(1).lower() for m in _OPENER.finditer(text)}
    return frozenset(w for w in found if w in _STOP or w in _ENDINGS or w in _CHANGE_VERBS)


@dataclass(frozen=True, slots=True)
class _Text:
    """What the rules need to know about one text, computed once."""

    toks: tuple[_Tok, ...]
    norm: str
    content: frozenset[str]
    numbers: frozenset[str]
    #: a word that leaves or changes a value ("quit", "moved", "gave up", "no longer")
    ends: bool
    change_verbs: frozenset[str]
    slot: tuple[_Tok, ...]
    words: int
    #: (family, subject stems, object content, object phrase) of the first slot trigger
    family: tuple[str, tuple[str, ...], frozenset[str], str] | None
    #: capitalised words after the first, and numbers (see ``values``)
    capitals: frozenset[str]
    #: every word, folded: what a text names, wherever it names it
    named: frozenset[str]
    #: whether it adds a value beside one ("another", "a second", "also got")
    adds: bool
    #: the text itself
    text: str
    #: the first name of whom it speaks for, folded, when known (a fact ``ingest``
    #: drew from Kim's words names Kim where Kim said "I")
    own_name: str | None = None
    #: whether an ending of it is for a while ("I stopped going to Urban Gym for a
    #: month"): it neither ends nor denies the value
    for_a_while: bool = False
    #: the position of its first negation (:func:`_negation_at`), if any
    negation_at: int | None = None
    #: where its words end a value, undenied: (the ending word's position, whether it
    #: closes a phrase such as "passed away", "gave up" or "not going back")
    open_endings: tuple[tuple[int, bool], ...] = ()
    #: whether it says something changed (a change verb or adverb)
    changes: bool = False
    #: whom the text is about (:func:`.slots.subject_of`): read of every pair
    subject: str = ""

    @property
    def owner(self) -> str:
        """Whose fact it is: :attr:`subject`, but the author's (``"self:kim"``) for
        the author's "I", their name, or a text about no one that names them ("A
        cappuccino in the morning is all Kim needs", drawn from Kim's "... is all I
        need")."""
        who = self.subject
        own = self.own_name
        if own and (
            who in ("self", own) or (not who and (own in self.named or f"{own}'s" in self.named))
        ):
            return f"self:{own}"
        return who

    @property
    def states(self) -> bool:
        """Whether it states a fact: no question, request or supposition (cached)."""
        return statement(self.text).states

    @property
    def values(self) -> frozenset[str]:
        """Distinctive values: capitalised words after the first, and numbers, but
        not the name the text is about, nor its possessive ("Britt" in "Britt has had
        an account at Deutsche Bank since Britt was a student", "Kaja's" in "Kaja
        lost Kaja's umbrella"); the subject is read only here."""
        names = {self.subject, self.own_name or ""}
        return self.capitals - names - {f"{n}'s" for n in names}

    @property
    def past(self) -> bool:
        """Whether it says how things were (:func:`.slots.past_state`, cached): read
        of every neighbour, which needs no more of :func:`.slots.statement`."""
        return past_state(self.text)

    @property
    def cue(self) -> str | None:
        """The text's cue of a change (:func:`.slots.change_cue`, cached). Read of
        new texts only, so a stored neighbour is never searched for one."""
        return change_cue(self.text)

    @property
    def terms(self) -> frozenset[str]:
        """Content words and numbers: what a paraphrase shares and an elaboration adds to."""
        return self.content | self.numbers

    @classmethod
    def of(cls, text: str, own_name: str | None = None) -> _Text:
        toks = tuple(_tokens(text))
        lows = [t.low for t in toks]
        norm = " ".join(lows)
        present = frozenset(lows)
        endings = list(_ending_words(lows))
        # a denied ending is none: "I'm not leaving Nokia", "I never sold my Volvo"
        open_endings = tuple((i, phrase) for i, phrase, denial, _ in endings if denial is None)
        change_verbs = _CHANGE_VERBS & present
        return cls(
            toks=toks,
            norm=norm,
            content=frozenset(t.stem for t in toks if t.content),
            numbers=frozenset(t.low for t in toks if t.number),
            negation_at=_negation_at(lows, norm, present, endings),
            ends=bool(open_endings),
            change_verbs=change_verbs,
            changes=bool(change_verbs) or _changes_now(lows, present),
            slot=_slot(toks),
            words=len(toks),
            family=_family_slot(toks),
            # a capital anywhere names something: "Berlin", "NYC", "iPhone", "eBay"
            capitals=frozenset(
                t.low
                for i, t in enumerate(toks)
                if t.number or ((i or _names_mine(lows, own_name)) and not t.text.islower())
            )
            - _I_FORMS
            - HONORIFICS  # "Dr." of "Dr. Hallam" and of "Dr. Ibarra" is no shared value
            - _sentence_openers(text),
            # a value's possessive names it too: "the Volvo's winter tyres"
            named=present | {w[:-2] for w in lows if w.endswith("'s")} if "'s" in norm else present,
            adds=_adds_another(lows)
            or (
                "also" in present
                and any(a == "also" and b in _GETTING for a, b in zip(lows, lows[1:], strict=False))
            )
            or (not _BRINGING.isdisjoint(present) and _brings_many(toks)),
            text=text,
            own_name=own_name,
            for_a_while=any(_away_for_a_while(lows, i) for i, _ in open_endings),
            open_endings=open_endings,
            subject=subject_of(text),
        )

    @property
    def negated(self) -> bool:
        """Whether it negates: a negation word, or a negating phrase, not denying an
        ending ("I didn't quit Nokia" negates nothing)."""
        return self.negation_at is not None


def _negation_at(
    lows: Sequence[str],
    norm: str,
    present: frozenset[str],
    endings: Sequence[tuple[int, bool, int | None, int]],
) -> int | None:
    """The position of the first negation of ``lows`` (``norm``: them joined,
    ``present``: as a set; ``endings``: :func:`_ending_words`), or None: a negation
    word, or the last word of a negating phrase, neither of which denies an ending.
    An alternative ("believe it or not", "whether or not") negates nothing."""
    if _NEG_OPENERS.isdisjoint(present) and "n't" not in norm:
        return None  # most texts: no word that negates
    # a denied ending affirms: "I didn't quit Nokia" negates nothing
    denied = _denied(endings)
    negations = (
        [
            i
            for i, (w, nxt) in enumerate(zip(lows, [*lows[1:], ""], strict=True))
            if (w in _NEGATIONS or w.endswith("n't"))
            and not (w == "never" and nxt in _LACKING)
            and not (w == "not" and i > 0 and lows[i - 1] == "or")  # "believe it or not"
            and i not in denied
        ]
        + [
            i + 1
            for i, (a, b) in enumerate(zip(lows, lows[1:], strict=False))
            if (a, b) in _NEG_PHRASES and i not in denied
        ]
    )
    return min(negations, default=None)


#: The words that may open a negation (:func:`_negation_at`), besides an "n't".
_NEG_OPENERS = _NEGATIONS | {a for a, _ in _NEG_PHRASES}


def _names_mine(lows: Sequence[str], own_name: str | None = None) -> bool:
    """Whether the text opens on a name that is the speaker's: "Marek is my boss",
    "Luna is our new puppy", "Marek is Cleo's boss" from Cleo, "Coop is where I
    buy my groceries" (the first word's capital is otherwise no value)."""
    if len(lows) < 3:
        return False
    if lows[1] not in ("is", "was"):
        # what the name does for the speaker: "Bupa covers my medical bills"
        return _acts_for_speaker(lows)
    if lows[2] in _WH_CLAUSE:  # what the speaker does there, with it, ...
        return any(w in _SPEAKER_OR_MINE for w in lows[3:6])
    return lows[2] in ("my", "our") or (own_name is not None and lows[2] == f"{own_name}'s")


def _acts_for_speaker(lows: Sequence[str]) -> bool:
    """Whether the opening name does something for the speaker: a verb in -s after
    it and the speaker's "my" or "our" soon after ("Bupa covers my medical bills",
    "Vonovia owns the flat we rent")."""
    verb = lows[1]
    return (
        len(verb) > 3
        and verb.endswith("s")
        and not verb.endswith("ss")
        and verb not in _STOP
        and any(w in _SPEAKER_OR_MINE for w in lows[2:6])
    )


#: A clause that says what the opening name is to the speaker ("Coop is where I shop").
_WH_CLAUSE = frozenset("where what who whom whose".split())


def _shared(a: frozenset[str], b: frozenset[str]) -> tuple[int, float, float]:
    """Shared count, overlap coefficient (shared / smaller) and Jaccard of two word sets."""
    n = len(a & b)
    if not a or not b:
        return n, 0.0, 0.0
    return n, n / min(len(a), len(b)), n / len(a | b)


def _content_of(toks: Sequence[_Tok]) -> frozenset[str]:
    return frozenset(t.stem for t in toks if t.low not in _STOP and t.stem not in _STOP)


def _phrase(toks: Sequence[_Tok]) -> str:
    return " ".join(t.text for t in toks)


# ----------------------------------------------------------------- the signals


def _negation_flip(old: _Text, new: _Text, k: ReconcileKnobs) -> str | None:
    """One of the two denies what the other says: the same words, one negated. The
    people they are about are no words they share ("Gina is here for Jon no matter
    what" / "Jon is always here to support Gina"; "Maria: No, Maria didn't" /
    "Maria: Yeah John, Maria gets it")."""
    if old.negated == new.negated or old.for_a_while or new.for_a_while:
        return None
    if old.values and new.values and old.values.isdisjoint(new.values):
        return None  # "My dentist is not Dr. Meier" denies another value than Dr. Novak
    people = {_stem(w) for w in (old.subject, new.subject) if w and w != "self"}
    # the speaker named in a drawn fact, and the others of its "we" ("Andrew and
    # others"), are whom it is about too
    people |= {_stem(t.owner[5:]) for t in (old, new) if t.owner.startswith("self:")}
    people |= {"other"}
    n, overlap, _ = _shared(old.content - people, new.content - people)
    denying, denied = (new, old) if new.negated else (old, new)
    if n < 1 or overlap < k.negation_overlap or not _denies_shared(denying, denied, people):
        return None
    if _denies_less(denying, denied):
        return None
    return "contradiction: negation flipped"


def _denies_shared(denying: _Text, denied: _Text, people: set[str]) -> bool:
    """Whether the negation of ``denying`` reaches a word the two share (other than
    whom they are about): "I don't eat meat" / "I eat meat"; not a negation
    of something else beside the shared words, "Gina is here for Jon no matter
    what" / "Gina is here for Jon", "Audrey can't imagine life without them" /
    "They mean the world to Audrey"."""
    start = denying.negation_at
    if start is None:
        return False
    toks = denying.toks
    # "anymore", "any more", "is gone" deny what comes before them
    last = next((i for i in range(len(toks) - 1, start - 1, -1) if _denies_before(toks, i)), None)
    scope = toks[:last] if last is not None else toks[start + 1 :]
    return any(t.content and t.stem in denied.content and t.stem not in people for t in scope)


def _denies_before(toks: Sequence[_Tok], i: int) -> bool:
    """Whether ``toks[i]`` closes a negation of what comes before it: "Meat isn't
    for me anymore", "... any more", "My cat allergy is gone"."""
    low = toks[i].low
    return low in ("anymore", "gone") or (low == "more" and i > 0 and toks[i - 1].low == "any")


def _denies_less(denying: _Text, denied: _Text) -> bool:
    """Whether the negation of ``denying`` is of a narrower thing than ``denied``
    states: a word of its own between the negation and the last word the two share
    ("I stopped working late at Nokia" / "I work at Nokia"), where "I don't work at
    Nokia anymore" denies it all."""
    start = denying.negation_at
    if start is None:
        return False
    shared = [i for i, t in enumerate(denying.toks) if t.stem in denied.content and i > start]
    if not shared:
        return False
    between = denying.toks[start + 1 : shared[-1]]
    return any(t.content and t.stem not in denied.content for t in between)


#: How a text gives its subject's age: "I'm 34", "My son is 6", "I turned 35",
#: "Lina has just turned twelve". The number stands alone (no unit after it: "I'm 34
#: sure" is no age); a time or a conjunction may follow.
_AGE_NUMBER = r"[0-9]{1,3}|" + "|".join(
    sorted(
        _NUMBER_WORDS - {"hundred", "thousand"}
        | frozenset(
            "thirteen fourteen fifteen sixteen seventeen eighteen nineteen sixty seventy "
            "eighty ninety".split()
        )
    )
)
_AGE = re.compile(
    rf"\b(?:i'm|i am|is|turned|turning|turn)\s+(?P<n>{_AGE_NUMBER})"
    r"(?=$|[.,;!]|\s+(?:years?|now|today|yesterday|tomorrow|soon|this|last|next|on|in|and|but|so)\b)"
)
#: "... 6 years old", "seven years old": read only in a text that says "old".
_YEARS_OLD = re.compile(rf"\b(?P<m>{_AGE_NUMBER})\s+years?\s+old\b")


def _age(text: _Text) -> str | None:
    """The subject's age, when the text gives it."""
    ages = _ages_in(text.norm)
    return ages[0] if ages else None


@functools.lru_cache(maxsize=50_000)
def _ages_in(norm: str) -> tuple[str, ...]:
    """Every age a normalised text gives, in order; cached: each text is asked once
    per pair."""
    ages = [m["n"] for m in _AGE.finditer(norm)]
    if " old" in norm:
        ages += [m["m"] for m in _YEARS_OLD.finditer(norm)]
    return tuple(ages)


def _clock(numbers: frozenset[str]) -> bool:
    return any(_number_kind(w) == "time" for w in numbers)


def _hours(numbers: frozenset[str]) -> bool:
    """Whether a plain number among ``numbers`` may be an hour of the clock ("at 10")."""
    return any(w.isdigit() and 1 <= int(w) <= 24 for w in numbers)


def _number_change(old: _Text, new: _Text) -> str | None:
    a, b = _age(old), _age(new)
    if a and b and a != b and old.subject == new.subject != "":
        return f"contradiction: age changed '{a}' -> '{b}'"
    gone, came = old.numbers - new.numbers, new.numbers - old.numbers
    # an age counts nothing: "Lina has just turned twelve" is no new number of "We
    # have two daughters, Noor and Lina"; ages are compared only with ages (above)
    old_ages, new_ages = set(_ages_in(old.norm)), set(_ages_in(new.norm))
    if bool(old_ages) != bool(new_ages):
        gone, came = gone - old_ages, came - new_ages
    kinds = {_number_kind(w) for w in gone} & {_number_kind(w) for w in came}
    if (
        not kinds
        and new.changes
        and (_clock(gone) and _hours(came) or _clock(came) and _hours(gone))
    ):
        kinds = {"time"}  # "Our standup is at 9:30" / "Standup moves to 10"
    if not kinds or not old.content & new.content:
        return None
    if old.content <= new.content or new.changes:
        return (
            f"contradiction: number changed '{', '.join(sorted(gone))}' -> "
            f"'{', '.join(sorted(came))}'"
        )
    return None


def _template(old: _Text, new: _Text, k: ReconcileKnobs) -> str | None:
    a, b = old.slot, new.slot
    p = 0
    while p < min(len(a), len(b)) and a[p].stem == b[p].stem:
        p += 1
    s = 0
    while s < min(len(a), len(b)) - p and a[-1 - s].stem == b[-1 - s].stem:
        s += 1
    da, db = a[p : len(a) - s], b[p : len(b) - s]
    if not (1 <= len(da) <= k.template_max_span and 1 <= len(db) <= k.template_max_span):
        return None
    ca, cb = _content_of(da), _content_of(db)
    if p + s < 2 or not ca or not cb or ca & cb:
        return None
    numbers = any(t.number for t in da) and any(t.number for t in db)
    if not (numbers or new.changes or _functional(a[:p]) or _definite_role(a[:p], a[len(a) - s :])):
        return None
    # the words around the span keep every value: what differs is said of the
    # value, not a new one ("I switched programmes at KU Leuven" / "I study at KU
    # Leuven"); a name in the span is a value ("Bob now leads the Berlin team")
    named = any(t.text[:1].isupper() for t in (*da, *db))
    if not (numbers or named) and _keeps_values(old, new):
        return None
    return f"contradiction: value changed '{_phrase(da)}' -> '{_phrase(db)}'"


def _functional(prefix: Sequence[_Tok]) -> bool:
    """Whether the words before a slot say it holds one value ("is", "lives in", "named")."""
    words = list(prefix)
    # a title belongs to the value: "My dentist is Dr. Novak" holds one dentist
    while words and (words[-1].low in _DETERMINERS or words[-1].low in HONORIFICS):
        words.pop()
    if not words:
        return False
    last = words[-1]
    if last.low in _COPULAS or last.low in _NAMING:
        return True
    if last.low in _SLOT_PREPS and len(words) >= 2:
        before = words[-2]
        return before.low in _COPULAS or before.stem in _FUNCTIONAL_STEMS
    return False


def _definite_role(prefix: Sequence[_Tok], suffix: Sequence[_Tok]) -> bool:
    """The slot is the subject of a definite role: "<X> is the team lead"."""
    if any(t.low not in _DETERMINERS for t in prefix) or len(suffix) < 3:
        return False
    return suffix[0].low in _COPULAS and suffix[1].low in {"the", "our", "my", "their"}


#: How far an ending reaches: the value it leaves comes within this many words
#: after it ("I quit my job at Nokia"), or before it when nothing it acts on
#: follows ("Dr. Petrov retired, so ...", "Tom and I broke up").
_ENDS_AFTER = 4
_ENDS_BEFORE = 3


def _denied(endings: Sequence[tuple[int, bool, int | None, int]]) -> set[int]:
    """The positions of the denied ones of ``endings`` (:func:`_ending_words`) and of
    the words denying them: "didn't quit" affirms what "quit" would end, so neither
    word negates the text."""
    out: set[int] = set()
    for i, _, denial, start in endings:
        if denial is not None:
            out.update({denial, *range(start, i + 1)})
    return out


#: What one hands in to leave a job: "I handed in my notice at St. Mary's", "gave
#: notice", "submitted my resignation".
_QUITTING_NOUNS = frozenset({"notice", "resignation"})
_HANDING = frozenset(
    """hand hands handed handing give gives gave given giving put puts putting submit
    submits submitted submitting tender tendered tendering turn turned""".split()
)
#: Words between the handing and what is handed in: "handed in my notice".
_HANDED_IN = frozenset("in my our the".split())


#: The verbs an ending phrase may close ("moved out of", "gave up").
_ENDING_VERBS = _ENDINGS | _CHANGE_VERBS
#: The words that may close an ending: an ending word, a phrase's last word,
#: "back" of "not going back".
_ENDING_CLOSERS = _ENDINGS | {b for _, b in _END_PHRASES} | {"back"} | _QUITTING_NOUNS


def _ending_words(lows: Sequence[str]) -> Iterator[tuple[int, bool, int | None, int]]:
    """Every ending of ``lows``: (its last word's position, whether it closes a phrase,
    the position of a word denying it or None, where it begins with the verb it ends:
    "haven't moved out of" denies "moved out of" from "haven't")."""
    if _ENDING_CLOSERS.isdisjoint(lows):
        return  # most texts: no word that could close an ending
    for i, low in enumerate(lows):
        if i > 0 and _no_return(lows, i):
            yield i, True, None, i - 1  # a refusal to go back is itself the ending
            continue
        handed = _hands_in(lows, i)
        if handed is not None:
            yield i, True, denial_before(lows, handed), handed
            continue
        phrase = i > 0 and (lows[i - 1], low) in _END_PHRASES
        # the one it ends between the phrase's words: "Shopify laid me off", "let us go"
        parted = not phrase and i > 1 and lows[i - 1] in _MOVED_PEOPLE
        parted = parted and (lows[i - 2], low) in _END_PHRASES
        if not (phrase or parted or low in _ENDINGS):
            continue
        phrase = phrase or parted
        start = _opening(lows, i, phrase)
        while start > 0 and lows[start - 1] in _ENDING_VERBS:
            start -= 1
        yield i, phrase, denial_before(lows, start), start


#: What leads into "separate ways": "we went our separate ways".
_WAYS_LEAD = frozenset("our their went go gone going".split())


def _opening(lows: Sequence[str], i: int, phrase: bool) -> int:
    """Where the ending whose last word is at ``i`` begins: the word itself, a
    phrase's first word with the words that lead into it ("went our separate
    ways" from "went"), or the first word of a phrase with the one it ends between
    its words ("laid me off")."""
    if not phrase:
        return i
    if (lows[i - 1], lows[i]) not in _END_PHRASES:
        return i - 2  # "Shopify laid me off"
    start = i - 1
    if lows[start] == "separate":
        while start > 0 and lows[start - 1] in _WAYS_LEAD:
            start -= 1
    return start


def _hands_in(lows: Sequence[str], i: int) -> int | None:
    """Where the handing verb is, if ``lows[i]`` is a notice or a resignation handed in
    ("handed in my notice", "Kim gave Kim's notice"); not "gave us notice" (a landlord's
    notice to the speaker) or "I noticed"."""
    if lows[i] not in _QUITTING_NOUNS:
        return None
    for j in range(i - 1, max(-1, i - 4), -1):
        if lows[j] in _HANDING:
            return j
        if lows[j] not in _HANDED_IN and not lows[j].endswith("'s"):
            return None
    return None


#: Going back, which a negation makes an ending: "I'm not going back to Tesco".
_RETURNS = frozenset("go goes going went coming come".split())


def _no_return(lows: Sequence[str], i: int) -> bool:
    """Whether ``lows[i]`` closes a refusal to go back ("not going back", "won't go
    back", "never going back"): the speaker has left what follows. Not a trip: "We're
    not going back to Berlin for Christmas" says nothing of where they live."""
    if lows[i] != "back" or lows[i - 1] not in _RETURNS or "for" in lows[i + 1 :]:
        return False
    return any(w in ("not", "never") or w.endswith("n't") for w in lows[max(0, i - 4) : i - 1])


def _leaves(old: _Text, new: _Text, reach: int = _ENDS_AFTER) -> bool:
    """Whether a word of ``new`` that ends a value ends one of ``old``'s, named
    within ``reach`` words after it or just before it: "I sold my Volvo", "My
    Pixel 7 died", but not "Nokia moved our team to Espoo" or "Dr. Rossi changed
    my prescription", where the value acts on something else."""
    if not new.open_endings:
        return False
    if _couple_parted(old, new):
        return True  # "We split up in the summer" / "My partner is Lukas"
    toks = new.toks
    lows = [t.low for t in toks]
    one_day = _one_day(new)  # one day's event ceases nothing named in lower case
    for i, phrase in new.open_endings:
        low = lows[i]
        if _away_for_a_while(lows, i) or _places_it(old, toks, i) or _stops_by(lows, i):
            continue  # "I left Berlin for a week of holiday": back after it
        if _in_with(lows, i):
            continue  # "I moved in with Paul": to Paul, leaving no one
        after = toks[i + 1 : i + 1 + reach + _passed_over(lows[i + 1 : i + 1 + reach + 1])]
        if after and after[0].low == "to" and _no_return(lows, i):
            after = after[1:]  # where one will not go back to is left: "... back to Tesco"
        ceases = not one_day and (
            low in _CEASING or (phrase and (lows[i - 1], low) in _CEASE_PHRASES)
        )
        # "no longer" goes before the verb of what ends: "I no longer see Dr. Roth"
        verb = phrase and (lows[i - 1], low) == ("no", "longer")
        if _left_after(
            old,
            after,
            new.text,
            holds=low not in _CHANGE_VERBS,
            named=not ceases,
            verb=verb,
            disposes=low in _DISPOSING,
        ):
            return True
        start = _past_auxiliaries(lows, _opening(lows, i, phrase))
        gone_on = i + 1 < len(lows) and lows[i + 1] in _ELSEWHERE  # "is gone for the weekend"
        if (
            not gone_on
            and not _own_subject(lows, start)
            and not (low in _CHANGE_VERBS and _with_the_speaker(old, new, lows, start))
            and old.values & set(lows[max(0, start - _ENDS_BEFORE) : start])
            and (
                not _acts_on(toks[i + 1 :], change=low in _CHANGE_VERBS)
                # what the value acts on is the old fact's own thing: "Mrs. Patel sold
                # the flat to Mr. Duarte" / "Mrs. Patel owns the flat I rent"; or the
                # premises it serves from: "... sold the flat" / "My landlord is ..."
                or _acts_on_its_thing(old, new, toks[i + 1 :])
                or _gives_up_premises(new, i)
            )
        ):
            return True
    return False


#: Endings of a couple: "we split up", "we broke up", "we separated", "we got
#: divorced", "we went our separate ways".
_PARTINGS = frozenset({("split", "up"), ("broke", "up"), ("parted", "ways"), ("separate", "ways")})
_PARTING_WORDS = frozenset("separated divorced".split())
#: Words after a parting that make it a thing parted: "We split up the bill".
_PARTED_OBJECTS = frozenset("the our my your his her their its it them into".split())
#: What names the speaker's partner: "My partner is Lukas", "I'm dating Tom".
_PARTNER_NOUNS = frozenset(
    "partner boyfriend girlfriend husband wife spouse fiance fiancee fiancé fiancée".split()
)
_COUPLING = frozenset("dating married engaged".split())


def _couple_parted(old: _Text, new: _Text) -> bool:
    """Whether ``new`` tells of the speaker's couple parting ("We split up in the
    summer") and ``old`` names the speaker's partner ("My partner is Lukas"): "we"
    names the partner as surely as the name would."""
    lows = [t.low for t in new.toks]
    return any(
        _we_parted(lows, i, phrase, _past_auxiliaries(lows, _opening(lows, i, phrase)))
        for i, phrase in new.open_endings
    ) and _own_partner(old)


def _we_parted(lows: Sequence[str], i: int, phrase: bool, start: int) -> bool:
    """Whether the ending at ``i`` (opening at ``start``) is the speaker's couple
    parting, "we" alone for subject: "We split up in the summer", "we've
    separated", "Kim and others split up" (``ingest``'s "we"). Not "Tom and we
    ..." nor "they split up"."""
    parting = (lows[i - 1], lows[i]) in _PARTINGS if phrase else lows[i] in _PARTING_WORDS
    if not parting or start < 1 or lows[i + 1 : i + 2] and lows[i + 1] in _PARTED_OBJECTS:
        return False  # "We split up the bill", "we separated the recycling": no couple
    if lows[start - 2 : start] == ["and", "others"]:  # "we" as ``ingest`` writes it
        return start == 3
    return lows[start - 1] in ("we", "we've", "we're") and (start < 2 or lows[start - 2] != "and")


def _own_partner(old: _Text) -> bool:
    """Whether ``old`` names the speaker's partner: "My partner is Lukas", "I'm
    dating Tom", "I've been married to Sam for years", "Kim's partner is Lukas"
    drawn from Kim's words (whom "we split up" parts from). Not "seeing", which
    may be a doctor."""
    lows = [t.low for t in old.toks]
    mine = _MINE | {f"{old.own_name}'s"} if old.own_name else _MINE
    for i, w in enumerate(lows):
        if w in _PARTNER_NOUNS and i and lows[i - 1] in mine:
            return True
        if w in _COUPLING and i and lows[i - 1] in ("i'm", "am", "been"):
            return not {"i", "i'm", "i've"}.isdisjoint(lows[max(0, i - 3) : i])
    return False


#: Words after "stopped" that make it a visit: "stopped at ING", "stopped by Nokia".
_STOP_BY = frozenset("at by in into off over".split())


def _stops_by(lows: Sequence[str], i: int) -> bool:
    """Whether the ending at ``i`` is a stop on the way ("I stopped at ING to pay a
    bill", "stopped by Nokia to see old colleagues"), which ends nothing."""
    return lows[i] in ("stop", "stopped", "stops") and i + 1 < len(lows) and lows[i + 1] in _STOP_BY


def _own_subject(lows: Sequence[str], start: int) -> bool:
    """Whether the ending opening at ``start`` has a pronoun of its own for subject
    ("Niamh thinks I've lost it"): a value named before the pronoun is not what
    ends. Not one joined to a value ("Tom and I split up")."""
    return (
        start > 0
        and lows[start - 1] in SUBJECT_PRONOUNS
        and (start < 2 or lows[start - 2] != "and")
    )


def _past_auxiliaries(lows: Sequence[str], start: int) -> int:
    """Where the verb at ``start`` opens with its auxiliaries: the subject ends
    before "got divorced", "was laid off", "have moved"."""
    while start > 0 and lows[start - 1] in _AUXILIARIES:
        start -= 1
    return start


def _with_the_speaker(old: _Text, new: _Text, lows: Sequence[str], start: int) -> bool:
    """Whether the subject before ``start`` joins one of ``old``'s values to the
    speaker ("Mia and I moved in together", drawn as "Mia and Kim moved in together"
    from Kim's words): a value that moves with the speaker goes along, it is not
    left ("My partner is Mia"). "Tom and I split up" ends."""
    speaker = {"i", "we", new.own_name}
    if start < 2 or lows[start - 1] not in speaker or lows[start - 2] != "and":
        return False
    return bool(old.values & set(lows[max(0, start - 2 - _ENDS_BEFORE) : start - 2]))


def _moves_along(old: _Text, new: _Text) -> bool:
    """Whether a word of change in ``new`` moves one of ``old``'s values with the
    speaker ("Mia and I moved to Berlin" keeps "My partner is Mia")."""
    lows = [t.low for t in new.toks]
    for i, _ in new.open_endings:
        if lows[i] not in _CHANGE_VERBS:
            continue
        if _with_the_speaker(old, new, lows, _past_auxiliaries(lows, i)):  # "Mia and I have moved"
            return True
    return False


def _moves_in_with(old: _Text, new: _Text) -> bool:
    """Whether ``new`` moves in with someone ("I moved in with Paul, my new partner")
    and ``old`` fills no residence slot: such a move changes only where one lives
    ("I quit Philips and joined Ericsson" and "My partner is Paul" stay)."""
    if "with" not in new.named:
        return False  # most texts
    lows = [t.low for t in new.toks]
    moves_in = any(_in_with(lows, i) for i in range(len(lows)))
    return moves_in and (old.family is None or old.family[0] != "residence")


def _in_with(lows: Sequence[str], i: int) -> bool:
    """Whether the word at ``i`` is a move in with someone ("moved in with Paul")."""
    return lows[i].startswith("mov") and lows[i + 1 : i + 3] == ["in", "with"]


def _acts_on_its_thing(old: _Text, new: _Text, after: Sequence[_Tok]) -> bool:
    """Whether ``after`` opens on a thing (past its determiners) whose every word
    ``old`` names: the value that ends there ends its part in the old fact."""
    return _holds_thing(old, _object_words(after, new.text))


#: Words that carry an ending after its subject ("Paul and I got divorced", "Priya
#: was laid off"): the value before them is named before the ending.
_AUXILIARIES = frozenset("got get gets were was have has had been are is am".split())


#: What one is away for and back after ("left Berlin for a week", "for the holidays").
_WHILE = frozenset(
    """day days night nights week weeks weekend weekends month months holiday holidays
    vacation trip conference break while christmas""".split()
)
_WHILE_OPENERS = _DETERMINERS | _NUMBER_WORDS | frozenset("few couple of long short".split())


def _away_for_a_while(lows: Sequence[str], i: int) -> bool:
    """Whether the ending at ``i`` is for a while ("I left Berlin for a week of
    holiday", "We left Lisbon for the weekend", "I stopped going to Urban Gym for a
    month"), not for good or for another value ("Alice left Google for Meta", "I
    left Nokia for a startup")."""
    for k in range(i + 1, min(len(lows), i + 8)):
        if lows[k] == "for":
            rest = lows[k + 1 : k + 5]
            opened = list(itertools.dropwhile(lambda w: w in _WHILE_OPENERS, rest))
            return bool(opened) and opened[0] in _WHILE
    return False


#: Leaving a place at a time of the day ("I left the office early today", "left the
#: gym late again", "left home at 7"): one goes back the next day.
_LEAVING = frozenset("left leave leaves leaving".split())
_TIMES_OF_DAY = frozenset("early earlier late later".split())
#: What makes "early" or "late" a time of the year ("late last year", "early in 2023").
_OF_THE_YEAR = frozenset("this last next that in of".split())
_PARTS_OF_DAY = frozenset("morning afternoon evening night".split())


def _left_for_the_day(lows: Sequence[str], i: int) -> bool:
    """Whether the ending at ``i`` leaves a place at a time of the day, not for good:
    "I left the office early today", "I left work at 5", "left early in the
    morning"; not "I left Nokia late last year"."""
    if lows[i] not in _LEAVING:
        return False
    rest = [*lows[i + 1 : i + 6], ""]
    for k, w in enumerate(rest[:-1]):
        if w == "at" and _hour(rest[k + 1]):
            return True  # "at 5", "at 17:30", not an age ("We left Berlin at 30")
        if w in _TIMES_OF_DAY:  # "early in the morning" is of the day still
            day = any(x in _PARTS_OF_DAY for x in lows[i + k + 3 : i + k + 5])
            return rest[k + 1] not in _OF_THE_YEAR or day
    return False


def _hour(low: str) -> bool:
    """Whether ``low`` is a time of the day: "5", "17:30", "7pm" (not "30")."""
    hour = re.match(r"[0-9]+", low)
    return (
        bool(_CLOCK.fullmatch(low) or _TIME.fullmatch(low))
        and hour is not None
        and int(hour[0]) <= 24
    )


def _left_for_now(lows: Sequence[str], i: int) -> bool:
    """Whether the ending at ``i`` leaves a place or a thing for a time of the day or
    a while, to come back: "I left the office early today", "I left the dog with my
    parents for the weekend"."""
    return _left_for_the_day(lows, i) or (lows[i] in _LEAVING and _away_for_a_while(lows, i))


#: Verbs that take a thing somewhere, and leave it there or bring it back: the
#: thing stays the speaker's ("I moved my Golf to the other parking spot").
_PLACING = _LEAVING | frozenset("moved switched changed put".split())
#: What a thing is taken to or left at ("... to the garage", "... at home").
_PLACE_PREPS = frozenset("to at in on into onto".split())


def _places_it(old: _Text, toks: Sequence[_Tok], i: int) -> bool:
    """Whether the word of change or leaving at ``i`` takes one of ``old``'s values
    (its own thing, opened by a determiner: "my Golf", "my ING account", "my
    Vodafone SIM") somewhere that is no value: "I moved my Golf to the other
    parking spot", "I switched my ING account to paperless statements", "I left
    my Vodafone SIM at home" keep the Golf, ING and Vodafone. Not "I switched my
    Vodafone contract to O2" (a value is where it goes), "I left my Berlin flat
    in May" or "... at the end of the year" (a time, not a place)."""
    if toks[i].low not in _PLACING:
        return False
    rest = list(toks[i + 1 : i + 10])
    if not rest or not (rest[0].low in _DETERMINERS or _possessive(rest[0])):
        return False
    k = 1
    while k < len(rest) and rest[k].low in old.values:
        k += 1
    if k == 1:
        return False  # the value opens the thing: "my Golf", not "my car"
    if k < len(rest) and rest[k].content and rest[k].low not in _PLACE_PREPS:
        k += 1  # the value's thing: "my ING account", "my Vodafone SIM"
    if k >= len(rest) or rest[k].low not in _PLACE_PREPS:
        return False
    where = [t for t in rest[k + 1 :] if t.low not in _DETERMINERS and not _possessive(t)]
    head = next((t for t in where if t.content), None)
    if head is None or head.low in _TIME_HEADS or head.low in _NO_HEAD:
        return False
    # a place in lower case: no value (a capital, a number) up to the clause's end
    return all(t.text.islower() and not t.number for t in where[: where.index(head) + 1])


#: What one holds with a value and leaves with it ("I quit my job at Nokia",
#: "cancelled my membership at Basic-Fit"), as opposed to something of the value
#: one changes and stays ("I switched programmes at KU Leuven"), by stem.
_HOLDINGS = frozenset(
    """job account membership subscription contract lease place position role seat plan
    therapy treatment sessions number""".split()
)
_HOLDING_STEMS = frozenset(_stem(w) for w in _HOLDINGS)
_ON_THE_WAY = _DETERMINERS | _SLOT_PREPS | frozenset("from of out with".split())
#: Words in -ing that name things, not what one does ("I sold my wedding ring").
_ING_THINGS = frozenset(
    """thing things building buildings wedding ring morning evening spring string king
    ceiling clothing housing parking""".split()
)


def _activity(low: str) -> bool:
    """Whether ``low`` is a verb in -ing: what one stops doing with a value ("stopped
    seeing", "quit working at", "gave up going to"), the value coming after it."""
    return len(low) > 4 and low.endswith("ing") and low not in _ING_THINGS


def _passed_over(lows: Sequence[str]) -> int:
    """How many of the words after an ending its reach passes over: the activity
    right after it, the quantity opening what it acts on, a thing held with the
    value and the word to it, and people's titles
    ("stopped seeing Dr. Silva" reaches Silva as "left Silva" would, "moved all
    my money from Sparkasse" as "moved my money from Sparkasse")."""
    quantity = sum(1 for _ in itertools.takewhile(lambda w: w in _QUANTITIES, lows))
    # what one holds with the value, and the word to it: "stopped therapy with Maria"
    held = 2 if len(lows) > 1 and _stem(lows[0]) in _HOLDING_STEMS and lows[1] in _WITH_IT else 0
    return (
        int(bool(lows) and _activity(lows[0]))
        + quantity
        + held
        + sum(w in HONORIFICS for w in lows)
    )


#: The words from a thing held to the value it is held with ("therapy with Maria").
_WITH_IT = frozenset("with at from of".split())


#: Where one leaves from: "Priya left the company" ends Priya's place as well as
#: "Priya left" does, where "Nokia moved our team" acts on the team.
_PLACES = (
    frozenset(
        _stem(w) for w in "company firm business practice clinic school country city town".split()
    )
    | _HOLDING_STEMS
)


_THEIR_OWN = frozenset("his her their its".split())
#: Words of quantity before what an ending acts on ("Nokia laid off half my team").
_QUANTITIES = _NUMBER_WORDS | frozenset("half all most some many several part much of".split())


#: The words after what a change moves, before where it moves it: "switched Pickle
#: to Greenside Vets", "moved the Clio onto a new policy".
_MOVED_TO = frozenset("to onto into over".split())


#: The people a value moves on ("Nokia moved me to Espoo", "transferred us").
_MOVED_PEOPLE = frozenset("me us him her them".split())


def _acts_on(after: Sequence[_Tok], change: bool = False) -> bool:
    """Whether an ending is followed by something it acts on (a determiner and a
    thing, "changed my prescription", "laid off half my team"), not by a place it
    is left from or nothing. ``change``: the ending is a word of change ("moved",
    "switched"), which a person after it undergoes ("Nokia moved me to Espoo");
    one who is left is left ("Priya left us for Google")."""
    if len(after) > 1 and _activity(after[0].low):
        after = after[1:]  # what one stops doing it to: "Tesco stopped selling my cereal"
    k = 0
    while k < len(after) and (after[k].low in _QUANTITIES or after[k].number):
        k += 1
    if k and k < len(after) and after[k].content:
        return True  # "laid off 200 people"
    after = after[k:]
    if after and after[0].low in _THEIR_OWN:
        return True  # the value's own thing: "Dr. Weber moved his practice", "Tom lost his job"
    if after and after[0].low in _MOVED_PEOPLE and change:
        return True  # "Nokia moved me to the Espoo office": the value moves a person on
    if change and _plural_thing(after):
        return True  # the value changes a kind of its things: "Lea switched jobs"
    if not after or not (after[0].low in _DETERMINERS or _possessive(after[0])):
        return False
    thing = next((t for t in after[1:] if t.content), None)
    return thing is None or _stem(thing.low) not in _PLACES


#: Endings that part with a thing one owns: "Finally replaced my ancient laptop",
#: "Sold my car".
_DISPOSING = frozenset("replaced sold traded swapped upgraded scrapped ditched".split())


def _left_after(
    old: _Text,
    after: Sequence[_Tok],
    text: str,
    holds: bool = True,
    named: bool = True,
    verb: bool = False,
    disposes: bool = False,
) -> bool:
    """Whether one of ``old``'s values is what the ending before ``after`` leaves:
    named before any other thing the ending could act on. ``holds``: what one
    holds with a value is left with it ("I quit my position at Nokia"); after a
    word of change it is what changes ("I switched positions on the Tigers").
    ``named``: only a value named as one counts (a capital, a number); else, after
    an ending that ceases what one does (:data:`_CEASE_PHRASES`), a thing in lower
    case that ``old`` names counts too ("Dropped out of pottery" / "I go to pottery
    lessons after work"; not "I gave up my bus seat" / "I commute by bus").
    ``text``: the new text ``after`` is read from. ``verb``: the ending stands
    before the verb of what it ends, which is passed over unless it is the old
    fact's own thing ("I no longer see Dr. Roth"; "I'm no longer vegan").
    ``disposes``: the ending parts with a thing one owns (:data:`_DISPOSING`), and
    one's own thing that ``old`` gives the value of is left in lower case too
    ("Finally replaced my ancient laptop" / "My laptop is an old Dell XPS 13")."""
    values = old.values
    for i, t in enumerate(after):
        if (i == 0 and _activity(t.low)) or t.low in HONORIFICS:
            continue  # "stopped seeing Dr. Silva", "no longer volunteering at Oxfam"
        if i == 0 and verb and t.low not in values and t.stem not in old.content:
            continue
        if i == 1 and t.low == "to" and _activity(after[0].low):
            continue  # where one went is what one stops going to: "gave up going to Tesco"
        if t.low in values:
            # "moved my Nokia shares", "left the Nokia party", "cancelled my Iron
            # Temple class": the ending acts on a thing the value only names
            end = next((j for j in range(i, len(after)) if after[j].low not in values), None)
            if not holds and end is not None and after[end].low in _MOVED_TO:
                return False  # what a change moves keeps its name: "switched Pickle to a new vet"
            # a value the text closes with a comma or a stop is left whole: "Finished
            # Dune, started The Three-Body Problem" ("started" names no Dune thing)
            if (
                end is None
                or not _modified(after[end])
                or not _one_space(after[end - 1 : end + 1], text)
            ):
                return True
            # unless the thing is the old fact's own: "Finished the Italian cooking
            # course" / "I'm doing an evening course in Italian cooking"
            return _holds_thing(old, _thing_words(after[end:], text))
        if t.low in _ELSEWHERE:
            return False  # where one goes: "We moved to Berlin" leaves no Berlin
        held = _stem(t.low) in _HOLDING_STEMS
        # after a word of change, what one holds is left only from the value ("moved
        # my accounts from ING"), not changed on it ("switched positions on the Tigers")
        if held and not holds:
            held = i + 1 < len(after) and after[i + 1].low in ("from", "out")
        # a possessive is a determiner, and so is a quantity: "Britt replaced Britt's
        # OnePlus 11", "moved all my money from Sparkasse"
        if t.low in _ON_THE_WAY or held or t.low.endswith("'s") or t.low in _QUANTITIES:
            continue
        # what is taken from a value leaves it: "took over the team from Omar"
        if t.content and after[i + 1 : i + 2] and after[i + 1].low == "from":
            continue
        if t.content:
            thing = _thing_words(after[i:], text)
            if disposes and t.text == t.low and _own_thing_of(old, after[:i], thing):
                return True
            return not named and t.text == t.low and _holds_thing(old, thing)
    return False


def _own_thing_of(old: _Text, before: Sequence[_Tok], thing: Sequence[_Tok]) -> bool:
    """Whether ``thing``, which ``before`` opens as one's own ("my ancient laptop",
    "the old car"), is the thing one's own of which ``old`` names ("My laptop is
    an old Dell"): its last word after "my" or "our" there, a word or two apart."""
    if not thing or not any(t.low in _OWN_OPENERS or t.low == "the" for t in before):
        return False
    head = thing[-1].stem
    toks = old.toks
    return any(
        t.low in _OWN_OPENERS and any(u.stem == head for u in toks[j + 1 : j + 4])
        for j, t in enumerate(toks)
    )


#: Words after a value that are no thing it names: when, how and why it ended
#: ("I quit Nokia today", "I left Nokia because of the commute").
_NO_HEAD = frozenset(
    """today tonight yesterday early late again already recently finally forever
    behind altogether completely entirely last ago because since though although
    once until while unless""".split()
)
#: What one holds or lives in, left with the value that names it ("my Iron Temple
#: membership", "moved out of our Berlin flat").
_LEFT_WITH = _HOLDING_STEMS | frozenset(
    _stem(w) for w in "flat apartment house home studio".split()
)

#: What one holds with a value or an activity and ends with it ("I quit piano
#: lessons", "my Iron Temple membership"): no other thing than the value's.
_HELD_WITH = _LEFT_WITH | frozenset(
    _stem(w) for w in "lesson lessons class classes course courses".split()
)


def _one_space(pair: Sequence[_Tok], text: str) -> bool:
    """Whether the two tokens of ``pair`` stand one space apart in ``text`` (no comma,
    stop or semicolon between them: "pottery; bookkeeping", "Dune, started")."""
    return f"{pair[0].text} {pair[1].text}" in text


def _thing_words(toks: Sequence[_Tok], text: str) -> list[_Tok]:
    """The words naming the thing that opens ``toks``: content words in a row (one
    space apart in ``text``, so "pottery; bookkeeping" is two things), up to a
    word of when or why ("the band last month", "the office early")."""
    out: list[_Tok] = []
    for t in toks:
        if not t.content or t.low in _NO_HEAD or t.low in _WHEN_GONE:
            break
        if out and not _one_space((out[-1], t), text):
            break
        out.append(t)
    return out


def _object_words(after: Sequence[_Tok], text: str) -> list[_Tok]:
    """:func:`_thing_words` of what follows a verb, past its determiners ("my bus
    seat" -> bus, seat)."""
    j = next((n for n, t in enumerate(after) if t.low not in _DETERMINERS), len(after))
    return _thing_words(after[j:], text)


def _holds_thing(old: _Text, thing: Sequence[_Tok]) -> bool:
    """Whether ``old`` names every word of ``thing`` (and there is one)."""
    return bool(thing) and all(t.stem in old.content for t in thing)


def _acts_on_another_thing(old: _Text, new: _Text) -> bool:
    """Whether ``new``'s update cue acts on another thing than ``old``'s: a thing
    that ``old``'s words only name ("I bought a new guitar strap" / "I play
    guitar"), or, after an ending (not a word of change), a thing ``old`` does not
    name at all ("I left my umbrella on the train" tells of the umbrella, not of "I
    take the train to work"). "I left the band last month" still ends "I play in a
    band with friends", "We switched our energy to Engie" still changes "Our
    electricity comes from British Gas", and "I bought a Tesla" still changes "I
    drive a Golf"."""
    cue = new.cue
    lows = [t.low for t in new.toks]
    words = cue.split() if cue else []
    if not words or words[0] not in lows:
        return False
    at = lows.index(words[0]) + len(words) - 1  # "gave up my bus seat": after "up"
    if lows[at : at + 1] != words[-1:]:
        return False
    after = new.toks[at + 1 :]
    thing = _object_words(after, new.text)
    head = thing[-1] if thing and cue not in _MARKER_NEUTRAL else None  # a verb's thing
    if head is not None and head.stem not in old.content and _stem(head.low) not in _HELD_WITH:
        if any(t.stem in old.content or t.low in old.values for t in thing[:-1]):
            return True  # old's word names another thing: "a new guitar strap"
    if cue in _CHANGE_VERBS and not new.values and _plural_thing(after):
        # a kind of thing changed, none the old text names: "I switched rackets this
        # season" / "I play tennis on Saturdays" (not "I switched gyms" / "My gym is
        # FitX", nor "I switched jobs": a holding)
        head = after[0]
        return head.stem not in old.content and _stem(head.low) not in _HELD_WITH
    if cue in _ENDINGS and cue not in _CHANGE_VERBS and _bare_activity(after):
        # what one stops doing to another thing: "I quit practising scales" / "I
        # play the piano" (not "I quit drinking coffee" / "I drink coffee daily")
        return not _holds_thing(old, _thing_words(after[1:], new.text))
    if cue not in _ENDINGS or cue in _CHANGE_VERBS or not _acts_on(after):
        return False
    return bool(thing) and not _holds_thing(old, thing)


#: Words of getting a thing ("got", "bought a", "picked up").
_GETS = frozenset("got get gets getting bought buy acquired picked ordered".split())
#: Words that bring a thing in: "new", and words of getting.
_BRINGING = _GETS | {"new"}
#: Words of an amount before a thing brought in ("some", "lots of", "a few").
_AMOUNTS = _QUANTITIES | frozenset("lots lot few more plenty bunch couple".split())


def _brings_many(toks: Sequence[_Tok]) -> bool:
    """Whether a word bringing a thing in brings several, or an amount of one: "new
    offers", "lots of kids' books", "some new pieces for my store", "got some good
    advice". Such things are added beside what one has; a single value changes to
    one ("a new job", "got a puppy", "my new home")."""
    for i, t in enumerate(toks):
        if t.low not in _BRINGING:
            continue
        # an amount before "new" counts as after a word of getting: "some new routines"
        j, amount = i + 1, t.low == "new" and i > 0 and toks[i - 1].low in _AMOUNTS
        while j < len(toks) and (
            toks[j].low in _AMOUNTS
            or (toks[j].low == "a" and j + 1 < len(toks) and toks[j + 1].low in _AMOUNTS)
        ):
            amount, j = True, j + 1
        j += j < len(toks) and toks[j].low == "new"  # "got some new offers"
        thing = toks[j : j + 1]
        if thing and thing[0].content and (amount or _plural_thing(thing)):
            return True
    return False


def _plural_thing(after: Sequence[_Tok]) -> bool:
    """Whether ``after`` opens on a thing in the plural with no determiner, the way a
    kind is changed: "switched rackets", "changed shifts", "switched banks"."""
    if not after:
        return False
    head = after[0]
    return (
        head.content
        and head.text.islower()
        and len(head.low) > 3
        and head.low.endswith("s")
        and not head.low.endswith("ss")
        and not _activity(head.low)
    )


def _bare_activity(after: Sequence[_Tok]) -> bool:
    """Whether ``after`` opens on an activity and a thing in lower case with no
    determiner: "quit practising scales", "stopped eating sugar"."""
    return (
        len(after) >= 2 and _activity(after[0].low) and after[1].content and after[1].text.islower()
    )


def _modified(tok: _Tok) -> bool:
    """Whether ``tok``, right after a value, is the thing the value names ("Nokia
    *shares*", "Netflix *password*"): a word in lower case that says no time or
    reason, and no holding or home one leaves with the value ("my Iron Temple
    *membership*", "our Berlin *flat*")."""
    if not tok.content or not tok.text.islower():
        return False
    if tok.low in _NO_HEAD or tok.low in _WHEN_GONE:
        return False
    # a home's or a holding's own thing is another thing: "our Munich flat's energy
    # supplier", not "our Munich flat"
    return tok.low.endswith("'s") or _stem(tok.low) not in _LEFT_WITH


def _keeps_values(old: _Text, new: _Text) -> bool:
    """Whether ``new`` names every value of ``old`` (anywhere, its first word too) and
    leaves none of them: it says more about the same value, it changes none ("Rex,
    my dog, turned five today" / "My dog is called Rex")."""
    return bool(old.values) and old.values <= new.named and not _leaves(old, new)


def _brings_nothing(old: _Text, new: _Text) -> bool:
    """Whether every value ``new`` names is one ``old`` holds too and ``new`` leaves
    none of them: a change brings a value the old fact lacks or leaves one it has,
    so "My new home is in Madrid" changes no "I'm a Real Madrid fan". A value the
    old text itself left is not one it holds: "I'm back in Berlin now" changes
    "We moved from Berlin to Munich last year". Nor does one that goes from a thing
    of the old fact to another: "I switched from medicine to biology at Charité"."""
    if not new.values or old.ends or _leaves(old, new) or _from_thing(old, new):
        return False
    return new.values <= old.named


#: The nouns that name each slot family's attribute ("my new flat", "a new job"):
#: those that open its slot before a copula (:data:`_SLOT_NOUNS`) and more.
_FAMILY_NOUNS = {
    family: frozenset(_stem(w) for w in f"{_SLOT_NOUNS[family]} {more}".split())
    for family, more in (
        ("residence", "house place address city town country"),
        ("employer", "employer company firm position role work"),
    )
}


def _new_of_another_kind(old: _Text, new: _Text) -> bool:
    """Whether ``new`` names the thing it has a new one of ("my new phone", "our new
    TV", "my new running shoes"), or gets one ("I bought a new Audi"), and ``old``
    fills a slot family of another: "My new TV is an LG" is no change of "I work at
    Samsung", however near the model puts a TV and Samsung. One never gets a value
    of a slot family but by its noun: "My new flat is in Hamburg", "New job, new
    city: I'm at Bosch now", "We bought a house in Porto" and "I got a job at
    Meta" name the slot's own thing."""
    if old.family is None or _BRINGING.isdisjoint(new.named):
        return False
    nouns = _FAMILY_NOUNS[old.family[0]]
    toks = new.toks
    things = [_new_thing(toks[i + 1 : i + 4]) for i, t in enumerate(toks) if t.low == "new"]
    # what one gets or buys: "I bought a new Audi", "I got a new iPad Pro for work"
    things += [
        list(itertools.takewhile(lambda u: u.low not in _SLOT_PREPS, toks[i + 2 : i + 6]))
        for i, t in enumerate(toks[:-1])
        if t.low in _GETS and toks[i + 1].low in _DETERMINERS
    ]
    things = [thing for thing in things if thing]
    return bool(things) and not any(
        u.stem in nouns or u.stem in old.content for thing in things for u in thing
    )


def _another_getting(old: _Text, new: _Text) -> bool:
    """Whether ``old`` and ``new`` each tell of getting a thing and share no word
    but the getting and when: "Picked up my Fiat Panda from the dealer yesterday"
    / "Picked up my new VanMoof from the bike shop on Saturday" are two things got,
    neither a change of the other. Getting a thing both name is one ("Got my new
    Vueling frequent flyer card" / "Got my new SAS frequent flyer card"), and so
    is getting one in place of another ("I sold the Tesla and bought a Polestar")."""
    if _GETS.isdisjoint(new.named) or _GETS.isdisjoint(old.named) or old.ends or new.ends:
        return False  # most pairs: no getting on one side
    if not (_gets_a_thing(old) and _gets_a_thing(new)):
        return False
    shared = old.content & new.content
    return all(w in _GETTING_WORDS for w in shared)


def _gets_a_thing(text: _Text) -> bool:
    """Whether a word of getting takes a thing in ``text``: "bought a", "picked up
    my", "got our"."""
    toks = text.toks
    for i, t in enumerate(toks[:-1]):
        if t.low not in _GETS:
            continue
        j = i + 2 if toks[i + 1].low == "up" else i + 1
        if j < len(toks) and (toks[j].low in _DETERMINERS or _possessive(toks[j])):
            return True
    return False


def _new_thing(after: Sequence[_Tok]) -> list[_Tok]:
    """The words of the thing after "new": in lower case, or a short acronym ("TV")."""
    return list(
        itertools.takewhile(
            lambda u: u.content and (u.text.islower() or (u.text.isupper() and len(u.text) <= 3)),
            after,
        )
    )


def _names_another(old: _Text, new: _Text) -> bool:
    """Whether ``new`` names a value of its own apart from ``old``'s: a run of
    capitalised words none of which ``old`` names ("I'm on an Asus Zenbook now" /
    "My laptop is a MacBook Pro"); "ETH Zurich" extends "Zurich" instead."""
    run: list[str] = []
    for i, t in enumerate((*new.toks, None)):
        if t is not None and i and t.low in new.values and not t.number:
            run.append(t.low)
            continue
        if run and not old.values & set(run):
            return True
        run = []
    return False


#: Words between a word of change and the value it goes to ("moved back to Berlin").
_TOWARDS = _DETERMINERS | _SLOT_PREPS | frozenset("back over finally into up".split())


def _changes_to_another(old: _Text, new: _Text, cue: str) -> bool:
    """Whether the word of change in ``new`` goes to a value ``old`` does not name:
    "I moved back to Berlin after two years in Paris" names Paris, the old home,
    but moves to Berlin. Not when what changes is the speaker's thing the old value
    only names: "My team at Nokia switched to Slack" leaves "I work at Nokia"."""
    word = cue.split()[-1]
    lows = [t.low for t in new.toks]
    if word not in lows or _names_whose_thing(old, new.toks[: lows.index(word)]):
        return False
    at = lows.index(word)
    # (the cue may be the "from" itself: "Rolled my super over from Hostplus to ...")
    if _from_to(old, new, lows, at - (word == "from")):
        return True  # "I ported my number from Vodafone to O2"
    if word in _CHANGE_ADVERBS and at and _another_value(old, new, new.toks[at - 1]):
        return True  # the value is said before "now": "I fly Iberia now that Lufthansa ..."
    for t in new.toks[at + 1 :]:
        if t.low in _TOWARDS:
            continue
        return _another_value(old, new, t)
    return False


def _from_to(old: _Text, new: _Text, lows: Sequence[str], at: int) -> bool:
    """Whether after the word of change at ``at`` (``lows``: ``new``'s words, folded)
    the text goes from one of ``old``'s values to another value: "I ported my
    number from Vodafone to O2", "I moved my savings from ING to N26"; or, named in
    lower case, from a thing ``old`` says to one it does not: "I switched from
    medicine to biology" / "I study medicine at Charité"."""
    found = _from_value_to(old, new, lows, at)
    return found if found is not None else _from_thing(old, new, at)


def _from_value_to(old: _Text, new: _Text, lows: Sequence[str], at: int = -1) -> bool | None:
    """Whether ``new`` (``lows``: its words, folded), after its word at ``at``, goes
    from one of ``old``'s values to another value ("Rolled my super over from
    Hostplus to Australian Ethical"); None when it names none of them after a
    "from"."""
    toks = new.toks
    for k in range(at + 1, len(toks) - 1):
        if lows[k] == "from" and lows[k + 1] in old.values:
            later = lows[k + 1 :]
            if "to" not in later:
                return False
            to = k + 1 + later.index("to")
            return to + 1 < len(toks) and _another_value(old, new, toks[to + 1])
    return None


def _from_thing(old: _Text, new: _Text, at: int = 0) -> bool:
    """Whether ``new`` goes, after its word at ``at``, from a thing in lower case
    that ``old`` says to one ``old`` does not: "I switched from medicine to
    biology" / "I study medicine at Charité" (the value both name stays, the
    thing changes)."""
    toks = new.toks
    for k in range(at + 1, len(toks) - 3):
        source, to, target = toks[k + 1], toks[k + 2], toks[k + 3]
        if (
            toks[k].low == "from"
            and source.content
            and source.text == source.low
            and source.stem in old.content
            and to.low == "to"
            and target.content
            and target.stem not in old.content
        ):
            return True
    return False


def _another_value(old: _Text, new: _Text, t: _Tok) -> bool:
    """Whether ``t`` is a value of ``new`` that ``old`` does not hold."""
    own = t.low.removesuffix("'s")  # "sold the Volvo's tyres" sells no other value
    return t.low in new.values and not t.number and own not in old.values


def _names_whose_thing(old: _Text, subject: Sequence[_Tok]) -> bool:
    """Whether ``subject`` (the words before a word of change) is the speaker's
    thing that one of ``old``'s values only names: "My team at Nokia", "Our Berlin
    flat", "My Volvo dealer", not "My Volvo" nor "After five years at Nokia I"; the
    author's possessive is theirs ("Kim's French teacher" in a fact drawn from Kim's
    "My French teacher")."""
    mine = ("my", "our", f"{old.own_name}'s") if old.own_name else ("my", "our")
    if not subject or subject[0].low not in mine:
        return False
    named = [t for t in subject if t.low in old.values]
    things = [t for t in subject[1:] if t.content and t.low not in old.values]
    return bool(named) and bool(things)


def _change_marker(old: _Text, new: _Text) -> str | None:
    marked = new.change_verbs - old.change_verbs
    if not marked and not (new.changes and not old.changes) or new.adds or _one_off(new):
        return None
    if _keeps_values(old, new) and not _names_another(old, new):
        return None
    if _value_changes_another(old, new, marked):
        return None
    # what the two say, not whom about or that it is new: "Vera's new gym is Pulse
    # Fitness" and "New job: Vera is at Adidas now" share nothing
    said = _MARKER_NEUTRAL | {new.subject, old.subject}
    n, overlap, _ = _shared(old.content - said, new.content - said)
    if n >= 2 and overlap >= 0.5 and new.content - old.content:
        word = sorted(marked)[0] if marked else "now"
        return f"contradiction: change marker '{word}'"
    return None


def _value_changes_another(old: _Text, new: _Text, marked: frozenset[str]) -> bool:
    """Whether ``old``'s value is who makes the change, and what it changes is a
    thing ``old`` does not name: "Dr. Meier changed my appointment to Friday" leaves
    "My dentist is Dr. Meier", as "Dr. Smith changed Kim's prescription" leaves
    "Kim's doctor is Dr. Smith". "I changed my dentist to Dr. Weber" still changes it."""
    lows = [t.low for t in new.toks]
    at = next((i for i, w in enumerate(lows) if w in marked), None)
    if at is None or not old.values & set(lows[:at]) or old.values & set(lows[at + 1 :]):
        return False
    after = new.toks[at + 1 :]
    if not _acts_on(after, change=True):
        return False
    thing = _object_words(after[1:] if _possessive(after[0]) else after, new.text)
    return bool(thing) and not _holds_thing(old, thing)


def _possessive(tok: _Tok) -> bool:
    """Whether ``tok`` is a name's possessive ("Kim's"), which opens a thing as a
    determiner does."""
    return tok.low.endswith("'s") and tok.text[:1].isupper()


#: Words that set a past state in a period of its own ("I had a cat when I was a
#: kid", "I lived in Berlin as a student", "back in 2015"): another time, not an end.
_PERIOD = frozenset("when while as back during growing".split())


def _ended(old: _Text, new: _Text) -> str | None:
    """``new`` says in the past what ``old`` says in the present: "I used to be a
    software engineer" / "I'm a software engineer", "I lived in Berlin for two
    years" / "I live in Berlin". The state has ended, so it is a change, not a
    repeat or a detail that would keep the old fact current. A past state set in a
    period of its own ("I had a cat when I was a kid") ends nothing."""
    if not new.past or old.past or not old.content or not new.states:
        return None
    lows = [t.low for t in new.toks]
    if any(w in _PERIOD for w in lows):
        return None
    # a moment in the past is an event then ("I loved the sushi we had yesterday"),
    # unless the state lasted until it ("I lived in Berlin until last year")
    if "until" not in lows and (_one_day(new) or "ago" in lows or "last" in lows):
        return None
    said = _predicate(old)
    keys = [_key(t) for t in new.toks]
    n = len(said)
    if n and any(keys[i : i + n] == said for i in range(len(keys) - n + 1)):
        return "contradiction: said in the past, the state has ended"
    return None


#: What opens a statement before its predicate: the speaker and the verb of being
#: or having ("I'm", "I have", "we are").
_OPENING = frozenset("i i'm we we're am is are 'm have has do does".split()) | _FILLERS


def _predicate(text: _Text) -> list[str]:
    """The words after the statement's opening, as :func:`_key` s: "I have a dog
    named Rex" -> a dog named rex."""
    toks = list(text.toks)
    while toks and toks[0].low in _OPENING:
        toks.pop(0)
    return [_key(t) for t in toks]


def _key(t: _Tok) -> str:
    """A token's stem, marked when possessive ("a teacher's pet" is no "a teacher")."""
    return t.stem + ("'s" if t.low.endswith("'s") else "")


def _family_slot(
    toks: Sequence[_Tok],
) -> tuple[str, tuple[str, ...], frozenset[str], str] | None:
    """(family, subject stems, object content, object phrase) of the first slot trigger.

    A state in the past ("I lived in Paris for two years", "worked at Nokia") is
    history, no slot: it changes nothing of the present one. A move is not a
    state: "I moved to Berlin" says where one lives now."""
    if _FAMILY_STEMS.isdisjoint([t.stem for t in toks]):
        return None  # most texts: no word that opens a slot
    for i in range(len(toks) - 1):
        family = _FAMILY_OF.get((toks[i].stem, toks[i + 1].low))
        if family is None and i + 2 < len(toks) and toks[i + 1].low in _COPULAS:
            # a slot named by its noun: "My new home is in Porto", "my job is at Bosch",
            # read without the copula ("my new home in Porto"); this pass returns below
            family = _NOUN_FAMILY_OF.get((toks[i].stem, toks[i + 2].low))
            if family is not None:
                toks = (*toks[: i + 1], *toks[i + 2 :])
            elif _name_opens(toks, i + 2):
                # the noun's value named right after it: "My new workplace is Meta",
                # "my home is Lisbon"; not "my home is a mess", "my job is teaching"
                family = _BARE_NOUN_FAMILY_OF.get(toks[i].stem)
        if family is None and toks[i].stem == "work" and toks[i + 1].low == "as":
            # the role between: "I work as a data analyst at Ocado", read as "work at"
            at = _employer_after_role(toks, i + 2)
            if at is not None:
                family, toks = "employer", (*toks[: i + 1], *toks[at:])
        if family is None and i and toks[i - 1].low == "new":
            # "our new apartment in Lisbon": a new one of the slot's noun, where it is
            family = _NOUN_FAMILY_OF.get((toks[i].stem, toks[i + 1].low))
        if family is not None and toks[i].stem == "day" and (i == 0 or toks[i - 1].low != "first"):
            family = None  # "my first day at", not "a day at the beach"
        if family is not None:
            if _past_state(toks, i):
                return None
            if denial_before([t.low for t in toks], i) is not None:
                return None  # "I didn't move to Lisbon after all": no slot filled
            # "I have lived in Lisbon" has the subject of "I live in Berlin"
            # and a subject that includes the speaker is the speaker's ("We moved to
            # Lisbon", "The user and others relocated", drawn by ingest from "we")
            said = [t for t in toks[:i] if t.low not in _FILLERS | _PERFECT]
            lows = [t.low for t in said]
            # "I've been working for ...": the perfect's "I've" is the speaker still
            speaker = not _SPEAKER.isdisjoint(t.low for t in toks[:i]) or "user" in lows
            # "my new job at", "my first day at": the speaker's, unless a relation's
            # ("my sister's new job at")
            mine = bool(_MINE & set(lows)) and not _RELATION_STEMS & {t.stem for t in said}
            speaker = speaker or mine
            subject = ("i",) if speaker else tuple(t.stem for t in said)
            obj = toks[i + 2 :]
            return family, subject, _content_of(obj), _phrase(obj)
    return None


#: How many words a role may take between "work as" and its employer.
_ROLE_WORDS = 5


def _employer_after_role(toks: Sequence[_Tok], start: int) -> int | None:
    """Where "at" or "for" follows a role of a few words from ``start`` ("a data
    analyst at Ocado"), or None ("as a volunteer on weekends")."""
    for j in range(start, min(start + _ROLE_WORDS + 1, len(toks) - 1)):
        if toks[j].low in ("at", "for"):
            return j if j > start else None
        if not toks[j].text.isalpha():
            return None
    return None


def _slot_owner(subject: tuple[str, ...], author: str | None) -> tuple[str, ...]:
    """Whose slot the words before it name: the speaker (``("i",)``, with the
    author's name when known: ``("i:kim",)``), also when they name the memory's
    author and no relation of theirs ("Kim works at", "On 2 January was Kim's
    first day at" written by Kim; not "Kim's husband works at"); else the words
    themselves."""
    if not author:
        return subject
    name = _stem(author.split()[0].casefold())
    if subject == ("i",) or (name in subject and not _RELATION_STEMS & set(subject)):
        return (f"i:{name}",)  # the speaker, who is this author
    return subject


_RELATION_STEMS = frozenset(_stem(r) for r in RELATIONS)


def _same_owner(a: tuple[str, ...], b: tuple[str, ...]) -> bool:
    """Whether two slots' owners are one: the same words; the speaker on both sides,
    of one author or one unknown (never two authors' "I"); or one name alone on one
    side that the other names with no relation ("Kim works at" / "On 2 January was
    Kim's first day at")."""
    if a == b:
        return True
    speakers = {x[0] for x in (a, b) if len(x) == 1 and x[0].partition(":")[0] == "i"}
    if len(speakers) == 2:  # the speaker on both sides: one author, or one unknown
        return "i" in speakers
    one, other = (a, b) if len(a) == 1 else (b, a)
    return (
        len(one) == 1
        and one != ("i",)
        and one[0] not in _STOP
        and one[0] in other
        and not _RELATION_STEMS & set(other)
    )


#: The speaker in a slot's subject ("the user" too, in facts drawn by ``ingest``).
_SPEAKER = frozenset("i we i've we've i'm we're i'd we'd i'll we'll".split())
#: The speaker's own, before a slot: "my new job at", "our first day at".
_MINE = frozenset("my our".split())
_SPEAKER_OR_MINE = _SPEAKER | _MINE
#: Slot triggers that name a state (a move or a relocation names a change).
_STATES = frozenset({"liv", "work", "resid", "employ", "bas"})
_PERFECT = frozenset("have has 've i've we've you've they've".split())


def _past_state(toks: Sequence[_Tok], i: int) -> bool:
    """Whether the trigger at ``i`` is a state in the simple past ("lived", "was
    based"), not the present or the present perfect ("have lived")."""
    t = toks[i]
    if t.stem not in _STATES:
        return False
    before = toks[i - 1].low if i else ""
    if before in ("was", "were"):
        return True
    return t.low.endswith("ed") and before not in _PERFECT


#: (trigger stem, preposition) -> the first family of ``_FAMILIES`` it belongs to.
_FAMILY_OF = {(stem, prep): family for family, stem, prep in reversed(_FAMILIES)}
#: Nouns that name a single-valued slot before a copula: (noun stem, preposition).
_NOUN_FAMILY_OF = {
    (_stem(noun), prep): family
    for family, prep in (("residence", "in"), ("employer", "at"))
    for noun in _SLOT_NOUNS[family].split()
}
#: Slot nouns whose value may follow the copula with no preposition ("My new
#: workplace is Meta", "My home is Lisbon"); not "job", whose bare value is a role
#: as often ("My new job is Head of Sales").
_BARE_NOUN_FAMILY_OF = {
    _stem(noun): family
    for family, noun in (("employer", "workplace"), ("employer", "employer"), ("residence", "home"))
}


def _name_opens(toks: Sequence[_Tok], i: int) -> bool:
    """Whether a name (capitalised, "the" allowed before it) opens ``toks[i:]``:
    the value a slot's noun and copula name ("is Meta", "is the NHS")."""
    if i < len(toks) and toks[i].low == "the":
        i += 1
    return (
        i < len(toks)
        and toks[i].text[:1].isupper()
        and toks[i].low != "i"
        and toks[i].low.split("'")[0].rstrip("s") not in _TIME_NAMES
    )


#: The stems that open a slot (the first halves of the two tables' keys).
_FAMILY_STEMS = frozenset(stem for stem, _ in (*_FAMILY_OF, *_NOUN_FAMILY_OF))


def _slot_family(
    old: _Text, new: _Text, authors: tuple[str | None, str | None] = (None, None)
) -> str | None:
    a, b = old.family, new.family
    if a is None or b is None or a[0] != b[0]:
        return None
    if not _same_owner(_slot_owner(a[1], authors[0]), _slot_owner(b[1], authors[1])):
        return None
    if a[2] and b[2] and not a[2] & b[2]:
        return f"contradiction: {a[0]} changed '{a[3]}' -> '{b[3]}'"
    return None


def _other_subjects(old: _Text, new: _Text, authors: tuple[str | None, str | None]) -> bool:
    """Whether the two texts are about different people: the speaker and someone
    else ("I live in Oslo" / "My sister lives in Rome"), two different relations,
    or two speakers' own facts."""
    a, b = old.subject, new.subject
    if a == b == "self":
        return None not in authors and authors[0] != authors[1]
    owners = (old.owner, new.owner)
    if all(o.startswith("self:") for o in owners):  # each speaker's own, by name too
        return owners[0] != owners[1]
    people = (is_person(a), is_person(b))
    if "self" in (a, b):
        return any(people)  # a leading capitalised word may be a thing: no verdict
    if not (a and b and a != b) or b in old.values:
        return False  # the new text about the old fact's value: "Dr. Costa retired, so
        # Quinn's new GP is Dr. Novak" / "Quinn's family doctor is Dr. Costa"
    # two relations, or a name and that name's relation ("Caroline's sister moved
    # to Berlin" / "Caroline lives in Berlin")
    return all(people) or f"{a}'s" in new.named or f"{b}'s" in old.named


def _maybe_others(old: _Text, new: _Text, authors: tuple[str | None, str | None]) -> bool:
    """:func:`_other_subjects`, or the speaker and someone named ("Alice is allergic
    to peanuts" / "I'm allergic to peanuts") unless the name is the speaker's own
    (the other text's author). A leading name may be a thing ("Berlin got cold"),
    so this does not stop a contradiction; it stops a repeat or an elaboration,
    which would retire the speaker's fact for another's."""
    if _other_subjects(old, new, authors):
        return True
    if (old.subject == "self") == (new.subject == "self"):
        return False
    # the text that is not the speaker's opens on a name, and the name is not the
    # speaker's (the other text's author)
    other, author = (new, authors[0]) if old.subject == "self" else (old, authors[1])
    named = named_subject(other.text)
    return named is not None and not (author and author.split()[0].lower() == named)


def _value_ends(old: _Text, new: _Text) -> bool:
    """Whether ``new`` is about a value of the speaker's ``old`` fact and ends it
    there, going nowhere: "Rex passed away" / "I have a dog named Rex", "Priya
    left the company" / "My manager is Priya"; not "Anna moved to Berlin" / "My
    girlfriend is Anna", nor "Tom lost his job" / "My best friend is Tom"."""
    if new.subject not in old.values or not _leaves(old, new):
        return False
    lows = [t.low for t in new.toks]
    at = next((i for i, w in enumerate(lows) if w in _ENDINGS or w in _END_TAILS), len(lows))
    # nothing after the ending but when and where from ("passed away last month",
    # "left the company"): "Priya left for a conference", "left early today" go on;
    # or the old fact's own thing, which the value gives up ("Akelius sold the flat
    # to Mrs. Patel" / "I rent my flat from Akelius"); a date is when too ("passed
    # away in the week of 26 February 2024", as a drawn fact dates it)
    # within the ending's clause: "Mimi died last winter; we adopted a tabby named
    # Leo" ends Mimi whatever the next clause adds
    after = new.toks[at + 1 : _clause_end(new, at)]
    # and so does a clause the same subject goes on with: "Dr. Weber retired and
    # handed his practice to Dr. Yilmaz" (not "Priya left for a conference and ...")
    after = after[: next((j for j, t in enumerate(after) if t.low in _GOES_ON), len(after))]
    if after and after[0].low in _WORKING:
        after = after[1:]  # the value's work ends: "Dr. Petrov stopped practising"
    return (
        all(
            t.low in _WHEN_GONE
            or t.number
            or t.low in _TIME_NAMES
            or not t.content
            or _stem(t.low) in _PLACES
            for t in after
        )
        or _acts_on_its_thing(old, new, new.toks[at + 1 :])
        or _gives_up_premises(new, at)
    )


#: What closes a clause: a stop, a semicolon or colon, or a comma before a
#: conjunction ("..., so I now report to Omar").
#: (A title's stop, "Dr. Kaya", closes nothing.)
_CLAUSE_BREAK = re.compile(
    "".join(rf"(?<!\b{t})" for t in sorted(HONORIFICS | {"st"}))
    + r"\.(?!\d)|[;:!?]|,\s*(?=(?:so|and|but|then|because|which)\b)",
    re.IGNORECASE,
)


def _clause_end(text: _Text, at: int) -> int:
    """The position after the last word of the clause holding word ``at`` of
    ``text`` (its length when the clause runs to the end)."""
    seen = 0
    for piece in _CLAUSE_BREAK.split(text.text):
        seen += len(_tokens(piece))
        if seen > at:
            return seen
    return len(text.toks)


#: Words that open the next clause of the same subject ("retired and handed ...").
_GOES_ON = frozenset("and so then".split())
#: Verbs of a value's work, whose end ends its role ("Dr. Petrov stopped
#: practising"; not "Lea quit smoking").
_WORKING = frozenset("working practising practicing teaching trading operating".split())


#: What a value serves the speaker from, whose sale or closing ends that role: its
#: business ("Dr. Meier closed his practice" / "My dentist is Dr. Meier", "Anna
#: sold her salon"), or the home the speaker rents, named as the speaker's or as
#: the one known ("Mrs. Kowalski sold the flat to Akelius" / "My landlord is Mrs.
#: Kowalski"; not "Dr. Novak sold her flat", "Mr. Ferrari sold his car", nor a
#: company's sale of a business of its own: "Nokia sold its phone business").
_BUSINESSES = frozenset(
    _stem(w) for w in "practice surgery clinic shop salon studio restaurant cafe bakery".split()
)
_DWELLINGS = frozenset(_stem(w) for w in "flat apartment building property house".split())
_SELLING = frozenset("sold sells selling".split())
_GIVING_UP = _SELLING | frozenset("closed closes closing shut".split())
#: Words that make a closing last a while only.
_FOR_A_TIME = frozenset("for until till temporarily briefly".split())


#: The phrases of taking a role over: "Jan took over the team from Petra".
_TAKING_OVER = frozenset(
    {("took", "over"), ("taken", "over"), ("takes", "over"), ("taking", "over")}
)
#: What one takes over with a role: the group led, the premises a value serves
#: from (not "the project", "the meeting", one task of it).
_ROLE_HOLDINGS = (
    _BUSINESSES
    | _DWELLINGS
    | frozenset(_stem(w) for w in "team department group role position job".split())
)


def _taken_from(old: _Text, new: _Text) -> bool:
    """Whether someone takes over from a value of ``old`` in ``new``, which ends it
    whoever the subject is: "Jan took over the team from Petra", "Dr. Yilmaz took
    over from Dr. Weber"; not one task ("took over the project from Petra"), nor
    for a while ("... while she was on holiday"), nor "Tom took over my desk from me"."""
    if "over" not in new.named:
        return False  # most texts: no taking over
    toks = new.toks
    lows = [t.low for t in toks]
    if _FOR_A_TIME & set(lows) or "while" in lows:
        return False
    for i in range(len(lows) - 1):
        if (lows[i], lows[i + 1]) not in _TAKING_OVER:
            continue
        at = next((j for j in range(i + 2, min(len(lows), i + 6)) if lows[j] == "from"), None)
        if at is None:
            continue
        held = [t for t in toks[i + 2 : at] if t.low not in _DETERMINERS]
        if any(t.stem not in _ROLE_HOLDINGS for t in held):
            continue
        after = [w for w in lows[at + 1 : at + 3] if w not in HONORIFICS]
        if after and after[0] in old.values:
            return True
    return False


def _gives_up_premises(new: _Text, at: int) -> bool:
    """Whether the ending at ``at`` sells or closes the business the value serves
    from, or the speaker's home (see :data:`_BUSINESSES`)."""
    if at >= len(new.toks) or new.toks[at].low not in _GIVING_UP:
        return False
    after = new.toks[at + 1 :]
    thing = _object_words(after, new.text)
    if not thing:
        return False
    if new.toks[at].low not in _SELLING and _FOR_A_TIME & {t.low for t in after}:
        return False  # closed for a while: "FitX closed the studio for repairs", "until May"
    if thing[-1].stem in _BUSINESSES:
        return True
    known = bool(after) and after[0].low in ("the", "my", "our")
    return known and thing[-1].stem in _DWELLINGS


#: The second words of the ending phrases ("passed away", "laid off").
_END_TAILS = frozenset({"away"} | {b for _, b in _END_PHRASES})
#: Words of when (or how) after an ending that say nothing else happened.
_WHEN_GONE = frozenset(
    """away yesterday last night week weekend month year spring summer autumn fall winter
    ago sadly suddenly peacefully recently today tonight morning afternoon evening""".split()
)
#: Stems of the words of getting and of when, which two gettings share as words,
#: not as a thing (:func:`_another_getting`).
_GETTING_WORDS = frozenset(_stem(w) for w in _GETS | _WHEN_GONE | set(_TIME_NAMES))
#: Words that make a place a time: "I left my Berlin flat at the end of the year".
_TIME_HEADS = _WHEN_GONE | frozenset("end start beginning middle time moment".split())


#: Words that send an ending elsewhere or for a while ("Anna moved to Berlin", "Tom
#: is gone for the weekend"): the value goes on.
_ELSEWHERE = frozenset("to into for".split())


#: Words between a word of change and what it leaves: "moved on from", "switched
#: away from".
_ON_FROM = frozenset("on away over back from".split())


def _gives_up(old: _Text, new: _Text) -> bool:
    """Whether an ending (no word of change) is followed by a word of the old text
    other than whom it is about, before any other thing: "Jakob gave up
    birdwatching" / "Jakob's hobby is birdwatching", a value no capital marks; not
    "Kaja lost Kaja's umbrella" / "Kaja has had Kaja's iPhone 12"."""
    lows = [t.low for t in new.toks]
    words = old.content - {_stem(old.subject)}
    for i, _ in new.open_endings:
        start = i + 1
        if lows[i] in _CHANGE_VERBS:
            # a word of change leaves what comes from: "Kim has moved on from
            # cappuccino to mocha", "Kim switched from tea to coffee"
            while start < len(lows) and lows[start] in _ON_FROM:
                start += 1
            if "from" not in lows[i + 1 : start]:
                continue
        after = (t for t in new.toks[start:] if t.content and not t.low.endswith("'s"))
        thing = next(after, None)
        if thing is not None and thing.stem in words:
            return True
    return False


def _theirs_changes(old: _Text, new: _Text) -> bool:
    """Whether ``new`` leaves a value of ``old`` (both about the same person, whose
    name is no value of theirs) or a word of change goes to another: "Alice left
    Google for Meta", "My son switched to Elm School"; not "Julia has had a job at
    Airbus since Julia graduated" / "Julia has had an account at UniCredit", nor
    "Nils got into KU Leuven and switched programmes" / "Nils goes to Basic-Fit"."""
    if _leaves(old, new) or _gives_up(old, new):
        return True
    # a switch to another value changes the fact of that kind of value, one with a
    # word of it in common ("Elm School" / "Oak School"), not every fact of theirs
    # ("Alice switched to the Google Maps team" / "Alice lives in Zurich")
    # (a date they share is no such word: "On 31 January 2024 was Quinn's first day
    # at Siemens" / "Quinn relocated to Dublin in March 2024")
    # and so does a value said to be theirs now that names the old one: "Leon flies
    # Iberia now that Lufthansa dropped his route"
    # and a start at another value of the kind: "Chiara got into Aalto University and
    # switched programmes" / "Chiara is enrolled at University of Vienna"
    shared = {v for v in old.values & new.values if v not in old.numbers | _TIME_NAMES}
    words = new.change_verbs | ({new.cue} & (_CHANGE_ADVERBS | _STARTS) if new.cue else set())
    return bool(shared) and any(_changes_to_another(old, new, w) for w in words)


#: Words of starting at a value ("got into", "joined", "started at").
_STARTS = frozenset("got joined started enrolled accepted hired".split())


#: What opens a thing in the world after a word of change ("moved the meeting").
_THING_OPENERS = frozenset("the a an this that".split())
#: What opens the speaker's own thing ("moved my office").
_OWN_OPENERS = frozenset("my our".split())
#: Words that take a thing somewhere else ("moved my office to Potsdam").
_MOVING = frozenset(_stem(w) for w in "move moved moving relocate relocated relocating".split())
#: The people one lives with, beside the relations.
_HOUSEHOLD = frozenset("family household".split())


#: Whose things a change may act on and still be the speaker's (or nobody's in
#: particular): "raised my rent", "moved the standup", not "moved her party".
_OWN_THINGS = frozenset("the my our".split())
#: What a change takes a thing to (or away from).
_TO = frozenset("to into from".split())


def _thing_changed(old: _Text, new: _Text, sim: float, k: ReconcileKnobs) -> str | None:
    """A word of change acting on a thing the old text names, to a new value: "The
    landlord raised my rent to 1350" / "My rent is 1200 euros a month", "We moved
    the standup to 10" / "The standup is at 9:30". Whoever makes the change, the
    thing's value is what changed; the embedding is weak on such pairs, the named
    thing and the value after "to" carry it. Not "moved the meeting notes to the
    drive" (the old text names no notes) nor "raised my hand to ask" (no value).
    A thing named as the speaker's is not another person's: "I switched my health
    insurance to Helsana" leaves "My sister's health insurance is with Techniker"."""
    if sim < k.update_similarity - 0.1 or new.adds or not new.change_verbs:
        return None
    for i, t in enumerate(new.toks):
        acted = _object_at(new.toks, i) if t.low in _CHANGE_VERBS else None
        if acted is None or acted[0] not in _OWN_THINGS or _someone_elses(old, acted[0]):
            continue
        _, thing, rest = acted
        stems = {x.stem for x in thing if x.content}
        if not stems or not stems <= old.content or len(rest) < 2:
            continue
        if _value_kind(rest[1]) != _value_kind_of(old):
            continue  # "I moved my car to the garage" / "My car is a Volvo": another trait
        if _value_kind_of(old) == "thing" and not _placed(old, stems):
            continue  # "We moved the piano to the basement" / "I play the piano": no place
        if not {x.stem for x in rest[1:] if x.content or x.number} <= old.terms:
            thing_said = " ".join(x.low for x in thing)
            return f"contradiction: the {thing_said} changed ('{t.low}', cos {sim:.2f})"
    return None


def _placed(old: _Text, stems: set[str]) -> bool:
    """Whether ``old`` gives the thing of ``stems`` a place ("The piano is in the
    living room", "I keep my bike in the hallway"): a place word after the thing."""
    at = next((n for n, t in enumerate(old.toks) if t.stem in stems), None)
    return at is not None and any(t.low in _PLACE_PREPS for t in old.toks[at + 1 :])


def _someone_elses(old: _Text, opener: str) -> bool:
    """Whether the thing a change names as the speaker's ("I switched my health
    insurance") is another person's in ``old`` ("My sister's health insurance is
    with Techniker"): the sister's stays as it is."""
    return opener in ("my", "our") and old.subject not in ("self", "")


def _object_at(toks: Sequence[_Tok], i: int) -> tuple[str, list[_Tok], list[_Tok]] | None:
    """What the word of change at ``i`` acts on, when a determiner or a possessive opens
    it: (that opener, the thing's words up to where it goes, what follows from "to",
    "into" or "from" on): "moved the meeting with Anna to Friday"."""
    if i + 1 >= len(toks) or toks[i + 1].low not in _THING_OPENERS | _OWN_THINGS:
        return None
    after = toks[i + 2 :]
    thing = list(itertools.takewhile(lambda x: x.low not in _TO, after))
    return toks[i + 1].low, thing, list(after[len(thing) :])


#: Words that stop a thing where it is, not move it ("The meeting got cancelled").
_STOPS = frozenset("cancelled canceled cancels closed closes ended dropped stopped".split())
#: The helpers of a passive ending ("got cancelled", "has been dropped").
_PASSIVE = frozenset("got gets was were is are has have been be".split())


def _thing_ended(old: _Text, new: _Text, sim: float, k: ReconcileKnobs) -> str | None:
    """A thing the old text names, stopped, with nothing after but when: "The meeting
    with Anna got cancelled", "Anna cancelled our meeting" / "I have a meeting with
    Anna at 3pm on Friday". Whoever stops it, it ended; not "The store closed early
    today" / "The store is open until 9pm" (something else happened to it)."""
    if sim < k.update_similarity - 0.1 or _STOPS.isdisjoint(new.named):
        return None
    toks = new.toks
    for i, t in enumerate(toks):
        if t.low not in _STOPS:
            continue
        before = [x for x in toks[:i] if x.low not in _PASSIVE]
        if before and before[0].low in _OWN_THINGS:
            if _someone_elses(old, before[0].low):
                continue
            thing, rest = before[1:], toks[i + 1 :]
        elif (
            i + 1 < len(toks)
            and toks[i + 1].low in _OWN_THINGS
            and not _someone_elses(old, toks[i + 1].low)
        ):
            thing = list(itertools.takewhile(lambda x: x.low not in _WHEN_GONE, toks[i + 2 :]))
            rest = toks[i + 2 + len(thing) :]
        else:
            continue
        stems = {x.stem for x in thing if x.content}
        if not stems or not stems <= old.content:
            continue
        if all(x.low in _WHEN_GONE or not x.content for x in rest):
            thing_said = " ".join(x.low for x in thing)
            return f"contradiction: the {thing_said} ended ('{t.low}', cos {sim:.2f})"
    return None


def _thing_reason(old: _Text, new: _Text, sim: float, k: ReconcileKnobs) -> str | None:
    """``new`` changes or stops a thing ``old`` names, whoever makes the change, or
    the speaker moves the person ``old`` is about: the reason, or None."""
    return (
        _thing_changed(old, new, sim, k)
        or _thing_ended(old, new, sim, k)
        or _moves_theirs(old, new, sim, k)
    )


#: Verbs by which the speaker changes someone else's value: "We moved Ava to Elm
#: School", "Switched Ava's piano lessons to Mr. Grant".
_MOVING_THEIRS = frozenset("moved switched changed transferred".split())


def _moves_theirs(old: _Text, new: _Text, sim: float, k: ReconcileKnobs) -> str | None:
    """The speaker moves the person ``old`` is about, or a thing of theirs ``old``
    names, to another value of the kind ``old`` holds: "We moved Ava to Elm School"
    / "Ava goes to Oak School", "We moved our son to Elm School" / "My son goes to
    Oak School", "Switched Ava's piano lessons to Mr. Grant" / "Ava's piano teacher
    is Mrs. Hill", "Moved Milo's swimming to Tuesday" / "Milo's swimming lessons
    are on Saturday mornings". Their fact changed, though they did nothing. Not
    "We moved Ava to Manchester" (no value of the kind), nor "We moved Ava's bed
    to the attic" (a thing the old text does not name)."""
    if sim < k.update_similarity - _NAMED_GATE or new.subject not in ("self", old.subject):
        return None
    if old.subject in ("", "self") or _MOVING_THEIRS.isdisjoint(new.named):
        return None
    toks = new.toks
    for i, t in enumerate(toks):
        if t.low not in _MOVING_THEIRS:
            continue
        j = i + 1 + (i + 1 < len(toks) and toks[i + 1].low in _MINE)  # "our son"
        if j >= len(toks) or toks[j].low.removesuffix("'s") != old.subject:
            continue
        thing = list(itertools.takewhile(lambda x: x.low not in _TO, toks[j + 1 :]))
        if thing and not {x.stem for x in thing if x.content} & old.content:
            continue  # "We moved Ava's bed to the attic"
        rest = toks[j + 1 + len(thing) :]
        if not rest or rest[0].low != "to":
            continue
        target = [x for x in rest[1:] if x.low not in _DETERMINERS]
        named = next((x for x in target if x.low not in HONORIFICS), None)  # "Mr. Grant"
        if named and _another_value(old, new, named) and _of_its_kind(old, target):
            return (
                f"contradiction: the speaker moved {old.subject}'s value ('{t.low}', cos {sim:.2f})"
            )
    return None


def _of_its_kind(old: _Text, target: Sequence[_Tok]) -> bool:
    """Whether the value ``target`` opens (its words on from there) is of the kind
    ``old`` holds: a word of a name both have ("Elm School" / "Oak School"), a person
    by title for one by title ("Mr. Grant" / "Mrs. Hill"), a day for a day."""
    name = [x.low for x in itertools.takewhile(lambda x: not x.text.islower(), target)]
    if set(name[1:]) & old.values:
        return True  # "Elm School" / "Oak School" (the first word is the new one's own)
    if name and name[0] in HONORIFICS:
        return _titled(old)
    return bool(name) and name[0] in _TIME_NAMES and bool(old.values & _TIME_NAMES)


def _value_kind(tok: _Tok) -> str | None:
    """What kind of value a change goes to: a number or time, a name, or a thing."""
    if tok.number:
        return "number"
    if not tok.text.islower():  # a capital anywhere, as for values: "iPhone 15"
        return "name"
    return "thing" if tok.low in _DETERMINERS else None


def _value_kind_of(old: _Text) -> str:
    """The kind of value a statement gives its thing: a number or time ("is 1200
    euros", "at 9:30"), else a name ("is a Volvo", "on Friday"), else a thing."""
    if old.numbers:
        return "number"
    return "name" if old.values else "thing"


def _moves_a_thing(old: _Text, new: _Text, cue: str) -> bool:
    """Whether the word of change ``cue`` acts on a thing the old text does not name,
    or on one it names but in another trait: "We relocated the office to Munich"
    moves the office, not the speaker's home, and "I moved my car to the garage"
    moves the car, not its make ("My car is a Volvo"); "We moved the standup to
    10" changes "The standup is at 9:30", and "I moved to Munich" or "We moved my
    accounts to N26" change the speaker's own."""
    if cue not in new.change_verbs:
        return False  # a thing got is the new value: "We adopted a puppy named Luna"
    acted = _object_at(new.toks, [t.low for t in new.toks].index(cue))
    if acted is None:
        return False
    opener, thing, rest = acted
    if any(t.low in RELATIONS or t.low in _HOUSEHOLD for t in thing):
        return False  # people move with the speaker: "I moved the whole family to Munich"
    stems = {t.stem for t in thing if t.content}
    if not stems:
        return False
    if opener in _THING_OPENERS and not stems <= old.content:
        return True
    # the speaker's own thing moved, unless one held with a value: "I moved my
    # office to Potsdam" moves the office, "I moved my accounts to DKB" the bank (a
    # switch goes to another value: "We switched our energy to Engie")
    # ("I moved my volunteering from the library to UNICEF" says where from: a switch)
    if (
        opener in _OWN_OPENERS
        and _stem(cue) in _MOVING
        and rest[:1]
        and rest[0].low == "to"
        and not stems <= old.content
        and not stems & _HOLDING_STEMS
    ):
        return True
    if not stems <= old.content or len(rest) < 2:
        return False
    kind = _value_kind(rest[1])
    # the thing taken to a place where the old text gives it none: "We moved the
    # piano to the basement" / "I play the piano"
    return kind not in (None, _value_kind_of(old)) or (kind == "thing" and not _placed(old, stems))


#: How much lower the update rule's cosine gate is when the new text names the old
#: value, and as much again when it ends it.
_NAMED_GATE = 0.1


def _update(old: _Text, new: _Text, sim: float, k: ReconcileKnobs) -> str | None:
    """The same subject, a new value, and the new text says so ("We relocated to
    Lisbon" / "I live in Berlin"): the embedding gate is low because such pairs
    share few words, so the cue, the subject and a changed value must all hold."""
    # a word that leaves one of the old values at once says the value changed as
    # well as a cue does: "Today was my last day at Nokia", "Tom and I split up"
    # (not "My last day in the Berlin office is Friday" / "I live in Berlin")
    cue = new.cue or ("ends" if _leaves(old, new, reach=2) or _taken_from(old, new) else None)
    if cue is None and "from" in new.named and _from_value_to(old, new, [t.low for t in new.toks]):
        # whatever the verb, of the same thing: "Rolled my super over from Hostplus to
        # Australian Ethical" / "... my old super accounts into Hostplus" (not "We
        # drove from Hamburg to Berlin" / "I live in Hamburg")
        values = {_stem(v) for v in old.values | new.values}
        cue = "from" if (old.content & new.content) - values else None
    if _one_off(new):
        return None  # one day's exception: "Today I had tea instead of coffee"
    leaves = _leaves(old, new)
    if not leaves and _moves_along(old, new):
        return None  # "Mia and I moved to Berlin" / "My partner is Mia"
    if not leaves and _moves_in_with(old, new):
        return None  # "I moved in with Paul" / "I quit Philips and joined Ericsson"
    if not leaves and _acts_on_another_thing(old, new):
        return None  # "I left my umbrella on the train" / "I take the train to work"
    if new.adds and not leaves:
        return None  # a second value beside the first: "We also got a kitten, Nala"
    if cue is None:
        return None
    # the speaker's own words, or a value of theirs that ends ("Rex passed away"). A
    # fact rewritten about a named person ("Alice's employer is Airbus" / "Alice's
    # back hurts after moving furniture") shares the name, which lifts the cosine of
    # unrelated facts (precision .17 on the currency dev kinds through ingest), so
    # another person's fact changes only when the new text leaves its value or
    # switches to another of its kind (``_theirs_changes``): no cosine carries that
    mine = old.subject == "self" and (
        new.subject == "self" or _value_ends(old, new) or _taken_from(old, new)
    )
    # a value of the author's fact written with their name ends all the same: "Rex
    # passed away this morning" / "Kim has a dog named Rex" (drawn from Kim's words)
    mine = mine or (old.owner.startswith("self:") and _value_ends(old, new))
    # the same named person's, or the author's by name: rewritten facts share the
    # name, so the name's own rule holds; so does a text about the fact's value ("Dr.
    # Costa retired, so Quinn's new GP is Dr. Novak" / "Quinn's family doctor is Dr. Costa")
    named = old.owner not in ("", "self") and not old.owner.startswith("self:")
    same = old.owner == new.owner != "" or (named and new.subject in old.values)
    theirs = same and _theirs_changes(old, new)
    if not (mine or theirs):
        return None
    # the new text names the old value: "we moved out of Berlin" / "I live in Berlin", or
    # leaves all the old text says: "I switched from paleo to sugar-free" / "I'm paleo"
    # (one the speaker is with in both is company, no value: "I run the bakery with
    # my business partner Jonah" / "Sundays are my day off now, Kasia bakes with Jonah")
    shared = old.values & new.values - (company_only(old.text) & company_only(new.text))
    names_old = bool(shared) or (new.ends and bool(old.content) and old.content <= new.content)
    # "we" parting names the partner: "We split up in the summer" / "My partner is
    # Lukas" (cos 0.16) share no word, but nothing else can part
    parted = leaves and _couple_parted(old, new)
    if _keeps_values(old, new) and not _changes_to_another(old, new, cue):
        return None  # the same value again, not left: "My first lecture at ETH Zurich"
    if _brings_nothing(old, new):
        return None  # "My new home is in Madrid" / "I'm a Real Madrid fan"
    if _new_of_another_kind(old, new):
        return None  # "My new TV is an LG" / "I work at Samsung"
    if _another_getting(old, new):
        return None  # "Picked up my Fiat Panda" / "Picked up my new VanMoof"
    if sim < k.distinct_similarity and different_things(old.text, new.text):
        return None  # "My new SIM arrived today" / "My new phone is a Xperia 5"
    if not names_old and _moves_a_thing(old, new, cue):
        return None  # "We relocated the office to Munich" / "I live in Berlin"
    # lower when the new text names the old value, and again when it ends it: "Traded
    # in the Orbea for a Brompton" / "I cycle everywhere on my Orbea" (cos 0.25)
    gate = k.update_similarity - _NAMED_GATE * (names_old + leaves)
    if not names_old and _titled(old) and _titled(new):
        # two people of one kind, not one value: "I'm registered with Dr. Yilmaz's
        # practice now" / "My dentist is Dr. Hoffmann" (0.38), half the evidence of a
        # name both say; "first session with my therapist, Dr. Ibarra" (0.32) is no
        # change of the dentist
        gate -= _NAMED_GATE / 2
    # a denial is no update ("I'm not moving to Lisbon"), but a negation that ends
    # a value is ("I quit Nokia and joined Philips" / "I work at Nokia"; then "I
    # left Philips for Spotify")
    denied = old if old.negated else new
    if (sim < gate and not parted) or (old.negated != new.negated and not denied.ends):
        return None
    # a change brings words of its own, or leaves the old value outright: "We moved
    # out of Berlin" says no more than where from
    brings = bool(new.content - old.content) or leaves
    if not brings or not (names_old or parted or old.content - new.content):
        return None
    if not leaves and _news_of_the_change(old, new):
        return None  # "new stylist nailed it" / "my stylist moved away, trying Jules"
    return f"contradiction: the same subject's value changed ('{cue}', cos {sim:.2f})"


def _titled(text: _Text) -> bool:
    """Whether ``text`` names someone by a title ("Dr.", "Mrs.")."""
    return not HONORIFICS.isdisjoint(text.named)


def _news_of_the_change(old: _Text, new: _Text) -> bool:
    """Whether ``new``, naming no value, tells of the value ``old`` changed to:
    "new stylist nailed it, booked a standing appt." after "my stylist moved to
    Cincy, trying Jules at Rove Salon" is about Jules. A plain statement names the
    value news of a new one change ("Got a new phone today!" / "My phone is a Pixel
    6"), and a change or an ending of its own changes it."""
    if new.ends or names_by_name(new.text) or says_changed(new.cue):
        return False
    return names_by_name(old.text) and says_changed(old.cue)


#: Phrases of time that sit outside the slot, as the adverbs do ("These days my
#: favourite band is Arctic Monkeys" / "My favourite band is Radiohead").
_TIME_PHRASES = frozenset({("these", "days"), ("at", "the", "moment"), ("right", "now")})
#: The words that open what :func:`_slot` leaves out.
_SLOT_DROPS = _CHANGE_ADVERBS | {p[0] for p in _TIME_PHRASES}


def _slot(toks: Sequence[_Tok]) -> tuple[_Tok, ...]:
    """The tokens that may fill a slot: without change adverbs and time phrases."""
    lows = [t.low for t in toks]
    if _SLOT_DROPS.isdisjoint(lows):
        return tuple(toks)
    drop = {i for i, low in enumerate(lows) if low in _CHANGE_ADVERBS}
    for phrase in _TIME_PHRASES:
        n = len(phrase)
        for i in range(len(lows) - n + 1):
            if tuple(lows[i : i + n]) == phrase:
                drop.update(range(i, i + n))
    return tuple(t for i, t in enumerate(toks) if i not in drop)


def _known_names(texts: Sequence[str]) -> frozenset[str]:
    """The names ``texts`` introduce (:func:`.slots.introduced_names`), when one of
    them is written in lower case and so is read with them (:func:`.slots.recased`);
    else none, and no text's introductions are read."""
    if not any(in_lower_case(t) for t in texts):
        return frozenset()
    return frozenset(n for t in texts for n in introduced_names(t))


def _analysed(text: str, author: str | None = None) -> _Text:
    """:meth:`_Text.of`, cached: a stored memory is compared with many new ones.
    ``author``: whom the text speaks for (its first name counts as "I")."""
    return _analysis(text, author)  # one cache key for ``(text)`` and ``(text, None)``


def _retirable(content: str, old: _Text, k: ReconcileKnobs) -> bool:
    """Whether a contradiction may retire ``old``: one fact, stated (a question, a
    request or a supposition holds no value; a note of more than
    ``k.retire_max_sentences`` sentences holds other facts too)."""
    return old.states and _sentence_count(content) <= k.retire_max_sentences


@functools.lru_cache(maxsize=50_000)
def _sentence_count(text: str) -> int:
    """How many sentences ``text`` has ("Dr. Weber" and "pottery; bookkeeping" end none)."""
    return len(_sentences(text))


@functools.lru_cache(maxsize=50_000)
def _analysis(text: str, author: str | None) -> _Text:
    """:func:`_analysed`, cached."""
    words = author.casefold().split() if author else []
    # "the user" is the speaker already (:func:`.slots.subject_of`)
    return _Text.of(text, words[0] if words and words != ["the", "user"] else None)


#: Words of each slot family's statements, as a keyword query: the write path looks
#: up the scope's statements of the slot a new text fills (:func:`slot_query`).
_FAMILY_WORDS = {
    "residence": "live lives living based moved relocated home",
    "employer": "work works working job employed employer",
}


def slot_query(text: str, k: ReconcileKnobs) -> tuple[str, float] | None:
    """A keyword query for the statements of the single-valued slot ``text`` fills
    with a name ("Today was my first day at Philips": work, job, employer ...) and
    the cosine from which the slot-family rule may act on one; None without such
    a slot.

    A change of slot embeds far from what it changes ("I work at Nokia" at 0.23),
    so among many memories the nearest by embedding may not hold it; the write
    path adds the scope's best keyword matches of the slot to the candidates when
    its nearest reach below that cosine, and the rule decides as for any neighbour."""
    new = _analysed(text)
    if new.family is None or not _names_slot_value(new):
        return None  # an unnamed slot's gate is high: the nearest hold what passes it
    return _FAMILY_WORDS[new.family[0]], _slot_gate(new, k)


def _slot_gate(new: _Text, k: ReconcileKnobs) -> float:
    """The cosine from which the slot-family rule compares: lower when the new slot
    holds a name (see the module docstring)."""
    return k.slot_similarity - (_NAMED_SLOT if _names_slot_value(new) else 0.0)


#: How much lower the slot-family gate is for a named value in the slot.
_NAMED_SLOT = 0.15


def says_an_end(text: str) -> bool:
    """Whether ``text`` has a word that leaves or changes a value ("quit", "moved out",
    "sold", "passed away", "switched"): what an event needs to end a fact."""
    return _analysed(text).ends


def names_a_value(text: str) -> bool:
    """Whether ``text`` names a value: a capitalised word after its first that is
    no month or day ("I switched to Dr. Jones", "Upgraded to an iPhone 15"; not "I
    signed up in May"). Numbers alone do not: most are dates and amounts."""
    return any(_is_value(c) for c in _analysed(text).capitals)


def time_name(word: str) -> bool:
    """Whether ``word`` names a month, a day or a feast ("May", "Mondays",
    "Christmas"), not a value."""
    low = word.lower()
    return low in _TIME_NAMES or low.rstrip("s") in _TIME_NAMES


def _is_value(word: str) -> bool:
    """Whether a capitalised or numbered word of a text can be a value: no number
    alone (most are dates and amounts), no month, day or feast."""
    return not word.isdigit() and not time_name(word)


def _ending_sentences(text: str) -> list[str]:
    """The sentences of ``text`` that end a value (all of it if none alone does)."""
    return [s for s in _sentences(text) if says_an_end(s)] or [text]


def ends_a_value_only(text: str, ended: str | None = None, author: str | None = None) -> bool:
    """Whether ``text`` ends a value and each of its sentences that ends one names
    no value of its own: "I quit the choir. Too many concerts, not enough fun.";
    not "I quit Nokia and joined Philips". With ``ended``, the text it replaced,
    the values of ``ended`` are not its own (:func:`only_ends`): "Cancelled Netflix
    after they put the price up again. Ridiculous." only ended Netflix; "We moved
    out of Helsinki; we live in Oslo now" names Oslo. ``author``: whom both speak for."""
    if not says_an_end(text):
        return False
    sentences = _ending_sentences(text)
    if any(_goes_on_to(s) for s in sentences):
        return False  # "I've moved on from macchiato to mocha": the next one, in lower case
    if not _NEXT_NOW.isdisjoint(t.low for t in _analysed(text).toks):
        return False  # "I sold my saxophone; I'm learning the cello now"
    if ended is None:
        return not any(names_a_value(s) for s in sentences)
    return all(only_ends(s, ended, author) for s in sentences)


#: Words that say what holds now or is new beside an ending.
_NEXT_NOW = frozenset("now new instead nowadays currently".split())
#: Words after an ending that take it to the next value: "moved on from macchiato to
#: mocha", "traded the Golf in for a Kia".
_ON_TO = frozenset("to for into".split())


def _goes_on_to(sentence: str) -> bool:
    """Whether an ending of ``sentence`` goes on to a thing named after it ("to",
    "for", "into" and a content word)."""
    text = _analysed(sentence)
    toks = text.toks
    for i, _ in text.open_endings:
        for j in range(i + 1, len(toks) - 1):
            if toks[j].low in _ON_TO and any(
                t.content and t.low not in _NO_NEXT
                for t in toks[j + 1 : j + 3]
                if t.low not in _DETERMINERS
            ):
                return True
    return False


#: Words after "for" that say how long, not what next: "stop ... for now", "for good".
_NO_NEXT = frozenset("now good ever while years months weeks days ages".split())


_NAME_SPAN = re.compile(r"(?<![.!?]\s)(?<!^)\b[A-Z][\w'&-]*(?:\s+[A-Z][\w'&-]*)*")


@functools.lru_cache(maxsize=50_000)
def _name_spans(text: str) -> frozenset[str]:
    """The runs of capitalised words in ``text`` after its first word, lower-cased;
    the speaker's "I" ("I", "I've", "I'm") is none."""
    spans = (m.group(0).lower().replace("\u2019", "'") for m in _NAME_SPAN.finditer(text))
    return frozenset(s for s in spans if s not in _I_FORMS)  # "I've made" names no one


def names_by_name(text: str, people: Collection[str] = ()) -> bool:
    """Whether ``text`` names a value by a capitalised word that opens no sentence,
    or a number, no month or day: "trying Jules at Rove Salon", "1418 Wexford Ave";
    not "new stylist nailed it. Booked a standing appt." (:func:`names_a_value`
    counts a sentence's opening word as a name too), nor "helped Mom move in" (a
    relation called by name), nor a name of ``people`` (folded), whom the caller
    knows for a person ("Claimed Milo's glasses on the health fund")."""
    words = (w.removesuffix("'s") for span in _name_spans(text) for w in span.split())
    return any(_is_value(w) and w not in RELATIONS and w not in people for w in words)


def one_name_in_another(a: str, b: str) -> bool:
    """Whether a name of ``a`` is a word of a longer name of ``b``, or the other way
    round: two things that share a word, not one value ("I live in Leeds with my
    partner Tom" / "I support Leeds United"; not "I'm a member of the Alpine Club"
    / "I let my Alpine Club membership lapse"). Two longer names that end on the
    word they share are two of a kind, not one name in another ("Bright Smile
    Dental" / "Riverside Dental")."""
    sa, sb = _name_spans(a), _name_spans(b)
    words_a = {w for s in sa for w in s.split()}
    words_b = {w for s in sb for w in s.split()}
    shared = words_a & words_b
    if not shared:
        return False
    return any(
        _one_name_in(w, x.split(), y.split()) for w in shared for x in sa for y in sb if x != y
    )


def _one_name_in(word: str, x: list[str], y: list[str]) -> bool:
    """Whether names ``x`` and ``y`` (their words) both hold ``word``, and not only
    as the kind both end on."""
    if word not in x or word not in y:
        return False
    return not (x[-1] == y[-1] == word and len(x) > 1 and len(y) > 1)


def names_more(whole: str, part: str, author: str | None = None) -> bool:
    """Whether ``whole`` names a value ``part`` does not (no number, month or day):
    "Dropped my Pixel in the lake. Replacement is an iPhone 15." names the new
    phone, the fact drawn from its first sentence ("Kim dropped Kim's Pixel in the
    lake") only the old one. ``author``: whom both speak for."""
    said = _analysed(part, author).named
    return any(_is_value(v) and v not in said for v in _analysed(whole, author).values)


def changes_slot(old: str, new: str, authors: tuple[str | None, str | None] = (None, None)) -> bool:
    """Whether ``new`` fills the single-valued slot ``old`` fills (where one lives,
    works, studies) with another value, for the same person: "Kim started a new job
    at Meta last week" / "Kim works at Google"."""
    return _slot_family(_analysed(old, authors[0]), _analysed(new, authors[1]), authors) is not None


def only_ends(ending: str, ended: str, author: str | None = None) -> bool:
    """Whether ``ending``, which replaced ``ended``, only ended its value: a word that
    ends or denies it, and no value of its own besides a time ("Rex passed away last
    month" / "I have a dog named Rex", "I quit Nokia in 2023", "I'm no longer vegan");
    "I moved back to Berlin after two years in Paris" names the next value instead.
    ``author``: whom both speak for (a fact drawn from Kim's words names Kim where
    Kim said "I")."""
    new, old = _analysed(ending, author), _analysed(ended, author)
    if not (new.ends or new.negated):
        return False
    return not any(_is_value(v) for v in new.values - old.values)


def ends_too(ending: str, ended: str, other: str, author: str | None = None) -> bool:
    """Whether ``ending``, which only ended the value of ``ended``, ends ``other`` as
    well: ``other`` names that value and ``ending`` says nothing of its own beside
    it (:func:`only_ends`). "Rex died in March" ended "Kim's dog Rex is a beagle"
    and ends "Rex is Kim's dog" too, not "Kim walks Bella every morning"."""
    new, old = _analysed(ending, author), _analysed(ended, author)
    gone = old.values & new.named
    return bool(gone & _analysed(other, author).named) and only_ends(ending, other, author)


#: Stems an ending says beside what it ends: its own words and when it happened.
_ENDING_NEWS = frozenset(
    _stem(w)
    for w in {*_ENDINGS, *itertools.chain.from_iterable(_END_PHRASES), *_WHEN_GONE, *_TIME_NAMES}
)


def ends_with_no_news(ending: str, ended: str, author: str | None = None) -> bool:
    """:func:`only_ends`, and ``ending`` says nothing else than ``ended`` did besides
    how and when the value ended: "Tobi and I broke up" / "My boyfriend is Tobi",
    "Rex passed away last month"; not "Dropped out of photography; bookkeeping
    suits me better", which names the next value in lower case."""
    if not only_ends(ending, ended, author):
        return False
    new, old = _analysed(ending, author), _analysed(ended, author)
    # the author's name, and "others" of the "we" ``ingest`` writes ("Kim and
    # others split up"), say who, not what
    mine = {_stem(new.own_name), _stem("others")} if new.own_name else set()
    return not (new.content - old.content - _ENDING_NEWS - mine)


def _names_slot_value(text: _Text) -> bool:
    """Whether the object of the text's slot opens on a name ("Lisbon last month",
    "the Red Cross"), not a thing or a day ("the window seat", "Fridays")."""
    return text.family is not None and _name_opens(_tokens(text.family[3]), 0)


def _contradiction(
    old: _Text,
    new: _Text,
    sim: float,
    k: ReconcileKnobs,
    authors: tuple[str | None, str | None] = (None, None),
) -> str | None:
    """The first contradiction signal between ``old`` and ``new``, as a reason; else None.

    Facts about different people never contradict each other; a change made to a
    thing is the thing's, whoever makes it (:func:`_thing_changed`)."""
    # a speaker's correction of their own words, whoever those words were about
    if sim >= _CORRECTION_GATE and authors[0] == authors[1]:
        reason = _corrected(old, new)
        if reason:
            return reason
    others = _other_subjects(old, new, authors)
    if not others and sim >= k.contradiction_similarity:
        for reason in (
            _negation_flip(old, new, k),
            _number_change(old, new),
            _template(old, new, k),
            _change_marker(old, new),
            _ended(old, new),
        ):
            if reason:
                return reason
    # whoever changes a thing, the thing changed: "My boss moved my review to Monday"
    reason = _thing_reason(old, new, sim, k)
    if reason or others:
        return reason
    # a named value in the slot is evidence of its own, where the embedding is weak:
    # "We relocated to Lisbon last month" / "I live in Berlin" embed at 0.34, "Today
    # was my first day at Philips" / "I work at Nokia" at 0.23
    if sim >= _slot_gate(new, k):
        reason = _slot_family(old, new, authors)
        if reason:
            return reason
    if sim >= _ROLE_GATE:
        reason = _role_changed(old, new)
        if reason:
            return reason
    return _update(old, new, sim, k)


#: Words that say the speaker got something wrong before: "Actually I got that
#: wrong", "my mistake", "correction:".
_CORRECTING = re.compile(
    r"\b(?:got (?:that|it|this) wrong|i was wrong|my (?:mistake|bad)|correction|"
    r"i meant|i misspoke|scratch that)\b"
)
#: Words after which the speaker quotes what they said before: "Sorry, I said
#: Telstra before", "I told you Tuesday for swimming".
_SAID = frozenset("said told mentioned wrote".split())
#: Words that set what the speaker said against what holds: "..., but it's
#: actually Wednesdays", "it's HCF we signed up with, not Bupa".
_CONTRAST = frozenset("actually but not".split())
#: How many words after "not", "said" or "told you" the value they deny may stand.
_DENIED_WITHIN = 3
#: Below this cosine a correction is taken for one of something else ("Actually I
#: got that wrong, it's HCF ..., not Bupa" / "... we're with Bupa ..." embed at .49).
_CORRECTION_GATE = 0.25


def _quotes_at(toks: Sequence[_Tok], i: int) -> bool:
    """Whether the word at ``i`` quotes the speaker's earlier words: "I said", "we
    told"."""
    return toks[i].low in _SAID and i > 0 and toks[i - 1].low in ("i", "we")


def _denied_values(new: _Text) -> frozenset[str]:
    """The values ``new`` says are not so or quotes as said before: "not Bupa", "I
    said Telstra before", "I told you Tuesday for swimming"."""
    toks, out = new.toks, set[str]()
    for i, t in enumerate(toks):
        if t.low == "not" or _quotes_at(toks, i):
            after = toks[i + 1 : i + 1 + _DENIED_WITHIN]
            out.update(a.low for a in after if a.low in new.values and a.low != "you")
    return frozenset(out)


def _corrected(old: _Text, new: _Text) -> str | None:
    """``new`` corrects a value of ``old`` the speaker got wrong: it says so ("I got
    that wrong", "my mistake") or sets what they said against what holds ("I said
    Telstra before. It's actually Optus I'm on"), denies a value ``old`` names ("...
    HCF we signed up with, not Bupa", "I told you Tuesday for swimming, but ...
    it's actually Wednesdays") and names another. A correction is of the speaker's
    own words, whomever they are about ("Moved Milo's swimming to Tuesday")."""
    if _SAID.isdisjoint(new.named) and "not" not in new.named:
        return None  # most texts
    quotes = any(_quotes_at(new.toks, i) for i in range(len(new.toks)))
    if not (_CORRECTING.search(new.norm) or (quotes and not _CONTRAST.isdisjoint(new.named))):
        return None  # "Not Bupa, but HCF has the better cover, my sister says": no correction
    denied = _denied_values(new)
    wrong = denied & old.values
    right = new.values - denied - old.values
    if not wrong or not right:
        return None
    return f"correction: the speaker said '{min(wrong)}' before and corrects it"


#: Roles of one holder at a time, by the speaker's word for them: whom "my
#: manager is Ravi" names, "I have a new boss: Hannah" replaces.
_ROLES = _PARTNER_NOUNS | frozenset(
    """manager boss landlord landlady dentist doctor gp vet physio physiotherapist
    therapist hairdresser barber accountant optician""".split()
)
#: The words a text must have to name a role's holder.
_HOLDER_WORDS = _ROLES | {"report", "reports"}
#: Words between "my" and the role ("my new manager", "my current GP").
_ROLE_ADJ = frozenset("new current line".split())
#: Words between the role and the holder's name ("my manager is Ravi", "my dentist
#: is now Dr. Meier").
_ROLE_LINK = frozenset({"is", "now", *HONORIFICS})
#: Below this cosine, two texts naming the role's holders are taken for unrelated
#: ("My manager is Ravi" / "I have a new boss: Hannah" embed at 0.38, "My manager
#: is Tom Becker" / "After the reorg my manager is Priya" at 0.46).
_ROLE_GATE = 0.25


def _role_holder(text: _Text) -> tuple[str, frozenset[str]] | None:
    """The speaker's role of one holder the text names someone as, and the name:
    "My manager is Tom Becker" → ("manager", {"tom", "becker"}), "Ingrid is my boss
    as of this week", "I have a new boss: Hannah", "My dentist is Dr. Novak", "I
    report to Jonas" (a manager). Not
    "my dentist's receptionist, Maria" (another person), nor "My manager let me
    go to see Hannah" (the name is no holder of the role)."""
    if _HOLDER_WORDS.isdisjoint(text.named):
        return None  # most texts
    toks = text.toks
    for i, t in enumerate(toks):
        if t.low in ("report", "reports") and i and toks[i - 1].low in ("i", "we"):
            # "After the reorg I report to Jonas": whom one reports to manages one
            if i + 2 < len(toks) and toks[i + 1].low == "to" and toks[i + 2].low in text.values:
                return "manager", frozenset({toks[i + 2].low})
            continue
        if t.low not in _ROLES:
            continue
        j = i - 1
        while j >= 0 and toks[j].low in _ROLE_ADJ:
            j -= 1
        mine = j >= 0 and toks[j].low in _MINE
        # "I have a new boss: Hannah", "We have a new landlord: Vonovia"
        mine = mine or (j >= 1 and toks[j].low == "a" and toks[j + 1].low == "new")
        if not mine:
            continue
        after = i + 1
        while after < len(toks) and toks[after].low in _ROLE_LINK:
            after += 1
        name: list[_Tok] = []
        while after < len(toks) and toks[after].text[:1].isupper():
            name.append(toks[after])
            after += 1
        if not name and j >= 2 and toks[j - 1].low == "is" and toks[j - 2].text[:1].isupper():
            name = [toks[j - 2]]  # "Ingrid is my boss"
        held = frozenset(t.low for t in name) & text.values
        if held:
            return kin(t.low), held
    return None


def _role_changed(old: _Text, new: _Text) -> str | None:
    """``new`` names another holder of a role of the speaker's that ``old`` names
    ("My manager is Ravi" / "I have a new boss: Hannah", "My dentist is Dr. Novak" /
    "My dentist is Dr. Meier"): a role of one holder at a time has changed hands,
    whatever else the texts say ("After the reorg my manager is Priya")."""
    if old.subject != "self" or new.subject != "self" or old.past or new.past:
        return None
    if new.negated or old.negated:
        return None
    b = _role_holder(new)
    a = _role_holder(old) if b is not None else None
    if a is None or b is None or a[0] != b[0] or a[1] & b[1]:
        return None
    was, now = " ".join(sorted(a[1])), " ".join(sorted(b[1]))
    return f"contradiction: the speaker's {a[0]} changed ('{was}' -> '{now}')"


#: Words that make a text one day's event: "The standup ran late again today" is
#: no fuller "The standup is at 9am", however many of its words it repeats.
_ONE_DAY = frozenset("today yesterday tonight again".split())
_ONE_DAY_PHRASES = frozenset({("this", "morning"), ("last", "night"), ("this", "afternoon")})


def _one_day(text: _Text) -> bool:
    lows = [t.low for t in text.toks]
    return any(w in _ONE_DAY for w in lows) or any(
        p in _ONE_DAY_PHRASES for p in zip(lows, lows[1:], strict=False)
    )


def _changes_now(lows: Sequence[str], present: frozenset[str]) -> bool:
    """Whether ``lows`` has an adverb of change ("now", "instead", "anymore"); a
    "now" that says how long does not count ("I've been hiking for a year now")."""
    adverbs = _CHANGE_ADVERBS & present
    if "now" in adverbs and all(now_for_long(lows, i) for i, w in enumerate(lows) if w == "now"):
        adverbs -= {"now"}
    return bool(adverbs)


def _one_off(new: _Text) -> bool:
    """Whether ``new`` tells of one day's exception, not a change: "Today I had tea
    instead of coffee" leaves "I drink coffee every morning" as it is, where "Today
    I switched to tea" or "Today was my last day at Nokia" change a value. Nor does
    leaving a place at a time of the day or for a while ("I left the office early
    today", "I left the dog with my parents for the weekend")."""
    if new.change_verbs:
        return False
    lows = [t.low for t in new.toks] if new.open_endings else []
    if lows and all(_left_for_now(lows, i) for i, _ in new.open_endings):
        return True
    if "instead" not in new.named or not _one_day(new):
        return False
    return all(lows[i - 1] == "instead" for i, _ in new.open_endings)


def _elaborates(old: _Text, new: _Text, k: ReconcileKnobs) -> bool:
    """``new`` covers ``old``'s content words and numbers (two at least: one word
    is no fact to detail, "Alice, who is vegetarian, joined us" says nothing more
    of "I'm vegetarian"), adds its own, is longer, is no one day's event of a
    standing fact and denies what the old one says no more and no less than it
    ("I stopped working late at Nokia" details no "I work at Nokia")."""
    if len(old.terms) < 2 or new.words <= old.words or (_one_day(new) and not _one_day(old)):
        return False
    if old.negated != new.negated:
        return False
    coverage = len(old.terms & new.terms) / len(old.terms)
    return coverage >= k.shadow_coverage and bool(new.terms - old.terms)


# ----------------------------------------------------------------- the rules


class RuleReconciler(Reconciler):
    """Deterministic rules (see the module docstring), thresholds from ``knobs``."""

    def __init__(self, knobs: ReconcileKnobs | None = None) -> None:
        """Use ``knobs`` (default :class:`ReconcileKnobs`)."""
        self.knobs = knobs or ReconcileKnobs()

    def __repr__(self) -> str:
        """The knobs."""
        return f"RuleReconciler({self.knobs!r})"

    def decide(self, new: Incoming, near: Sequence[Neighbour]) -> Decision:
        """The decision for ``new``; see the module docstring for the rules."""
        k = self.knobs
        # chat in lower case names people as words ("niamh moved to gomo"): each
        # text is read with the names the texts introduce capitalised, so the
        # housemate's change is hers, not the speaker's
        known = _known_names([new.content, *(m.content for m in near)])
        text = _analysed(recased(new.content, known) if known else new.content, new.author)
        if new.key is not None:
            same_key = [n for n in near if n.key == new.key]
            if same_key:
                best = max(same_key, key=lambda n: n.similarity)
                if _analysed(best.content).norm == text.norm:
                    return Decision(
                        Action.NOOP, best.id, f"same key {new.key!r} and same text", best.similarity
                    )
                return Decision(Action.UPDATE, best.id, f"same key {new.key!r}", best.similarity)
        pool = [n for n in near if new.key is None or n.key is None or n.key == new.key]
        ranked = sorted(pool, key=lambda n: (-n.similarity, n.id))
        olds = [
            (n, _analysed(recased(n.content, known) if known else n.content, n.author))
            for n in ranked
        ]
        for n, old in olds:  # exact text first, whatever the similarity says
            if old.norm == text.norm:
                return Decision(Action.NOOP, n.id, "same text", n.similarity)
        # only a statement of fact retires or details another: a question, a
        # request or a supposition ("I might move to Lisbon") leaves them be; and
        # only one is retired (a note of several facts keeps them all)
        clash = {
            n.id: _contradiction(old, text, n.similarity, k, (n.author, new.author))
            if text.states
            else None
            for n, old in olds
        }
        for n, old in olds:  # read only for a clash: most pairs have none
            if clash[n.id] and not _retirable(n.content, old, k):
                clash[n.id] = None
        # a fact about someone else neither repeats nor details the old one: "My
        # sister lives in Berlin" leaves "I live in Berlin" as it is
        # nor does how things were repeat how they are: "I live in Berlin" after "I
        # used to live in Berlin" says the user is back
        same = [
            (n, old)
            for n, old in olds
            if not _maybe_others(old, text, (n.author, new.author)) and old.past == text.past
        ]
        for n, old in same:
            if clash[n.id]:
                continue
            if n.similarity >= k.duplicate_similarity:
                return Decision(
                    Action.NOOP, n.id, f"near-duplicate (cos {n.similarity:.2f})", n.similarity
                )
            _, _, jaccard = _shared(old.terms, text.terms)
            if (
                n.similarity >= k.paraphrase_similarity
                and jaccard >= k.paraphrase_overlap
                and not _elaborates(old, text, k)
            ):
                return Decision(
                    Action.NOOP,
                    n.id,
                    f"paraphrase (cos {n.similarity:.2f}, {jaccard:.0%} shared words)",
                    n.similarity,
                )
        # an update changes the fact whose value it leaves, however alike the others:
        # "I'm done with Juventus; Galatasaray is my team now" changes "I never miss
        # a Juventus match", not "My home is in Madrid" (cos .48)
        for n, _old in sorted(olds, key=lambda p: not (clash[p[0].id] and _leaves(p[1], text))):
            reason = clash[n.id]
            if reason:
                if new.said_at and n.said_at and new.said_at < n.said_at:
                    return Decision(
                        Action.ADD,
                        None,
                        f"{reason}, but said before {n.id}: kept as history",
                        n.similarity,
                    )
                return Decision(Action.SUPERSEDE, n.id, reason, n.similarity)
        for n, old in same:
            if not text.states:
                break
            # a text about a thing does not detail the speaker's own fact: "The
            # payments team got a new lead" / "I'm on the payments team"
            if old.subject == "self" and text.subject == "":
                continue
            if n.similarity >= k.shadow_similarity and _elaborates(old, text, k):
                return Decision(
                    Action.SHADOW,
                    n.id,
                    f"elaboration: restates it with more detail (cos {n.similarity:.2f})",
                    n.similarity,
                )
        if not olds:
            return Decision(Action.ADD, None, "no near neighbour")
        top = olds[0][0]
        return Decision(Action.ADD, None, f"new fact (nearest {top.id}, cos {top.similarity:.2f})")


# ----------------------------------------------------------------- the LLM

RECONCILE_PROMPT = """You keep an assistant's long-term memory consistent.
A NEW memory is being written. Compare it with the EXISTING memories of the same
scope (nearest first) and answer with ONE JSON object and nothing else:
{"action": "add" | "noop" | "supersede" | "shadow", "target": <existing id or null>,
 "reason": <a few words>}
- noop: an existing memory already states the same fact (maybe in other words).
- supersede: the new memory changes a value an existing one states about the SAME
  subject (moved, changed, no longer, a new job, home, pet, car or partner; another
  number, time or person in the same single-valued role), whatever the wording ("I live
  in Berlin" / "we relocated to Lisbon"). "I", "we" and "my" are the author; "my sister",
  "my colleague" and other people are other subjects, never the author ("my sister lives
  in Rome" does not change where I live). A change made to a thing an existing memory
  names changes it whoever makes it ("the landlord raised my rent to 1350" / "my rent is
  1200"; "the meeting with Anna got cancelled"), but a thing moved is not the author's
  home ("we relocated the office to Munich"). If the new memory was said before the
  existing one, use add. Never supersede a memory of several sentences (a note
  holding other facts too): use add.
- shadow: the new memory restates an existing one with more detail, making it redundant.
- add: anything else, including related but different facts (another person, another
  item, another trip or event, another preference); target must be null.
For noop, supersede and shadow, target is the id of the ONE existing memory concerned.
If several apply, prefer noop, then supersede, then shadow."""

_LLM_ACTIONS = {a.value: a for a in (Action.ADD, Action.NOOP, Action.SUPERSEDE, Action.SHADOW)}


@dataclass
class _Counters:
    calls: int = 0
    fallbacks: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)


class LLMReconciler(Reconciler):
    """Decisions from ``chat`` (one JSON request per item), validated, with rule fallback.

    The ``max_neighbours`` most similar neighbours are shown to the model.
    Two cases never reach it: no neighbours (``ADD``) and a neighbour with the
    incoming key (``UPDATE``/``NOOP``): the caller named the slot, so the
    rules decide. The answer must name a known action other than ``update``,
    a target among the shown neighbours for ``noop``/``supersede``/``shadow``
    and ``null`` for ``add``; any :class:`~kenning.errors.LLMError`,
    malformed JSON or invalid answer is decided by ``fallback`` (default
    :class:`RuleReconciler`) with ``decided_by="rules (llm fallback: <why>)"``.
    ``calls`` and ``fallbacks`` count model requests and fallen-back answers.
    """

    def __init__(
        self,
        chat: ChatModel,
        fallback: Reconciler | None = None,
        max_neighbours: int = 5,
        *,
        max_tokens: int | None = 256,
    ) -> None:
        """Check the options; nothing is called until the first decision."""
        if not isinstance(chat, ChatModel):
            raise ConfigError(f"chat must be a ChatModel, got {type(chat).__name__}")
        if fallback is not None and not isinstance(fallback, Reconciler):
            raise ConfigError("fallback must be a Reconciler")
        if max_neighbours < 1:
            raise ConfigError("max_neighbours must be >= 1")
        self.chat = chat
        self.fallback = fallback or RuleReconciler()
        # the rules' gates for what the rules allow the model too (a thing's change)
        self._knobs = (
            self.fallback.knobs if isinstance(self.fallback, RuleReconciler) else ReconcileKnobs()
        )
        self.max_neighbours = int(max_neighbours)
        self.max_tokens = max_tokens
        self._counters = _Counters()

    def __repr__(self) -> str:
        """The chat model and the fallback."""
        return f"LLMReconciler(chat={self.chat!r}, fallback={self.fallback!r})"

    @property
    def calls(self) -> int:
        """Requests made to the model."""
        return self._counters.calls

    @property
    def fallbacks(self) -> int:
        """Decisions the fallback made because the model failed or answered badly."""
        return self._counters.fallbacks

    def decide(self, new: Incoming, near: Sequence[Neighbour]) -> Decision:
        """The model's decision, or the fallback's; never raises for a bad model answer."""
        if not near or (new.key is not None and any(n.key == new.key for n in near)):
            return self.fallback.decide(new, near)
        shown = sorted(near, key=lambda n: (-n.similarity, n.id))[: self.max_neighbours]
        with self._counters.lock:
            self._counters.calls += 1
        try:
            raw, _ = self.chat.complete_json(_messages(new, shown), max_tokens=self.max_tokens)
            return _validate(raw, new, shown, self._knobs)
        except Exception as exc:  # any model failure: the rules decide, the write goes on
            why = f"{type(exc).__name__}: {exc}"[:200]
        with self._counters.lock:
            self._counters.fallbacks += 1
        logger.warning("LLM reconcile failed, using the rules: %s", why)
        decision = self.fallback.decide(new, near)
        return replace(decision, decided_by=f"{decision.decided_by} (llm fallback: {why})")


def _when(at: datetime | None) -> str | None:
    return at.isoformat() if at else None


def _messages(new: Incoming, shown: Sequence[Neighbour]) -> list[Message]:
    payload = {
        "new": {
            "content": new.content,
            "key": new.key,
            "said_at": _when(new.said_at),
            "author": new.author,
        },
        "existing": [
            {
                "id": n.id,
                "content": n.content,
                "key": n.key,
                "said_at": _when(n.said_at),
                "author": n.author,
                "similarity": round(n.similarity, 3),
            }
            for n in shown
        ],
    }
    return [
        Message("system", RECONCILE_PROMPT),
        Message("user", json.dumps(payload, ensure_ascii=False)),
    ]


def _validate(
    raw: Any, new: Incoming, shown: Sequence[Neighbour], knobs: ReconcileKnobs
) -> Decision:
    """The model's answer as a :class:`Decision`; ``ValueError`` naming what is wrong."""
    if not isinstance(raw, dict):
        raise ValueError(f"answer is {type(raw).__name__}, expected an object")
    action = raw.get("action")
    if not isinstance(action, str) or action.strip().lower() not in _LLM_ACTIONS:
        raise ValueError(f"unknown action {action!r}")
    act = _LLM_ACTIONS[action.strip().lower()]
    target = raw.get("target")
    reason = raw.get("reason")
    reason = reason.strip()[:300] if isinstance(reason, str) and reason.strip() else "llm"
    if act is Action.ADD:
        if target is not None:
            raise ValueError(f"add must have a null target, got {target!r}")
        return Decision(act, None, reason, decided_by="llm")
    by_id = {n.id: n for n in shown}
    if not isinstance(target, str) or target not in by_id:
        raise ValueError(f"target {target!r} is not one of the neighbours shown")
    n = by_id[target]
    # a fact about someone else neither retires, repeats nor details the old one, but a
    # change made to a thing is the thing's ("My boss moved my review to Monday")
    old, text = _analysed(n.content, n.author), _analysed(new.content, new.author)
    if _other_subjects(old, text, (n.author, new.author)) and not (
        act is Action.SUPERSEDE and _thing_reason(old, text, n.similarity, knobs)
    ):
        raise ValueError(f"{act.value} of {target!r}: the two are about different people")
    count = _sentence_count(n.content)
    if act is Action.SUPERSEDE and count > knobs.retire_max_sentences:
        raise ValueError(
            f"supersede of {target!r}: it holds {count} sentences, a note of several facts"
            f" (at most {knobs.retire_max_sentences} are retired)"
        )
    if act is Action.SUPERSEDE and not old.states:
        raise ValueError(f"supersede of {target!r}: it states no value (a question or a request)")
    return Decision(act, target, reason, n.similarity, decided_by="llm")
