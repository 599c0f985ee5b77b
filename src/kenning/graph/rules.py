"""Deterministic entity extraction without a model (:class:`RuleExtractor`, ``"rules"``)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from .extractor import (
    Extractor,
    check_texts,
    mention,
    register_extractor,
    speaker_mention,
    speaker_prefix,
)
from .model import EntityMention, NodeKind, unique_by_norm
from .resolve import normalise_name

__all__ = ["COMMON_WORDS", "HONORIFICS", "RuleExtractor"]

_TOKEN = re.compile(
    r"""[A-Z]\.(?=[ \t]+[A-Z])                           # an initial: "J." before "K."
      | [#@]?[^\W_](?:[\w'\u2019&-]|\.(?=\w))*(?:[\#+]+(?!\w))?  # a word, "U.S", "C#"
      | [.!?]+ | \n | [^\w\s]                            # sentence ends, other marks""",
    re.VERBOSE,
)
_HANDLE = re.compile(r"(?<![\w@])@([^\W_][\w.]*[^\W_]|[^\W_])")
_HASHTAG = re.compile(r"(?<![\w#&])#([^\W\d_][\w-]*[^\W_]|[^\W\d_])")
_CONNECTORS = frozenset("of de la le van von der den du da del di al bin".split())
#: Titles before a person's name ("Dr. Silva", "Mrs Patel").
HONORIFICS = frozenset("mr mrs ms mx dr prof sir dame".split())
#: Capitalised words that say nothing about an entity (sentence openers, pronouns,
#: interjections, days and months), dropped wherever they stand.
COMMON_WORDS = _COMMON = frozenset(
    """i i'm i've i'd i'll i’m i’ve i’d i’ll the a an my our your his her their its this that
    these those it it's he she we they you me him them us yes no yeah yep yup nope ok okay
    oh wow hey hi hello thanks thank please sorry well so and but or if then when while
    what who why how where which there here just also maybe anyway btw lol haha omg aww
    great good nice cool awesome sure totally really congrats glad love hope today
    tonight tomorrow yesterday monday tuesday wednesday thursday friday saturday sunday
    january february march april may june july august september october november
    december awww aww woohoo woo yay omg haha lol wanna gonna kinda looky hmm ugh whoa
    woah yikes oops cheers bye""".split()
)


def _is_cap(word: str) -> bool:
    return (
        word[:1].isupper() and word.casefold() not in _COMMON and word.casefold() not in HONORIFICS
    )


def _sentence_starts(tokens: Sequence[str]) -> set[int]:
    """Indexes of tokens that open a sentence (not after "Dr." or an initial "J.")."""
    starts = {0}
    for i, tok in enumerate(tokens[:-1]):
        if tok == "\n" or (tok[0] in "!?") or (tok == "." and not _abbreviation(tokens, i - 1)):
            starts.add(i + 1)
    return starts


def _abbreviation(tokens: Sequence[str], i: int) -> bool:
    """True when ``tokens[i]`` followed by "." is a title or an initial."""
    if i < 0:
        return False
    word = tokens[i]
    return word.casefold() in HONORIFICS or (len(word) == 1 and word.isupper())


def _after_honorific(tokens: Sequence[str], i: int) -> bool:
    """True when the run starting at ``i`` follows "Mr", "Dr." and the like."""
    j = i - 1
    if j >= 0 and tokens[j] == ".":
        j -= 1
    return j >= 0 and tokens[j].casefold() in HONORIFICS


def _cap_runs(tokens: Sequence[str]) -> Iterable[tuple[int, int]]:
    """(start, end) of runs of capitalised words, connectors allowed inside."""
    i = 0
    while i < len(tokens):
        if not _is_cap(tokens[i]) or tokens[i][0] in "#@":
            i += 1
            continue
        j = i + 1
        while j < len(tokens):
            if _is_cap(tokens[j]) and tokens[j][0] not in "#@":
                j += 1
            elif tokens[j] in _CONNECTORS and j + 1 < len(tokens) and _is_cap(tokens[j + 1]):
                j += 2
            else:
                break
        yield i, j
        i = j


class RuleExtractor(Extractor):
    """Deterministic extraction without a model.

    Finds a leading ``"Name:"`` speaker label (PERSON), capitalised word runs
    that do not open a sentence ("Bank of America", "LGBTQ"; a run of two or
    more words may open one), ``Mr``/``Dr``/... + name (PERSON), ``@handles``
    (entities) and ``#hashtags`` (topics). Types other than PERSON are unknown
    (None).
    """

    name = "rules"

    def extract_batch(self, texts: Sequence[str]) -> list[list[EntityMention]]:
        """See the class docstring."""
        return [self._one(text) for text in check_texts(texts)]

    def _one(self, text: str) -> list[EntityMention]:
        found: list[EntityMention] = []
        body = text
        speaker = speaker_prefix(text)
        if speaker is not None:
            found.append(speaker_mention(speaker[0]))
            body = text[speaker[1] :]
        tokens = _TOKEN.findall(body)
        starts = _sentence_starts(tokens)
        for i, j in _cap_runs(tokens):
            person = _after_honorific(tokens, i)
            if i in starts and j - i == 1 and not person:
                continue
            found.append(mention(" ".join(tokens[i:j]), "PERSON" if person else None))
        for match in _HANDLE.finditer(body):
            found.append(EntityMention("@" + match.group(1), normalise_name(match.group(1))))
        for match in _HASHTAG.finditer(body):
            tag = match.group(1)
            found.append(EntityMention("#" + tag, normalise_name(tag), kind=NodeKind.TOPIC))
        return unique_by_norm(found)


register_extractor("rules", RuleExtractor)
