"""Common-term suppression: words in most of the reader's memories are left out of the query."""

from __future__ import annotations

from collections.abc import Callable

from kenning import Memory, Principal, Settings
from kenning.retrieval.text import query_terms, strip_terms


def test_strip_terms_removes_words_and_possessives() -> None:
    assert (
        strip_terms("What did Caroline's sister paint?", {"caroline"}) == "What did sister paint?"
    )
    assert strip_terms("What did CAROLINE paint?", {"caroline"}) == "What did paint?"


def test_strip_terms_keeps_the_query_when_nothing_would_be_left() -> None:
    assert strip_terms("Caroline?", {"caroline"}) == "Caroline?"
    assert strip_terms("what is Caroline", {"caroline"}) == "what is Caroline"


def test_query_terms_drop_stopwords_and_possessives() -> None:
    assert query_terms("What did Caroline's dog eat?") == ["caroline", "dog", "eat"]


def _diary(mem: Memory, who: Principal, name: str, n: int) -> None:
    topics = ["painting", "hiking", "a pottery class", "the library", "a concert", "gardening"]
    mem.remember_many(
        [{"content": f"{name} talked about {topics[i % len(topics)]} on day {i}"} for i in range(n)]
        + [{"content": "The adoption agency called back about the interview"}],
        principal=who,
    )


def test_names_in_most_memories_are_dropped_for_that_reader(
    make_memory: Callable[..., Memory],
) -> None:
    mem = make_memory()
    caroline = Principal.member("caroline")
    melanie = Principal.member("melanie")
    _diary(mem, caroline, "Caroline", 30)
    _diary(mem, melanie, "Melanie", 30)
    result = mem.recall(
        "What did Caroline hear from the adoption agency?", 3, explain=True, principal=caroline
    )
    assert result.dropped_terms == ["caroline"]
    assert result[0].memory.content.startswith("The adoption agency")
    # Counting is per reader: in melanie's memories "caroline" is rare, so it stays.
    other = mem.recall("Caroline adoption", 3, explain=True, principal=melanie)
    assert other.dropped_terms == []


def test_suppression_can_be_switched_off_and_skips_small_stores(
    make_memory: Callable[..., Memory],
) -> None:
    off = make_memory("off", settings=Settings(common_term_ratio=0.0))
    who = Principal.member("caroline")
    _diary(off, who, "Caroline", 30)
    assert off.recall("Caroline painting", 3, explain=True, principal=who).dropped_terms == []
    small = make_memory("small")
    _diary(small, who, "Caroline", 5)  # 6 memories < common_term_min_docs
    assert small.recall("Caroline painting", 3, explain=True, principal=who).dropped_terms == []
