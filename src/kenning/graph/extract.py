"""Entity and topic extraction: the :class:`Extractor` contract, built-ins, registry.

An extractor turns memory texts into :class:`~kenning.graph.model.EntityMention`
lists. Backends implement only :meth:`Extractor.extract_batch`; everything else
is built on it. Built-ins, by name (see :func:`create_extractor`):

* ``"spacy"`` (default) — :class:`~kenning.graph.spacy_ner.SpacyExtractor`, spaCy NER
  plus noun-compound key phrases (the ``graph`` extra; without it the default
  becomes ``"rules"``);
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

import logging
from typing import TYPE_CHECKING

from .._extras import MissingExtra, has_extra, install_hint
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

logger = logging.getLogger("kenning.graph")
_fallback_logged = False


def _spacy_or_rules(settings: Settings) -> str:
    """``"spacy"`` when the ``graph`` extra is installed; otherwise ``"rules"``
    (logged once per process), or :class:`MissingExtra` when the settings name
    spaCy explicitly (``KENNING_GRAPH_EXTRACTOR=spacy``) rather than by default."""
    global _fallback_logged
    if has_extra("graph"):
        return "spacy"
    if "graph_extractor" in settings.model_fields_set:
        raise MissingExtra("graph", "graph_extractor='spacy'")
    if not _fallback_logged:
        _fallback_logged = True
        logger.info(
            "spaCy is not installed: entity extraction uses the built-in rules (%s for spaCy)",
            install_hint("graph"),
        )
    return "rules"


def extractor_from_settings(settings: Settings, chat: ChatModel | None = None) -> Extractor:
    """The extractor ``settings.graph_extractor`` names.

    The default ``"spacy"`` becomes ``"rules"`` when spaCy is not installed
    (see :func:`_spacy_or_rules`); so does the LLM extractor's fallback. For
    ``"llm"`` the chat model is ``chat`` or the one the ``KENNING_LLM*``
    settings describe; without either that is a :class:`ConfigError`.
    """
    name = settings.graph_extractor
    if name == "spacy":
        return create_extractor(_spacy_or_rules(settings))
    if name != "llm":
        return create_extractor(name)
    if chat is None:
        from ..llm.registry import chat_model_from_settings

        chat = chat_model_from_settings(settings)
    if chat is None:
        raise ConfigError("graph_extractor='llm' needs an LLM: set KENNING_LLM and its endpoint")
    fallback = "spacy" if has_extra("graph") else "rules"
    return create_extractor("llm", chat=chat, fallback=fallback)
