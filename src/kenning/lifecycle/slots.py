"""Who a statement is about, whether it says a value changed, and what a question
asks: the present value or an earlier one.

Shared by reconcile-on-write (an update must be about the same subject as the
fact it retires) and by the read pipeline's currency step (the newest value
of the same attribute first, look-alike facts about other people below the
speaker's own). Pure text analysis: no model, no I/O, English.

* **Subject** (:func:`subject_of`): ``"self"`` for the speaker ("I live in
  Oslo", "Typing this on my phone", "Meet Luna, our puppy"), the relation for
  another person introduced as the speaker's relation ("My sister lives in
  Rome" → ``"sister"``, "My best friend's dog" → ``"best friend"``), a
  third-person pronoun or a leading name (``"he"``, ``"alice"``) when no first
  person is in the text, and ``""`` when nothing says. Naming a relation is
  the speaker's own fact: "My partner is Sam", "My wife is called Ana" are
  ``"self"``. The relation nouns are a closed list of English kinship and
  social roles (:data:`RELATIONS`), not of attributes.
* **Update cue** (:func:`update_cue`): the text says a value is new or has
  changed: change and ending verbs ("moved", "switched", "quit", "sold",
  "cancelled", "joined", "adopted"), "new", "now", "first day", "no longer",
  "anymore", "no more", "since", "signed up".
* **Assertion** (:func:`asserts`): whether the text states something at all,
  rather than only asking ("Can you suggest a podcast for the commute?") or
  requesting ("Remind me to buy milk"): a value question is answered by a
  statement.
* **Question aspect** (:func:`aspect_of`): ``"now"`` for questions about the
  present value ("Where do I live now?", "What is my current car?", "What's
  my dog's name?"), ``"before"`` for questions about an earlier one ("What was
  my previous car?", "Where did I live before I moved?", "Which gym did I
  cancel?"), ``"first"`` for a past question about the earliest one ("What
  was my first phone?", "Where did I first live?"), ``"past"`` for other
  past-tense questions ("When did Alice go to
  Rome?") and ``None`` for anything that is not a question about a value.
"""

from __future__ import annotations

import functools
import itertools
import re
import unicodedata
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Literal

from ..graph.extractor import speaker_prefix
from ..graph.rules import COMMON_WORDS, HONORIFICS

__all__ = [
    "Aspect",
    "CALENDAR_NAMES",
    "MONTH_NAMES",
    "NAME_INSIDE",
    "WEEKDAY_NAMES",
    "RELATIONS",
    "SUBJECT_PRONOUNS",
    "Statement",
    "aspect_of",
    "aspect_words",
    "asserts",
    "denial_before",
    "is_person",
    "left_words",
    "named_subject",
    "now_for_long",
    "past_state",
    "asked_relation",
    "in_lower_case",
    "question_subject",
    "recased",
    "told_in_person",
    "relation_names",
    "says_changed",
    "says_now",
    "statement",
    "subject_of",
    "told_of",
    "supposes",
    "update_cue",
    "change_cue",
]

Aspect = Literal["now", "before", "first", "past"]

#: Month names, January first.
MONTH_NAMES = tuple(
    "January February March April May June July August September October November December".split()
)
#: Weekday names, Monday first.
WEEKDAY_NAMES = tuple("Monday Tuesday Wednesday Thursday Friday Saturday Sunday".split())
#: Month and weekday names, lower case: words that name a time, not a thing.
CALENDAR_NAMES: frozenset[str] = frozenset(n.lower() for n in MONTH_NAMES + WEEKDAY_NAMES)


def _calendar(low: str) -> bool:
    """Whether a folded word names a month or a day ("may", "saturdays")."""
    return low in CALENDAR_NAMES or low.removesuffix("s") in CALENDAR_NAMES


#: English kinship and social-role nouns: "my <relation>" introduces another person.
RELATIONS: frozenset[str] = frozenset(
    """mother mom mum mommy mummy father dad daddy parent parents sister brother sibling
    siblings son daughter child children kid kids baby wife husband spouse partner fiance
    fiancee boyfriend girlfriend grandmother grandfather grandma grandpa granny grandparent
    grandparents grandson granddaughter grandchild aunt uncle cousin niece nephew
    stepmother stepfather stepson stepdaughter stepbrother stepsister friend friends
    bestie colleague colleagues coworker coworkers boss manager neighbour neighbor
    neighbours neighbors roommate flatmate housemate classmate teammate mentor gran nan
    nana grandad granddad stepdad stepmom stepmum auntie aunty""".split()
)
#: Relation nouns that name one relation ("my mum" / "my mother", "my boss" / "my
#: manager"), by the one they stand for.
_KIN = {
    **dict.fromkeys("mom mum mommy mummy".split(), "mother"),
    **dict.fromkeys("dad daddy".split(), "father"),
    **dict.fromkeys("grandma granny gran nan nana".split(), "grandmother"),
    **dict.fromkeys("grandpa grandad granddad".split(), "grandfather"),
    **dict.fromkeys("stepmom stepmum".split(), "stepmother"),
    "stepdad": "stepfather",
    **dict.fromkeys("auntie aunty".split(), "aunt"),
    "boss": "manager",
    "neighbor": "neighbour",
    "coworker": "colleague",
    "kid": "child",
}


def kin(word: str) -> str:
    """The relation ``word`` stands for ("mum" → "mother", "boss" → "manager"); any
    other word as it is."""
    return _KIN.get(word, word)


#: Words that may sit between "my" and the relation noun ("my older sister").
_RELATION_ADJ = frozenset(
    "best old older oldest young younger youngest little big baby twin eldest late new "
    "former ex close closest dear business work school childhood".split()
)
#: Of those, the ones that make another relation ("my best friend", "my business
#: partner" is no spouse); the rest only describe one ("my work friend" is a friend).
_RELATION_KIND_ADJ = frozenset("best ex late business".split())
#: Of those, the ones that name a person on their own ("my ex", "my twin").
_RELATION_NOUN_ADJ = frozenset({"ex", "twin"})
#: Words by which the speaker speaks of themselves ("US", the country, is not one).
_FIRST_PERSON = frozenset(
    "i i'm i've i'd i'll me my mine myself we we're we've we'd our ours us".split()
)
_THIRD_PRONOUNS = frozenset("he she they he's she's they're".split())
_COPULAS = frozenset("is was are were 's".split())
_NAMING = frozenset("called named".split())
#: Words after which a name is company, not the subject ("Lunch with Tom was fun").
_COMPANY = frozenset("with and".split())
#: Prepositions after which a name's "'s" is whose, not "is": "put it next to Dickie's boat".
_BEFORE_WHOSE = frozenset("to at from of for by near into onto in on off behind past".split())
_LEADING = frozenset(
    "sadly so also just finally well oh today yesterday anyway honestly actually and but "
    "then now recently lately really seriously literally basically totally definitely "
    "suddenly".split()
)
_FUNCTION = frozenset("the a an this that these those it there here what which".split())
_WORD = re.compile(r"[A-Za-z0-9]+(?:['\u2019][A-Za-z]+)?")

#: Verbs (and their forms) saying a value changed or ended.
_CHANGE = frozenset(
    """move moved moving relocate relocated relocating switch switched switching change
    changed changing replace replaced replacing sell sold selling trade traded trading
    quit quitting leave left leaving join joined joining start started starting adopt
    adopted became become turned swap swapped swapping upgrade upgraded upgrading transfer
    transferred transferring
    cancel cancelled canceled cancelling close closed closing retire retired resign
    resigned divorce divorced separated graduated enrolled accepted open opened opening
    bought buy got picked brought hired married died passed port ported porting register
    registered registering""".split()
)
_CHANGE_WORDS = frozenset("new now anymore instead nowadays currently since first".split())
#: Cues that say a value is new or current, not that one changed: "I tried a new
#: bakery", "My laptop battery barely lasts an hour now".
_NEW_OR_NOW = (_CHANGE_WORDS - {"anymore", "instead"}) | {"these days", "lately"}
#: Words that say a value is current only when nothing else in the text says it
#: changed: "Lately I've gotten into bouldering" (but "Lately I order a flat white
#: instead" says with "instead" that it changed).
_WEAK_CUES = frozenset({"lately"})
#: Forms of being before "back to" ("I'm back to vegetarian", read as "i m back").
_BEING = frozenset("am are is m re s".split())
_CHANGE_PHRASES = (
    ("no", "longer"),
    ("no", "more"),
    ("first", "day"),
    ("any", "more"),
    ("gave", "up"),
    ("signed", "up"),
    ("called", "off"),
    ("broke", "off"),
    ("parted", "ways"),
    ("separate", "ways"),
    # "I stepped down as team lead"
    ("stepped", "down"),
    # a pastime begun: "Walter has taken up woodcarving"
    ("took", "up"),
    ("taken", "up"),
    # a return to an earlier value, being back or at the text's start: "Vegan was too
    # hard, I'm back to vegetarian", "Back to black coffee for me"
    ("back", "to"),
    # "My go-to is a macchiato these days": a value said to be current
    ("these", "days"),
)

#: Question words that make a sentence a question about a value.
_WH = frozenset("what which where who whom whose when how".split())
_NOW_WORDS = frozenset("now currently current nowadays presently still".split())
_NOW_PHRASES = (("these", "days"), ("at", "the", "moment"), ("right", "now"), ("any", "more"))
_BEFORE_WORDS = frozenset("before previous previously former formerly earlier old prior ex".split())
_BEFORE_PHRASES = (("used", "to"),)
#: Words of a past question that ask for the earliest value: "What was my first car?"
_FIRST_WORDS = frozenset("first original originally earliest initially".split())
#: ... of which these ask for it in any tense ("Who held my pension originally?";
#: "first" needs a past: "What's my first name?").
_EARLIEST = frozenset("originally initially earliest".split())
#: Phrases of a past question that ask for the earliest value: "Which vet was
#: Pepper with at the very start?", "What did I drive to begin with?".
_FIRST_PHRASES = frozenset(
    {
        ("at", "first"),
        ("very", "start"),
        ("very", "beginning"),
        ("to", "begin", "with"),
        ("to", "start", "with"),
        *((at, "the", when) for at in ("at", "from", "in") for when in ("start", "beginning")),
    }
)
#: Verbs that end a value: "Which gym did I cancel?" asks for the one before.
_ENDING = frozenset(
    "leave left quit sell sold cancel cancelled close closed replace replaced give lose "
    "lost drop dropped stop stopped end ended".split()
)
#: The past forms of :data:`_ENDING`.
_ENDED = frozenset("left quit sold cancelled closed replaced lost dropped stopped ended".split())
#: Past forms that end a thing in a question only ("Which bike was stolen?", "What
#: car got wrecked?"): in a statement "crash" or "break" is as often a noun ("in
#: the crash", "a lunch break") as the end of a value.
_LOST_IN_QUESTION = frozenset("stole stolen broke broken crashed wrecked totalled".split())
#: Everyday words for dropping a thing, read in a question ("Which card machine
#: company did we ditch?"); their past forms are in :data:`_DITCHED`.
_DITCHING = frozenset("ditch ditched dump dumped scrap scrapped axe axed".split())
_DITCHED = frozenset(w for w in _DITCHING if w.endswith("ed"))
_ENDED_IN_QUESTION = _ENDED | _LOST_IN_QUESTION | _DITCHED
_ENDING_IN_QUESTION = _ENDING | _LOST_IN_QUESTION | _DITCHING
_PRESENT_AUX = frozenset("do does am is are 's have has 're 'm".split())
_PAST_AUX = frozenset("did was were had".split())
_AUX = _PRESENT_AUX | _PAST_AUX | frozenset("would will can could should may might".split())


def _words(text: str) -> list[str]:
    return [w.replace("\u2019", "'") for w in _WORD.findall(_unaccented(text))]


def _unaccented(text: str) -> str:
    """``text`` with its letters' accents dropped ("fiancé" reads "fiance"), so a
    word with one is not cut in two by the ASCII word pattern."""
    if text.isascii():
        return text
    return "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))


#: How a word that ends in "'s" ends, in either case.
_CLITIC_S = frozenset({"'s", "'S"})


def _split_clitic(words: list[str]) -> list[str]:
    """ "sister's" -> "sister", "'s"; "what's" -> "what", "'s"; "I'm" stays."""
    out: list[str] = []
    for w in words:
        if w[-2:] in _CLITIC_S and w.lower() not in _THIRD_PRONOUNS:
            out.extend((w[:-2], "'s"))
        else:
            out.append(w)
    return out


