"""Name normalisation and resolution (graph.resolve): a table of real cases."""

from __future__ import annotations

import pytest

from kenning.graph.model import EntityMention, NodeKind
from kenning.graph.resolve import normalise_name, resolve


@pytest.mark.parametrize(
    ("raw", "norm"),
    [
        ("Caroline", "caroline"),
        ("caroline's", "caroline"),
        ("CAROLINE’S", "caroline"),  # unicode apostrophe
        ("Caroline\u02bcs", "caroline"),  # modifier-letter apostrophe
        ("James'", "james"),  # trailing s'
        ("Chris’", "chris"),
        ("The Eiffel Tower", "eiffel tower"),
        ("an Apple", "apple"),
        ("A  Tale   of Two\tCities", "tale of two cities"),
        ('"(Caroline\'s)"', "caroline"),
        ("ﬁnance", "finance"),  # NFKC ligature
        ("ＡＢＣ", "abc"),  # NFKC full-width
        ("Straße", "strasse"),  # casefold, not lower
        ("#travel", "travel"),
        ("C#", "c#"),
        ("The", "the"),  # nothing but an article keeps it
        ("Theresa", "theresa"),  # "the" only as a word
        ("...", ""),
    ],
)
def test_normalise_name(raw: str, norm: str) -> None:
    assert normalise_name(raw) == norm


def _m(label: str, entity_type: str | None = "PERSON") -> EntityMention:
    return EntityMention(label, normalise_name(label), entity_type=entity_type)


def test_exact_known_norm_stays() -> None:
    known = {"caroline": "PERSON", "caroline smith": "PERSON"}
    out = resolve([_m("Caroline's")], known, {})
    assert out == [EntityMention("Caroline's", "caroline", entity_type="PERSON")]


def test_alias_maps_to_canonical_and_takes_known_type() -> None:
    known = {"new york city": "GPE"}
    out = resolve([_m("NYC", None), _m("nyc", "GPE")], known, {"nyc": "new york city"})
    assert [(m.norm, m.entity_type, m.label) for m in out] == [
        ("new york city", "GPE", "NYC"),
        ("new york city", "GPE", "nyc"),
    ]


def test_first_name_joins_unique_full_name() -> None:
    known = {"caroline smith": "PERSON", "melanie": "PERSON", "caroline street": "LOC"}
    out = resolve([_m("Caroline"), _m("Mel")], known, {})
    assert [m.norm for m in out] == ["caroline smith", "mel"]


def test_first_name_ambiguous_stays() -> None:
    known = {"caroline smith": "PERSON", "caroline jones": "PERSON"}
    assert [m.norm for m in resolve([_m("Caroline")], known, {})] == ["caroline"]


def test_first_name_rule_needs_person_mention() -> None:
    known = {"caroline smith": "PERSON"}
    out = resolve([_m("Caroline", None), _m("Caroline", "ORG")], known, {})
    assert [m.norm for m in out] == ["caroline", "caroline"]


def test_first_name_uses_full_names_in_the_same_batch() -> None:
    batch = [_m("Caroline"), _m("Caroline Smith")]
    assert [m.norm for m in resolve(batch, {}, {})] == ["caroline smith", "caroline smith"]
    # a second full name, known or in the batch, makes it ambiguous
    out = resolve(batch, {"caroline jones": "PERSON"}, {})
    assert [m.norm for m in out] == ["caroline", "caroline smith"]


def test_topics_pass_unchanged_and_order_is_kept() -> None:
    topic = EntityMention("Travel", "travel", kind=NodeKind.TOPIC)
    batch = [topic, _m("Caroline"), _m("Bob")]
    out = resolve(batch, {"caroline smith": "PERSON"}, {"travel": "trips", "bob": "robert"})
    assert out[0] is topic
    assert [m.norm for m in out[1:]] == ["caroline smith", "robert"]
    assert len(out) == len(batch)
