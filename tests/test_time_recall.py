"""Time-aware recall: windows named in the query, event anchors, "when" questions."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from kenning import FixedClock, Memory, Settings


def at(year: int, month: int, day: int) -> datetime:
    return datetime(year, month, day, 12, tzinfo=UTC)


@pytest.fixture
def diary(mem: Memory, clock: FixedClock) -> Memory:
    clock.set(at(2023, 10, 1))
    mem.remember_many(
        [
            {"content": "Went hiking in the Alps with my sister", "event_at": at(2023, 5, 14)},
            {"content": "Went hiking in the Rockies with my brother", "event_at": at(2023, 8, 2)},
            {"content": "Went hiking near the lake with friends", "event_at": at(2022, 5, 20)},
            {"content": "Booked the trip to Sweden", "event_at": at(2023, 6, 10)},
            {"content": "Bought new hiking boots", "event_at": at(2023, 6, 1)},
        ]
    )
    return mem


def test_window_in_the_query_lifts_memories_from_that_time(diary: Memory) -> None:
    result = diary.recall("where did I go hiking in May 2023", 3, explain=True)
    top = result[0]
    assert top.memory.content.startswith("Went hiking in the Alps")
    assert top.explain is not None and top.explain.time > 0
    assert result.time_window == {
        "start": "2023-05-01T00:00:00+00:00",
        "end": "2023-06-01T00:00:00+00:00",
    }
    others = [h for h in result if not h.memory.content.startswith("Went hiking in the Alps")]
    assert all(h.explain is not None and h.explain.time == 0 for h in others)


def test_the_time_words_do_not_drive_the_text_match(diary: Memory) -> None:
    # "last year" is 2022 here: the lake hike, though "Alps" and "Rockies" hikes are newer
    result = diary.recall("which hike did I do last year", 1)
    assert result[0].memory.content == "Went hiking near the lake with friends"


def test_event_anchor_windows_before_and_after(diary: Memory) -> None:
    before = diary.recall("hiking before the trip to Sweden", 5, explain=True)
    assert before.time_window == {"start": None, "end": "2023-06-10T00:00:00+00:00"}
    lifted = {h.memory.content for h in before if h.explain and h.explain.time > 0}
    assert "Went hiking in the Rockies with my brother" not in lifted
    assert "Went hiking in the Alps with my sister" in lifted
    after = diary.recall("hiking after the trip to Sweden", 1)
    assert after[0].memory.content == "Went hiking in the Rockies with my brother"


def test_relative_times_in_the_text_count_for_the_window(mem: Memory, clock: FixedClock) -> None:
    clock.set(at(2023, 10, 1))
    said = mem.remember("I ran my first marathon yesterday", event_at=at(2023, 6, 1))
    mem.remember("I want to run a marathon some day", event_at=at(2023, 4, 3))
    result = mem.recall("marathon on 31 May 2023", 2, explain=True)
    time_of = {h.memory.id: h.explain.time for h in result if h.explain is not None}
    assert time_of[said.id] > 0  # said 1 June, about 31 May
    assert sorted(time_of.values()) == [0.0, time_of[said.id]]


def test_when_questions_favour_memories_that_carry_a_time(mem: Memory) -> None:
    dated = mem.remember("We adopted the puppy last week")
    mem.remember("We adopted the puppy from a shelter")
    result = mem.recall("when did we adopt the puppy?", 2, explain=True)
    by_id = {h.memory.id: h for h in result}
    assert by_id[dated.id].explain is not None and by_id[dated.id].explain.time > 0
    assert result.time_window == {}


def test_time_awareness_can_be_switched_off(make_memory, clock: FixedClock) -> None:  # type: ignore[no-untyped-def]
    mem = make_memory(settings=Settings(time_aware=False))
    clock.set(at(2023, 10, 1))
    mem.remember("Went hiking in the Alps", event_at=at(2023, 5, 14))
    result = mem.recall("hiking in May 2023", 1, explain=True)
    assert result.time_window == {}
    assert result[0].explain is not None and result[0].explain.time == 0
