"""Text handling shared by the stores and the ranker: tokens, stopwords, hashes."""

from __future__ import annotations

import re
import unicodedata

__all__ = ["STOPWORDS", "query_terms", "normalise_text", "strip_terms", "term_stem"]

_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)?", re.UNICODE)

#: English stopwords dropped from keyword queries (question words included:
#: "what did X say" carries no topic in "what").
STOPWORDS = frozenset(
    """a about above after again against all am an and any are aren't as at be because been
    before being below between both but by can can't cannot could couldn't did didn't do does
    doesn't doing don't down during each few for from further had hadn't has hasn't have haven't
    having he he'd he'll he's her here here's hers herself him himself his how how's i i'd i'll
    i'm i've if in into is isn't it it's its itself let's me more most mustn't my myself no nor
    not of off on once only or other ought our ours ourselves out over own same shan't she she'd
    she'll she's should shouldn't so some such than that that's the their theirs them themselves
    then there there's these they they'd they'll they're they've this those through to too under
    until up very was wasn't we we'd we'll we're we've were weren't what what's when when's where
    where's which while who who's whom why why's will with won't would wouldn't you you'd you'll
    you're you've your yours yourself yourselves s t""".split()
)


def query_terms(text: str, *, keep_stopwords: bool = False) -> list[str]:
    """Lowercased word tokens of ``text`` without stopwords, in order, deduplicated."""
    seen: dict[str, None] = {}
    for match in _WORD.finditer(text.lower()):
        token = match.group(0)
        if "'" in token:
            head = token.split("'", 1)[0]
            token = token if token in STOPWORDS else head
        if keep_stopwords or token not in STOPWORDS:
            seen.setdefault(token, None)
    return list(seen)


def term_stem(word: str) -> str:
    """Truncation stemming of a query term: a plural's "s" off, then the first 5
    letters, so "allergies" meets "allergic" and "races" meets "race"."""
    word = word[:-1] if len(word) > 3 and word.endswith("s") else word
    return word[:5]


def strip_terms(text: str, terms: set[str]) -> str:
    """``text`` without the words in ``terms`` (and their possessives);
    unchanged if nothing would be left."""
    if not terms:
        return text

    def keep(match: re.Match[str]) -> str:
        token = match.group(0).lower()
        return "" if token in terms or token.split("'", 1)[0] in terms else match.group(0)

    stripped = " ".join(_WORD.sub(keep, text).split())
    return stripped if query_terms(stripped) else text


def normalise_text(text: str) -> str:
    """Case-, space- and punctuation-insensitive form, for exact-match checks."""
    text = unicodedata.normalize("NFKC", text).casefold()
    return " ".join(_WORD.findall(text))