#: How many words from the start decide the subject (a relation or name further in
#: is an object: "... and then I told my sister"); a first-person word anywhere counts.
_HEAD = 16
_FIRST_PERSON_RE = re.compile(
    r"(?<![\w'\u2019])(?:" + "|".join(sorted(_FIRST_PERSON, key=len, reverse=True)) + r")(?![\w'])",
    re.IGNORECASE,
)


def _head(text: str) -> list[str]:
    """The first :data:`_HEAD` words of ``text`` (apostrophes folded)."""
    found = [m.group(0) for m in itertools.islice(_WORD.finditer(_unaccented(text)), _HEAD)]
    return [w.replace("\u2019", "'") for w in found] if "\u2019" in text else found


def _mine(word: str, low: str | None = None) -> bool:
    """Whether ``word`` (``low``: its lower case, when the caller has it) is one by
    which the speaker speaks of themselves."""
    return (word.lower() if low is None else low) in _FIRST_PERSON and word != "US"


def _first_person_anywhere(text: str) -> bool:
    return any(_mine(m.group(0)) for m in _FIRST_PERSON_RE.finditer(text.replace("\u2019", "'")))


#: How a fact rewritten in the third person names the speaker ("The user is
#: allergic to peanuts", "Rex, the user's dog, ...", "User works at Nokia").
_THE_USERS = re.compile(r"\b(?:the\s+)?user['\u2019]s\b", re.IGNORECASE)
_THE_USER = re.compile(
    r"(?:\bthe\s+|^\s*)user\b(?!['\u2019])"
    r"(?!\s+(?:interface|base|experience|group|guide|stor(?:y|ies)|account|id|name|data"
    r"|agent|manual|research|profile|settings)s?\b)",
    re.IGNORECASE,
)


def _first_person(text: str) -> str:
    """``text`` with "the user" read as the speaker: "I", "my"."""
    if "user" not in text.lower():
        return text
    return _THE_USER.sub("I", _THE_USERS.sub("my", text))


#: Openings that make a sentence about people in general, whatever "I" it holds.
_ANYONE = frozenset("everyone everybody nobody anyone anybody people".split())


#: Words that make a few words before a colon a heading of news ("Good news at
#: last:", "Phew:", "Quick update:"), which names no one: the sentence after it says
#: whom the text is about. Without one they name a topic: "car ins: State Farm",
#: "Nora: ballet at BalletMet".
_NEWS = frozenset("news update updates phew fyi psst yay ugh wow guess".split())
#: At most this many words (and characters) before a heading's colon.
_HEADING_WORDS, _HEADING_CHARS = 5, 60


#: Last words of a short exclamation that heads news: "Moving day done.", "Exams
#: over!", "It's official!".
_HEADLINE_ENDS = frozenset("done sorted over official".split())
_HEADLINE = re.compile(r"\s*((?:[\w'\u2019]+\s+){0,2}[\w'\u2019]+)\s*[.!]+\s+(?=\S)")


def _without_heading(text: str) -> str:
    """``text`` after a heading of news of no one's (:data:`_NEWS`) before a colon
    and a space; "My news: ..." is the speaker's heading, and "car ins: ..." a
    topic, kept. So is a short exclamation of news first: "Moving day done. Mum's in
    flat 12 now" is Mum's news; "Moved house!" tells the speaker's own."""
    head = _HEADLINE.match(text)
    if head:
        words = head.group(1).lower().replace("\u2019", "'").split()
        if (words[-1] in _HEADLINE_ENDS or not _NEWS.isdisjoint(words)) and not any(
            _mine(w) for w in words
        ):
            return text[head.end() :]
    colon = text.find(":", 0, _HEADING_CHARS)
    if colon < 0 or not text[colon + 1 : colon + 2].isspace():
        return text  # most texts; "at 12:30" is no heading
    words = text[:colon].lower().split()
    if len(words) > _HEADING_WORDS or _NEWS.isdisjoint(words):
        return text
    if any(_mine(w) for w in words) or any(c in text[:colon] for c in ".!?,;"):
        return text
    return text[colon + 1 :].lstrip()


@functools.lru_cache(maxsize=50_000)
def subject_of(text: str) -> str:
    """Whom ``text`` is about: ``"self"``, a relation noun, a pronoun or name, or ``""``.
    A fact rewritten about "the user" is the speaker's, as in the speaker's words; a
    heading before a colon names no one ("Good news at last: Martin starts at
    Siemens on Monday" is Martin's)."""
    text = _without_heading(_first_person(text))
    words = _split_clitic(_head(text))
    lows = [w.lower() for w in words]
    if lows and lows[0] in _ANYONE:
        return ""  # "Everyone I know is moving out of Berlin": no one in particular
    if (resumed := _resumed(words, lows)) is not None:
        return resumed  # "Fernanda she did the switch", "My wife she changed her job"
    opener = _named_opener(words, lows)
    if opener is not None:
        return opener
    if (not _FIRST_PERSON.isdisjoint(lows) or len(lows) >= _HEAD) and (other := told_of(text)):
        return other  # "Walter has switched his plan, ... since I ...": Walter's
    possessive = False  # a "my"/"our" the loop went past
    for i, low in enumerate(lows if not _FIRST_PERSON.isdisjoint(lows) else ()):
        if low in ("my", "our"):
            possessive = True
            rel, end = _relation_at(lows, i + 1)
            if rel is None:
                if i == 0 or lows[i - 1] in _LEADING:
                    return "self"  # "My dog is called Rex", "Our flat is in Oslo"
                continue
            if _names_relation(lows, words, end) or _asks_name(lows, i, end):
                return "self"  # "My partner is Sam": the speaker's own fact
            if _brings_me(lows, end):
                return "self"  # "My son talked me into supporting Napoli"
            if all(w in _LEADING for w in lows[:i]) or (
                _asks(text, lows) and not any(w in _FIRST_PERSON for w in lows[:i])
            ):
                if _speaker_changes_later(text):
                    return "self"  # "My daughter insisted I change, so ... is X instead"
                return rel  # "My sister lives in Rome", "Where does my cousin live?"
            continue  # "Went hiking with my sister": the speaker's
        if _mine(words[i], low):
            return "self"
    # every other word of the head was checked above
    if possessive or (len(lows) >= _HEAD and _first_person_anywhere(text)):
        return "self"
    for i, low in enumerate(lows[:-2]):  # "Alice's sister lives in Rome"
        if words[i][:1].isupper() and lows[i + 1] == "'s":
            rel, end = _relation_at(lows, i + 2)
            if rel is not None and not _names_relation(lows, words, end):
                return rel
            break
        if low not in _LEADING:
            break
    for i, low in enumerate(lows):
        if low in _LEADING:
            continue
        if low in HONORIFICS and words[i + 1 : i + 2] and words[i + 1][:1].isupper():
            continue  # "Mrs. Kowalski sold the flat": the name after the title
        if low in _THIRD_PRONOUNS:
            return low.split("'")[0]
        # a change verb or a gerund opening the sentence is no name: "Switched banks
        # again", "Playing bass in a covers band" ("Fleming is my GP" is one)
        named = words[i][:1].isupper() and low not in _FUNCTION | _WH
        named = named and not (i == 0 and (low in _CHANGE or _gerund(lows, i)))
        if named and _brings_me(lows, i + 1):
            return "self"  # "Anna talked me into joining FitX"
        if named and (whose := _relation_named(lows, words, i + 1)):
            return whose  # "Marek is Cleo's boss": Cleo's, as "Marek is my boss" is mine
        if named and (_verb_like(lows, i + 1) or lows[i + 1 : i + 2] == ["'s"]):
            return low  # "Alice lives in Paris", "Bob is the team lead", "Alice's home ..."
        j = _verb_at(lows, i + 1)  # an adverb first: "Claire just got engaged"
        if named and j > i + 1 and _verb_like(lows, j) and not _brings_me(lows, j):
            return low
        break
    # a sentence opening on a verb in the past has the speaker for subject, whatever
    # name comes later ("Cancelled Spotify, Apple Music is better value")
    if lows and (lows[0] in _IRREGULAR_PAST or (len(lows[0]) > 5 and lows[0].endswith("ed"))):
        return "self"
    # the speaker's new one named beside it: "the new dentist, Dr. Okafor, is so much
    # gentler" is the speaker's dentist, not a fact about Dr. Okafor
    if _NEW_ONE_NAMED.match(text):
        return "self"
    # a name later in a sentence without a first person, followed by "is" or "was": a
    # fact rewritten about that person ("Home for Olga is Helsinki", "New job: Olga is
    # at Heineken"), unless it is company ("Lunch with Tom was fun"); in the first
    # sentence when it says something of its own ("Health insurance renewed no
    # bother. Cian's looking at Irish Life" is the speaker's renewal); in a sentence
    # opening on a verb in the past, whose subject is left out, an "'s" after a
    # preposition is whose ("put the mooring in, same spot next to Dickie's boat")
    doing = bool(lows) and _past_form(lows[0])
    for i in range(1, len(lows) - 1):
        if (
            words[i][:1].isupper()
            and lows[i] not in _FUNCTION
            and lows[i + 1] in _COPULAS
            and lows[i - 1] not in _COMPANY
            and not (doing and lows[i + 1] == "'s" and lows[i - 1] in _BEFORE_WHOSE)
        ):
            if i + 1 < _first_sentence_words(text):
                return lows[i]
            break
    # a sentence without a subject is the speaker's ("Got a new phone today");
    # one opening on a determiner or a question word says nothing about whom
    return "self" if lows and lows[0] not in _WH and lows[0] not in _FUNCTION else ""


#: "The new <thing>, <name>": the speaker's new one, named in apposition.
_NEW_ONE_NAMED = re.compile(
    r"\s*(?i:the\s+new\s+[a-z]+(?:\s+[a-z]+)?\s*,\s*(?:(?:dr|mr|mrs|ms|miss|prof)\.?\s+)?)[A-Z]"
)
#: The forms in which the speaker is the object of someone else's doing.
_ME_AS_OBJECT = frozenset("me us myself".split())
#: Adverbs between a subject and its verb ("Claire just got engaged").
_ADVERBS_BEFORE_VERB = frozenset(
    "just finally recently suddenly also already actually really still now never usually "
    "often sometimes always currently mostly rarely".split()
)


def _verb_at(lows: list[str], j: int) -> int:
    """Where the verb after a subject ending before ``j`` stands: past the adverbs
    between them ("Claire just got engaged", "Anna finally moved")."""
    while j < len(lows) and lows[j] in _ADVERBS_BEFORE_VERB:
        j += 1
    return j


def _resumed(words: list[str], lows: list[str]) -> str | None:
    """The person a text opens on and takes up again with "he" or "she" as the
    subject, as some speakers do ("Fernanda she did the switch though", "My wife
    she changed her job"): a name or the speaker's relation, folded; else None."""
    if "he" not in lows and "she" not in lows:
        return None  # most texts
    i = 0
    while i < len(lows) and lows[i] in _LEADING:
        i += 1
    if lows[i : i + 1] in (["my"], ["our"]) and i + 2 < len(lows) and lows[i + 1] in RELATIONS:
        who, at = lows[i + 1], i + 2
    elif i + 1 < len(lows) and _a_name(words[i]) and lows[i].isalpha():
        who, at = lows[i], i + 1
    else:
        return None
    return who if lows[at] in ("he", "she") and who not in COMMON_WORDS else None


def _named_opener(words: list[str], lows: list[str]) -> str | None:
    """The name that opens the head as the subject of a verb, when the speaker is
    in it only as an object ("Mark joined TrainMore and is suddenly very into
    lifting. He keeps sending me his deadlift numbers", "Claire just got engaged
    to her boyfriend Rhys!! she sent me a photo"): whom it is about, as "Mark
    joined TrainMore" alone is. Not when the name's verb is done to the speaker
    ("Tom got me the iPhone 15", "Anna talked me into joining FitX") or the
    speaker also says "I", "my" or "we"; else None."""
    mine = [low for low in lows if low in _FIRST_PERSON]
    if not mine or not _ME_AS_OBJECT.issuperset(mine):
        return None
    for i, low in enumerate(lows):
        if low in _LEADING:
            continue
        named = words[i][:1].isupper() and low.isalpha() and low not in _FUNCTION | _WH
        if not named or _past_form(low):
            return None
        j = _verb_at(lows, i + 1)
        # its verb not done to the speaker: "Tom got me the iPhone 15", "Anna talked
        # me into joining FitX" give the speaker a state
        to_me = not _ME_AS_OBJECT.isdisjoint(lows[j + 1 : j + 3])
        if _verb_like(lows, j) and lows[j] not in _COPULAS and not to_me:
            return low
        return None
    return None


