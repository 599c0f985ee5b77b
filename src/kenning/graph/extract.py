"""Entity and topic extraction: the :class:`Extractor` contract, built-ins, registry.

An extractor turns memory texts into :class:`~kenning.graph.model.EntityMention`
lists. Backends implement only :meth:`Extractor.extract_batch`; everything else
is built on it. Built-ins, by name (see :func:`create_extractor`):

* ``"spacy"`` (default) — :class:`~kenning.graph.spacy_ner.SpacyExtractor`, spaCy NER
  plus noun-compound key phrases;
* ``"rules"`` — :class:`RuleExtractor`, no model: capitalised names, speaker
  prefixes, @handles, #hashtags;
* ``"llm"`` — :class:`~kenning.graph.llm_extract.LLMExtractor`, entities and typed
  relations from a chat model, falling back to spaCy per batch;
* ``"none"`` — :class:`NoExtractor`, nothing.

Plugins register with :func:`register_extractor` or the entry-point group
``kenning.extractors``. Importing this module loads no model.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from .._registry import Registry, coerce_options
from ..errors import ConfigError, InvalidInput
from .model import EntityMention, NodeKind, Relation, unique_by_norm
from .resolve import normalise_name

if TYPE_CHECKING:
    from ..config import Settings
    from ..llm.base import ChatModel
    from .llm_extract import LLMExtractor
    from .spacy_ner import SpacyExtractor

__all__ = [
    "ENTRY_POINT_GROUP",
    "KEEP_LABELS",
    "Extraction",
    "Extractor",
    "LLMExtractor",
    "NoExtractor",
    "RelationTuple",
    "RuleExtractor",
    "SpacyExtractor",
    "available_extractors",
    "create_extractor",
    "extractor_from_settings",
    "register_extractor",
    "speaker_prefix",
    "topic_mentions",
    "unique_by_norm",
    "mention",
    "harmonise_types",
    "COMMON_WORDS",
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


def check_texts(texts: Sequence[str]) -> list[str]:
    """``texts`` as a list; :class:`InvalidInput` for a bare string or a non-string item."""
    if isinstance(texts, str | bytes):
        raise InvalidInput("expected a sequence of strings, got a single string", field="texts")
    out = list(texts)
    for i, text in enumerate(out):
        if not isinstance(text, str):
            raise InvalidInput(f"texts[{i}] is {type(text).__name__}, expected str", field="texts")
    return out


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


# --- rules ---------------------------------------------------------------------------

_TOKEN = re.compile(
    r"""[A-Z]\.(?=[ \t]+[A-Z])                           # an initial: "J." before "K."
      | [#@]?[^\W_](?:[\w'\u2019&-]|\.(?=\w))*(?:[\#+]+(?!\w))?  # a word, "U.S", "C#"
      | [.!?]+ | \n | [^\w\s]                            # sentence ends, other marks""",
    re.VERBOSE,
)
_HANDLE = re.compile(r"(?<![\w@])@([^\W_][\w.]*[^\W_]|[^\W_])")
_HASHTAG = re.compile(r"(?<![\w#&])#([^\W\d_][\w-]*[^\W_]|[^\W\d_])")
_CONNECTORS = frozenset("of de la le van von der den du da del di al bin".split())
_HONORIFICS = frozenset("mr mrs ms mx dr prof sir dame".split())
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
        word[:1].isupper() and word.casefold() not in _COMMON and word.casefold() not in _HONORIFICS
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
    return word.casefold() in _HONORIFICS or (len(word) == 1 and word.isupper())


def _after_honorific(tokens: Sequence[str], i: int) -> bool:
    """True when the run starting at ``i`` follows "Mr", "Dr." and the like."""
    j = i - 1
    if j >= 0 and tokens[j] == ".":
        j -= 1
    return j >= 0 and tokens[j].casefold() in _HONORIFICS


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


def extractor_from_settings(settings: Settings, chat: ChatModel | None = None) -> Extractor:
    """The extractor ``settings.graph_extractor`` names.

    For ``"llm"`` the chat model is ``chat`` or the one the ``KENNING_LLM*``
    settings describe; without either that is a :class:`ConfigError`.
    """
    name = settings.graph_extractor
    if name != "llm":
        return create_extractor(name)
    if chat is None:
        from ..llm.registry import chat_model_from_settings

        chat = chat_model_from_settings(settings)
    if chat is None:
        raise ConfigError("graph_extractor='llm' needs an LLM: set KENNING_LLM and its endpoint")
    return create_extractor("llm", chat=chat)


def _spacy(**options: Any) -> Extractor:
    from .spacy_ner import SpacyExtractor

    kinds: dict[str, type[Any]] = {"batch_size": int, "key_phrases": bool, "model": str}
    return SpacyExtractor(**coerce_options(options, kinds, "extractor 'spacy'"))


def _llm(**options: Any) -> Extractor:
    from .llm_extract import LLMExtractor

    kinds: dict[str, type[Any]] = {"max_batch": int, "max_chars": int, "max_tokens": int}
    return LLMExtractor(**coerce_options(options, kinds, "extractor 'llm'"))


register_extractor("spacy", _spacy)
register_extractor("rules", RuleExtractor)
register_extractor("llm", _llm)
register_extractor("none", NoExtractor)


def __getattr__(name: str) -> Any:
    """Import the spaCy and LLM extractors only when they are asked for."""
    if name == "SpacyExtractor":
        from .spacy_ner import SpacyExtractor

        return SpacyExtractor
    if name == "LLMExtractor":
        from .llm_extract import LLMExtractor

        return LLMExtractor
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
