"""The currency step: the newest value first, history for questions about before.

Reconcile-on-write retires a fact when a new statement changes it, but not
every change is linked on write (different sessions or doors, an import, a
phrasing the rules miss). This step is the read-time safety net. For a
question about a value (:func:`~kenning.lifecycle.slots.aspect_of`):

1. **Whose value.** Every hit (of the best :data:`SCAN`, at least ``k``) about someone
   other than the question's subject
   ("My sister lives in Rome" for "Where do I live now?"; the speaker's own
   facts for "Where does my sister live?") has its priority multiplied by
   ``retrieval.currency.other_subject_factor``. For a question about a named
   person that says "now" in so many words, another speaker's own words
   ("Melanie: I live in Munich" for "Where does Caroline live now?") are
   someone else's too; without it a named question is mostly about the
   events of a dialogue, where one speaker's turn is evidence about the other.
   A person the hits introduce by the speaker's relation and name ("My wife
   Priya plays cello") is that relation wherever named: "Which group does Priya
   play with now?" asks of the asker's wife (and is ordered like any question
   about a relation), "Ana plays beach volleyball" is the sister's, not the
   asker's, and what the speaker says naming the one asked about is about her.
   So is one the speaker names beside themselves ("Arnie and me went out",
   "Arnie's back! ... came over with us"): the speaker's own facts are not
   his. A question in lower case names whom the hits introduce ("who's
   tucker's vet now?" of "My dog Tucker is an old black lab"). What someone
   else does with the asker's own thing asked of is the asker's ("Kristin's
   friend Marcy is a CPA, she's doing my taxes this year" for "Who does my
   taxes now?"), and for a question of a thing of the asker's a named holder's
   news is of that thing ("Dickie stepped down, the town hired Amy Robbins as
   harbormaster").
2. **Which value.** For a question about the asker or the asker's relation,
   the best ``window`` hits take their priorities in the order of their cosine
   to the question (``by_meaning``; one that says its value is new or changed
   adds ``cue_terms`` times its share of the question's search terms: "Dr.
   Costa retired, so my check-ups are with Dr. Rossi now" for "Who does my
   check-ups currently?"), statements before the asker's own
   questions, requests and suppositions ("Can you suggest a podcast for my
   commute?" states no way of commuting, "I might move to Lisbon" no home),
   and for a question about now, statements of how things are before those of
   how they were ("I lived in Paris for two years"). Among them, statements
   about the question's subject (for a question that names no one, "Who insures
   the cafe now?", the asker's and what is said of a thing with no one named,
   "The cafe's insurance is with Aviva") that answer it alike form a group (a question,
   request or supposition is no newer value, whatever words of change it has:
   "Remind me to buy milk"; nor, for a question about now, a past state):
   their embeddings' cosine (for a fact ``ingest`` drew from a turn, at most
   its turn's: the speaker's name it carries is no shared attribute) at least
   ``pair_similarity``
   (``cue_pair_similarity`` when the newer one says its value is new or
   current, "my new ...", "now"; ``change_pair_similarity`` when it says with a
   word of change that it changed, "switched", "sold", "instead"; either only
   when it was said after the older one, in another session: two statements
   said at one time, in one batch, or in one conversation are no update of
   each other); each
   with words the other lacks; each with a cosine to the question within
   ``query_band`` of the best one's (``cue_band`` times that for a memory with
   an update cue; beyond it, a memory that says with a word of change that it
   changed still pairs with one it shares a content word with: "Lately I order
   a flat white instead" / "My usual coffee order is a cold brew"); and the
   older one the newer one's most alike (within ``nearest_margin``; with no
   margin when the write already linked it, or a fact drawn from it, to the
   memory it replaced) among what was said before it: an update changes the
   fact it is most like, so "My new phone is a Pixel" is no change of "My new
   car is a Tesla" when "My phone is a Galaxy" is there. A value the write
   already linked to the one it replaced is the end of that chain: a newer
   memory joins it only at ``pair_similarity`` ("Today was my first day at
   Heineken" is no change of "Since January I eat flexitarian"), or at
   ``cue_pair_similarity`` with a content word both say ("Switched the weekly
   shop to Aldi" / "We've started getting an Ocado delivery instead of going to
   a shop"); a step the write did not link counts as alike as the chain it
   belongs to (a pause said between a value and its replacement, alike to the
   first). Two statements that share a word of a name, not a value ("I live in
   Leeds" / "I support Leeds United"), pair only when the newer says it changed. A
   group keeps its priorities but hands them out by when each memory was said
   (the statements of one session as said at once, the best answer first):
   for a "now" question the newest gets the group's best, for a "before"
   question the newest gets the group's last and the one before it the best,
   for a "first" question ("What was my first phone?") the oldest the best
   (a past state counts as older than any present one, whenever it was said).
   Past-tense questions about events and questions naming a time window are
   left to the time signal. For a "before" question a superseded memory whose
   current successor is among the best hits first swaps places with it (and no
   older value of its chain stays above it); for a "first" question the swaps
   go on down the chain to its start. For "before", an ending that names no
   value ("I quit the choir") states none. A question for the value before a
   named one ("Where did I work before Siemens?") is no time window: the
   predecessor of the first statement naming it goes first. An ending that
   only ends a value ("Cancelled Netflix after they put the price up") gives
   its place for "now" to a newer statement of the same thing that says it is
   new ("Signed up for Disney+"). A fact ``ingest`` drew from part of a turn
   gives its place to the turn when the turn names a value the fact does not.
   News after a change that names its value, naming none itself ("new carrier
   activated via eSIM" after "moving to Visible next month"), and the end of
   what it calls the old one ("old checking closed" after "switched bank ->
   Ally"), tell of the value that change named: for "now" the change goes first.
   So does news of the thing that tells nothing new ("Rent review notice came"
   after "Letter from the new landlords, Hamilton Estates"), whatever named it.
   The end of an old value said after the new one was named ("opened a
   checking account at Downeast Credit Union", then "closed out the Bar Harbor
   account finally") leaves the new one first.

0. **Which memory holds the value now** (first, for a "now" question about
   the asker or their relation; ``successors``). Superseded memories are
   searched too, and each one found leaves the hits: the memory that replaced
   it (the end of its chain of replacements, fetched in the reader's own view
   if it is no candidate) takes the better of the two's priorities, and its
   cosine to the question and calibrated score are the better of the two's.
   "I work at Nokia" matches "Where do I work now?" word for word; "I quit
   Nokia and joined Philips", which replaced it, shares no word with the
   question yet answers it. A conversation turn that a superseded fact
   restates (``ingest`` keeps both) is as stale as that fact, unless a
   current fact restates it too.

Otherwise superseded memories are searched only for "before" and "first"
questions, questions in the past tense about the asker's own ("What was my
rabbit's name?") and questions naming a time (:func:`include_history`); they
never reach a "now" question. For those questions their priority reads their
confidence as it was before the contradiction cut it (``RecallContext.history``), and the time
signal counts a superseded memory as from every day it held. ``explain``
shows the change as the ``currency`` signal (the priority added or taken),
beside the other signals.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping, Sequence, Set
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np

from ..config import CurrencyRecall
from ..lifecycle.reconcile import (
    ends_a_value_only,
    ends_with_no_news,
    names_by_name,
    names_more,
    one_name_in_another,
    says_an_end,
    time_name,
    word_stem,
)
from ..lifecycle.slots import (
    NAME_INSIDE,
    OLD_WORDS,
    Aspect,
    asked_relation,
    aspect_of,
    called_by_name,
    change_cue,
    company_only,
    different_things,
    first_of_its_kind,
    introduced_names,
    is_person,
    kin,
    leaves_own_thing,
    left_words,
    people_named,
    question_subject,
    recased,
    relation_names,
    says_changed,
    says_now,
    statement,
    told_in_person,
    told_of,
)
from ..models import EXTRACTED, Hit, MemoryRecord, Status
from .calibration import coverage
from .collapse import evidence_turns, restated_turn
from .context import speaker_of
from .signals.base import RecallContext
from .successors import CHAIN, meaning, replaced_by_drawn, successors_answer
from .text import query_terms, term_stem

if TYPE_CHECKING:
    from datetime import datetime

    from ..access import ScopeFilter
    from ..stores import Store

__all__ = ["SCAN", "Question", "current_first", "include_history", "question_of"]


@dataclass(frozen=True, slots=True)
class Question:
    """What the currency step needs to know about the query."""

    aspect: Aspect | None
    subject: str
    window: bool
    #: The query says "now" (or "currently", "these days") in so many words.
    says_now: bool = False
    #: The value a question about before names as the later one ("Where did I work
    #: before Siemens?" → ``"siemens"``), lower-cased; see :func:`value_anchor`.
    anchor: str | None = None
    #: The relation whose name the question asks for ("Who is my manager now?" →
    #: ``"manager"``; :func:`.slots.asked_relation`).
    relation: str | None = None
    #: The subject is one of the asker's people or pets (:func:`.slots.introduced_names`:
    #: "our two teenagers, Ellie and Sam") whom the memory tells of, no speaker of it
    #: ("Which team does Sam play for now?" of "Sam's moved to Whalley Range");
    #: set by :func:`current_first` from the hits.
    told_of: bool = False
    #: The question names no one and asks of a thing ("Who insures the cafe now?"):
    #: the asker's, as is a memory of that thing that names no one ("The cafe's
    #: insurance is with Aviva").
    thing: bool = False
    #: The query as asked (a name written in lower case is read again, :func:`current_first`).
    text: str = ""

    @property
    def about_asker(self) -> bool:
        """Whether the query is about the asker or the asker's relation ("Where do I
        live?", "What car did my brother have in 2023?"), not a named third person."""
        return self.subject == "self" or is_person(self.subject)

    @property
    def reorders(self) -> bool:
        """Whether hits of the same group are reordered by time: questions about the
        present or an earlier value of the asker, the asker's relation or one of
        the asker's people the memory tells of (:attr:`told_of`), naming no time.
        A name in a store of facts about people ("What does Mia like?") is left
        to the search.

        Questions about a speaker of the memory ("What is Caroline's job?" of a
        conversation with Caroline) are left alone: in a multi-party transcript
        they mostly ask about events, and on the LoCoMo dev split reordering them
        cost recall@10 0.08."""
        mine = self.about_asker or self.told_of
        return self.aspect in ("now", "before", "first") and not self.window and mine