#: The marks between clauses: a stop, a comma, a colon, a bracket or a dash.
_CLAUSE_BREAK = re.compile(r"[,;:.!?()\u2013\u2014]|\s-\s")
#: Where a clause ends: one of those marks, or a word that opens a clause of its own
#: ("..., which is amusing, since I have never ...").
_CLAUSE_OPENS = re.compile(
    _CLAUSE_BREAK.pattern + r"|\b(?:since|because|which|while|although|though|whereas|but|so)\b",
    re.IGNORECASE,
)
#: Someone taking over a role: a change of who holds it, whoever says it.
_TAKES_OVER = re.compile(r"\b(?:took|taken|takes|taking)\s+over\b", re.IGNORECASE)
#: How a clause tells of a person it has named: "Walter has switched his plan".
_TOLD_AS_PERSON = frozenset("he he's him his himself she she's her hers herself".split())


#: A clause put before the main one ("Since Dad's in the care home, he's had to
#: register with Dr. Ferreira"), with the main clause's "he" or "she" (the person
#: the fronted clause names) as ``pronoun``.
_FRONTED = re.compile(
    r"\s*(?:since|as|because|now\s+that|once|after|when|while)\s+(?=[A-Z])"
    r"(?=[^,;.!?]*,\s*(?P<pronoun>(?:he|she)(?:'s|\u2019s)?\b))?",
    re.IGNORECASE,
)


def _first_clause(text: str) -> str:
    """``text`` up to where its first clause ends (:data:`_CLAUSE_OPENS`)."""
    found = _CLAUSE_OPENS.search(text)
    return text[: found.start()] if found else text


def told_of(text: str, known: frozenset[str] = frozenset()) -> str | None:
    """The person ``text``'s first clause is about, when that clause opens on their
    name as its subject ("Walter has switched his Medicare plan to Anthem, which is
    amusing, since I have never seen that man inside a gym"; "Walter's doctor has
    put him on a water pill"; "Helen and Greg bank with PNC, but ..."), says no
    "I", "my" or "we", and tells of them as a person: "he", "his", "she", "her",
    or by a name in ``known`` (people the caller knows by name) or a relation
    called by name ("Dad's prescriptions are delivered by Pharmacy2U"). The speaker's
    "I" in a later clause is a comment on that person's fact, unless a later
    clause of the speaker's says what followed for them ("Jean's hip is acting up,
    so I've been paired with Ruth") or that their own value is new or changed
    ("..., and I'm now with Jean"), or a later clause has someone take a role over
    ("Donna has retired, and I'm heartbroken. Her niece Kim has taken over her
    chair"). Folded; else None."""
    found = _opening_person(text)
    if found is None:
        return None
    name, told_as_person = found
    return name if told_as_person or name in known else None


@functools.lru_cache(maxsize=20_000)
def _opening_person(text: str) -> tuple[str, bool] | None:
    """For :func:`told_of`, read once per text whoever asks: the name its first
    clause opens on as a subject with no first person in that clause and no later
    clause making the text the speaker's, and whether the clause tells of them as a
    person by itself ("he", "her", or a relation called by name)."""
    found = _WORD.search(text)
    if found is None or not found.group(0)[:1].isupper() or _mine(found.group(0)):
        if found is None or found.group(0).lower() not in _LEADING:
            return None  # most texts: "I ...", "My ...", "switched to ..."
    fronted = _FRONTED.match(text)
    if fronted is not None:  # "Since Dad's in the care home, he's had to ...": Dad's
        main = _opening_person(text[fronted.end() :]) if fronted.group("pronoun") else None
        return (main[0], True) if main else None  # told of by the main clause's "he"
    text = _first_person(text)
    clause = _first_clause(text)
    words = _split_clitic(_head(clause))
    lows = [w.lower() for w in words]
    if not _FIRST_PERSON.isdisjoint(lows[: _own_verbs_end(lows)]):
        return None
    i = 0
    while i < len(lows) and lows[i] in _LEADING:
        i += 1
    if i < len(lows) and lows[i] in HONORIFICS:
        i += 1  # "Dr. Hoffman moved her practice"
    if i >= len(lows) or not _a_name(words[i]) or not lows[i].isalpha():
        return None
    name = lows[i]
    if _past_form(name) or name in _LEADING:
        return None  # "Cancelled Spotify, ...": the speaker's doing
    after = i + 1
    two = (
        lows[after : after + 1] == ["and"] and after + 1 < len(words) and _a_name(words[after + 1])
    )
    if two:
        after += 2  # "Helen and Greg bank with PNC": a verb of two in its plain form
    verb = _verb_at(lows, after)
    plain = two and verb < len(words) and words[verb].isalpha() and words[verb].islower()
    if lows[after : after + 1] != ["'s"] and not (_verb_like(lows, verb) or plain):
        return None
    for opening, part in _later_clauses(text, len(clause)):
        if _TAKES_OVER.search(part):
            return None  # "Donna has retired ... Her niece Kim has taken over her chair"
        if subject_of(part) != "self" or not _speaker_in(part):
            continue
        cue = update_cue(part)
        # a word of change, or news said in the speaker's own first words ("..., and
        # I'm now with Jean"; not "..., so dinners are half and half in our house now")
        own = says_changed(cue) or (cue is not None and _opens_on_speaker(part))
        if own or (opening == "so" and _names_a_value(part)):
            return None  # "..., so I'm now partnering with Jean": the speaker's change
    # a relation called by name is a person: "Dad's prescriptions are ..."
    return name, name in RELATIONS or not _TOLD_AS_PERSON.isdisjoint(lows[after:])


#: Subjects of a clause after "and" that is the speaker's own: "... and I got her
#: old one".
_SPEAKER_SUBJECTS = frozenset("i i'm i've i'd i'll we we're we've we'd".split())


def _own_verbs_end(lows: list[str]) -> int:
    """Where the words of a clause's own subject end: before an "and" that goes on
    with a verb of the same subject or with "he" or "she" ("Mum's upgraded to an
    iPhone 15 and keeps FaceTiming me": the "me" is hers to call, no fact of the
    speaker's), not before
    one with a subject of its own ("... and I got her old one") or another name
    ("Helen and Greg bank with PNC")."""
    for j in range(2, len(lows) - 1):
        if lows[j] != "and" or lows[j + 1] in _SPEAKER_SUBJECTS:
            continue
        if lows[j + 1] in _THIRD_PRONOUNS or _verb_like(lows, j + 1):
            return j  # "... and she keeps texting me quotes", "... and keeps FaceTiming me"
    return len(lows)


#: Subjects that take up a thing said before: "so that's become our lunch-date day".
_THAT = frozenset("that it this".split())


def _speaker_in(clause: str) -> bool:
    """Whether ``clause`` may speak of the speaker (:func:`subject_of` says whether
    it does): not of a thing said before ("so that's become our lunch-date day" is
    about what "that" is), nor with a subject left out and no first person ("Got
    the shirt and everything" after "Dad hit his 100th parkrun")."""
    lows = [w.lower() for w in _split_clitic(_head(clause))]
    first = next((w for w in lows if w not in _LEADING), None)
    if first is None or first in _THAT:
        return False
    if _first_person_anywhere(clause):
        return True
    # a verb first: its subject left out is the one told of before
    return not (first in _IRREGULAR_PAST or first in SAME_PAST or first in _CHANGE)


def _later_clauses(text: str, start: int) -> Iterator[tuple[str, str]]:
    """The clauses of ``text`` after ``start`` (where its first one ends): each with
    the mark or word that opens it, lower-cased."""
    rest = text[start:]
    opens = list(_CLAUSE_OPENS.finditer(rest))
    for at, opening in enumerate(opens):
        part = rest[opening.end() : opens[at + 1].start() if at + 1 < len(opens) else None]
        if part.strip():
            yield opening.group(0).lower(), part


def _opens_on_speaker(clause: str) -> bool:
    """Whether ``clause``'s first word past the leading ones is the speaker's."""
    lows = (w.lower() for w in _words(clause))
    return next((w for w in lows if w not in _LEADING), None) in _SPEAKER_OPENERS


def _names_a_value(clause: str) -> bool:
    """Whether ``clause`` names something after its first word ("I've been paired
    with Ruth"; not "some weeks we make two stops")."""
    return any(_a_name(w) for w in _words(clause)[1:])


def _speaker_changes_later(text: str) -> bool:
    """Whether a clause after ``text``'s first says, as the speaker's, that a value
    changed ("My daughter Helen insisted I change, ..., so as of this month my
    pharmacy is the Kroger instead"), not that it may ("My colleague Jorge pays
    only 50 dollars. I am thinking to port my number" is Jorge's), nor a clause
    with its subject left out, which is the first one's ("My daughter Kristin is a
    physical therapist, married to Dave, ..." is hers)."""
    return any(
        subject_of(part) == "self"
        and _speaker_in(part)
        and says_changed(change_cue(part))
        and not _supposes(part)
        for _, part in _later_clauses(text, len(_first_clause(text)))
    )


@functools.lru_cache(maxsize=50_000)
def named_subject(text: str) -> str | None:
    """The name ``text`` opens with as its subject, when the word after it can only
    be a verb ("Alice is allergic to peanuts", "Anna said ...", "Tom became a
    nurse"), folded; else None. :func:`subject_of` also takes a capitalised word
    before an "-s" word for a subject, which may be a thing ("Production
    deployments happen on Thursdays")."""
    who = subject_of(text)
    if not who or who == "self" or is_person(who):
        return None
    lows = [w.lower() for w in _split_clitic(_head(text))]
    for i, low in enumerate(lows[:-1]):
        if low in _LEADING:
            continue
        after = lows[i + 1]
        strict = after in _AUX or after in _COPULAS or after in _IRREGULAR_PAST
        return who if low == who and (strict or after.endswith("ed")) else None
    return None


@functools.lru_cache(maxsize=20_000)
def relation_names(text: str) -> tuple[tuple[str, str], ...]:
    """The people ``text`` introduces by the speaker's relation and name ("My wife
    Priya plays cello", "our son, Arjun"): (name, relation) pairs, folded. Told
    so, the name and the relation are one person: a question about Priya asks of
    the speaker's wife. "My partner is Sam" gives the relation's value, which may
    change, and no alias (:func:`people_named`)."""
    return _introduced(text, False)


@functools.lru_cache(maxsize=20_000)
def people_named(text: str) -> frozenset[str]:
    """The names ``text`` gives people of the speaker's ("My wife Priya ...", "My
    closest friend at work is Keisha Tran"), folded: whatever else the name may
    be, here it is a person's, so "Keisha's new mentor is Aaron Blum" is about
    someone else."""
    named = {name for name, _ in _introduced(text, True)}
    return frozenset(named | _named_in_plural(text))


@functools.lru_cache(maxsize=20_000)
def introduced_names(text: str) -> frozenset[str]:
    """The names ``text`` introduces, folded: people of the speaker's by relation
    (:func:`people_named`), whatever it says is "called" or "named" so ("We have a
    ginger cat called Pickle") and a name right after the speaker's own noun ("Our
    spaniel Biscuit is registered with Riverside Vets"). Such a text tells who
    they are, no fact of theirs; the names are the speaker's people and pets."""
    words = _split_clitic(_words(text))
    lows = [w.lower() for w in words]
    called = {
        lows[i + 1] for i, low in enumerate(lows[:-1]) if low in _NAMING and _a_name(words[i + 1])
    }
    owned = {
        lows[i + 2]
        for i, low in enumerate(lows[:-2])
        if low in ("my", "our")
        and words[i + 1].islower()
        and _a_name(words[i + 2])
        and lows[i + 2].isalpha()
    }
    # (in a transcript's line the speaker is the one its label names, no one of the
    # asker's: see :func:`told_in_person`)
    companions = set() if speaker_prefix(text) else _companions(words)
    return people_named(text) | called | owned | _in_apposition(text) | companions


