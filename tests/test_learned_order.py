"""The learned relevance (kenning.retrieval.order): what the model reads, when it
runs, that it orders by its weights, and that the priority's boosts still rule."""

from __future__ import annotations

import math
import random
from collections.abc import Callable

import numpy as np
import pytest

import kenning.retrieval.order as order
from kenning import Memory, Settings
from kenning.config import Lifecycle
from kenning.retrieval.order import FEATURES, order_scores, ranked_pool
from kenning.retrieval.signals.base import RecallContext

TALK = [
    ("Caroline: I went to the LGBTQ support group yesterday and it was powerful.", "s1"),
    ("Melanie: That sounds amazing! Did you meet anyone new there?", "s1"),
    ("Caroline: Yes, a counsellor who told me about adoption agencies.", "s1"),
    ("Melanie: I painted a lake at sunrise last week for my kids.", "s2"),
    ("Caroline: Are you going camping with the family this summer?", "s2"),
]


def _talk(make_memory: Callable[..., Memory], name: str = "db", **kw: object) -> Memory:
    mem = make_memory(name, **kw)
    for text, session in TALK:
        mem.remember(text, session_id=session)
    return mem


def _only(feature: str, weight: float = 1.0) -> dict[str, float]:
    """A model that reads one feature."""
    return {f: (weight if f == feature else 0.0) for f in FEATURES}


def test_the_shipped_model_names_every_feature_once() -> None:
    assert len(set(FEATURES)) == len(FEATURES)
    for table in (order.MEAN, order.SCALE, order.WEIGHTS):
        assert set(table) == set(FEATURES)
        assert all(math.isfinite(v) for v in table.values())
    assert all(order.SCALE[f] > 0 for f in FEATURES)
    assert any(order.WEIGHTS[f] != 0 for f in FEATURES)


def test_scores_follow_the_weights_of_the_standardised_features() -> None:
    rows = np.zeros((3, len(FEATURES)))
    col = FEATURES.index("keyword")
    rows[:, col] = [0.2, 0.8, 0.5]
    mean = dict.fromkeys(FEATURES, 0.0)
    scale = dict.fromkeys(FEATURES, 1.0)
    scale["keyword"] = 0.5
    up = order_scores(rows, _only("keyword", 2.0), mean, scale)
    assert up.tolist() == pytest.approx([0.8, 3.2, 2.0])
    down = order_scores(rows, _only("keyword", -1.0), mean, scale)
    assert np.argsort(-down).tolist() == [0, 2, 1]


def test_the_features_read_the_pool_and_the_texts(
    make_memory: Callable[..., Memory], monkeypatch: pytest.MonkeyPatch
) -> None:
    mem = _talk(make_memory)
    seen: list[tuple[list[str], np.ndarray]] = []
    real = order.features

    def spy(ctx: RecallContext, ids: list[str], adjusted: dict, relevance: dict) -> np.ndarray:
        rows = real(ctx, ids, adjusted, relevance)
        assert ids == ranked_pool(adjusted, ctx)
        seen.append(([ctx.records[i].content for i in ids], rows))
        return rows

    monkeypatch.setattr(order, "features", spy)
    mem.recall("What did Caroline learn at the support group?", k=5)
    ((texts, rows),) = seen
    assert rows.shape == (len(TALK), len(FEATURES))
    col = {f: rows[:, i] for i, f in enumerate(FEATURES)}
    assert col["inv_rank"].tolist() == [1 / (1 + r) for r in range(len(TALK))]
    assert col["adjusted_gap"][0] == 0.0 and (col["adjusted_gap"] <= 0).all()
    for r, text in enumerate(texts):
        assert col["question_form"][r] == (1.0 if text.endswith("?") else 0.0)
        assert col["log_length"][r] == pytest.approx(math.log1p(len(text)))
        # the share of the five best from the same session (all five here)
        session = "s1" if any(text == t for t, s in TALK if s == "s1") else "s2"
        assert col["top5_session"][r] == pytest.approx(3 / 5 if session == "s1" else 2 / 5)
    assert col["dense_gap"].max() == 0.0


def test_the_model_s_order_is_the_relevance_the_priority_reads(
    make_memory: Callable[..., Memory], monkeypatch: pytest.MonkeyPatch
) -> None:
    query = "What did Caroline learn at the support group?"
    plain = _talk(make_memory, "plain").recall(query, k=5, explain=True)
    assert plain[0].explain is not None and plain[0].explain.learned is not None
    # a model that only likes questions puts the two questions of the talk first
    monkeypatch.setattr(order, "WEIGHTS", _only("question_form"))
    hits = _talk(make_memory, "questions").recall(query, k=5, explain=True)
    assert {h.memory.content for h in hits[:2]} == {t for t, _ in TALK if t.endswith("?")}
    assert [h.explain.relevance for h in hits[:2]] == [1.0, 1.0]  # type: ignore[union-attr]
    assert all(h.explain.relevance == 0.0 for h in hits[2:])  # type: ignore[union-attr]
    finals = [h.explain.final for h in hits]  # type: ignore[union-attr]
    assert finals == sorted(finals, reverse=True)
    # the calibrated score reads the evidence, not the order
    by_text = {h.memory.content: h.score for h in plain}
    assert all(h.score == by_text[h.memory.content] for h in hits)