def question_of(query: str, window: bool, anchor: str | None = None) -> Question:
    """The aspect and subject of ``query`` (the asker, ``"self"``, when a question
    for an earlier value names no one); ``window``: the query names a time;
    ``anchor``: the event it places the answer before or after, if any. A value the
    asker names as the later one ("before Siemens", "before the Pixel 7") is no
    time: the question asks for the value before it. So is the change itself
    ("before switching", "before the move") or the value held now ("before this
    one") in a question about the asker's own: it asks for the value before."""
    aspect = aspect_of(query)
    value = value_anchor(anchor) if aspect == "before" else None
    subject = question_subject(query)
    # a question for a value that names no one asks of the asker's own world: in
    # one's own memory, "Which bike was stolen?" is one's own bike, and "Who
    # insures the cafe now?" the asker's cafe (in a store of facts nobody states as
    # their own, "Where are build logs kept?", no memory is the asker's either)
    thing = not subject and aspect in ("now", "before", "first")
    if thing:
        subject = "self"
    own = subject == "self" or is_person(subject)
    relation = asked_relation(query) if subject == "self" else None
    now = says_now(query)
    if aspect == "before" and own and anchor and _the_change_itself(anchor):
        return Question(aspect, subject, window, now, relation=relation, thing=thing, text=query)
    if value is not None and own:
        window = window and not anchor
        return Question(aspect, subject, window, now, value, relation, thing=thing, text=query)
    return Question(
        aspect,
        subject,
        window or anchor is not None,
        now,
        relation=relation,
        thing=thing,
        text=query,
    )


#: Anchors that point at the value held now: "before this one".
_THIS_ONE = frozenset({"this", "that", "this one", "that one"})


#: Words that make an anchor the newest change, whatever it is called.
_LATEST = frozenset({"latest", "recent"})


def _the_change_itself(anchor: str) -> bool:
    """Whether a question's anchor is the change of the value it asks about ("before
    switching", "before the move", "before the career change": a word of change
    that closes it), the newest change ("before the latest reshuffle") or the value
    held now ("before this one", "before the electric one"); not an event of its
    own ("before the trip") or one change of several, told as such ("before the
    move up to Scotland", "before the practice got taken over")."""
    low = anchor.lower()
    words = low.split()
    # "the new one", "my electric one": the value the asker holds now, told by what
    # it is like
    one = len(words) >= 3 and words[0] in ("the", "my", "our") and words[-1] == "one"
    # "before the latest reshuffle", "before my most recent move": the newest change
    latest = len(words) >= 2 and not _LATEST.isdisjoint(words[:-1])
    return low in _THIS_ONE or one or latest or change_cue(words[-1]) is not None


def value_anchor(anchor: str | None) -> str | None:
    """``anchor`` lower-cased when it is a name ("Siemens", "the Pixel 7", "Chase"),
    not an event ("the trip", "the reorg") or a feast ("Christmas")."""
    if not anchor:
        return None
    words = anchor.split()
    if words[0].lower() in ("the", "my", "our"):
        words = words[1:]
    if not words or not all(w[:1].isupper() or w[:1].isdigit() for w in words):
        return None
    if not words[0][:1].isupper() or any(time_name(w) for w in words):
        return None
    return " ".join(words).lower()


def include_history(q: Question, opts: CurrencyRecall) -> bool:
    """Whether superseded memories are searched: questions about before, the first
    value, a time or, in the past tense, the asker's own; and (``successors``)
    questions about the present value, where a superseded match hands its place
    to the memory that replaced it."""
    if not opts.enabled:
        return False
    if opts.successors and q.reorders and q.aspect == "now":
        return True
    # and the first value, of the asker's or of a name: whether the name is one of
    # the asker's people ("Which vet was Pepper with at the start?") only the hits
    # say, after the search (a write may have retired the first value)
    earliest = q.aspect == "first"
    # and a question in the past tense about the asker's own ("What was my rabbit's
    # name?"): what held then may have been retired since
    past_own = q.aspect == "past" and q.about_asker
    return opts.history and (
        q.aspect == "before" or earliest or past_own or (q.window and q.aspect is not None)
    )


def _subject(
    record: MemoryRecord,
    fields: Sequence[str],
    names: Mapping[str, str] | None = None,
    asked: str | None = None,
    own_relation: str | None = None,
    kin_asked: str | None = None,
    known: frozenset[str] = frozenset(),
) -> tuple[str, str | None]:
    """(whom the memory is about, its speaker's first name): "self" means its speaker
    (its author, or for a fact ``ingest`` drew, whose "I" it rewrote as a name), and
    so does the speaker's name ("Alice has a dog" written down from Alice's words).
    ``names``: people known by a relation (:func:`relation_names`), who are it;
    ``asked``: the one of them the question names, whom the speaker's own words
    naming her are about ("Priya has moved into hospital work, so we've reshuffled
    the school runs"); an author among them speaks of that relation ("Melanie: I
    work at Nike" after "Caroline: my friend Melanie ..."); ``own_relation``: the
    relation whose name the question asks for, which a memory introducing someone
    by it answers as the speaker's own; ``kin_asked``: the relation the question
    asks of, which the speaker's words calling her by it as a name are about
    ("helped Mom move in" for "Where does my mother live now?"); ``known``: the
    names the hits give people, whose fact a memory opening on one is, whatever
    "I" a later clause says (:func:`.slots.told_of`)."""
    who = statement(record.content).subject
    if who == "self" and known:  # "Walter sees a dermatologist too now, ... and I ..."
        who = told_of(record.content, known) or who
    if kin_asked and who in ("self", "") and called_by_name(record.content, kin_asked):
        who = kin_asked  # and "The agency has handed Mum over to someone new, Grace"
    if own_relation and kin(who) == kin(own_relation):
        # "My boss is Harriet" names the asker's boss, and "My boss has transferred to
        # London, so I report to Desmond" says who holds the role changed
        said = statement(record.content)
        if says_changed(said.cue) or any(
            kin(rel) == kin(own_relation) for _, rel in relation_names(record.content)
        ):
            who = "self"
    if names:
        who = names.get(who, who)
        if asked and who == "self" and asked in _names_in(record.content):
            # not where the speaker only introduces her further on: "I live in
            # Chorlton with my husband Martin" is the speaker's home, and "We have a
            # cat called Pickle" no fact of Pickle's ("Our spaniel Biscuit is
            # registered with Riverside Vets" opens on her, and is hers); nor where
            # she is only company ("... doing the weekend bake with Jonah")
            if _opens_on(record.content, asked) or (
                asked not in introduced_names(record.content)
                and asked not in company_only(record.content)
            ):
                who = names[asked]
    author = speaker_of(record, fields)
    name = author.split()[0].lower() if author else None
    if name and who in ("self", name) and names and name in names:
        return names[name], name  # a speaker known by relation speaks of herself
    return ("self" if name and who == name else who), name