def told_in_person(text: str, name: str) -> bool:
    """Whether the speaker of ``text`` names ``name`` (folded) beside themselves ("Arnie's
    back! they got a condo in Ellsworth, came over for the fireworks with us"): one
    they tell of, so not the "I" of their own words. Not in a line of a transcript
    ("Caroline: I went to the support group"), whose "I" is the speaker it names."""
    if speaker_prefix(text):
        return False
    words = {w.lower().removesuffix("'s") for w in _words(text.replace("\u2019", "'"))}
    return name in words and _first_person_anywhere(text)


#: The speaker beside a companion: "Arnie and me went out", "me and Arnie".
_ME_AND = frozenset("me i".split())


def _companions(words: Sequence[str]) -> set[str]:
    """The names the speaker pairs with themselves, folded: "Arnie and me went out
    for mackerel", "Me and Dot drove up": whoever the speaker does things with is
    one of theirs, and no one the speaker is."""
    lows = [w.lower() for w in words]
    found = set()
    for i in range(len(lows) - 2):
        if lows[i + 1] != "and":
            continue
        if lows[i + 2] in _ME_AND and _a_name(words[i]):
            found.add(lows[i])
        if lows[i] in _ME_AND and _a_name(words[i + 2]) and (lows[i] == "me" or i == 0):
            found.add(lows[i + 2])
    return {n for n in found if n.isalpha() and n not in COMMON_WORDS}


#: A name and, after a comma, the speaker's own noun of a few words: "And then
#: there's Bran, my rescue lurcher, who is the actual boss", "Ana, our neighbour".
_APPOSITION = re.compile(
    r"\b([A-Z][\w'\u2019-]*),\s+(?:my|our)\s+(?:[a-z][\w-]*\s+){0,2}[a-z][\w-]*(?=\s*(?:[,.;!]|$))"
)


def _in_apposition(text: str) -> set[str]:
    """The names ``text`` introduces by the speaker's noun after a comma, folded
    ("Bran, my rescue lurcher, ..."): not a greeting ("Thanks, my friend")."""
    if ", my " not in text and ", our " not in text:
        return set()
    names = (
        _unaccented(m[1]).replace("\u2019", "'").removesuffix("'s")
        for m in _APPOSITION.finditer(text)
    )
    return {n.lower() for n in names if _a_name(n) and n.lower() not in COMMON_WORDS}


@functools.lru_cache(maxsize=20_000)
def recased(text: str, names: frozenset[str], anywhere: bool = False) -> str:
    """``text`` with each of ``names`` (folded) it writes in lower case capitalised:
    "róisín's moving to dublin!" reads "Róisín's moving to dublin!" where the
    memory knows Róisín as one of the speaker's people. Chat written in lower case
    names people as it writes words, and a sentence about the sister would read as
    the speaker's own; the names given elsewhere, with their capitals, tell them
    apart. Only a text written in lower case (:func:`in_lower_case`) is read so: one
    that opens on a capital writes its names with theirs. A name that is also a
    common word ("will", "may") is left as written. ``anywhere``: a text opening on
    a capital is read so too (a question: "Who is eli dating now?")."""
    if not names or not (anywhere or in_lower_case(text)):
        return text
    folded = _unaccented(text).lower()
    if not any(name in folded for name in names):
        return text

    def cap(m: re.Match[str]) -> str:
        word = m[0]
        if not word.islower() or _unaccented(word) not in names or word in _NOT_RECASED:
            return word
        return word[:1].upper() + word[1:]

    return _LETTERS.sub(cap, text)


_LETTERS = re.compile(r"[^\W\d_]+")


def in_lower_case(text: str) -> bool:
    """Whether ``text`` is written in lower case, as chat often is: its first letter
    is a small one ("niamh moved to gomo", "3 beds! collected the keys")."""
    first = _LETTERS.search(text)
    return first is not None and first.group(0)[0].islower()


#: Words never read as a name in lower case, whatever the memory calls someone.
_NOT_RECASED = COMMON_WORDS | frozenset("will may can must might mark bill hope".split())


def _named_in_plural(text: str) -> set[str]:
    """The names right after a relation of several ("We have two kids: Leo, who's
    7, and Nora", "my parents Ann and Bob"), folded: the first after it, and each
    after an "and" that follows."""
    words = _split_clitic(_words(text))
    lows = [w.lower() for w in words]
    out: set[str] = set()
    for j, low in enumerate(lows[:-1]):
        if low not in _PLURAL_RELATIONS or not _a_name(words[j + 1]):
            continue
        out.add(lows[j + 1])
        out.update(
            lows[k + 1]
            for k in range(j + 2, len(lows) - 1)
            if lows[k] == "and" and _a_name(words[k + 1])
        )
    return out


def _a_name(word: str) -> bool:
    return word[:1].isupper() and word.lower() not in _FUNCTION | _WH | _FIRST_PERSON


@functools.lru_cache(maxsize=20_000)
def company_only(text: str) -> frozenset[str]:
    """The names, folded, that ``text`` gives only as company: every mention right
    after "with", or after "with" and a relation of the speaker's ("Kasia's doing
    the weekend bake with Jonah", "I run the bakery with my business partner
    Jonah"). Such a name is neither whom the text is about nor a value of it; "with
    Maya's new piano teacher" names Maya's teacher, no company."""
    words = _split_clitic(_words(text))
    lows = [w.lower() for w in words]
    company: set[int] = set()
    for i, low in enumerate(lows):
        if low != "with":
            continue
        j = i + 1
        if lows[j : j + 1] in (["my"], ["our"]):  # "with my (business) partner Jonah"
            rel, end = _relation_at(lows, j + 1)
            j = end if rel is not None else len(lows)
        if j < len(words) and _a_name(words[j]) and lows[j + 1 : j + 2] != ["'s"]:
            company.add(j)
    named = {lows[j] for j in company}
    elsewhere = {low for i, low in enumerate(lows) if low in named and i not in company}
    return frozenset(named - elsewhere)


def _introduced(text: str, values: bool) -> tuple[tuple[str, str], ...]:
    """(name, relation) of the people ``text`` introduces by relation and name, with
    ``values`` also those named as the relation's value ("My best friend is Keisha")."""
    words = _split_clitic(_words(text))
    lows = [w.lower() for w in words]
    out: list[tuple[str, str]] = []
    for i, low in enumerate(lows):
        if low not in ("my", "our"):
            continue
        rel, end = _relation_at(lows, i + 1)
        if rel is None or end >= len(words) or rel in _PLURAL_RELATIONS:
            continue
        if values:
            end = _named_after(lows, end)
        name = words[end] if end < len(words) else ""
        if _a_name(name):
            out.append((name.lower(), rel))
    return tuple(out)


#: Places a relation is of before its name: "my closest friend at work is Keisha".
_WHERE_FROM = frozenset("at from".split())


def _named_after(lows: list[str], end: int) -> int:
    """Where the name of a relation ending at ``end`` stands: right after it ("my
    wife Priya"), or after "is" ("My best friend is Keisha", "my closest friend at
    work is Keisha Tran", "my boss is called Dana"); a title before it is skipped."""
    j = end
    if lows[j : j + 1] and lows[j] in _WHERE_FROM and lows[j + 2 : j + 3] == ["is"]:
        j += 2  # "at work", "from school"
    if lows[j : j + 1] != ["is"]:
        return end
    j += 1
    if lows[j : j + 1] and lows[j] in _NAMING:
        j += 1
    if lows[j : j + 1] and lows[j] in HONORIFICS:
        j += 1
    return j


@functools.lru_cache(maxsize=20_000)
def asked_relation(query: str) -> str | None:
    """The relation a question asks the name of ("Who is my manager now?",
    "What's my partner's name?" → ``"manager"``, ``"partner"``): the asker's own
    fact, which "my manager Karen signed off my leave" answers; else None."""
    lows = [w.lower() for w in _split_clitic(_words(query))]
    for i, low in enumerate(lows):
        if low in ("my", "our"):
            rel, end = _relation_at(lows, i + 1)
            if rel is not None and _asks_name(lows, i, end):
                return rel
    return None


#: Relations that name more than one person: "my kids Ana and Leo" is no alias.
_PLURAL_RELATIONS = frozenset(
    "parents siblings children kids grandparents friends colleagues coworkers neighbours "
    "neighbors teenagers teens twins sons daughters boys girls grandchildren grandkids "
    "brothers sisters cousins housemates flatmates roommates".split()
)


def _asks(text: str, lows: list[str]) -> bool:
    """Whether ``text`` is a question (a question mark, or a question word first)."""
    return text.rstrip().endswith("?") or (bool(lows) and (lows[0] in _WH or lows[0] in _AUX))


#: Irregular past forms: after a name they make it the subject, as "-ed" does
#: ("Anna got a new job", "Tom became a nurse").
_IRREGULAR_PAST = frozenset(
    "became began bought brought built came caught chose drove ate fell felt flew forgot "
    "found gave got grew heard held kept knew led left lost made met paid ran said saw "
    "sent sold spent stood swam taught told thought took went won wrote".split()
)
#: Verbs whose past is their base form: after a name they make it the subject
#: ("Yusuf quit Nokia and joined Unilever", "Dad hit his 100th parkrun"), and they
#: open requests ("Put me down for two tickets").
SAME_PAST = frozenset("quit put set cut let hit shut spread cost hurt split bet upset".split())


def _first_sentence_words(text: str) -> int:
    """How many of ``text``'s words (as :func:`_head` splits them) its first sentence
    holds when it has a verb of its own ("Health insurance renewed no bother");
    else all of them ("Big news!", "What a crazy week." say nothing of their own)."""
    found = _SENTENCE.search(text)
    if found is None or found.end() >= len(text.rstrip()):
        return _HEAD + 2
    lows = [w.lower() for w in _split_clitic(_head(found.group(0)))]
    verb = any(
        w in _IRREGULAR_PAST or w in _COPULAS or w in _AUX or (len(w) > 4 and w.endswith("ed"))
        for w in lows
    )
    return len(lows) if verb else _HEAD + 2


def _past_form(low: str) -> bool:
    """Whether ``low`` may be a verb in the simple past, never a name: "Cancelled",
    "Quit", "Went"."""
    return low in _IRREGULAR_PAST or low in SAME_PAST or low.endswith("ed")


def _gerund(lows: list[str], i: int) -> bool:
    """Whether the word at ``i`` reads as a gerund, not a name: "-ing", and no
    auxiliary or copula after it ("Playing bass ...", not "Fleming is my GP")."""
    after = lows[i + 1] if i + 1 < len(lows) else ""
    return (
        len(lows[i]) > 4
        and lows[i].endswith("ing")
        and after not in _AUX
        and after not in _COPULAS
        and after not in _IRREGULAR_PAST
    )


def _verb_like(lows: list[str], j: int) -> bool:
    """Whether the word at ``j`` reads as a verb after a name: an auxiliary or modal,
    an irregular past form, or "-s"/"-ed"."""
    if j >= len(lows) or not lows[j].isalpha():
        return False
    w = lows[j]
    return (
        w in _AUX
        or w in _COPULAS
        or w in _IRREGULAR_PAST
        or w in SAME_PAST
        or w.endswith(("s", "ed"))
    )


#: What follows "me" when someone brings the speaker to a state: "talked me into",
#: "convinced me to", "put me on", "got me onto".
_INTO = frozenset("into to on onto".split())


def _brings_me(lows: list[str], end: int) -> bool:
    """Whether the subject ending before ``end`` brings the speaker to something: its
    verb (an adverb may come first) takes "me" or "us" and then "into", "to" or
    "on" ("My son talked me into supporting Napoli", "My wife finally convinced me to
    try yoga", "My boss moved us to the Munich office"): the state that follows is
    the speaker's, not the subject's."""
    for at in (end + 1, end + 2):
        if lows[at : at + 1] and lows[at] in ("me", "us") and lows[at + 1 : at + 2]:
            return lows[at + 1] in _INTO
    return False


def _relation_at(lows: list[str], start: int) -> tuple[str | None, int]:
    """The relation noun phrase starting at ``start`` ("best friend"), and where it ends."""
    j = start
    adjs: list[str] = []
    while j < len(lows) and lows[j] in _RELATION_ADJ:
        adjs.append(lows[j])
        j += 1
    if j < len(lows) and lows[j] in RELATIONS:
        keep = [a for a in adjs if a in _RELATION_KIND_ADJ]
        return " ".join([*keep, lows[j]]), j + 1
    if adjs and adjs[-1] in _RELATION_NOUN_ADJ:
        return adjs[-1], j  # "my ex works at BMW", "my twin lives in Oslo"
    return None, start