def test_off_or_for_a_question_about_the_asker_the_signals_relevance_stays(
    make_memory: Callable[..., Memory], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(order, "WEIGHTS", _only("question_form"))
    off = Settings(retrieval={"learned_weight": 0.0})
    mem = _talk(make_memory, "off", settings=off)
    hits = mem.recall("What did Caroline learn at the support group?", k=5, explain=True)
    assert all(h.explain is not None and h.explain.learned is None for h in hits)
    assert not hits[0].memory.content.endswith("?")
    mine = make_memory("mine")
    mine.remember("I live in Lisbon, near the river.")
    mine.remember("Do you know a good flat in Lisbon?")
    (top, _) = mine.recall("Where do I live now?", k=2, explain=True)
    assert top.memory.content == "I live in Lisbon, near the river."
    assert top.explain is not None and top.explain.learned is None


def test_an_exact_match_and_the_boosts_still_rank_as_the_priority_says(
    make_memory: Callable[..., Memory], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(order, "WEIGHTS", _only("question_form"))
    mem = _talk(make_memory)
    exact = mem.remember("The lake freezes over in January")
    hits = mem.recall("the lake freezes over in january", k=6, explain=True)
    assert hits[0].memory.id == exact.id
    assert hits[0].explain is not None and hits[0].explain.exact_match
    assert hits[0].explain.learned is not None
    assert hits[0].explain.relevance == 0.0  # the model gave it nothing; the boost did


_ATTRS = [
    (
        "lives in",
        ["Lisbon", "Oslo", "Quito", "Perth", "Lyon", "Graz"],
        ["Where does {p} live?", "Which city is {p} based in?"],
    ),
    (
        "works at",
        ["Siemens", "Nokia", "Ikea", "Lego", "Bosch", "Zara"],
        ["Where does {p} work?", "Who is {p}'s employer?"],
    ),
    (
        "drives a",
        ["Volvo", "Fiat", "Kia", "Seat", "Audi", "Mini"],
        ["What car does {p} drive?", "Which car does {p} have?"],
    ),
    (
        "has a dog named",
        ["Rex", "Luna", "Milo", "Nala", "Otto", "Bo"],
        ["What is the name of {p}'s dog?", "What is {p}'s dog called?"],
    ),
    (
        "plays the",
        ["cello", "drums", "flute", "piano", "banjo", "harp"],
        ["Which instrument does {p} play?", "What instrument does {p} play?"],
    ),
    (
        "is allergic to",
        ["peanuts", "pollen", "cats", "shellfish", "gluten", "dust"],
        ["What is {p} allergic to?", "Which allergy does {p} have?"],
    ),
]


@pytest.mark.stores("sqlite")
def test_a_store_of_facts_about_people_keeps_each_question_s_fact_first(
    make_memory: Callable[..., Memory],
) -> None:
    """Outside the conversations it was fit on: twenty people's facts beside long
    notes naming them. A person's other facts (linked to the asked one through the
    person) must not take its place: the signals' relevance alone gets 0.975 here,
    a model reading graph support as a feature of its own 0.875."""
    rng = random.Random(3)
    people = "Ana Ben Chloe Dev Eli Fay Gus Hana Ivo Jill Kai Lea Max Nia Oto Pia Raf Sol Tom Uma"
    names = people.split()
    facts, asked = [], []
    for p in names:
        for verb, values, questions in _ATTRS:
            facts.append(f"{p} {verb} {rng.choice(values)}.")
            asked.append((rng.choice(questions).format(p=p), facts[-1]))
    notes = [
        f"Notes {i}: {rng.choice(names)} and {rng.choice(names)} talked about the plan, budgets,"
        " the move, where people live, cars, hobbies, music, pets, food and allergies."
        for i in range(60)
    ]
    # the default write path (reconcile by the rules; the tests' default is off)
    mem = make_memory(settings=Settings(lifecycle=Lifecycle(reconcile="rules")))
    mem.remember_many([{"content": c} for c in facts + notes])
    first = [mem.recall(q, 3).hits[0].memory.content == fact for q, fact in asked]
    assert sum(first) / len(first) >= 0.95