_NAME_WORD = re.compile(r"[a-z][a-z'-]*")


def _opens_on(text: str, name: str) -> bool:
    """Whether ``name`` stands among the first three words of ``text`` ("Our spaniel
    Biscuit is ...", "My wife Priya plays ..."): the text is about them."""
    words = _NAME_WORD.findall(text[:80].lower().replace("\u2019", "'"))[:3]
    return any(w.removesuffix("'s") == name for w in words)


def _names_in(text: str) -> set[str]:
    """The words of ``text``, lower-cased, a possessive's "'s" dropped ("Maya's new
    piano teacher" names Maya)."""
    words = _NAME_WORD.findall(text.lower().replace("\u2019", "'"))
    return {w.removesuffix("'s") for w in words}


def _name_of(relation: str, names: Mapping[str, str]) -> str | None:
    """The one name the hits know ``relation`` by ("Our daughter Maya ..." for
    "Who teaches our daughter piano now?"), or None for none or several."""
    known = {name for name, rel in names.items() if kin(rel) == kin(relation)}
    return next(iter(known)) if len(known) == 1 else None


def _named_in_lower_case(q: Question, introduced: frozenset[str]) -> Question:
    """``q``, a question that seemed to name no one, about the person or pet it names
    in lower case when the hits introduce them ("who's tucker's vet now?" of "My dog
    Tucker is an old black lab"): chat writes names as words."""
    subject = question_subject(recased(q.text, introduced, anywhere=True))
    if not subject or subject == "self":
        return q
    return replace(q, subject=subject, thing=False, relation=None)


#: The speaker's own thing, named after "my" or "our": "doing my taxes".
_MY_THING = re.compile(r"\b(?:my|our)\s+([a-z][\w-]*)", re.IGNORECASE)


def _does_mine(text: str, terms: frozenset[str]) -> bool:
    """Whether ``text`` names, as the speaker's, a thing a question asks of (its search
    ``terms``), no person of theirs, in a clause of someone else's doing: "she's doing
    my taxes this year" for "Who does my taxes now?", not "my sister lives in Rome"
    for "Where do I live?" nor the speaker's aside in another's news ("niamh's
    started biking, i'm staying on my bus")."""
    return any(
        term_stem(m[1].lower()) in terms and not is_person(m[1].lower())
        for clause in _CLAUSE.split(text)
        if clause and _THEIR_DOING.match(clause)
        for m in _MY_THING.finditer(clause)
    )


#: A clause of someone else's doing: "she's doing ...", "Marcy does ...", not the
#: speaker's own aside in another's news ("i'm staying on my bus").
_THEIR_DOING = re.compile(r"\s*(?:(?i:she|he|they)\b|[A-Z][a-z]+\b(?!['\u2019]s\b))")


def _told_of(name: str, about: Collection[tuple[str, str | None]]) -> bool:
    """Whether the hits (whom each is about, and its speaker) tell of ``name`` and
    none is in their own words: a person the asker tells of, no speaker of the memory."""
    told = any(who == name for who, _ in about)
    return bool(name) and told and all(author != name for _, author in about)


def _matches(
    q: str,
    who: str,
    author: str | None,
    now: bool = False,
    people: Set[str] = frozenset(),
    told: bool = False,
    thing: bool = False,
) -> bool | None:
    """True: about the question's subject; False: about someone else; None: can't say.
    ``people``: names known as people's (:func:`.slots.people_named`), whose
    statements are someone's ("Keisha's new mentor is Aaron Blum"), where a name
    alone may be a thing ("Tesco's prices went up"); ``told``: ``q`` is a person
    the asker tells of (:attr:`Question.told_of`), so the asker's own facts are not
    theirs; ``thing``: ``q`` asks of a thing of the asker's (:attr:`Question.thing`),
    which a memory about no one tells of.

    ``now``: the question asks about the present in so many words, so another
    speaker's own words are about that speaker ("Melanie: I live in Munich" for
    "Where does Caroline live now?"). A question without them ("What is
    Caroline's job?") is mostly about the events of a dialogue, where one
    speaker's turn is often the evidence about the other."""
    person = is_person(who) or who in people
    if q == "self":
        if who == "self" or (thing and not person):
            return True
        return False if person else None
    if is_person(q):
        if kin(who) == kin(q):
            return True  # "Mom moving to Friendship Village" for "my mother"
        return False if who == "self" or person else None
    if who == q or (who == "self" and author == q):
        return True
    if told:
        return False if who == "self" or person else None
    if now and who == "self" and author is not None:
        return False
    return None


#: At least this many of the best hits are read for whom they are about (a hit
#: further down does not reach the top ``k`` by the step's reordering).
SCAN = 30