def _relation_named(lows: list[str], words: list[str], at: int) -> str | None:
    """The person whose relation a name is said to be, folded ("Marek is Cleo's
    boss" from the copula on: "cleo"); else None."""
    if at + 2 >= len(lows) or lows[at] not in _COPULAS or lows[at + 2] != "'s":
        return None
    if not words[at + 1][:1].isupper() or lows[at + 1] in _FUNCTION:
        return None
    return lows[at + 1] if _relation_at(lows, at + 3)[0] is not None else None


def _names_relation(lows: list[str], words: list[str], end: int) -> bool:
    """ "<relation> is Sam" / "is called Sam" / ", Sam," : the speaker names their relation.
    A possessive is no copula: "My mum's GP is Dr. Green", "Who is my mum's GP?"
    name the mother's GP ("My partner's Sam" names the partner)."""
    j = end
    if lows[j : j + 1] == ["'s"] and j + 1 < len(lows):
        after = words[j + 1]
        if lows[j + 1] not in _NAMING and (
            (j + 2 < len(lows) and lows[j + 2] in _COPULAS) or not after.istitle()
        ):
            return False
    if j < len(lows) and lows[j] in _COPULAS:
        j += 1
        if j < len(lows) and lows[j] in _NAMING:
            return True
        return j < len(words) and words[j][:1].isupper() and lows[j] not in _FIRST_PERSON
    return j < len(lows) and lows[j] in _NAMING


def _asks_name(lows: list[str], start: int, end: int) -> bool:
    """ "Who is my partner (now)?", "What is my partner's name?": a question for whom
    the relation is, which the speaker's own naming answers ("My partner is Sam")."""
    rest = lows[end:]
    if rest[:2] == ["'s", "name"]:
        rest = rest[2:]
    elif not (start == 2 and lows[0] == "who" and lows[1] in _COPULAS | {"'s"}):
        return False
    return all(w in _ASPECT_WORDS or w in ("at", "the") for w in rest)  # "... now", "at the moment"


_LOWER_WORD = re.compile(r"[a-z]+")
#: A capitalised word inside a sentence (not after a full stop, a colon, a dash or
#: an opening quote): a word of a name ("Wide Open Road", "New York"), no cue.
NAME_INSIDE = re.compile(
    r"(?<![.!?:;\"\u201c(\n\u2013\u2014-]\s)(?<![.!?:;\"\u201c(\n\u2013\u2014-])(?<!^)\b[A-Z][a-z]+\b"
)
_CUES = _CHANGE | _CHANGE_WORDS
_PHRASE_HEADS = frozenset(a for a, _ in _CHANGE_PHRASES)


#: Words that may stand between a denial and what it denies ("I haven't yet left",
#: "I didn't really quit").
_BETWEEN_DENIAL = frozenset("yet really ever actually just been even".split())


def denial_before(lows: Sequence[str], start: int) -> int | None:
    """The position of the word denying the word at ``start`` of the folded words
    ``lows`` ("not leaving", "didn't quit", "never sold", "haven't yet left"), or
    None. A denied change is none: "I never moved" says the value stayed."""
    j = start - 1
    while j >= 0 and lows[j] in _BETWEEN_DENIAL:
        j -= 1
    if j >= 0 and (lows[j] in ("not", "never") or lows[j].endswith("n't")):
        return j
    # "didn't" split at its apostrophe ("didn", "t")
    if j >= 1 and lows[j] == "t" and lows[j - 1].endswith("n"):
        return j - 1
    return None


@functools.lru_cache(maxsize=50_000)
def update_cue(text: str) -> str | None:
    """The first word (or phrase) of ``text`` saying a value is new, changed or
    current, or None; a denied one says nothing changed ("I never gave up coffee").
    Cached: the statement and its past state both ask."""
    return _cue(text, False)


@functools.lru_cache(maxsize=50_000)
def change_cue(text: str) -> str | None:
    """:func:`update_cue`, but a "since" or "now" that says how long a value has held
    is none: "ever since I was a kid", "since we last talked", "for a year now" say
    the value is old (the read step still counts them as current). Cached: the
    rules ask of every new text many times."""
    return _cue(text, True)


def _unnamed(found: re.Match[str]) -> str:
    """A word of a name (:data:`NAME_INSIDE`) blanked, a month or a day kept: "As of
    May ..." is a start."""
    word = found.group(0)
    return word if word.lower() in CALENDAR_NAMES else "x"


def _cue(text: str, changes: bool) -> str | None:
    """The first cue of ``text``; ``changes``: only one that says a value changed or
    is new (:func:`change_cue`), not how long it has held. A "new" that a word of
    change follows gives way to it: "cell coverage at the new office is garbage.
    moving to Visible next month" tells a move."""
    lows: list[str] = _LOWER_WORD.findall(text.lower())
    if _CUE_OPENERS.isdisjoint(lows):
        return None  # most texts: no word that opens a cue
    if NAME_INSIDE.search(text):  # "Wide Open Road", "New York": a name, no cue
        lows = _LOWER_WORD.findall(NAME_INSIDE.sub(_unnamed, text).lower())
        if _CUE_OPENERS.isdisjoint(lows):
            return None
    weak = None
    cues = _cues(lows, changes)
    for w in cues:
        if w in _WEAK_CUES:
            weak = weak or w
            continue
        if w == "new":
            return next((c for c in cues if says_changed(c) and c not in _WEAK_CUES), w)
        return w
    return weak


def _cues(lows: list[str], changes: bool) -> Iterator[str]:
    """The cues of the words ``lows`` in order (see :func:`_cue`)."""
    for i, w in enumerate(lows):
        if w in _WEAK_CUES and denial_before(lows, i) is None:
            yield w
            continue
        if w in _PHRASE_HEADS and (w, lows[i + 1] if i + 1 < len(lows) else "") in _CHANGE_PHRASES:
            if w == "back" and i and lows[i - 1] not in _BEING:
                continue  # "went back to Berlin for a conference": a trip, no return
            if denial_before(lows, i) is None:
                yield f"{w} {lows[i + 1]}"
            continue
        if w == "first" and lows[i + 1 : i + 2] and lows[i + 1] in _FIRST_COMPOUNDS:
            continue  # "My evening class is first aid": no first time
        if w == "now" and i == 0 and lows[1:2] == ["that"]:
            # "Now that the trains are in storage, ...": a reason first, no cue ("I fly
            # Iberia now that Lufthansa dropped my route" says what is now)
            continue
        if w == "close" and _near(lows, i):
            continue  # "I've seen them up close", "close to home": nothing closed
        if changes and w == "since" and _since_a_clause(lows, i):
            continue  # "since we last talked", "ever since I was a kid", "since I'm allergic"
        if changes and w == "now" and now_for_long(lows, i):
            continue  # "for a while now", "seven years now", "for now"
        if w == "got" and (_has_got(lows, i) or (changes and _got_no_value(lows, i))):
            # having got is nothing new ("I've got two grandkids, Owen and Junie"), nor,
            # for a change, "got too excited", "got them checked"
            continue
        if w in _STARTING and (n := _starts_from(lows, i)):  # "From this month my insurer is Aviva"
            yield " ".join(lows[i : i + n])
            continue
        if w in _BEING_STATES and i and lows[i - 1] in _BEING:
            continue  # "I'm married to Marcus", "I'm registered with Dr. Rossi": states
        if i and lows[i - 1] in _DETERMINERS and w.endswith("ed") and w in _CHANGE:
            continue  # "a retired math teacher", "the closed branch": what someone is
        if w in _CUES and denial_before(lows, i) is None:
            yield w


#: Words before a word of change that make it describe a noun ("a retired teacher").
_DETERMINERS = frozenset("a an the my our his her their your this that".split())
#: Words around "close" that make it near, not shut: "up close", "so close",
#: "close to", "close friends".
_NEAR_BEFORE = frozenset("up so very too quite really pretty".split())
_NEAR_AFTER = frozenset("to by friend friends call".split())


def _near(lows: Sequence[str], i: int) -> bool:
    """Whether "close" at ``i`` says near ("up close", "close to home")."""
    return (i > 0 and lows[i - 1] in _NEAR_BEFORE) or (
        i + 1 < len(lows) and lows[i + 1] in _NEAR_AFTER
    )


#: Who opens a clause: "since we last talked", "since I'm allergic".
_CLAUSE_SUBJECTS = frozenset("i we you he she they it".split())
#: Verbs that make "since <name> ..." a clause: "since Nate was a boy".
_CLAUSE_VERBS = frozenset("was were is are am had has last".split())


def _since_a_clause(lows: Sequence[str], i: int) -> bool:
    """Whether "since" at ``i`` opens a clause, not the time a value holds from: a
    reason ("since I'm allergic") or a time long past ("since we last talked",
    "ever since Nate was a boy"); "since March", "since moving" say a value is new."""
    after = lows[i + 1 : i + 3]
    return (
        (i > 0 and lows[i - 1] == "ever")
        or (bool(after) and after[0] in _CLAUSE_SUBJECTS)
        or (len(after) == 2 and after[1] in _CLAUSE_VERBS)
        # "we" as ``ingest`` writes it: "since Nate and others last spoke"
        or lows[i + 2 : i + 4] == ["and", "others"]
    )


#: What "have got" is said with (the words as the cue scan splits them: "i ve got"):
#: possession, no getting ("I've got a dog").
_HAVE = frozenset("have has ve s".split())
#: What follows a "got" of a passing state: "got too excited", "got so tired".
_DEGREE = frozenset("too so very really pretty quite more less".split())
#: Objects of a "got" that has something done ("got them checked", "got it fixed").
_DONE_TO = frozenset("them it him her me us".split())
#: States after "got" that pass: "got lost", "got sick", "got home late".
_PASSING = frozenset("lost stuck sick ill hurt home ready better worse".split())
#: Participles after "got" that change a value: "got married", "got laid off".
_STATUS = frozenset(
    """married engaged divorced separated hired promoted fired sacked laid adopted accepted
    transferred admitted enrolled elected appointed""".split()
)


def _has_got(lows: Sequence[str], i: int) -> bool:
    """Whether "got" at ``i`` is having ("I've got two grandkids", "she's got three
    cats"), not getting for someone ("the broker's got us a five-year fix")."""
    return (
        i > 0 and lows[i - 1] in _HAVE and lows[i + 1 : i + 2] != [] and lows[i + 1] not in _DONE_TO
    )


def _got_no_value(lows: Sequence[str], i: int) -> bool:
    """Whether "got" at ``i`` gets no new value: possession ("I've got a dog"), a
    passing state ("got too excited", "got lost"), something done to a thing ("got
    them checked up", "got it fixed"), a chance ("got to know Anna"); "got a
    puppy", "got married", "got laid off" still get one."""
    before = lows[i - 1] if i > 0 else ""
    after = lows[i + 1] if i + 1 < len(lows) else ""
    if before in _HAVE or after in _DEGREE or after in _DONE_TO or after == "to":
        return True
    if after == "a" and lows[i + 2 : i + 3] in (["bit"], ["little"]):
        return True  # "got a bit nervous"
    return (after.endswith("ed") and after not in _STATUS) or after in _PASSING


#: Words of a while before "now" ("a year now", "ages now"), which make it how long.
_LONG_NOW = frozenset("while ages year years month months week weeks decade decades".split())


def now_for_long(lows: Sequence[str], i: int) -> bool:
    """Whether "now" at ``i`` of the folded words ``lows`` says how long, not that a
    value is new: "for a while now", "seven years now", "for now" ("now that" gives
    a new value's reason)."""
    before = lows[i - 1] if i > 0 else ""
    return before in _LONG_NOW or before == "for"


#: When a value starts holding: "from this month", "as of this year" (not "from next
#: month": a change to come is no change yet).
_STARTING = frozenset("from starting as".split())
_PERIODS = frozenset("day week month year term semester season".split())
#: Days from which a value holds after a word of start: "from today", "as of now".
_FROM_DAYS = frozenset("today tomorrow now".split())
#: The words that may open an update cue: a cue, a phrase's first word, a start.
_CUE_OPENERS = _CUES | _PHRASE_HEADS | _STARTING | _WEAK_CUES


