"""The extractor contract, the text helpers every backend shares, and the registry.

An extractor turns memory texts into :class:`~kenning.graph.model.EntityMention`
lists. Backends implement only :meth:`Extractor.extract_batch`; everything else
is built on it. Each backend module registers itself here with
:func:`register_extractor` (as a plugin does); :mod:`kenning.graph.extract`
imports the built-ins, so they are registered once it is imported. Importing
this module loads no model.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from .._registry import Registry
from ..validation import check_texts
from .model import EntityMention, NodeKind, Relation, unique_by_norm
from .resolve import normalise_name

__all__ = [
    "ENTRY_POINT_GROUP",
    "KEEP_LABELS",
    "Extraction",
    "Extractor",
    "NoExtractor",
    "RelationTuple",
    "available_extractors",
    "check_texts",
    "clean_label",
    "create_extractor",
    "harmonise_types",
    "mention",
    "register_extractor",
    "speaker_mention",
    "speaker_prefix",
    "topic_mentions",
]

ENTRY_POINT_GROUP = "kenning.extractors"

#: NER labels kept as entities; DATE, TIME, PERCENT, MONEY, QUANTITY, ORDINAL
#: and CARDINAL are dropped (they are values, not things to link memories by).
KEEP_LABELS = frozenset(
    {
        "PERSON",
        "NORP",
        "FAC",
        "ORG",
        "GPE",
        "LOC",
        "PRODUCT",
        "EVENT",
        "WORK_OF_ART",
        "LAW",
        "LANGUAGE",
    }
)

#: ``(source index, target index, relation, confidence)`` between texts of one batch.
RelationTuple = tuple[int, int, Relation, float]


def harmonise_types(batch: list[list[EntityMention]]) -> list[list[EntityMention]]:
    """Give every entity mention of a norm the type most mentions of it have in the batch.

    "Nate" tagged PERSON in most turns and missed (None) or ORG in a few ends
    up PERSON everywhere; ties go to the type seen first. Topics are untouched.
    """
    votes: dict[str, dict[str, int]] = {}
    for mentions in batch:
        for m in mentions:
            if m.kind is NodeKind.ENTITY and m.entity_type is not None:
                counts = votes.setdefault(m.norm, {})
                counts[m.entity_type] = counts.get(m.entity_type, 0) + 1
    best = {norm: max(counts, key=counts.__getitem__) for norm, counts in votes.items()}
    return [
        [
            replace(m, entity_type=best[m.norm])
            if m.kind is NodeKind.ENTITY and m.norm in best and m.entity_type != best[m.norm]
            else m
            for m in mentions
        ]
        for mentions in batch
    ]


def topic_mentions(tags: Iterable[str]) -> list[EntityMention]:
    """One TOPIC mention per distinct tag (by :func:`normalise_name`), in order."""
    return unique_by_norm(
        EntityMention(label=tag.strip(), norm=normalise_name(tag), kind=NodeKind.TOPIC)
        for tag in tags
        if isinstance(tag, str)
    )


@dataclass(frozen=True, slots=True)
class Extraction:
    """What an extractor found in one batch: mentions per text and relations between texts."""

    mentions: list[list[EntityMention]]
    relations: list[RelationTuple] = field(default_factory=list)


class Extractor(ABC):
    """Finds entities (and, for some backends, relations) in memory texts."""

    #: A short name for logs and provenance ("spacy", "rules", ...).
    name: str = "extractor"

    @abstractmethod
    def extract_batch(self, texts: Sequence[str]) -> list[list[EntityMention]]:
        """The entity mentions of each text, in order, each list unique by norm.

        Must not raise for any text content: a text with nothing found gives [].
        """

    def extract(self, text: str) -> list[EntityMention]:
        """The entity mentions of one text."""
        return self.extract_batch([text])[0]

    def warm_up(self) -> None:
        """Load what the backend needs (a model) now, not on the first call; no I/O
        beyond that (never a network call). Nothing to do by default."""
        return None

    def relations_batch(self, texts: Sequence[str]) -> list[RelationTuple]:
        """Typed relations between texts of the batch, as index pairs; none by default."""
        check_texts(texts)
        return []

    def analyse_batch(self, texts: Sequence[str]) -> Extraction:
        """Mentions and relations in one go (backends that can, do it in one call)."""
        items = check_texts(texts)
        return Extraction(self.extract_batch(items), self.relations_batch(items))

    def __repr__(self) -> str:
        """The class name."""
        return f"{type(self).__name__}()"


class NoExtractor(Extractor):
    """Finds nothing (``graph_extractor="none"``): tags still become topics."""

    name = "none"

    def extract_batch(self, texts: Sequence[str]) -> list[list[EntityMention]]:
        """An empty list per text."""
        return [[] for _ in check_texts(texts)]


# --- speaker prefixes ----------------------------------------------------------------

_NAME_TOKEN = r"[^\W\d_][\w.'\u2019-]*"
_SPEAKER = re.compile(rf"^\s*({_NAME_TOKEN}(?:[ \t]+{_NAME_TOKEN}){{0,3}})[ \t]*:[ \t]*(?=\S)")
#: Leading labels that are not speakers ("Note: ...", "User: ...").
_NOT_SPEAKERS = frozenset(
    """note notes nb ps fyi update updates re fwd fw subject title summary tldr tl;dr q a
    question answer todo to-do warning error info tip hint example user assistant system
    bot ai human agent model date time status reminder important edit action decision
    result context goal task step source quote caution pros cons idea plan issue fix
    bug feature problem solution reason memory fact preference""".split()
)


def speaker_prefix(text: str) -> tuple[str, int] | None:
    """The name in a leading ``"Name: ..."`` speaker label and where the rest begins.

    A label counts when each of its 1-4 words starts with an uppercase letter
    and it is not a known non-speaker label (Note, User, Assistant, Q, ...).
    """
    match = _SPEAKER.match(text)
    if match is None:
        return None
    name = match.group(1)
    if not all(word[0].isupper() for word in name.split()):
        return None
    if name.casefold() in _NOT_SPEAKERS or name.split()[0].casefold() in _NOT_SPEAKERS:
        return None
    return name, match.end()


_LABEL_POSSESSIVE = re.compile(r"['\u2019]s?$")


def clean_label(text: str) -> str:
    """A surface form for display: whitespace collapsed, trailing possessive dropped."""
    label = " ".join(text.split())
    return _LABEL_POSSESSIVE.sub("", label) if label.endswith(("s", "'", "\u2019")) else label


def mention(
    text: str, entity_type: str | None = None, kind: NodeKind = NodeKind.ENTITY
) -> EntityMention:
    """A mention of surface form ``text`` with its label cleaned and its norm computed."""
    return EntityMention(clean_label(text), normalise_name(text), kind, entity_type)


def speaker_mention(name: str) -> EntityMention:
    """The PERSON mention of a speaker label."""
    return EntityMention(label=name, norm=normalise_name(name), entity_type="PERSON")


# --- registry ------------------------------------------------------------------------

_registry: Registry[Extractor] = Registry("extractor", Extractor, ENTRY_POINT_GROUP)


def register_extractor(name: str, factory: Callable[..., Extractor]) -> None:
    """Make ``factory(**options)`` available as ``create_extractor(name, **options)``.

    Registering a name again replaces the earlier factory.
    """
    _registry.register(name, factory)


def available_extractors() -> list[str]:
    """Sorted names of every registered and plugin-provided extractor."""
    return _registry.available()


def create_extractor(name: str = "spacy", **options: Any) -> Extractor:
    """Build the extractor registered as ``name``; :class:`ConfigError` if that fails.

    ``"llm"`` takes ``chat`` (a :class:`~kenning.llm.ChatModel`) and optional
    ``fallback`` (an extractor name or instance, default ``"spacy"``).
    """
    return _registry.create(name, **options)


register_extractor("none", NoExtractor)