def current_first(
    ctx: RecallContext,
    hits: list[Hit],
    q: Question,
    k: int,
    explain: bool,
    terms: frozenset[str] = frozenset(),
) -> list[Hit]:
    """``hits`` (priority order) after the currency step; see the module docstring.
    ``terms``: the question's search terms (:func:`.calibration.search_terms`)."""
    opts = ctx.settings.retrieval.currency
    if not opts.enabled or q.aspect is None or not q.subject or not hits:
        return hits
    fields = ctx.settings.retrieval.author.fields
    before = {h.memory.id: h.score for h in hits}
    if ctx.successors:  # superseded memories were searched for this step alone
        hits = successors_answer(ctx, hits)
        before.update((h.memory.id, h.score) for h in hits if h.memory.id not in before)
    read = hits[: max(SCAN, k, opts.window)]
    # chat in lower case names the asker's people as words ("róisín's moving to
    # dublin"): each hit is read for whom it is about with the names the hits
    # introduce capitalised
    introduced = frozenset(n for h in read for n in introduced_names(h.memory.content))

    def as_named(record: MemoryRecord) -> MemoryRecord:
        text = recased(record.content, introduced)
        return record if text == record.content else replace(record, content=text)

    named = {h.memory.id: as_named(h.memory) for h in read}
    if q.thing and q.text:  # "who's tucker's vet now?": of one the hits introduce
        q = _named_in_lower_case(q, introduced)
    # a person the hits introduce as a relation ("My wife Priya ...") is that
    # relation wherever named: "Which group does Priya play with now?" asks of the
    # asker's wife, and "Priya has joined a quartet" is about her
    names = dict(pair for r in named.values() for pair in relation_names(r.content))
    asked = q.subject if q.subject in names and not q.about_asker else None
    if asked is not None:  # and what the speaker says naming her is about her
        q = replace(q, subject=names[asked])
    elif is_person(q.subject):  # so is it when the question names the relation
        asked = _name_of(q.subject, names)
    # "Who is my manager now?" asks the asker's own fact, which "my manager Karen
    # signed off my leave" states: the relation named there is the asker's value
    kin_asked = q.subject if is_person(q.subject) else None
    # and a name the hits give a person is someone's, whatever else it may name
    people = frozenset(n for r in named.values() for n in people_named(r.content))
    known = people | frozenset(names)
    about = {
        mid: _subject(r, fields, names, asked, q.relation, kin_asked, known)
        for mid, r in named.items()
    }
    if (
        asked is None
        and not q.about_asker
        and _told_of(q.subject, about.values())
        and (
            q.subject in introduced
            or any(told_in_person(r.content, q.subject) for r in named.values())
        )
    ):
        # one of the asker's people or pets ("our two teenagers, Ellie and Sam", "Our
        # spaniel Biscuit"), or one the asker names beside themselves ("Arnie's back!
        # ... came over with us"), told of and no speaker: what the asker says naming
        # them is about them too, as for a relation (a name in a store of facts
        # about people, where no one says "I", is left to the search)
        q, asked, names = replace(q, told_of=True), q.subject, {**names, q.subject: q.subject}
        about = {
            mid: _subject(r, fields, names, asked, q.relation, kin_asked, known)
            for mid, r in named.items()
        }
    match = {
        mid: _matches(q.subject, *who, q.says_now, people, q.told_of, q.thing)
        for mid, who in about.items()
    }
    if q.subject == "self" and terms:  # "she's doing my taxes this year" of "Kristin's
        # friend Marcy Dow is a CPA": another's doing with the asker's own thing asked of
        for mid, same in match.items():
            if same is False and _does_mine(named[mid].content, terms):
                match[mid] = True
    ctx.elsewhere.update(mid for mid, same in match.items() if same is False)
    if opts.other_subject_factor < 1:  # not only the window: none below it may outrank
        for h in read:
            if match[h.memory.id] is False:
                h.score *= opts.other_subject_factor
        # the hits read stay ahead of the rest (unread, so not judged either way)
        hits[: len(read)] = sorted(read, key=lambda h: (-h.score, h.memory.id))
    top = _window(hits, opts.window)
    now = q.aspect == "now"

    def states(h: Hit) -> bool:
        """Whether the hit states a value: a question, a request or a supposition
        ("I might move to Lisbon") states none, and for a question about now
        neither does one that held once ("I lived in Paris for two years"); for one
        about before, an ending that names no value ("I quit the choir") or ends
        the old one ("old checking closed; ... in the new one") neither."""
        text = h.memory.content
        said = statement(text)
        if now:
            return said.states_now
        return said.states and not ends_a_value_only(text) and not _ends_the_old(text)

    def answers(h: Hit) -> float:
        """The hit's cosine to the question plus its share of the question's terms
        times ``cue_terms`` for one that says its value is new or changed, else
        times ``plain_terms``."""
        cos = meaning(ctx, h.memory.id)
        weight = opts.cue_terms if statement(h.memory.content).cue else opts.plain_terms
        if weight and terms:
            return cos + weight * coverage(h.memory, terms)
        return cos

    # someone else's facts, and questions, stay below; a question of a thing keeps the
    # search's order but for the groups below (what else the priority weighs, such
    # as a memory's strength, still counts: "Where are build logs kept?")
    if q.reorders and opts.by_meaning and not q.thing:
        _hand_out(top, lambda h: (match[h.memory.id] is not False, states(h), answers(h)))
    if q.reorders and now and opts.by_meaning:
        _past_the_end(ctx, top, lambda h: bool(match[h.memory.id]) and states(h), opts)
    if q.reorders and q.aspect in ("before", "first"):
        # the one before the newest; for the first, down the chain to its start
        first = q.aspect == "first"
        for _ in range(CHAIN if first else 1):
            if not _predecessors_up(hits, top, walk=first):
                break
        top = sorted(top, key=lambda h: -h.score)
        for h in top:  # a predecessor may come from below the hits read
            if h.memory.id not in about:
                about[h.memory.id] = _subject(
                    as_named(h.memory), fields, names, asked, q.relation, kin_asked, known
                )
                match[h.memory.id] = _matches(
                    q.subject, *about[h.memory.id], q.says_now, people, q.told_of, q.thing
                )
    if q.reorders:  # what states no value is no newer one
        own = [h for h in top if match[h.memory.id] and states(h)]
        best = max((meaning(ctx, h.memory.id) for h in own), default=0.0)
        # beyond the band, a memory that says with a word of change that its value
        # changed may still join one it shares a word with (``_groups``)
        beyond = {
            h.memory.id
            for h in own
            if meaning(ctx, h.memory.id) < best - _band(h, opts) and _says_changed(h)
        }
        own = [
            h
            for h in own
            if h.memory.id in beyond or meaning(ctx, h.memory.id) >= best - _band(h, opts)
        ]
        pool = [h.memory for h in hits if match.get(h.memory.id)]
        for group in _groups(ctx, own, pool, about, opts, beyond, drawn=top, thing=q.thing):
            _by_time(group, q.aspect, lambda h: meaning(ctx, h.memory.id), known)
        _whole_turns_up(ctx, top, fields)
        if q.anchor and q.aspect == "before":
            _before_the_named(ctx, top, q.anchor, [h for h in top if match[h.memory.id]], opts)
    if explain:
        for h in hits:
            if h.explain is not None:
                h.explain.signals["currency"] = round(h.score - before[h.memory.id], 6)
                h.explain.final = h.score
    # the hits read (and a predecessor brought up) in their new order, then the rest
    judged = {h.memory.id for h in read} | {h.memory.id for h in top}
    head = sorted((h for h in hits if h.memory.id in judged), key=lambda h: (-h.score, h.memory.id))
    return head + [h for h in hits if h.memory.id not in judged]


def _said_as(record: MemoryRecord) -> str:
    """The id of the statement ``record`` says: the turn a fact was drawn from
    alone, else its own (a fact and its turn say one thing)."""
    return restated_turn(record) or record.id


def _window(hits: list[Hit], n: int) -> list[Hit]:
    """The best hits saying ``n`` different things: a fact ``ingest`` drew from a turn
    and the turn count as one ("Cleo's coffee machine is making a weird noise" and
    the turn it restates), so restatements leave the window room for a change."""
    seen: set[str] = set()
    for i, h in enumerate(hits):
        said = _said_as(h.memory)
        if said not in seen and len(seen) == n:
            return hits[:i]
        seen.add(said)
    return list(hits)


def _hand_out(hits: list[Hit], key: Callable[[Hit], tuple[bool, bool, float]]) -> None:
    """Give ``hits`` their own priorities again, best to the highest ``key``."""
    slots = sorted((h.score for h in hits), reverse=True)
    ranked = sorted(hits, key=lambda h: h.memory.id)
    ranked.sort(key=key, reverse=True)
    for h, value in zip(ranked, slots, strict=True):
        h.score = value


def _past_the_end(
    ctx: RecallContext, top: list[Hit], own: Callable[[Hit], bool], opts: CurrencyRecall
) -> None:
    """A memory that only ends a value, naming no next one ("Tobi and I broke up"
    for "My boyfriend is Tobi"), says there is none now, until the speaker says
    then or later that a value is new or current and it answers the question
    within ``query_band`` of the ending's own cosine: the newest such one takes
    the ending's place. When the ending says nothing else
    (:func:`.reconcile.ends_with_no_news`) any such one does ("I met someone new,
    his name is Lukas", which shares no word with either); else one of the same
    thing (:func:`.reconcile.ends_a_value_only`): at least ``pair_similarity``
    alike to the value the ending replaced ("Cancelled Netflix after they put the
    price up" / "We mostly watch stuff on Netflix" / "Signed up for Disney+"), or
    the replacement of a value at least ``pair_similarity`` alike to the ending
    ("I've had to stop the Saturday volunteering for now" / "Started helping out
    at the RSPCA shelter", which replaced "On Saturdays I volunteer at the food
    bank"). An ending of what it calls the old one ("old checking closed") gives
    its place as well to a change named between the value it ended and it
    ("switched bank -> Ally"). ``own``: whether a hit is the speaker's statement."""
    ended = {h.memory.id: ctx.replaced.get(h.memory.id) or h.memory.supersedes for h in top}
    ends = [h for h in top if ended[h.memory.id] and says_an_end(h.memory.content)]
    if not ends:
        return
    missing = [e for e in ended.values() if e and e not in ctx.records]
    fetched: dict[str, MemoryRecord] = {}
    if missing and ctx.store is not None and ctx.view is not None:
        fetched = {r.id: r for r in ctx.store.get(missing, ctx.view)}
    fields = ctx.settings.retrieval.author.fields
    vectors: Mapping[str, np.ndarray] | None = None
    for end in sorted(ends, key=lambda h: -h.score):
        mid = ended[end.memory.id] or ""
        old = ctx.records.get(mid) or fetched.get(mid)
        floor = ctx.dense.get(end.memory.id, 0.0) - opts.query_band
        # the end of "the old" one follows the change that named the next: "switched
        # bank -> Ally" / "old checking closed" (which ended "Chase checking ...")
        since = old.said_at if old is not None and _ends_the_old(end.memory.content) else None
        later = [
            h
            for h in top
            if h.score < end.score
            and (
                h.memory.said_at >= end.memory.said_at
                or (since is not None and h.memory.said_at > since and _named_change(h))
            )
            and own(h)
            and statement(h.memory.content).cue is not None
            and meaning(ctx, h.memory.id) >= floor
        ]
        if not later:
            continue
        speaker = speaker_of(end.memory, fields)
        # (the old one's end: a named change after what it ended is the next)
        if since is None and (
            old is None or not ends_with_no_news(end.memory.content, old.content, speaker)
        ):
            if not ends_a_value_only(end.memory.content, old.content if old else None, speaker):
                continue  # it names the next value itself: "we live in Oslo now"
            if vectors is None:
                ids = {h.memory.id for h in top} | {e for e in ended.values() if e}
                vectors = _vectors(ctx, ids)
            later = [h for h in later if _same_thing(end, mid, h, ended, vectors, opts)]
        if later:
            newest = max(later, key=lambda h: (h.memory.said_at, h.memory.id))
            end.score, newest.score = newest.score, end.score