def _starts_from(lows: Sequence[str], i: int) -> int:
    """How many words at ``lows[i]`` open a time from which a value holds ("From this
    month my insurer is Aviva", "As of this week, I work from Lisbon", "As of today
    my health cover is with TK", "Starting Monday I work at Zeiss"); 0 for none."""
    if lows[i] not in _STARTING:
        return 0
    at = i + 2 if lows[i] == "as" and lows[i + 1 : i + 2] == ["of"] else i + 1
    if lows[i] == "as" and at == i + 1:
        return 0
    rest = lows[at : at + 2]
    if rest and rest[0] in _FROM_DAYS and (rest[0] != "now" or lows[i] != "starting"):
        return at - i + 1
    # a named day or month after "as of" or "starting", not "from", which opens a
    # span ("from May to July")
    if rest and lows[i] != "from" and rest[0] in CALENDAR_NAMES:
        return at - i + 1
    if len(rest) == 2 and rest[0] == "this" and rest[1] in _PERIODS:
        return at - i + 2
    return 0


#: Nouns that make "first" part of a name, not a first time: "first aid", "first
#: class", "the first floor", "my first name".
_FIRST_COMPOUNDS = frozenset(
    "aid class floor name names language cousin cousins half quarter place person".split()
)


#: Nouns after "first" that make it a first time of a value held, not the first
#: value of its kind: "Today was my first day at Philips", "my first lesson with
#: Sonia" tell a change.
_FIRST_TIMES = frozenset(
    "day days week weeks month year shift lesson lessons session sessions class classes "
    "practice time night morning evening visit appointment game match term semester "
    "training run check-up checkup".split()
)
#: Nouns after "first" that rank a value, not count it: "her first choice", "my first
#: love" is the one before another.
_FIRST_RANKS = frozenset("choice choices pick option preference love".split())
#: Words of change that take a value up ("got", "joined", "bought"), not end one.
_TAKING = frozenset(
    "join joined joining start started starting adopt adopted became become bought buy got "
    "picked brought hired opened open opening enrolled accepted register registered "
    "registering".split()
)
_TAKES_UP = "|".join(sorted(_TAKING | {"landed", "found", "signed", "gets", "getting"}))
_WHOSE_FIRST = re.compile(
    rf"\b(?i:{_TAKES_UP})\s+(?:(?i:my|our|his|her|their)|[A-Z][a-z]+'s)\s+"
    r"(?i:(?:very\s+)?first(?:\s+ever)?)\s+(?:[A-Za-z-]+\s+){0,2}[A-Za-z-]+\b"
)


#: Words of change that end a value, which a first value of a kind never tells.
_ENDS_A_VALUE = (_CHANGE - _TAKING) | {"instead", "anymore"}


@functools.lru_cache(maxsize=20_000)
def first_of_its_kind(text: str) -> bool:
    """Whether ``text`` tells someone taking up their first value of a kind ("Ellie's
    got her first Saturday job, at Costa", "We bought our first house in 2019"),
    which changes no earlier one (not a first time: "My first lecture at ETH was
    today"): nothing in it ends a value ("I sold the Golf and bought my first
    electric car" changed the car), and "first" is not of a time ("my first day at
    Philips" tells a new job) nor of a rank ("Ellie's gone off her first choice"),
    and nothing is new ("Our first aide has been reassigned, so we have a new one")."""
    found = _WHOSE_FIRST.search(text.replace("\u2019", "'"))
    if found is None:
        return False
    words = _LOWER_WORD.findall(text.lower())
    if {w.lower() for w in found.group(0).split()} & (
        _FIRST_TIMES | _FIRST_COMPOUNDS | _FIRST_RANKS
    ):
        return False
    ends = _ENDS_A_VALUE.isdisjoint(words) and "new" not in words  # "..., so we have a new one"
    return ends and "no longer" not in text.lower()


#: Words after a cue that name no thing it is about ("moved to", "switched my").
_NOT_A_THING = (
    _FUNCTION
    | _FIRST_PERSON
    | frozenset(
        """to from in into at on for of with over back up away out and but my our your his
    her their its is are was were has have had been me him them us""".split()
    )
)


@functools.lru_cache(maxsize=20_000)
def cue_things(text: str) -> dict[str, str]:
    """Each word of change or novelty in ``text`` with the thing it is said of, when
    a noun follows it directly: {"new": "car"} for "My new car is a Honda Civic",
    {"switched": "gym"} for "I switched gyms"; none for "We moved to Lisbon"."""
    lows: list[str] = _LOWER_WORD.findall(text.lower())
    things: dict[str, str] = {}
    for i, w in enumerate(lows[:-1]):
        nxt = lows[i + 1]
        if w in _CUES and nxt not in _NOT_A_THING and nxt not in _CUES:
            things.setdefault(w, _singular(nxt))
    return things


def _singular(low: str) -> str:
    """``low`` without a plural "s" ("gyms" -> "gym"; "bus" stays)."""
    return low[:-1] if low.endswith("s") and len(low) > 3 else low


#: Words that say the thing after them is new or another one ("a new therapist",
#: "switched gyms"); not a start ("started agility classes" starts something else).
_RENEWING = frozenset("new switched changed swapped replaced".split())
#: Whose thing a fact names as theirs: "my therapist", "Kim's therapist".
_WHOSE = frozenset("my our".split())


def renews_its_thing(old: str, new: str) -> bool:
    """Whether ``new`` says with a word of novelty or change that the thing ``old``
    names as the speaker's is new or another one: "Kim found a new therapist, Dr.
    Hart" / "Kim's therapist is Dr. Weiss", "Kim switched gyms" / "My gym is
    FitX"; not "Kim got a new puppy" / "Kim's dog is Rex", nor "Nate made a new
    recipe" / "Nate knows one recipe" (no one's recipe). A name is no such thing
    ("Kim started ..." / "Kim is an engineer")."""
    things = {t for cue, t in cue_things(new).items() if cue in _RENEWING and not _named(new, t)}
    if not things:
        return False
    words = _LOWER_WORD.findall(old.lower())  # "kim's therapist": kim, s, therapist
    owned = {
        _singular(w)
        for prev, w in zip(words, words[1:], strict=False)
        if prev in _WHOSE or prev == "s"
    }
    return bool(things & owned)


def _named(text: str, low: str) -> bool:
    """Whether ``low`` (a lower-cased word of ``text``) is written capitalised there
    after the text's first word: a name."""
    return any(w[0].isupper() and w.lower().startswith(low) for w in text.split()[1:])


#: Words that leave what follows them ("quit the choir", "sold my cello").
_LEAVING = _ENDING | frozenset("ditched traded cut gave".split())
#: Words passed over between a word that leaves and what it leaves.
_LEAVING_SKIPS = frozenset(
    "my our your his her their the a an up out of in on going doing playing seeing".split()
)
#: Words of change before "from" and what was left ("moved on from latte").
_FROM_AFTER = frozenset("on away switched changed moved swapped upgraded".split())
#: Words after which no thing left follows ("left for", "moved to", "so").
_NOT_LEFT = frozenset("to for with w from and so it that this".split())  # "w/": with
#: Words that call a thing the one before, telling it by its kind: "the old
#: practice", "my previous bank".
OLD_WORDS = frozenset("old previous former".split())


@functools.lru_cache(maxsize=20_000)
def _left(text: str) -> tuple[tuple[bool, str], ...]:
    """What ``text`` says the speaker left, each as (told as one's own, its word):
    the word after one that leaves, past determiners and the like ("I quit the
    choir" → choir, "Traded in my old car" → old, one's own), or before "any
    more"."""
    lows: list[str] = _LOWER_WORD.findall(text.lower())
    out: list[tuple[bool, str]] = []
    for i, w in enumerate(lows):
        before = lows[i - 1] if i > 0 else ""
        after = (
            w in _LEAVING
            or (w == "longer" and before == "no")
            or (w == "from" and before in _FROM_AFTER)
        )
        if after:
            k = i + 1
            while k < len(lows) and lows[k] in _LEAVING_SKIPS:
                k += 1
            if k < len(lows) and lows[k] not in _NOT_LEFT:
                own = not _OWN.isdisjoint(lows[i + 1 : k]) or lows[k] in OLD_WORDS
                out.append((own, lows[k]))
        elif (w == "more" and i > 1 and lows[i - 1] == "any") or (w == "anymore" and i > 0):
            out.append((False, lows[i - 2 if w == "more" else i - 1]))
    return tuple(out)


def left_words(text: str) -> frozenset[str]:
    """The words of what ``text`` says the speaker left, folded: the word after one
    that leaves ("I quit the choir" → choir, "Cut out the cortado" → cortado,
    "No longer volunteering at Oxfam" → volunteering, "I've moved on from latte" →
    latte) or before "any more" ("I can't take tennis any more" → tennis); none for
    a move to somewhere ("We relocated to Lisbon")."""
    return frozenset(word for _, word in _left(text))


def leaves_own_thing(text: str) -> bool:
    """Whether what ``text`` says the speaker left is a thing of their own told by
    its kind, not its name ("Traded in my old car for a Kia Niro", "Sold my folding
    bike", "Cancelled my gym membership", "closed the old account"): the words name
    the attribute, which an earlier value of it need not say ("I drive a little red
    Fiat 500")."""
    return any(own for own, _ in _left(text))


#: The possessives that make a thing the speaker's own.
_OWN = frozenset("my our".split())


def different_things(a: str, b: str) -> bool:
    """Whether texts ``a`` and ``b`` say the same word of change or novelty of
    different things: "My new car is a Honda Civic" / "My new phone is a Galaxy
    S21", "I switched gyms" / "I switched programmes" are two changes, neither the
    other's. A "new" beside a word of change is a detail of the change, not its
    news: "cell coverage at the new office is garbage. moving to Visible" tells no
    new office against "new carrier activated"."""
    x, y = _news_things(a), _news_things(b)
    return any(y.get(cue, thing) != thing for cue, thing in x.items())


def _news_things(text: str) -> dict[str, str]:
    """:func:`cue_things` of ``text``, without a "new" its word of change tells."""
    things = cue_things(text)
    if "new" in things and _new_gives_way(text):
        return {c: t for c, t in things.items() if c != "new"}
    return things


@functools.lru_cache(maxsize=20_000)
def _new_gives_way(text: str) -> bool:
    """Whether the first cue of ``text`` is a "new" that a later word of change tells
    the change for (:func:`_cue`); not "Picked up my new Brompton", the new thing
    what the change took."""
    first = next(_cues(_LOWER_WORD.findall(text.lower()), True), None)
    return first == "new" and change_cue(text) != "new"


def says_changed(cue: str | None) -> bool:
    """Whether an update cue (:func:`update_cue`) says a value changed ("switched",
    "sold", "instead", "gave up"), not only that one is new or current ("new",
    "now", "since", "first"); no cue (None) says neither."""
    return cue is not None and cue not in _NEW_OR_NOW


@functools.lru_cache(maxsize=20_000)
def aspect_of(query: str) -> Aspect | None:
    """Whether ``query`` asks for a present value, an earlier one, or a past event."""
    lows = [w.lower() for w in _split_clitic(_words(query))]
    if not lows:
        return None
    question = query.rstrip().endswith("?") or lows[0] in _WH or lows[0] in _PRESENT_AUX
    # chat leaves the mark off after a lead: "besides metformin what am I taking now"
    lead = lows[0] in _QUESTION_LEADS and not _WH.isdisjoint(lows[1:5])
    if not (question or lead):
        return None
    grams = [tuple(lows[i : i + n]) for n in (2, 3) for i in range(len(lows) - n + 1)]
    before = [w for i, w in enumerate(lows) if w in _BEFORE_WORDS and lows[i - 1 : i] != ["how"]]
    if before or any(g in _BEFORE_PHRASES for g in grams):
        return "before"
    # a past verb of ending right after the question word asks of the past too:
    # "Which landlord sold the flat?", "Who left the team?"
    # (from the question word on: "Back at the start, which bank did I have ...?")
    wh = next((i for i, w in enumerate(lows) if w in _WH), 0)
    # up to the question's auxiliary, however long the thing asked of ("Which card
    # machine company did we ditch?")
    aux = next((i for i in range(wh + 1, len(lows)) if lows[i] in _AUX), wh)
    past = any(
        (w in _PAST_AUX and "if" not in lows[max(0, i - 2) : i])
        or (w in _ENDED_IN_QUESTION and _PRESENT_AUX.isdisjoint(lows[:i]))
        for i, w in enumerate(lows[: max(wh + 4, aux + 1)])
        if i >= wh or w in _PAST_AUX
    )  # (a supposition's "were" is no past: "If you were getting me a coffee, ...")
    if past and not _ENDING_IN_QUESTION.isdisjoint(lows):
        return "before"
    # and a verb in the past right after the question word: "Who gave me my first
    # retainer?" asks of the first as "Who did ..." does
    told = wh + 1 < len(lows) and lows[wh] in _WH and _past_event(lows[wh + 1])
    if (past or told) and (
        not _FIRST_WORDS.isdisjoint(lows) or any(g in _FIRST_PHRASES for g in grams)
    ):
        return "first"
    # an adverb of the earliest asks for it whatever the tense: "Which provider held
    # my retirement savings originally?"
    if not _EARLIEST.isdisjoint(lows):
        return "first"
    if says_now(query):
        return "now"
    if past and lows[-1] != "again":  # "What was my address again?": remind me of it now
        return "past"
    return "now"


