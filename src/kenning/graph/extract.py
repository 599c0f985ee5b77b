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
``kenning.extractors``. The contract and the registry live in
:mod:`kenning.graph.extractor`; each backend module registers itself there,
and importing this module imports (and so registers) every built-in. It
loads no model.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import ConfigError
from .extractor import (
    ENTRY_POINT_GROUP,
    KEEP_LABELS,
    Extraction,
    Extractor,
    NoExtractor,
    RelationTuple,
    available_extractors,
    create_extractor,
    harmonise_types,
    mention,
    register_extractor,
    speaker_prefix,
    topic_mentions,
)
from .llm_extract import LLMExtractor
from .model import unique_by_norm
from .rules import COMMON_WORDS, RuleExtractor
from .spacy_ner import SpacyExtractor

if TYPE_CHECKING:
    from ..config import Settings
    from ..llm.base import ChatModel

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