def _vectors(ctx: RecallContext, ids: Set[str]) -> Mapping[str, np.ndarray]:
    """The stored vectors of ``ids`` in the reader's view (none without a store)."""
    if ctx.store is None or ctx.view is None:
        return {}
    return ctx.store.memory_vectors(sorted(ids), ctx.view)


def _same_thing(
    end: Hit,
    old: str,
    later: Hit,
    ended: Mapping[str, str | None],
    vectors: Mapping[str, np.ndarray],
    opts: CurrencyRecall,
) -> bool:
    """Whether ``later`` tells of the thing the ending ``end`` ended: alike to the
    value ``old`` it replaced, or the replacement of a value alike to the ending."""

    def cos(a: str | None, b: str | None) -> float:
        va, vb = vectors.get(a or ""), vectors.get(b or "")
        return -1.0 if va is None or vb is None else float(va @ vb)

    if old and cos(later.memory.id, old) >= opts.pair_similarity:
        return True
    return cos(end.memory.id, ended.get(later.memory.id)) >= opts.pair_similarity


def _before_the_named(
    ctx: RecallContext, top: list[Hit], anchor: str, own: list[Hit], opts: CurrencyRecall
) -> None:
    """ "Where did I work before Siemens?": the first of the speaker's statements
    naming the value (``anchor``) has a predecessor, the memory it replaced on
    write, or itself when it names what it ended ("finally retired my old OnePlus,
    got a Pixel 7"), or else the one most alike to it (at least
    ``cue_pair_similarity``) among the speaker's statements said before it; that
    one takes the best place."""
    named = [h for h in own if anchor in h.memory.content.lower()]
    if not named:
        return
    later = min(named, key=lambda h: (h.memory.said_at, h.memory.id))
    before = [
        h
        for h in own
        if anchor not in h.memory.content.lower()
        and h.memory.said_at < later.memory.said_at
        and statement(h.memory.content).states
    ]
    prev = next((h for h in before if h.memory.id == later.memory.supersedes), None)
    if prev is None and says_an_end(later.memory.content):
        prev = later  # it names what it ended: "finally retired my old OnePlus, got a Pixel 7"
    if prev is None:
        vectors = _vectors(ctx, {h.memory.id for h in [later, *before]})
        ref = vectors.get(later.memory.id)
        scored = [
            (float(vectors[h.memory.id] @ ref), h)
            for h in before
            if ref is not None and h.memory.id in vectors
        ]
        alike = [(c, h) for c, h in scored if c >= opts.cue_pair_similarity]
        if not alike:
            return
        prev = max(alike, key=lambda ch: (ch[0], ch[1].memory.id))[1]
    head = max(top, key=lambda h: h.score)
    if head is not prev:
        head.score, prev.score = prev.score, head.score


def _whole_turns_up(ctx: RecallContext, top: list[Hit], fields: Sequence[str]) -> None:
    """A fact drawn from part of a turn gives its place to the turn when the turn
    names a value the fact does not: "Dropped my Pixel in the lake. Replacement is
    an iPhone 15." says what the phone is now; the fact drawn from its first
    sentence, "Kim dropped Kim's Pixel in the lake", does not (the two count as one
    hit, the better-ranked shown). A memory the fact took the place of
    (:func:`.successors.successors_answer`) the turn takes the place of too."""
    by_id = {h.memory.id: h for h in top}
    for fact in sorted(top, key=lambda h: -h.score):
        turn = by_id.get(restated_turn(fact.memory) or "")
        if turn is None or turn.score >= fact.score:
            continue
        if names_more(turn.memory.content, fact.memory.content, speaker_of(fact.memory, fields)):
            fact.score, turn.score = turn.score, fact.score
            if fact.memory.id in ctx.replaced:
                ctx.replaced.setdefault(turn.memory.id, ctx.replaced[fact.memory.id])


def _says_changed(hit: Hit) -> bool:
    """Whether the hit says with a word of change that its value changed
    ("switched", "instead", "sold"), not only that it is new or current."""
    return says_changed(statement(hit.memory.content).cue)


def _band(hit: Hit, opts: CurrencyRecall) -> float:
    """How far below the best cosine to the question a memory may be and still
    join a group: ``cue_band`` times as far when it says its value changed."""
    return opts.query_band * (opts.cue_band if statement(hit.memory.content).cue else 1)


def _predecessors_up(hits: list[Hit], top: list[Hit], walk: bool = False) -> bool:
    """For a question about before: a superseded memory whose successor is among the
    best hits swaps places with it (its confidence took the contradiction's cut,
    so it may rank far below) and joins the best hits. A successor drawn from a
    conversation turn stands with that turn, so the better ranked of the two gives
    its place ("We bought a house in Potsdam and moved in" and the fact drawn from it).
    Only a current successor gives its place ("before" is the one before the value
    now), unless ``walk``: then any does, and calls repeated until none moves go
    down a chain to its start (a question for the first value). Whether one moved."""
    best = {h.memory.id: h for h in top}
    turns = {h.memory.id: h for h in top if h.memory.source != EXTRACTED}
    for h in top:
        turn = turns.get(restated_turn(h.memory) or "")
        if turn is not None and turn.score > h.score:
            best[h.memory.id] = turn  # the fact's place is its turn's
    moved: list[Hit] = []
    for h in hits:
        succ = best.get(h.memory.superseded_by or "")
        if succ is None or h.memory.status is not Status.SUPERSEDED or succ.score <= h.score:
            continue
        # "before" is the one before the current value, not before a former one
        if walk or succ.memory.status is Status.ACTIVE:
            h.score, succ.score = succ.score, h.score
            if h not in top:
                top.append(h)
            best.pop(h.memory.superseded_by or "")
            moved.append(h)
    if not walk:  # nor does a value older still outrank it ("My phone is a Pixel 7")
        chain = {h.memory.id: h for h in hits}
        # (with no current value among the best, the latest step of a chain that is:
        # "After the reorg I report to Jonas", which "... Ingrid is my boss" replaced,
        # above "My manager is Petra", which it replaced)
        latest = moved or [h for h in top if h.memory.status is Status.SUPERSEDED]
        for p in latest:
            older = [h for h in top if h is not p and _leads_to(h, p.memory.id, chain)]
            first = max(older, key=lambda h: h.score, default=None)
            if first is not None and first.score > p.score:
                first.score, p.score = p.score, first.score
    return bool(moved)


def _leads_to(hit: Hit, mid: str, chain: Mapping[str, Hit]) -> bool:
    """Whether ``hit``'s replacements (among ``chain``) reach memory ``mid``."""
    at = hit.memory.superseded_by
    for _ in range(CHAIN):
        if at is None:
            return False
        if at == mid:
            return True
        nxt = chain.get(at)
        at = nxt.memory.superseded_by if nxt is not None else None
    return False


