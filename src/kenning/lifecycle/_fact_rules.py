"""The rule grammar of :class:`~kenning.lifecycle.facts.RuleFactExtractor`.

Private to :mod:`kenning.lifecycle.facts`, whose docstring describes the rules:
the word lists and patterns, sentence splitting and discourse stripping,
dropped-subject repair, rewriting to the third person, time resolution and the
kind and importance of a fact. Pure string logic over one sentence at a time;
nothing here knows about turns or facts.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from ..graph.rules import HONORIFICS
from ..retrieval.timeq import TimeSpan, content_times
from .slots import SAME_PAST

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
#: Words that make a present habitual ("I quit sugar every January").
_HABITUAL = frozenset("every always usually often never sometimes each".split())
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
    normally typically regularly occasionally rarely ever def gradually slowly quickly
    longer""".split()
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
    # an announcement of what follows: "Sad news, Rex died", "Big news: I got the job"
    r"|(?:(?:big|good|great|sad|bad|exciting|some|quick|small|fun|random|happy|awful)\s+)?"
    r"(?:news|update|fact)(?=\s*[,:!.-])"
    r"|(?:quick|small|random|fun)\s+(?:one|thing|question|note)(?=\s*[,:!.-])"
    r"|heads[- ]up(?=\s*[,:!.-])"
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
    r"|call|ping|shoot|hit me|help (?:me|us))\b",
    re.IGNORECASE,
)
#: Words that ask the listener to keep what follows, or flag it as information:
#: "Remember that I'm allergic to peanuts", "Please note: I moved to Lisbon", "Just
#: so you know, I'm vegan now", "For the record, ...". What follows is the fact;
#: "Remember to buy milk" (no clause after it) is left to the other rules.
_DIRECTIVE = re.compile(
    r"^(?:please\s+)?(?:(?:do\s+)?(?:remember|note|keep in mind|bear in mind|don't forget"
    r"|do not forget|make a note|take note|note down)(?:\s+(?:of\s+)?(?:this|that))?"
    r"(?:\s*:|\s*,|\s+(?=(?:that\s+)?(?:i|i'm|i've|i'd|we|we're|my|our|me)\b))"
    r"|(?:(?:just\s+)?so you know|(?:just\s+)?fyi|for your information|for the record"
    r"|heads up|note to self)\b|(?:note|important|nb)\s*:)[\s,:;.-]*(?:that\s+)?",
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
#: What may open a sentence told of a name, and what is no name: the start of
#: :data:`_NAMED_DEATH` and :data:`_NAMED_END`.
_NAMED_OPENING = (
    r"^(?i:(?:sadly|unfortunately|so|well|oh|anyway)\b[,\s]*)?"
    r"(?!(?i:it|he|she|they|this|that|the|there|everyone|nobody|someone)\b)"
)
#: Someone the speaker names who died ("Luna passed away last week", "Sadly,
#: Grandpa Joe died"): a lasting change in the speaker's life, told without "I".
_NAMED_DEATH = re.compile(
    _NAMED_OPENING + r"(?P<names>(?:[A-Z][\w'.-]*\s+){1,3})(?i:has\s+|had\s+)?"
    r"(?i:passed\s+away|died|passed\s+on)\b"
)
#: A named party's ending told without "I" ("Akelius sold the flat to Mrs. Patel",
#: "Dr. Costa retired", "Jan took over the team from Petra"): the name (a title may
#: open it) before a verb that ends what the speaker had with it.
_TITLES = "|".join(sorted(h.capitalize() for h in HONORIFICS))
_NAMED_END = re.compile(
    _NAMED_OPENING + rf"(?P<names>(?:(?:{_TITLES})\.?\s+)?(?:[A-Z][\w'.-]*\s+){{1,3}})"
    r"(?i:has\s+|had\s+|just\s+|finally\s+)?"
    r"(?i:sold|retired|resigned|quit|left|closed|shut\s+down|went\s+bust|moved\s+away"
    r"|stepped\s+down|took\s+over|taken\s+over)\b"
)
_TAG_QUESTION = re.compile(
    r"^(?P<stem>[^?]{12,}?),\s+(?:how|what|wanna|want|do|did|have|are|is|can|could|would|right"
    r"|isn't|don't|any|anything|you)\b[^,?]*\?$",
    re.IGNORECASE,
)
#: A date that comes back every year, stated in the present ("My birthday is March
#: 3rd"): it has no year to resolve.
_RECURRING = re.compile(r"\b(?:birthday|anniversary|name day)\s+(?:is|falls|'s)\b", re.IGNORECASE)
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


def _is_vocative(word: str, names: frozenset[str]) -> bool:
    w = word.lower()
    return len(w) >= 3 and any(n.startswith(w) for n in names)


#: A short statement of who or what the speaker is ("I'm vegan", "I'm a nurse", "I
#: am diabetic", "I'm Sam"): a fact however few its words, unless it only says how
#: the speaker is doing ("I'm fine", "I'm so sorry", "I'm in!").
_SHORT_IDENTITY = re.compile(
    r"^(?:i'm|i am)\s+(?:(?:a|an)\s+)?(?P<what>[a-z0-9][\w-]*)\s*[.!]*$", re.IGNORECASE
)
_SMALL_TALK_STATES = frozenset(
    """fine good ok okay great well alright sorry here back in out ready sure done home
    so too just also still not there awake up down cool""".split()
)
_TRAILING_ASIDE = re.compile(r"[,\s]+(?:btw|by the way|fyi|lol|haha)\s*([.!]*)$", re.IGNORECASE)


#: "I use Spotify", "I support Arsenal", "I'm learning French": a verb and a name.
_SHORT_NAMED = re.compile(
    r"^(?i:i|we|i'm|we're|i've|we've)\s+(?P<verb>[a-z]+)\s+"
    r"(?P<name>[A-Z][\w&'-]*(?:\s+[A-Z][\w&'-]*)*)\s*[.!]*$"
)


#: Words in the verb's place of a short sentence that make no fact of it: talk
#: about the talk ("I mean Tuesday", "I see John"), a place for the moment ("I'm
#: at Starbucks").
_SHORT_NOT_FACTS = (
    frozenset(
        """mean meant guess think thought bet hope wish see saw say said tell told ask
    asked thank hear heard am is are was were at in on with from to for by near""".split()
    )
    | _SMALL_TALK_STATES
)


def _short_named(sentence: str) -> bool:
    """Whether ``sentence`` is a short statement of what the speaker does with a
    name ("I use Spotify", "We love Lisbon"): a fact in three words."""
    m = _SHORT_NAMED.match(sentence.strip())
    return m is not None and m["verb"] not in _SHORT_NOT_FACTS


def _short_identity(sentence: str) -> bool:
    """Whether ``sentence`` is a short statement of who or what the speaker is."""
    m = _SHORT_IDENTITY.match(sentence.strip())
    if m is None:
        return False
    what = m["what"].lower()
    # "I'm listening", "I'm coming" say what the speaker is doing this minute
    return what not in _SMALL_TALK_STATES and what not in _ADJ_HEAD and not what.endswith("ing")


def _directive(sentence: str) -> tuple[str, bool]:
    """``sentence`` without a leading request to keep it ("Remember that ...",
    "FYI, ..."), and whether it had one."""
    m = _DIRECTIVE.match(sentence)
    if m is None or m.end() == len(sentence):
        return sentence, False
    rest = sentence[m.end() :]
    return rest[:1].upper() + rest[1:], True


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
    s = _TRAILING_ASIDE.sub(r"\1", s)  # "I'm Sam btw"
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
#: What ends a sentence's first clause.
_FIRST_CLAUSE = re.compile(r"[;:—–]|,\s|\s-\s")


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
    # "me" as the object of the first clause: "Made me think"; not of a later one,
    # "Dropped out of pottery; bookkeeping suits me better"
    object_me = re.search(r"\b(?:me|myself)\b", _FIRST_CLAUSE.split(rest, 1)[0], re.IGNORECASE)
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
    if _named_death(s) or _named_end(s):
        return s, True
    return None


def _named_end(s: str) -> bool:
    """Whether ``s`` tells, without "I", that a party the speaker names ended what
    the speaker had with it: "Akelius sold the flat to Mrs. Patel", "Dr. Costa
    retired", "Priya left the company". Reconcile decides what it ends."""
    return _NAMED_END.match(s) is not None


def _named_death(s: str) -> bool:
    """Whether ``s`` tells that someone the speaker names died: the name (or names)
    before the verb capitalised as written ("Luna passed away last week")."""
    m = _NAMED_DEATH.match(s)
    if m is None:
        return False
    words = m["names"].split()
    # one name ("Luna"), or a relation's ("Grandpa Joe"): a full name or a title
    # with one is mostly news ("Queen Elizabeth died in 2022")
    return len(words) == 1 or words[0].lower() in _REL_WORDS


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
    if w in _ADVERBS or w == "no" or not any(c.isalpha() for c in w):
        return True  # "no" of "I no longer work" too
    return w.endswith("ly") and len(w) > 4 and w not in _LY_VERBS


#: Prefixes that keep an irregular past irregular: "outgrew", "overtook",
#: "withdrew", "mistook", "rebuilt", "undertook".
_PAST_PREFIXES = ("out", "over", "under", "with", "mis", "re", "fore", "up")


def _is_past(word: str) -> bool:
    w = word.lower()
    if w in _IRREGULAR_PAST or (w.endswith("ed") and w not in _NOT_PAST_ED):
        return True
    return any(w.startswith(p) and w[len(p) :] in _IRREGULAR_PAST for p in _PAST_PREFIXES)


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


def _without_self_naming(content: str, speaker: str) -> str:
    """``content`` without a clause that only names the speaker as themself ("I'm
    Kim", rewritten "Kim is Kim"; "My name is Kim"): what is left, or "" when that
    was all, when the speaker goes on ("Kim is Kim, Kim lives in Hamburg" -> "Kim
    lives in Hamburg")."""
    name = re.escape(speaker)
    rest = re.sub(rf"^{name}(?:'s name)? is {name}\b(?:\s*,\s*|\s+and\s+|\s*[.!]*$)", "", content)
    if rest == content or (rest.strip(" .!") and not rest.startswith(speaker)):
        return content  # "Kim is Kim, a teacher from Oslo": what follows is Kim's
    return rest


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
        if _plural_subject(tokens[:k]):  # "Alex and I went our separate ways"
            return {"our": "their", "ours": "theirs"}.get(low, "themselves"), None
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
            elif agree != "you" and low not in _NOT_VERBS and not _said_in_past(low, tokens):
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


def _said_in_past(verb: str, sentence: Sequence[str]) -> bool:
    """Whether ``verb``, whose past is its base form, is read as the past: said once,
    it is what happened ("I quit Nokia and joined Philips", "I quit my job"); only a
    habit is in the present ("I quit sugar every January")."""
    if verb not in SAME_PAST:
        return False
    return not any(w.lower() in _HABITUAL for w in sentence)


def _plural_subject(before: Sequence[str]) -> bool:
    """Whether the words ``before`` a pronoun hold a plural subject with the speaker
    in it ("we", "Alex and I"): an "our" after it is theirs, not the speaker's
    alone."""
    words = [w for w in before if not w.isspace()]
    lows = [w.lower() for w in words]
    return any(
        low in ("we", "we're", "we've", "we'd", "we'll")
        or (low in ("i", "i'm", "i've") and _after_and(words[:i]))
        for i, low in enumerate(lows)
    )


def _after_and(before: Sequence[str]) -> bool:
    """Whether a pronoun follows "<Name> and" or "my <relative> and" (a plural subject)."""
    words = [w for w in before if not w.isspace()]
    if len(words) < 2 or words[-1].lower() not in ("and", "&"):
        return False
    named = words[-2][:1].isupper() and words[-2] not in ("I", "Me")
    owner = [w.lower() for w in words[-3:-2]]
    if named and owner and owner[0] in _NAME_TAKERS:
        return False  # the name is what the clause before says: "I'm Kim and I'm a nurse"
    return named or (words[-2].lower() in _REL_WORDS and owner in (["my"], ["our"]))


#: Words after which a name ends the clause it is the object of, not the start of
#: a subject "<Name> and I": being and naming, a preposition, meeting and liking.
_NAME_TAKERS = frozenset(
    """is am i'm was are were be called named with to for at about from met saw visited
    love loved like liked miss missed""".split()
)


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
    spans = tuple(
        sp
        for sp in content_times(s, at)
        if (sp.start is not None or sp.end is not None) and not _every(s, sp)
    )
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


def _every(s: str, span: TimeSpan) -> bool:
    """Whether ``span`` recurs in ``s``: "every Saturday", "each March" name no date."""
    pos = s.find(span.text)
    before = s[:pos].split()[-1:] if pos > 0 else []
    return bool(before) and before[0].lower() in ("every", "each")


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
