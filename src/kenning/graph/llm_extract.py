"""Entity and typed-relation extraction with a chat model, falling back per batch.

:class:`LLMExtractor` asks the model for one JSON object per batch of texts
(entities per text, typed relations between texts by index), validates it
strictly with pydantic and keeps only entities whose name occurs in the text.
If the model fails (HTTP error, timeout, malformed or off-schema JSON), that
batch is extracted by the fallback extractor instead (spaCy by default, the
rules if spaCy fails too) and the failure is logged: extraction never raises
into the write path and never loses a memory's mentions.
"""

from __future__ import annotations

import json
import logging
import threading
import unicodedata
from collections.abc import Sequence
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field

from .._registry import coerce_options
from ..errors import ConfigError
from ..llm.base import ChatModel, Message
from .extractor import (
    KEEP_LABELS,
    Extraction,
    Extractor,
    RelationTuple,
    check_texts,
    create_extractor,
    mention,
    register_extractor,
    speaker_mention,
    speaker_prefix,
)
from .model import EntityMention, Relation, unique_by_norm
from .resolve import normalise_name
from .rules import RuleExtractor

__all__ = ["LLMExtractor", "LLM_RELATIONS", "SYSTEM_PROMPT"]

logger = logging.getLogger("kenning.graph.llm")

#: Relations the model may propose between texts of a batch.
LLM_RELATIONS = ("causes", "elaborates", "contrasts", "same_series", "contradiction", "reference")

EntityType = Literal[
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
    "OTHER",
]
RelationType = Literal[
    "causes", "elaborates", "contrasts", "same_series", "contradiction", "reference"
]
assert set(get_args(EntityType)) == KEEP_LABELS | {"OTHER"}

SYSTEM_PROMPT = """You extract entities and relations from short memory texts.
Answer with ONE JSON object and nothing else, exactly of this shape:
{"memories": [{"index": <int>, "entities": [{"name": <str>, "type": <TYPE>}]}],
 "relations": [{"source": <int>, "target": <int>, "type": <RELATION>, "confidence": <0..1>}]}
- index, source, target are the "index" values of the given texts.
- entities: people, groups, organizations, places, products, events, works, laws,
  languages and salient named things, written exactly as they appear in the text.
  No dates, times, numbers or amounts.
- TYPE is one of PERSON, NORP, FAC, ORG, GPE, LOC, PRODUCT, EVENT, WORK_OF_ART, LAW,
  LANGUAGE, OTHER.
- RELATION is one of causes (source causes or leads to target), elaborates (target adds
  detail to source), contrasts, same_series (same recurring thing or sequence),
  contradiction (they cannot both be true), reference (target refers to source).
  Only include relations the texts clearly support; [] is a fine answer."""


class _Entity(BaseModel):
    model_config = ConfigDict(strict=True, extra="ignore")
    name: str = Field(min_length=1, max_length=200)
    type: EntityType


class _Memory(BaseModel):
    model_config = ConfigDict(strict=True, extra="ignore")
    index: int = Field(ge=0)
    entities: list[_Entity]


class _Relation(BaseModel):
    model_config = ConfigDict(strict=True, extra="ignore")
    source: int = Field(ge=0)
    target: int = Field(ge=0)
    type: RelationType
    confidence: float = Field(1.0, ge=0.0, le=1.0)


class _Answer(BaseModel):
    model_config = ConfigDict(strict=True, extra="ignore")
    memories: list[_Memory]
    relations: list[_Relation] = Field(default_factory=list)