#: Words that may lead a question before its question word: "besides metformin
#: what am I taking", "apart from Tucker which dogs", "so what's my band called".
_QUESTION_LEADS = frozenset("besides apart aside except other so ok okay hey btw also and".split())


def says_now(query: str) -> bool:
    """Whether ``query`` says it asks about the present in so many words ("now",
    "currently", "these days", ...), not only by its tense."""
    lows = [w.lower() for w in _split_clitic(_words(query))]
    grams = [tuple(lows[i : i + n]) for n in (2, 3) for i in range(len(lows) - n + 1)]
    return any(w in _NOW_WORDS for w in lows) or any(g in _NOW_PHRASES for g in grams)


#: Objects after which a sentence's first word reads as a request's verb ("Remind
#: me", "Tell us", "Help me", "Let me know").
_REQUEST_OBJECTS = frozenset("me us".split())
_YOU = frozenset("you u".split())
#: Irregular past forms that take "me"/"us" ("Gave me a lift", "Told us to wait").
_PAST_FORMS = frozenset("gave told sent made took showed taught found kept lent paid".split())
#: A sentence: up to its final marks; a title's dot ("Dr. Sandhu", "Mrs. Lee") and a
#: decimal point ("2.5 GB") end none.
_AFTER_TITLE = "|".join(rf"(?<=\b{t})" for t in sorted(HONORIFICS | {"st"}))
_SENTENCE = re.compile(
    rf"[^.!?]+(?:(?:{_AFTER_TITLE}|(?<=\d)(?=\.\d))\.[^.!?]*)*[.!?]*", re.IGNORECASE
)
#: Opening words that are no request's verb ("I", "Can", "What", "Today", "The").
_NOT_VERBS = _FIRST_PERSON | _AUX | _WH | _LEADING | _FUNCTION


def _requests(lows: list[str], named: bool = False) -> bool:
    """Whether a sentence's opening words (at least one) make a request: "please
    ...", a modal and "you" ("Can you suggest ...", "Would you remind me ..."), or
    a verb that is not in the past and "me"/"us" first ("Remind me to ...", "Tell
    me about ...", not "Got me a new bike"), or the speaker as a fact drawn from
    their words names them ("Remind the user to ...", and with ``named``, the
    second word a name before "to", "that", "about" or "of": "Remind Greta to
    ...", not "Miss Anna so much")."""
    if lows[0] == "please":
        return True
    if len(lows) < 2:
        return False
    if lows[0] in _AUX and lows[1] in _YOU:
        return True
    verb = lows[0]
    past = verb.endswith("ed") or verb in _CHANGE or verb in _PAST_FORMS
    past = past or verb in _IRREGULAR_PAST
    told = lows[1] in _REQUEST_OBJECTS or lows[1:3] == ["the", "user"]
    told = told or (named and lows[2:3] in (["to"], ["that"], ["about"], ["of"]))
    return told and not past and verb not in _NOT_VERBS


#: The speaker's own words that open a clause as its subject.
_SPEAKER_OPENERS = frozenset("i i'm i've we we're we've my our".split())


def _states_before_asking(question: str) -> bool:
    """Whether a sentence that ends in a question first states a thing of the
    speaker's in a clause of its own, before a comma: "my Vodafone contract ends in
    march, any tips for sim only deals?", "I live in Berlin now, where should I
    eat?". Not a supposition ("If I move to Lisbon, what do I need?") nor a
    question that opens it ("Do I still have my Vodafone contract, or did I
    cancel?")."""
    head, comma, _ = question.partition(",")
    if not comma:
        return False
    words = [m.group(0).replace("\u2019", "'") for m in _WORD.finditer(head)]
    lows = [w.lower() for w in words]
    if len(lows) < 3 or lows[0] not in _SPEAKER_OPENERS:
        return False
    return _SUPPOSING.isdisjoint(lows) and not _requests(lows)


def asserts(text: str) -> bool:
    """Whether ``text`` states something: a sentence of it is neither a question
    ("Can you suggest a podcast for the commute?", "Where is the party?") nor a
    request ("Remind me to buy milk", "Please book a table"). A value question is
    answered by what someone said is so; asking about the commute is no answer to
    "How do I commute?"."""
    for part in _SENTENCE.findall(text):
        end = part.rstrip()[-1:]
        if end == "?":
            if _states_before_asking(part):
                return True
            continue
        first = [
            m.group(0).replace("\u2019", "'") for m in itertools.islice(_WORD.finditer(part), 3)
        ]
        lows = [w.lower() for w in _split_clitic(first)][:3]  # the opening decides
        # a name second ("Remind Greta to ..."), not "I" nor a possessive ("Love Anna's")
        named = len(first) > 1 and first[1][:1].isupper() and first[1] != "I"
        named = named and not first[1].lower().endswith("'s")
        if not lows or (lows[0] in _WH and end != "!") or _requests(lows, named):
            continue
        return True
    return False


#: Words that make a text suppose, wish or weigh a value rather than state it ("I
#: might move to Lisbon", "If I sold my Volvo ...").
_SUPPOSING = frozenset(
    "if might could would should wish maybe perhaps considering considered".split()
)
_SUPPOSING_PHRASES = frozenset(
    {
        ("thinking", "about"),
        ("thinking", "of"),
        ("thinking", "to"),  # "I am thinking to port my number"
        ("thought", "about"),
        ("thought", "of"),
        ("planning", "to"),
        ("hoping", "to"),
        ("want", "to"),
        ("wants", "to"),
    }
)
_SUPPOSING_OPENERS = frozenset(a for a, _ in _SUPPOSING_PHRASES)
#: A value looked for, not had: "need a new GP now we're out this side", "looking
#: for another dentist", "need to find a new landlord".
_WANTING = re.compile(
    r"\b(?:needs?|looking\s+for)\s+(?:a\s+new|an\s*other|a\s+different|to\s+find)\b"
)
_WANTING_OPENERS = frozenset({"need", "needs", "looking"})
#: An "if" that opens an aside or a concession, no condition: "if you can imagine",
#: "if I'm honest", "if you ask me", "if memory serves"; "even if he does talk a mile
#: a minute", "thorough, if a bit brusque", "one of the best, if not the best", "as
#: if I had a choice".
_ASIDE_IF = re.compile(
    r"\b(?:even|as)\s+if\b|,\s*if\s+not\b|\bif\s+(?:(?:a\s+)?(?:bit|little|tad|touch)\b"
    r"|(?:slightly|somewhat|rather)\b|you\s+(?:can\s+(?:imagine|believe\s+it)|ask\s+me|will|like|must\s+know)"
    r"|i(?:'|\u2019)?m\s+(?:being\s+)?honest|i\s+(?:may\s+say\s+so|remember\s+(?:right|correctly))"
    r"|memory\s+serves|that\s+makes\s+sense|nothing\s+else|anything)\b",
    re.IGNORECASE,
)
#: A change weighed ("considered", "talked about", "tried to talk me into", "nearly")
#: and then not made: "..., but in the end I stayed with the plan I've got", "...,
#: but after the trial training he decided to stay", "..., but the numbers didn't
#: work out, so we're keeping the one we have". Not "I switched to Vodafone, but my
#: wife is sticking with O2": nothing was weighed.
_KEPT_AFTER_ALL = re.compile(
    r"\b(?:consider(?:ed|ing)|(?:thought|thinking|talked|talking)\s+(?:about|of)"
    r"|talk(?:ed|ing)?\s+\w+\s+into|tried\s+to|wanted\s+to|nearly|almost|tempted"
    r"|toyed\s+with|looked\s+(?:into|at)|had\s+a\s+(?:good\s+)?look\s+at|debated)\b"
    r".*?\b(?:but|though|however)\b.*?\b(?:stay(?:s|ed|ing)?\s+(?:put|with|where)"
    r"|decided\s+to\s+stay|renew(?:ed|ing)?\s+(?:with|where)"
    r"|(?:keep|keeps|keeping|kept)\s+(?:the\s+one|the\s+same|it\b|what)"
    r"|stick(?:s|ing)?\s+with|stuck\s+with)",
    re.IGNORECASE | re.DOTALL,
)
#: The first words of a weighing in :data:`_KEPT_AFTER_ALL`, to test before it.
_WEIGHING = frozenset(
    "considered considering thought thinking talked talking talk tried wanted nearly almost "
    "tempted toyed looked look debated".split()
)
#: Verbs of a state in the simple past ("I was based in Munich", "I had a Volvo",
#: "I lived in Paris"), and what makes one the present after all ("I have lived
#: here since March", "I've had an account at N26 since I was a student").
_PAST_STATES = frozenset("was were had lived worked owned studied used grew".split())
_PRESENT_AFTER_ALL = frozenset("since now currently still nowadays".split())
#: A text that opens by looking back: "Back when I paid for Adobe ...", "Back in my
#: Cheap Seats days ...", "In our Fitzroy days ...": how things were, whatever verb.
_LOOKING_BACK = re.compile(
    r"\W*(?:back\s+when\b|(?:back\s+)?in\s+(?:my|our|the)\s+[^.!?,;]{1,40}?\bdays\b)"
)
#: Verbs of state in the present: the first one before any past one makes the text
#: present ("I have a dog named Rex who was a rescue"). Not "'s", which may be a
#: possessive ("My dog's name was Rex").
_PRESENT_STATES = frozenset(
    "am is are 'm 're i'm we're you're they're have has live lives work works own owns".split()
)
#: Words after "'s" that make it "is", not a possessive: "Our broadband's with
#: Plusnet", "My sister's a teacher" (a possessive comes before a noun: "My dog's
#: name was Rex").
_IS_BEFORE = frozenset("with in at on from a an the still now currently based called named".split())
#: Participles that name a state after "was"/"were" ("I was based in Munich",
#: "we were married for ten years"); any other participle names an event ("I was
#: promoted", "I was born in Porto"), which says nothing of how things were.
_STATE_PARTICIPLES = frozenset(
    "based located stationed employed enrolled married engaged registered subscribed "
    "signed named called known allowed".split()
)
#: Participles of being someone's partner: "I'm married to Marcus" is a state.
_PARTNERED = frozenset({"married", "engaged"})
#: Participles of change that name a state after a form of being ("I'm registered
#: with Dr. Rossi"), not the change ("Registered the dog at AniCura").
_BEING_STATES = _PARTNERED | {"registered"}
_IRREGULAR_PARTICIPLES = frozenset(
    "born bitten chosen driven given hit hurt made paid sent shown stolen taken told "
    "thrown won written".split()
)


def _event_participle(word: str) -> bool:
    """Whether ``word`` after "was"/"were" makes the clause a passive event."""
    if word in _STATE_PARTICIPLES:
        return False
    return word in _IRREGULAR_PARTICIPLES or (len(word) > 4 and word.endswith("ed"))


#: Words before a change that say it has not happened: it will ("I'll sell my
#: Volvo", "We're gonna move"), or it almost did ("I nearly quit Nokia").
_UNREALISED = frozenset("will shall gonna almost nearly".split())
#: Words that may stand between them and the change ("I'll probably sell").
_HEDGES = frozenset("probably definitely soon finally really just also".split())