def _groups(
    ctx: RecallContext,
    own: list[Hit],
    pool: list[MemoryRecord],
    about: dict[str, tuple[str, str | None]],
    opts: CurrencyRecall,
    beyond: Set[str] = frozenset(),
    drawn: Sequence[Hit] = (),
    thing: bool = False,
) -> list[list[Hit]]:
    """Connected groups (two or more) of hits answering alike: the same speaker (or
    one unknown), each with content words the other lacks, and a cosine of at least
    ``pair_similarity`` — or a lower floor when the newer one says its value
    changed (:func:`_pair_floor`: "my new ...", "we moved to ..."): an update
    shares few words with what it replaces. The lower floor holds only for a
    newer one said after the older: "I'm enrolled at ETH Zurich" (a word of
    change) said with "Home for me is Helsinki" changes no home.

    And the older one must be (within ``nearest_margin``) the newer one's most alike
    among the older memories about the subject in ``pool`` (the hits about the
    question's subject, ``own`` among them) and the
    memory the newer one already replaced on write: an update changes the fact it
    is most like, so "My new phone is a Pixel" is not taken for a change of "My new
    car is a Tesla" when "My phone is a Galaxy" is there.

    A memory of ``beyond`` (one that says with a word of change that it changed,
    but answers the question far less well than the best: "Lately I order a flat
    white instead" for "What is my usual coffee order now?") pairs only with one
    it shares a content word with ("My usual coffee order is a cold brew"): the
    word it shares says it is the same attribute where its meaning does not.
    ``drawn``: hits (the window read) whose facts drawn from a grouped turn join
    that turn's group, whether or not they were judged the speaker's own.

    ``thing``: the question asks of a thing of the asker's (:attr:`Question.thing`),
    where no one's words tie two statements to one attribute: below
    ``pair_similarity`` two pair only if they share a content word ("Rebuilt the
    cafe website on Squarespace" / "The cafe website runs on Wix"; not "The standup
    moved to Thursdays" / "The helpdesk answers between 8am and 6pm")."""
    if len(own) < 2 or ctx.store is None or ctx.view is None:
        return []
    floors = {h.memory.id: _pair_floor(statement(h.memory.content).cue, opts) for h in own}
    vectors = ctx.store.memory_vectors([h.memory.id for h in own], ctx.view)
    own = [h for h in own if h.memory.id in vectors]
    m = np.stack([vectors[h.memory.id] for h in own]) if own else np.zeros((0, 0))
    sims = m @ m.T
    sims = _as_said(ctx, own, vectors, sims)
    words = [_words(h.memory.content) for h in own]
    # the name of whom both are about is no word of the attribute they share: "Ellie
    # is fifteen" and "Ellie's got her first Saturday job" share only Ellie
    whom = {term_stem(who) for who, _ in about.values()}
    stems = [_stems(h.memory.content) - whom for h in own]
    firsts = [first_of_its_kind(h.memory.content) for h in own]
    pairs: list[tuple[int, int, int]] = []  # (i, j, the newer of the two)
    apart: set[tuple[int, int]] = set()  # two changes of different things
    for i in range(len(own)):
        for j in range(i + 1, len(own)):
            # two news of different things, unless they embed as alike as one fact
            # told twice ("My new home is in Porto" / "My new flat is in Lisbon")
            if sims[i, j] < opts.distinct_similarity and different_things(
                own[i].memory.content, own[j].memory.content
            ):
                apart.add((i, j))
                continue
            a, b = about[own[i].memory.id][1], about[own[j].memory.id][1]
            same_speaker = a is None or b is None or a == b
            differ = bool(words[i] - words[j]) and bool(words[j] - words[i])
            n = max((i, j), key=lambda x: (own[x].memory.said_at, own[x].memory.id))
            if firsts[n]:
                continue  # "Ellie's got her first Saturday job" changes no earlier one
            older = j if n == i else i
            # an update's cue lowers the floor only for what was said before it,
            # in another conversation
            later = _said_apart(own[n].memory, own[older].memory)
            floor = floors[own[n].memory.id] if later else opts.pair_similarity
            far = own[i].memory.id in beyond or own[j].memory.id in beyond
            far = far or (thing and sims[i, j] < opts.pair_similarity)
            if far and not stems[i] & stems[j]:
                continue
            if sims[i, j] < opts.pair_similarity and _leaves_another(own[n], own[older]):
                continue  # "I can't take tennis any more, so I took up fencing" / a dentist
            # just under an update's floor, a content word both say is the evidence
            # the cosine lacks: "I work from the office in Altona" / "Our team went
            # fully remote, I work from home now" (.30 against .30)
            near = later and floor < opts.pair_similarity
            near = near and sims[i, j] >= floor - opts.shared_word_margin
            if near and not stems[i] & stems[j]:
                near = False
            if not (same_speaker and differ and (sims[i, j] >= floor or near)):
                continue
            if floor >= opts.pair_similarity and one_name_in_another(
                own[i].memory.content, own[j].memory.content
            ):
                continue  # two things of one name: "I live in Leeds" / "I support Leeds United"
            pairs.append((i, j, n))
    if not pairs:
        return []
    # only now the memories said before (``pool`` holds ``own`` too): the nearest
    # test of each pair's newer one
    store, view = ctx.store, ctx.view
    replaced = replaced_by_drawn(store, view, [h.memory for h in own])
    # a value the write already linked to the one it replaced is the end of that
    # chain: a newer memory changes it only when they answer alike as statements do
    # ("Today was my first day at Heineken" / "Since January I eat flexitarian",
    # which replaced "I eat paleo these days")
    ended = {i for i, h in enumerate(own) if h.memory.supersedes or replaced.get(h.memory.id)}
    # what each of those replaced on write: a step of its chain, which a newer
    # memory may be as alike to as to the chain's end
    steps = {
        i: [*replaced.get(own[i].memory.id, []), *filter(None, [own[i].memory.supersedes])]
        for i in ended
    }
    linked = _replaced_vectors(ctx, list(steps.values()))

    def alike(i: int, j: int, n: int) -> float:
        """The pair's cosine, or the newer one's with a step the older one replaced
        ("We've started getting an Ocado delivery instead" / "We do our big weekly
        shop at Sainsbury's", which "Switched the weekly shop to Aldi" replaced), or
        the older one's with a step the newer one replaced, said before the older
        ("I've had to stop the Saturday volunteering for now" / "On Saturdays I
        volunteer at the food bank", which "Started helping out at the RSPCA
        shelter" replaced): steps of one chain the write did not link. Facts
        ``ingest`` drew are compared as their turns only (see :func:`_as_said`)."""
        o = j if n == i else i
        best = float(sims[i, j])
        for a, b, after in ((n, o, False), (o, n, True)):
            if restated_turn(own[a].memory):
                continue
            for rid in steps.get(b, []):
                vec, record = linked.get(rid, (None, None))
                if vec is None or record is None or restated_turn(record):
                    continue
                if after and own[a].memory.said_at < record.said_at:
                    continue
                best = max(best, float(vec @ vectors[own[a].memory.id]))
        return best

    alikeness = {(i, j): alike(i, j, n) for i, j, n in pairs}
    pairs = [
        (i, j, n)
        for i, j, n in pairs
        if (i if n == j else j) not in ended
        or alikeness[i, j] >= opts.pair_similarity
        # a content word both say is the evidence an update's cosine lacks: "Switched
        # the weekly shop to Aldi" / "We've started getting an Ocado delivery
        # instead of going to a shop at all" (.37)
        or (stems[i] & stems[j] and alikeness[i, j] >= opts.cue_pair_similarity)
    ]
    if not pairs:
        return []
    newer = sorted({n for *_, n in pairs})
    likeness = {
        n: _most_alike(
            store,
            view,
            own[n].memory,
            pool,
            vectors[own[n].memory.id],
            replaced.get(own[n].memory.id, []),
            opts.distinct_similarity,
        )
        for n in newer
    }
    # the most alike pairs join first, and never two changes of different things
    # into one group: "My new car is a Honda Civic" and "My new phone is a Galaxy
    # S21" stay apart however both resemble "I drive a Volvo"
    member = {i: {i} for i in range(len(own))}
    for i, j, n in sorted(pairs, key=lambda p: -sims[p[0], p[1]]):
        left, right = member[i], member[j]
        # an update the write linked to what it replaced changes that fact; another
        # is taken for its predecessor only when at least as alike ("My new gym is
        # McFit", which replaced "I train at Urban Gym", is no change of "My sport
        # is water polo" at a cosine just under the gym's), as alike counting a step
        # of either's chain (``alike``)
        # (a turn's drawn fact linked on write counts as the turn's own link)
        margin = 0.0 if n in ended else opts.nearest_margin
        if left is right or alikeness[i, j] < likeness[n] - margin:
            continue
        if any((min(x, y), max(x, y)) in apart for x in left for y in right):
            continue
        left |= right
        for x in right:
            member[x] = left
    groups = {id(g): g for g in member.values() if len(g) > 1}
    # a fact drawn from a turn and the turn say one thing (as in ``_window``): where
    # one of them is in a group, so is the other ("Kim and others moved to Cologne"
    # and "We moved to Cologne in the new year", when only the turn paired with
    # "... in Leipzig now"), and so is a fact of ``drawn`` from a grouped turn that
    # was not judged the speaker's own (it has no author of its own): "Kim's
    # phone's a Pixel 6" gives its place when its turn does to "Tom got me the
    # iPhone 15"
    said = [_said_as(h.memory) for h in own]
    for g in groups.values():
        for i in list(g):
            for j in (j for j, s in enumerate(said) if s == said[i] and len(member[j]) == 1):
                g.add(j)
                member[j] = g
    out = [[own[i] for i in sorted(g)] for g in groups.values()]
    grouped = {h.memory.id for g in out for h in g}
    for hits in out:
        turns = {h.memory.id for h in hits}
        hits.extend(
            h for h in drawn if h.memory.id not in grouped and restated_turn(h.memory) in turns
        )
    return out