def _fold(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


class LLMExtractor(Extractor):
    """Entities and typed relations from ``chat``; see the module docstring.

    Texts go to the model ``max_batch`` at a time (relations only link texts
    of the same request), each cut to ``max_chars`` characters. ``fallback``
    is an extractor or a registered extractor name (default ``"spacy"``).
    :meth:`extract_batch` and :meth:`relations_batch` on the same texts share
    one model call (the last batch's result is kept); :meth:`analyse_batch`
    returns both at once. ``calls`` and ``fallbacks`` count requests and
    batches that fell back.
    """

    name = "llm"

    def __init__(
        self,
        chat: ChatModel,
        *,
        fallback: Extractor | str = "spacy",
        max_batch: int = 16,
        max_chars: int = 2000,
        max_tokens: int | None = 2048,
    ) -> None:
        """Check the options; nothing is called until the first batch."""
        if not isinstance(chat, ChatModel):
            raise ConfigError(f"chat must be a ChatModel, got {type(chat).__name__}")
        if not isinstance(fallback, Extractor | str):
            raise ConfigError("fallback must be an Extractor or an extractor name")
        if max_batch < 1 or max_chars < 1:
            raise ConfigError("max_batch and max_chars must be >= 1")
        self.chat = chat
        self.max_batch = int(max_batch)
        self.max_chars = int(max_chars)
        self.max_tokens = max_tokens
        self._fallback_spec = fallback
        self._fallback: Extractor | None = fallback if isinstance(fallback, Extractor) else None
        self._lock = threading.Lock()
        self._last: tuple[tuple[str, ...], Extraction] | None = None
        self.calls = 0
        self.fallbacks = 0

    def __repr__(self) -> str:
        """The chat model and the fallback."""
        return f"LLMExtractor(chat={self.chat!r}, fallback={self._fallback_spec!r})"

    def extract_batch(self, texts: Sequence[str]) -> list[list[EntityMention]]:
        """The mentions of each text (from the model, or the fallback for failed batches)."""
        return self.analyse_batch(texts).mentions

    def relations_batch(self, texts: Sequence[str]) -> list[RelationTuple]:
        """``(source, target, relation, confidence)`` between texts, by index in ``texts``."""
        return self.analyse_batch(texts).relations

    def analyse_batch(self, texts: Sequence[str]) -> Extraction:
        """Mentions and relations for ``texts``; never raises for model failures."""
        items = check_texts(texts)
        key = tuple(items)
        with self._lock:
            if self._last is not None and self._last[0] == key:
                return self._last[1]
        mentions: list[list[EntityMention]] = []
        relations: list[RelationTuple] = []
        for start in range(0, len(items), self.max_batch):
            chunk = items[start : start + self.max_batch]
            part = self._chunk(chunk)
            mentions.extend(part.mentions)
            relations.extend((s + start, t + start, r, c) for s, t, r, c in part.relations)
        result = Extraction(mentions, relations)
        with self._lock:
            self._last = (key, result)
        return result

    def _chunk(self, texts: list[str]) -> Extraction:
        with self._lock:
            self.calls += 1
        try:
            return self._ask(texts)
        except Exception as exc:  # any model failure: fall back, never lose mentions
            with self._lock:
                self.fallbacks += 1
            logger.warning(
                "LLM extraction failed for a batch of %d text(s), using %s instead: %s: %s",
                len(texts),
                self._fallback_spec,
                type(exc).__name__,
                str(exc)[:300],
            )
            return Extraction(self._fallback_mentions(texts), [])

    def _ask(self, texts: list[str]) -> Extraction:
        payload = [{"index": i, "text": t[: self.max_chars]} for i, t in enumerate(texts)]
        messages = [
            Message("system", SYSTEM_PROMPT),
            Message("user", "Texts:\n" + json.dumps(payload, ensure_ascii=False)),
        ]
        raw, _ = self.chat.complete_json(messages, max_tokens=self.max_tokens)
        answer = _Answer.model_validate(raw)
        return Extraction(_mentions(answer, texts), _relations(answer, len(texts)))

    def _fallback_mentions(self, texts: list[str]) -> list[list[EntityMention]]:
        try:
            if self._fallback is None:
                assert isinstance(self._fallback_spec, str)
                self._fallback = create_extractor(self._fallback_spec)
            return self._fallback.extract_batch(texts)
        except Exception as exc:
            logger.warning("fallback extractor %s failed, using rules: %s", self._fallback, exc)
            return RuleExtractor().extract_batch(texts)


def _mentions(answer: _Answer, texts: list[str]) -> list[list[EntityMention]]:
    """Validated entities per text; names not found in their text are dropped."""
    by_index: dict[int, list[_Entity]] = {}
    for item in answer.memories:
        if item.index >= len(texts) or item.index in by_index:
            raise ValueError(f"bad or repeated memory index {item.index}")
        by_index[item.index] = item.entities
    out: list[list[EntityMention]] = []
    for i, text in enumerate(texts):
        speaker = speaker_prefix(text)
        found = [speaker_mention(speaker[0])] if speaker else []
        folded = _fold(text)
        for ent in by_index.get(i, []):
            norm = normalise_name(ent.name)
            if norm and (_fold(ent.name) in folded or norm in folded):
                found.append(mention(ent.name, None if ent.type == "OTHER" else ent.type))
        out.append(unique_by_norm(found))
    return out


def _relations(answer: _Answer, n: int) -> list[RelationTuple]:
    out: list[RelationTuple] = []
    seen: set[tuple[int, int, str]] = set()
    for rel in answer.relations:
        if rel.source >= n or rel.target >= n or rel.source == rel.target:
            raise ValueError(f"bad relation indexes {rel.source} -> {rel.target} (batch of {n})")
        key = (rel.source, rel.target, rel.type)
        if key not in seen:
            seen.add(key)
            out.append((rel.source, rel.target, Relation(rel.type), float(rel.confidence)))
    return out


def _llm(**options: Any) -> Extractor:
    kinds: dict[str, type[Any]] = {"max_batch": int, "max_chars": int, "max_tokens": int}
    return LLMExtractor(**coerce_options(options, kinds, "extractor 'llm'"))


register_extractor("llm", _llm)