def supposes(text: str) -> bool:
    """Whether ``text`` supposes, wishes or weighs a value instead of stating it
    (:func:`_supposes`). In a text of several sentences the first that speaks of
    the speaker or names something decides: "Sick of the queues, I've nominated
    Hardy's Chemist as my pharmacy. I did think about the online delivery thing,
    but I'd rather have a pharmacist I can talk to" states the pharmacy, and "Big
    news! I might move to Lisbon" supposes the move. A change weighed and not
    made is read over the whole text."""
    sentences = _SENTENCE.findall(text)
    if len(sentences) > 1 and not _kept_after_all(text):
        first = next((s for s in sentences if _speaks_of_something(s)), None)
        if first is not None:
            return _supposes(first)
    return _supposes(text)


def _speaks_of_something(sentence: str) -> bool:
    """Whether ``sentence`` has a first-person word or a name after its first word."""
    return any(_mine(w) for w in _words(sentence)) or _names_a_value(sentence)


def _kept_after_all(text: str) -> bool:
    """Whether ``text`` weighs a change and keeps the value (:data:`_KEPT_AFTER_ALL`)."""
    present = {w.lower() for w in _WORD.findall(text)}
    return not _WEIGHING.isdisjoint(present) and _KEPT_AFTER_ALL.search(text) is not None


@functools.lru_cache(maxsize=50_000)
def _supposes(text: str) -> bool:
    """Whether ``text`` supposes, wishes or weighs a value instead of stating it,
    or tells a change that has not happened: one to come or meant ("I'm going to
    quit Nokia", "We plan to move to Lisbon", "I refuse to leave Nokia"; "I had to
    sell my Volvo" did), one that will ("I'll sell my Volvo") or one that almost
    did ("I nearly sold my Volvo", "I was about to quit Nokia"), or one weighed and
    then not made ("The agent tried to talk me into an Anthem plan, and I very
    nearly did it, but in the end I stayed with the plan I've got")."""
    if _kept_after_all(text):
        return True
    if "if" in text.lower():  # "..., if you can imagine": an aside supposes nothing
        text = _ASIDE_IF.sub(" ", text)
    original = [w.replace("\u2019", "'") for w in _WORD.findall(text)]
    lows = [w.lower() for w in original]
    present = set(lows)
    if not _SUPPOSING.isdisjoint(present) or any(w.endswith("'d") for w in lows):
        return True
    if not _SUPPOSING_OPENERS.isdisjoint(present) and any(
        p in _SUPPOSING_PHRASES for p in zip(lows, lows[1:], strict=False)
    ):
        return True
    folded = text.lower().replace("\u2019", "'")
    if not _WANTING_OPENERS.isdisjoint(present) and _WANTING.search(folded):
        return True
    if ("will" in present or "'ll" in folded) and _NEW_TO_COME.search(folded):
        return True  # "Hannah will be my new manager from next month": not yet
    if _CHANGE.isdisjoint(present):
        return False  # no change to come
    # every change it tells is to come ("I quit Nokia to join Philips" did quit)
    changes = [i for i, w in enumerate(lows) if w in _CHANGE]
    return bool(changes) and all(_unrealised(lows, original, i) for i in changes)


#: A new value that will be, not one that is: "Hannah will be my new manager",
#: "My new landlord will be Vonovia".
_NEW_TO_COME = re.compile(
    r"(?:\bwill|'ll)\s+be\s+(?:my|our|the)\s+new\b|\bnew\s+\w+\s+(?:will|'ll)\s+be\b"
)


def _unrealised(lows: Sequence[str], original: Sequence[str], i: int) -> bool:
    """Whether the word of change at ``i`` tells a change that has not happened: an
    infinitive ("to quit", not "had to sell", "used to move"), or after a word of
    the future or of almost ("will", "'ll", "nearly"; "Will" the name is none)."""
    j = i - 1
    while j >= 0 and lows[j] in _HEDGES:
        j -= 1
    if j < 0:
        return False
    if lows[j] == "to":
        return j == 0 or lows[j - 1] not in ("had", "used")
    return (lows[j] in _UNREALISED and original[j] == lows[j]) or lows[j].endswith("'ll")


@functools.lru_cache(maxsize=50_000)
def past_state(text: str) -> bool:
    """Whether ``text`` says how things were, not how they are: it opens by looking
    back ("Back when I paid for Adobe ...", "Back in my Cheap Seats days ...") and
    says nothing of now, or its first verb of
    state is in the simple past ("I was based in Munich until last year", "I
    lived in Paris for two years", "I grew up in Villach", "I was born in Graz"),
    and nothing says it holds now or changed
    ("Today was my first day at Philips" is an update; "I've had an account at
    N26 since I was a student" holds now). A passive event is no state ("I was
    promoted to head nurse"), nor is a past clause after a present one ("I have a
    dog who was a rescue")."""
    folded = text.lower()
    if _LOOKING_BACK.match(folded):  # "Back when I paid for Adobe ...": how things were
        return _PRESENT_AFTER_ALL.isdisjoint(w.lower() for w in _split_clitic(_words(text)))
    if not any(w in folded for w in _PAST_STATES):
        return False  # most texts: no verb of a past state, not even within a word
    lows = [w.lower() for w in _split_clitic(_words(text))]
    if any(w in _PRESENT_AFTER_ALL for w in lows) or update_cue(text) is not None:
        return False
    if _event_then_state(text):
        return False
    for i, w in enumerate(lows):
        if w in _PRESENT_STATES:
            return False  # "I have a dog named Rex who was a rescue"
        if w == "'s" and i + 1 < len(lows) and lows[i + 1] in _IS_BEFORE:
            return False  # "Our broadband's with Plusnet, never had a problem with it"
        if w in _PAST_STATES:
            before = lows[i - 1] if i else ""
            after = lows[i + 1] if i + 1 < len(lows) else ""
            if w in ("was", "were") and after == "born":
                return True  # "I was born in Graz": a start that holds no more
            if w in ("was", "were") and _event_participle(after):
                return False  # "I was promoted to head nurse" is an event
            if w == "had" and after not in _PAST_STATES | {"been"} and _event_participle(after):
                continue  # an event before another: "... a problem nobody had mentioned"
            return not (before in _PRESENT_AUX or before.endswith("'ve"))
    return False


def _event_then_state(text: str) -> bool:
    """Whether ``text`` tells an event in a clause before its first past state: the
    state is a detail of the event ("went with Direct Line for the car this year,
    the renewal quote was 800"), not how things were."""
    for clause in _CLAUSE_BREAK.split(text):
        lows = [w.lower() for w in _words(clause)]
        if any(w in _PAST_STATES for w in lows):
            return False
        if len(lows) > 1 and any(_past_event(w) for w in lows):
            return True  # (one word is no clause of an event: "Tired, I was ...")
    return False


def _past_event(low: str) -> bool:
    """Whether ``low`` is a verb of an event in the simple past ("went", "tried")."""
    if low in _PAST_STATES or low in _STATE_PARTICIPLES:
        return False
    return low in _IRREGULAR_PAST or (len(low) > 4 and low.endswith("ed"))


@dataclass(frozen=True, slots=True)
class Statement:
    """What the currency rules know about one memory's text."""

    subject: str
    cue: str | None
    #: Whether it states something (:func:`asserts`), rather than only asking.
    asserts: bool = True
    #: Whether it supposes a value rather than stating it (:func:`supposes`).
    supposes: bool = False
    #: Whether it says how things were (:func:`past_state`).
    past: bool = False

    @property
    def states(self) -> bool:
        """Whether it states a value: asserts it and does not only suppose it."""
        return self.asserts and not self.supposes

    @property
    def states_now(self) -> bool:
        """Whether it states a value that holds now (not only one that held)."""
        return self.states and not self.past


@functools.lru_cache(maxsize=50_000)
def statement(text: str) -> Statement:
    """The subject, update cue, assertion, supposition and tense of ``text``, cached."""
    return Statement(
        subject_of(text), update_cue(text), asserts(text), supposes(text), past_state(text)
    )


def is_person(subject: str) -> bool:
    """Whether a subject (of :func:`subject_of`) is another person than the speaker:
    a relation ("sister", "best friend") or a third-person pronoun."""
    return subject in ("he", "she", "they") or subject.rsplit(" ", 1)[-1] in RELATIONS


@functools.lru_cache(maxsize=20_000)
def called_by_name(text: str, relation: str) -> bool:
    """Whether ``text`` calls someone by ``relation`` as by a name, capitalised and
    nobody's: "helped Mom move in", "Mum's given up her shifts", "Who is Dad's GP
    now?", "Who's Mum's carer now?" (an "'s" after a question word is "is"); not "my
    mum", "Alice's Dad"."""
    words = _split_clitic(_words(text))

    def owned(i: int) -> bool:  # "Alice's Dad", not "Who's Mum's"
        return words[i - 1] == "'s" and words[i - 2].lower() not in _WH | _FUNCTION

    return any(
        w[:1].isupper()
        and kin(w.lower()) == kin(relation)
        and (i == 0 or (not owned(i) and words[i - 1].lower() not in _DETERMINERS))
        for i, w in enumerate(words)
    )


@functools.lru_cache(maxsize=20_000)
def question_subject(query: str) -> str:
    """Whom a question asks about: ``"self"`` ("Where do I live?"), a relation
    ("Where does my sister live?"), a named person ("Where does Alice live
    now?" → ``"alice"``), or ``""``."""
    found = subject_of(query)
    words = _split_clitic(_words(query))
    mine = any(_mine(w) for w in words)
    if found == "self":  # only when the question says "I", "my", "we" ...
        named = _named_after_auxiliary(words)
        if named and not any(w.lower() in _SPEAKING for w in words):
            return named  # "Which company did Tomás leave us for?": Tomás left
        if mine:
            return "self"
    elif found:  # "my sister", not "Alice's sister" (that is Alice's business)
        return found if mine or found not in RELATIONS or called_by_name(query, found) else ""
    for w in words[1:]:  # a day or a month is no one: "Who covers Saturdays?"
        low = w.lower()
        if w[:1].isupper() and low not in _FUNCTION | _FIRST_PERSON and not _calendar(low):
            return low
    return ""


#: First-person words that make the speaker a question's subject (not "me", "us").
_SPEAKING = frozenset("i i'm i've i'd i'll we we're we've we'd".split())
#: Pronouns that open a clause as its subject ("Niamh thinks I've lost it").
SUBJECT_PRONOUNS = (
    _SPEAKING | _THIRD_PRONOUNS | frozenset("you you've you're he'd she'd they've".split())
)


def _named_after_auxiliary(words: Sequence[str]) -> str:
    """The name right after a question's auxiliary ("did Tomás", "does Cian"),
    folded: the subject of the question's verb; else ""."""
    for prev, w in zip(words, words[1:], strict=False):
        if prev.lower() in _AUX and _a_name(w) and w.lower() not in _FIRST_PERSON:
            return w.lower()
    return ""


_ASPECT_WORDS = (
    _NOW_WORDS
    | _BEFORE_WORDS
    | _FIRST_WORDS
    | {"very", "start", "beginning", "begin"}
    | {"these", "days", "moment", "used"}
) - {"old"}


def aspect_words(query: str) -> set[str]:
    """The words of ``query`` that only say which value it asks for ("now",
    "these days", "previous", "before"): not what it is about, so left out of
    the search (they would match "Today was my first day at ..." for any question)."""
    aspect = aspect_of(query)
    if aspect not in ("now", "before", "first"):
        return set()
    who = question_subject(query)
    if aspect == "first" and who != "self" and not is_person(who):
        return set()  # "When did Caroline first go to ...?" asks of an event, words and all
    lows = [w.lower() for w in _words(query)]
    pairs = set(zip(lows, lows[1:], strict=False))
    out = {w for w in lows if w in _NOW_WORDS or w in _BEFORE_WORDS - {"old"}}
    if aspect == "first":
        out |= _FIRST_WORDS & set(lows)
        grams = pairs | set(zip(lows, lows[1:], lows[2:], strict=False))
        out |= {w for g in grams & _FIRST_PHRASES for w in g}
    if ("these", "days") in pairs:
        out |= {"these", "days"}
    if ("the", "moment") in pairs:
        out.add("moment")
    if ("used", "to") in pairs:
        out.add("used")
    return out & _ASPECT_WORDS