def _said_apart(newer: MemoryRecord, older: MemoryRecord) -> bool:
    """Whether ``newer`` was said after ``older`` in another conversation (another
    session, where both name theirs): news of a change comes between conversations.
    Two statements of one session, minutes apart, changed nothing of each other's
    ("My go-to is a cortado these days" / "Meet Rex, the puppy we brought home
    last week"); like two said at one time, they pair only as alike as one fact
    told twice."""
    return newer.said_at != older.said_at and _conversation(newer) != _conversation(older)


def _replaced_vectors(
    ctx: RecallContext, ids: Sequence[Sequence[str]]
) -> Mapping[str, tuple[np.ndarray, MemoryRecord]]:
    """The vector and record of each memory of ``ids`` (lists of what a hit replaced)."""
    wanted = {i for group in ids for i in group}
    vectors = _vectors(ctx, wanted)
    if not vectors or ctx.store is None or ctx.view is None:
        return {}
    records = {r.id: r for r in ctx.store.get(sorted(vectors), ctx.view)}
    return {i: (vectors[i], records[i]) for i in wanted if i in vectors and i in records}


def _as_said(
    ctx: RecallContext, own: Sequence[Hit], vectors: Mapping[str, np.ndarray], sims: np.ndarray
) -> np.ndarray:
    """``sims`` with each pair that holds a fact ``ingest`` drew from a turn at most
    as alike as the turns the speaker said: a drawn fact names the speaker where
    the turn says "I", and two of them share that name, not an attribute ("Cut out
    the cortado; it's a mocha for Jakob now" / "Since January Jakob eats paleo" at
    .46, their turns at .28)."""
    turns = {h.memory.id: t for h in own if (t := restated_turn(h.memory))}
    if not turns or ctx.store is None or ctx.view is None:
        return sims
    said = ctx.store.memory_vectors(list(set(turns.values())), ctx.view)
    drawn = np.array([turns.get(h.memory.id) in said for h in own])
    m = np.stack(
        [
            said[turns[h.memory.id]] if d else vectors[h.memory.id]
            for h, d in zip(own, drawn, strict=True)
        ]
    )
    either = drawn[:, None] | drawn[None, :]
    return np.where(either, np.minimum(sims, m @ m.T), sims)


def _pair_floor(cue: str | None, opts: CurrencyRecall) -> float:
    """The cosine from which a newer memory with update cue ``cue`` and an older one
    answer alike: ``change_pair_similarity`` for a word of change ("switched",
    "sold", "instead", "gave up"), ``cue_pair_similarity`` for a word that says only
    that a value is new or current, ``pair_similarity`` without a cue."""
    if cue is None:
        return opts.pair_similarity
    return opts.change_pair_similarity if says_changed(cue) else opts.cue_pair_similarity


def _most_alike(
    store: Store,
    view: ScopeFilter,
    newer: MemoryRecord,
    pool: list[MemoryRecord],
    vector: np.ndarray,
    drawn_replaced: Sequence[str],
    distinct: float,
) -> float:
    """The highest cosine between ``newer`` and a memory of ``pool`` said before it
    or the memory it replaced on write (for a conversation turn, what the facts
    drawn from it replaced, ``drawn_replaced``: "Got a Xperia 5 today, the Pixel 7
    finally died" changed "I use a Pixel 7", not "I bought a Volvo XC60"). A memory
    drawn from the same conversation turn (a fact and its evidence) says the same
    thing, not an earlier value, and is passed over; so is news of a different thing
    below ``distinct`` (the groups keep such two apart too): "Got my new SAS
    frequent flyer card" is no earlier value of "Picked up my new Brompton"."""
    source = _sources(newer)
    earlier = {r.id: r for r in pool if r.said_at < newer.said_at and not source & _sources(r)}
    ids = [*earlier]
    if newer.supersedes:
        ids.append(newer.supersedes)
    ids.extend(drawn_replaced)
    scores = store.vector_scores(vector, ids, view)
    return max(
        (
            score
            for mid, score in scores.items()
            if mid not in earlier
            or score >= distinct
            or not different_things(newer.content, earlier[mid].content)
        ),
        default=-1.0,
    )


def _sources(record: MemoryRecord) -> set[str]:
    """The memory and the turns it was drawn from (``metadata["evidence"]``)."""
    return {*evidence_turns(record), record.id}


#: Words that say a value changed or is new, whatever it is: shared, they make no
#: two memories one attribute ("I switched gyms" / "I switched banks").
_CHANGE_WORDS = frozenset(
    """now new instead lately currently nowadays anymore since first switched switch moved
    changed replaced""".split()
)


def _leaves_another(newer: Hit, older: Hit) -> bool:
    """Whether ``newer`` says what it left (:func:`.slots.left_words`: "I quit the
    choir", "I can't take tennis any more") and ``older`` names none of it: a change
    that names its old value changes a memory that names it. One that tells what it
    left as a thing of the speaker's own ("Traded in my old car for a Kia Niro")
    names its kind, not its value: it may change "I drive a little red Fiat 500"."""
    left = left_words(newer.memory.content)
    if not left or leaves_own_thing(newer.memory.content):
        return False
    return not {term_stem(w) for w in left} & _stems(older.memory.content)


def _stems(text: str) -> frozenset[str]:
    """The text's content words (no stopwords, no words of change), stemmed as
    query terms are: "orders" and "order" meet."""
    return frozenset(
        term_stem(w) for w in query_terms(text) if len(w) > 2 and w not in _CHANGE_WORDS
    )


def _words(text: str) -> frozenset[str]:
    return frozenset(w for w in text.lower().split() if len(w) > 2)


def _by_time(
    group: list[Hit],
    aspect: Aspect | None,
    answers: Callable[[Hit], float],
    people: Set[str] = frozenset(),
) -> None:
    """Hand the group's priorities out by when each was said (see the module
    docstring): the newest first for a question about now, the one before it for
    "before", the oldest for "first"; a memory saying how things were ("I lived in
    Paris for two years") is older than any saying how they are, whenever it was
    said. The statements of one session count as said at once, when its last one
    was: minutes apart in one conversation, the later one is no newer value
    ("Picked up my new VanMoof from the bike shop" / "Picked up my Fiat Panda
    from the dealer"); among them, the one that ``answers`` the question best
    (its cosine) comes first. What says a value goes on and tells no change
    ("still hitting the gym 3 times a week!!") counts as said with the newest
    before it, and comes right after it. ``people``: names of people the hits
    give (:func:`_named_before_news`)."""
    slots = sorted((h.score for h in group), reverse=True)
    told: dict[str, datetime] = {}
    for h in group:
        key = _conversation(h.memory)
        told[key] = max(told.get(key, h.memory.said_at), h.memory.said_at)

    def told_at(h: Hit) -> tuple[bool, datetime]:
        return not statement(h.memory.content).past, told[_conversation(h.memory)]

    # what is "still" so is the value of the newest before it, no newer one: "still
    # hitting the gym 3 times a week!!" after "cancelled the old gym ... signed up
    # to energie" (for the present and the one before it; it ranks right after)
    still = {id(h) for h in group if aspect != "first" and _goes_on(h.memory.content)}
    held = {
        id(h): max(
            (told_at(o) for o in group if id(o) not in still and told_at(o) < told_at(h)),
            default=None,
        )
        for h in group
        if id(h) in still
    }

    def when(h: Hit) -> tuple[bool, datetime]:
        return held.get(id(h)) or told_at(h)

    def best(h: Hit) -> float:
        """Within a session the best answer first; said at once outside any, the
        order they were written in (their ids) decides."""
        return answers(h) if h.memory.session_id else 0.0

    newest = sorted(
        group, key=lambda h: (when(h), id(h) not in held, best(h), h.memory.id), reverse=True
    )
    order = newest
    if aspect == "first":  # the oldest first: in a session its best answer, else the first written
        order = sorted(group, key=lambda h: (when(h), -best(h), h.memory.id))
    elif aspect in ("now", "before"):  # the value now: the news after a change are its
        order = _named_before_news(newest, people)
    if aspect == "before":  # the value now last: a turn and its drawn fact are one
        said, at = _said_as(order[0].memory), when(order[0])
        last = [h for h in newest if _said_as(h.memory) == said or when(h) >= at]
        order = [h for h in newest if h not in last] + last
    for h, value in zip(order, slots, strict=True):
        h.score = value


