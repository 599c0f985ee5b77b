"""Name normalisation and entity resolution within an organization; pure functions.

:func:`normalise_name` maps surface forms to a resolution key ("Caroline's",
"CAROLINE’S" and "caroline" share ``"caroline"``). :func:`resolve` maps a
batch of mentions onto the names an organization already knows: exact key,
explicit aliases, then the first-name rule (a lone PERSON first name joins the
one known full name it starts, and only if there is exactly one).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import replace

from .model import EntityMention, NodeKind

__all__ = ["normalise_name", "resolve", "first_name_index"]

_APOSTROPHES = "'\u2019\u02bc\u2018\u00b4`"
_POSSESSIVE = re.compile(rf"(?:[{_APOSTROPHES}]s|(?<=s)[{_APOSTROPHES}])$")
_ARTICLE = re.compile(r"^(?:the|a|an)\s+")
_SPACE = re.compile(r"\s+")
#: Trailing characters kept although they are punctuation ("C#", "F#").
_KEEP_TRAILING = "#"


def _is_punct(ch: str) -> bool:
    return unicodedata.category(ch).startswith("P")


def _strip_punct(text: str) -> str:
    start, end = 0, len(text)
    while start < end and _is_punct(text[start]):
        start += 1
    while end > start and _is_punct(text[end - 1]) and text[end - 1] not in _KEEP_TRAILING:
        end -= 1
    return text[start:end]


def normalise_name(text: str) -> str:
    """The resolution key of a name: lowercase, bare, single-spaced.

    NFKC, casefold, whitespace collapsed; surrounding punctuation, a
    possessive (``'s``, ``’s``, or the apostrophe of ``s'``) and a leading
    article (the / a / an) removed. A name that is nothing but an article
    keeps it ("The" -> "the"); text with no letters or digits left gives "".

    >>> normalise_name("CAROLINE’S"), normalise_name("The Eiffel Tower")
    ('caroline', 'eiffel tower')
    """
    out = _SPACE.sub(" ", unicodedata.normalize("NFKC", text).casefold()).strip()
    for _ in range(2):  # "(Caroline's)" needs punctuation, possessive, punctuation
        out = _strip_punct(out).strip()
        out = _POSSESSIVE.sub("", out).strip()
    bare = _strip_punct(_ARTICLE.sub("", out)).strip()
    out = bare or out
    return out if any(ch.isalnum() for ch in out) else ""


def first_name_index(known: Mapping[str, str | None]) -> dict[str, list[str]]:
    """First token -> known multi-token PERSON norms starting with it (sorted)."""
    index: dict[str, list[str]] = {}
    for norm, entity_type in known.items():
        tokens = norm.split(" ")
        if entity_type == "PERSON" and len(tokens) > 1:
            index.setdefault(tokens[0], []).append(norm)
    for names in index.values():
        names.sort()
    return index


def resolve(
    mentions: Sequence[EntityMention],
    known: Mapping[str, str | None],
    aliases: Mapping[str, str],
) -> list[EntityMention]:
    """Map each mention's ``norm`` onto a canonical name; one output per input, in order.

    ``known`` maps the normalised names an organization already has to their
    entity type; ``aliases`` maps an alias norm to its canonical norm. For an
    entity mention, in order: a norm already in ``known`` stays; an alias is
    replaced by its canonical norm; a single-token PERSON norm becomes the
    unique multi-token PERSON (among ``known`` and the batch's own mentions)
    whose first token it is — "caroline" -> "caroline smith" only if no other
    "caroline ..." exists; otherwise the mention is kept as it is. A resolved
    mention without a type takes the known one. Topic mentions pass unchanged.
    """
    candidates: dict[str, str | None] = dict(known)
    for m in mentions:
        if m.kind is NodeKind.ENTITY and m.entity_type == "PERSON":
            candidates.setdefault(m.norm, "PERSON")
    firsts = first_name_index(candidates)
    return [_resolve_one(m, known, aliases, firsts) for m in mentions]


def _resolve_one(
    mention: EntityMention,
    known: Mapping[str, str | None],
    aliases: Mapping[str, str],
    firsts: Mapping[str, list[str]],
) -> EntityMention:
    norm = mention.norm
    if mention.kind is not NodeKind.ENTITY or not norm or norm in known:
        return mention
    target = aliases.get(norm)
    if target is None and mention.entity_type == "PERSON" and " " not in norm:
        matches = firsts.get(norm, [])
        target = matches[0] if len(matches) == 1 else None
    if target is None or target == norm:
        return mention
    entity_type = mention.entity_type or known.get(target)
    return replace(mention, norm=target, entity_type=entity_type)