#: A word that says a value goes on as it was.
_STILL = re.compile(r"\bstill\b", re.IGNORECASE)


def _goes_on(text: str) -> bool:
    """Whether ``text`` says a value goes on ("still hitting the gym 3 times a
    week!!") and tells no change or news of its own ("My boss has transferred, so I
    report to Desmond. Tom's manager is still a nightmare" tells one)."""
    return _STILL.search(text) is not None and statement(text).cue is None


def _capitals(text: str, inside: bool = False) -> set[str]:
    """The capitalised words of ``text`` but "I", folded, a possessive's "'s" dropped;
    ``inside``: only those within a sentence, names ("Rent goes to them" opens on none)."""
    found = (NAME_INSIDE if inside else _CAPITAL).findall(text)
    return {w.lower().replace("\u2019", "'").removesuffix("'s") for w in found} - {"i"}


_CAPITAL = re.compile(r"\b[A-Z][\w'\u2019-]*")
#: A text opening on the speaker ("I go to ...", "We're with ...", "My phone is ...")
#: or on what it says a capitalised thing is ("Viaplay is the only app I pay for"):
#: a value stated, no news.
_STATES_OPENING = re.compile(
    r"\s*(?:(?i:i|we|my|our)\b|[A-Z][\w'\u2019-]*(?:\s+[A-Z][\w'\u2019-]*)*\s+(?:is|are|was|were)\b)"
)


def _named_before_news(newest: list[Hit], people: Set[str] = frozenset()) -> list[Hit]:
    """``newest`` (newest first), the newest change that names its value ahead of the
    news after it that name none: "new carrier activated via eSIM, took 5 min"
    tells of the value "moving to Visible next month" named, so the named one
    answers "Which carrier am I on now?". So do the end of what they call the old
    one ("old checking closed; direct deposit landing in the new one") and the
    change told again ("helped Mom move in" after "Mom moving to Friendship
    Village"). Only a change names the value the news after it are about ("my
    stylist moved away, trying Jules at Rove Salon" / "new stylist nailed it"): a
    plain statement before news of a new one is the old value ("My phone is a
    Pixel 6" / "Got a new phone today!"); and another change or an ending after
    it, named or not, is one of its own ("I've joined a padel club"). A person of
    ``people`` is no value: "Claimed Milo's glasses on the health fund today" is
    news of the fund named before it.

    News of a thing that tells nothing new at all (no word of change, "new" or "now")
    and shares a word with a memory naming a value is news of that value, whatever
    named it: "Rent review notice came. +6%" after "Letter from the new landlords,
    Hamilton Estates", "Fixed deal for the cafe energy ends next week, they've
    offered another 2 years, signed it" after "Signed a 2 year fixed with Crown Gas
    & Power". What the speaker says of themselves states a value of its own ("I go
    to woodwork lessons after work"), so does what a name is said to be ("Viaplay
    is the only streaming app I pay for now"), and so does news naming what the
    named one names ("Siemens promoted me to lead analyst" after "I work at Siemens
    as a data analyst")."""
    newest = _new_before_the_end(newest, people)
    news: set[str] = set()  # the words of change of the news read so far
    quiet = True  # the news read so far tell nothing new
    told: set[str] = set()  # their capitalised words
    about: set[str] = set()  # and their content words
    for i, h in enumerate(newest):
        if restated_turn(h.memory):
            # a drawn fact stands with its turn ("Kim's" is no value); one naming
            # anything or telling a change is no quiet news
            said = h.memory.content
            quiet = quiet and change_cue(said) is None and not _capitals(said, inside=True)
            continue
        text = h.memory.content
        cue = statement(text).cue
        changed = says_changed(cue)
        if names_by_name(text, people):
            if i and (
                (changed and news <= {_root(cue or "")})
                or (quiet and about & _stems(text) and not told & _capitals(text, inside=True))
            ):
                return [h, *newest[:i], *newest[i + 1 :]]
            return newest
        if _ends_the_old(text):
            quiet = False
            continue  # "old checking closed": the end of the value before the change
        if says_an_end(text):
            return newest
        # ("I got to do my whole speech about the farm" gets nothing new)
        quiet = quiet and change_cue(text) is None and not _STATES_OPENING.match(text)
        told |= _capitals(text)
        about |= _stems(text)
        if changed:  # the change told again ("helped Mom move in"), or one of its own
            news.add(_root(cue or ""))  # ("I've joined a padel club")
    return newest


def _new_before_the_end(newest: list[Hit], people: Set[str]) -> list[Hit]:
    """``newest`` (newest first) with the newest value named between an old one and
    the end of that old one first: the end says the old one is gone, not which
    holds now ("opened a checking account at Downeast Credit Union, moving things
    over bit by bit", then "closed out the Bar Harbor account finally" of "Bar
    Harbor Bank charged me $15 for paper statements")."""
    if len(newest) < 3:
        return newest
    end = newest[0].memory.content
    for j in range(len(newest) - 1, 1, -1):
        gone = newest[j].memory.content
        if not _ends_named(end, gone):
            continue
        for i in range(1, j):
            text = newest[i].memory.content
            if newest[i].memory.said_at <= newest[j].memory.said_at:
                continue  # the old value told again (a turn and its drawn fact)
            if names_by_name(text, people) and not _ends_named(text, gone):
                return [newest[i], *newest[:i], *newest[i + 1 :]]
        return newest
    return newest


def _ends_named(end: str, old: str) -> bool:
    """Whether ``end`` ends what ``old`` tells of and names nothing ``old`` does not:
    "ok verizon is officially cancelled" / "verizon bill went up again"."""
    if not says_an_end(end) or not _stems(end) & _stems(old):
        return False
    # and it opens on the end ("Helen has been promoted to office manager, so she
    # isn't doing much nursing anymore" tells a new value first), nor tells a start
    # beside it ("not going back to Billings this winter, the town hired me to plow")
    parts = [p for p in _CLAUSE.split(end) if p and p.strip()]
    if not parts or not says_an_end(parts[0]):
        return False
    if (change_cue(parts[0]) or "").split(" ")[0] in _SWITCHES:
        return False  # a switch tells of a next value: "Kim switched banks again, sorry ubank"
    if any(change_cue(p) and not says_an_end(p) for p in parts):
        return False
    return _named_inside(end) <= _capitals(old.title())


def _named_inside(text: str) -> set[str]:
    """The capitalised words of ``text`` past each sentence's first, folded: "AARP",
    "UnitedHealthcare" and "Bar Harbor" are names where "Closed" opens a sentence."""
    return {
        w.lower().replace("\u2019", "'").removesuffix("'s")
        for sentence in re.split(r"[.!?]+", text)
        for w in _CAPITAL.findall(sentence)[1 if sentence.lstrip()[:1].isupper() else 0 :]
    } - {"i"}


#: Words of an ending that goes on to another value: "switched banks", "moved to".
_SWITCHES = frozenset(
    "moved moving switched switching changed replaced relocated swapped traded "
    "transferred upgraded ported porting".split()
)
#: Where a clause ends: a mark, or "and" / "but" opening the next.
_CLAUSE = re.compile(r"[,.;:!?]+|\b(?:and|but)\b")


def _root(cue: str) -> str:
    """The stem of the first word of ``cue``: "moving", "move", "moved" → "mov"."""
    return word_stem(cue.split()[0])


def _named_change(hit: Hit) -> bool:
    """Whether the hit says with a word of change that its value changed, and names
    the value by name ("switched bank -> Ally")."""
    return _says_changed(hit) and names_by_name(hit.memory.content)


def _ends_the_old(text: str) -> bool:
    """Whether ``text`` ends a value it calls the old one, naming none: "old checking
    closed; direct deposit landing in the new one", "Cancelled w/ the old practice"."""
    if not says_an_end(text) or names_by_name(text):
        return False
    return not OLD_WORDS.isdisjoint(_NAME_WORD.findall(text.lower()))


def _conversation(record: MemoryRecord) -> str:
    """The session ``record`` was said in, or the memory alone without one."""
    return f"session:{record.session_id}" if record.session_id else record.id
