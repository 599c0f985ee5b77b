"""Time expressions in queries and memory text (``kenning.retrieval.timeq``).

Reference time: Saturday 20 May 2023, 14:00 UTC. Weeks start on Monday, so
"this week" is Monday 15 to Sunday 21 May.
"""

from __future__ import annotations

from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kenning.retrieval.timeq import (
    TimeQuery,
    TimeSpan,
    content_times,
    format_when,
    overlaps,
    parse_time_query,
)

NOW = datetime(2023, 5, 20, 14, 0, tzinfo=UTC)


def d(year: int, month: int, day: int, hour: int = 0, minute: int = 0) -> datetime:
    return datetime(year, month, day, hour, minute, tzinfo=UTC)


# ------------------------------------------------------------------ windows at NOW

WINDOWS = [
    # single days
    ("What did I do today?", d(2023, 5, 20), d(2023, 5, 21)),
    ("what happened YESTERDAY", d(2023, 5, 19), d(2023, 5, 20)),
    ("plans for tomorrow", d(2023, 5, 21), d(2023, 5, 22)),
    ("the day before yesterday", d(2023, 5, 18), d(2023, 5, 19)),
    ("the day after tomorrow", d(2023, 5, 22), d(2023, 5, 23)),
    ("last night", d(2023, 5, 19, 18), d(2023, 5, 20, 6)),
    ("tonight", d(2023, 5, 20, 18), d(2023, 5, 21, 6)),
    ("this morning", d(2023, 5, 20), d(2023, 5, 20, 12)),
    ("yesterday afternoon", d(2023, 5, 19, 12), d(2023, 5, 19, 18)),
    # this / last / next unit (calendar units, weeks from Monday)
    ("this week", d(2023, 5, 15), d(2023, 5, 22)),
    ("last week", d(2023, 5, 8), d(2023, 5, 15)),
    ("previous week", d(2023, 5, 8), d(2023, 5, 15)),
    ("next week", d(2023, 5, 22), d(2023, 5, 29)),
    ("this weekend", d(2023, 5, 20), d(2023, 5, 22)),
    ("last weekend", d(2023, 5, 13), d(2023, 5, 15)),
    ("next weekend", d(2023, 5, 27), d(2023, 5, 29)),
    ("over the weekend", d(2023, 5, 20), d(2023, 5, 22)),
    ("this month", d(2023, 5, 1), d(2023, 6, 1)),
    ("last month", d(2023, 4, 1), d(2023, 5, 1)),
    ("next month", d(2023, 6, 1), d(2023, 7, 1)),
    ("this year", d(2023, 1, 1), d(2024, 1, 1)),
    ("last year", d(2022, 1, 1), d(2023, 1, 1)),
    ("next year", d(2024, 1, 1), d(2025, 1, 1)),
    ("the week before last", d(2023, 5, 1), d(2023, 5, 8)),
    ("the month before last", d(2023, 3, 1), d(2023, 4, 1)),
    ("the year before last", d(2021, 1, 1), d(2022, 1, 1)),
    ("the week after next", d(2023, 5, 29), d(2023, 6, 5)),
    # N units ago: the calendar unit N back; fuzzy counts widen the window
    ("3 days ago", d(2023, 5, 17), d(2023, 5, 18)),
    ("three days ago", d(2023, 5, 17), d(2023, 5, 18)),
    ("a day ago", d(2023, 5, 19), d(2023, 5, 20)),
    ("a week ago", d(2023, 5, 8), d(2023, 5, 15)),
    ("two weeks ago", d(2023, 5, 1), d(2023, 5, 8)),
    ("a month ago", d(2023, 4, 1), d(2023, 5, 1)),
    ("twelve months ago", d(2022, 5, 1), d(2022, 6, 1)),
    ("a couple of years ago", d(2021, 1, 1), d(2022, 1, 1)),
    ("a few days ago", d(2023, 5, 16), d(2023, 5, 19)),
    ("several weeks ago", d(2023, 4, 3), d(2023, 5, 1)),
    # future offsets
    ("in two weeks", d(2023, 5, 29), d(2023, 6, 5)),
    ("3 days from now", d(2023, 5, 23), d(2023, 5, 24)),
    # rolling spans end now
    ("over the past 3 days", d(2023, 5, 17), NOW),
    ("in the last two weeks", d(2023, 5, 6), NOW),
    ("the past few months", d(2023, 1, 20), NOW),
    ("in the past week", d(2023, 5, 13), NOW),
    ("in the last year", d(2022, 5, 20), NOW),
    ("recently", d(2023, 4, 20), NOW),
    ("lately", d(2023, 4, 20), NOW),
    ("the other day", d(2023, 5, 13), d(2023, 5, 20)),
    ("earlier this year", d(2023, 1, 1), NOW),
    ("earlier this week", d(2023, 5, 15), NOW),
    ("later this month", NOW, d(2023, 6, 1)),
    ("earlier today", d(2023, 5, 20), NOW),
    # months: the latest that has begun
    ("What happened in May?", d(2023, 5, 1), d(2023, 6, 1)),
    ("in june", d(2022, 6, 1), d(2022, 7, 1)),
    ("in December", d(2022, 12, 1), d(2023, 1, 1)),
    ("last May", d(2022, 5, 1), d(2022, 6, 1)),
    ("last April", d(2023, 4, 1), d(2023, 5, 1)),
    ("next May", d(2024, 5, 1), d(2024, 6, 1)),
    ("this May", d(2023, 5, 1), d(2023, 6, 1)),
    ("in May 2023", d(2023, 5, 1), d(2023, 6, 1)),
    ("May 2023", d(2023, 5, 1), d(2023, 6, 1)),
    ("Sept, 2021", d(2021, 9, 1), d(2021, 10, 1)),
    ("in early May", d(2023, 5, 1), d(2023, 5, 11)),
    ("mid-May", d(2023, 5, 11), d(2023, 5, 21)),
    ("late February 2024", d(2024, 2, 20), d(2024, 3, 1)),
    ("at the end of May", d(2023, 5, 21), d(2023, 6, 1)),
    # years and decades
    ("in 2022", d(2022, 1, 1), d(2023, 1, 1)),
    ("the year 2019", d(2019, 1, 1), d(2020, 1, 1)),
    ("late 2022", d(2022, 9, 1), d(2023, 1, 1)),
    ("the beginning of last year", d(2022, 1, 1), d(2022, 5, 1)),
    ("in the 90s", d(1990, 1, 1), d(2000, 1, 1)),
    ("the '80s", d(1980, 1, 1), d(1990, 1, 1)),
    ("the 1970s", d(1970, 1, 1), d(1980, 1, 1)),
    ("in the 20s", d(2020, 1, 1), d(2030, 1, 1)),
    # full dates
    ("on 8 May 2023", d(2023, 5, 8), d(2023, 5, 9)),
    ("8 May, 2023", d(2023, 5, 8), d(2023, 5, 9)),
    ("May 8, 2023", d(2023, 5, 8), d(2023, 5, 9)),
    ("May 8th", d(2023, 5, 8), d(2023, 5, 9)),
    ("on the 8th of May", d(2023, 5, 8), d(2023, 5, 9)),
    ("May the 21st", d(2022, 5, 21), d(2022, 5, 22)),
    ("Jan. 5", d(2023, 1, 5), d(2023, 1, 6)),
    ("on 3 Dec 2021", d(2021, 12, 3), d(2021, 12, 4)),
    ("2023-05-08", d(2023, 5, 8), d(2023, 5, 9)),
    ("on 2022/12/31", d(2022, 12, 31), d(2023, 1, 1)),
    ("on 29 February", d(2020, 2, 29), d(2020, 3, 1)),
    # seasons (northern, meteorological)
    ("in the summer of 2022", d(2022, 6, 1), d(2022, 9, 1)),
    ("summer 2021", d(2021, 6, 1), d(2021, 9, 1)),
    ("winter 2022", d(2022, 12, 1), d(2023, 3, 1)),
    ("last summer", d(2022, 6, 1), d(2022, 9, 1)),
    ("last spring", d(2022, 3, 1), d(2022, 6, 1)),
    ("last winter", d(2022, 12, 1), d(2023, 3, 1)),
    ("this spring", d(2023, 3, 1), d(2023, 6, 1)),
    ("this summer", d(2023, 6, 1), d(2023, 9, 1)),
    ("next winter", d(2023, 12, 1), d(2024, 3, 1)),
    ("in the fall", d(2022, 9, 1), d(2022, 12, 1)),
    ("during the spring", d(2023, 3, 1), d(2023, 6, 1)),
    # weekdays (today is Saturday 20 May)
    ("on Monday", d(2023, 5, 15), d(2023, 5, 16)),
    ("Friday", d(2023, 5, 19), d(2023, 5, 20)),
    ("on Saturday", d(2023, 5, 20), d(2023, 5, 21)),
    ("on Sunday", d(2023, 5, 14), d(2023, 5, 15)),
    ("last Friday", d(2023, 5, 19), d(2023, 5, 20)),
    ("last Saturday", d(2023, 5, 13), d(2023, 5, 14)),
    ("next Friday", d(2023, 5, 26), d(2023, 5, 27)),
    ("this Sunday", d(2023, 5, 21), d(2023, 5, 22)),
    ("Monday last week", d(2023, 5, 8), d(2023, 5, 9)),
    # bounds and ranges
    ("before 2022", None, d(2022, 1, 1)),
    ("after May 2023", d(2023, 6, 1), None),
    ("since last month", d(2023, 4, 1), None),
    ("since 2019", d(2019, 1, 1), None),
    ("until yesterday", None, d(2023, 5, 20)),
    ("prior to last week", None, d(2023, 5, 8)),
    ("between March and May", d(2023, 3, 1), d(2023, 6, 1)),
    ("between 2019 and 2021", d(2019, 1, 1), d(2022, 1, 1)),
    ("between 2021 and 2019", d(2019, 1, 1), d(2022, 1, 1)),
    ("from March 2022 to May 2022", d(2022, 3, 1), d(2022, 6, 1)),
    ("from 2020-2022", d(2020, 1, 1), d(2023, 1, 1)),
    ("between yesterday and today", d(2023, 5, 19), d(2023, 5, 21)),
    ("from last Monday until Thursday", d(2023, 5, 15), d(2023, 5, 19)),
    ("between May and June 2023", d(2023, 5, 1), d(2023, 7, 1)),
    ("after the summer of 2022", d(2022, 9, 1), None),
    ("since early 2022", d(2022, 1, 1), None),
    # several expressions: intersection when not empty, else the hull
    ("in May last year", d(2022, 5, 1), d(2022, 6, 1)),
    ("in 2022 after June", d(2022, 7, 1), d(2023, 1, 1)),
    ("yesterday or today", d(2023, 5, 19), d(2023, 5, 21)),
    # disjoint, and one names its year: that one decides (a dated question)
    ("what did she make recently in May 2022", d(2022, 5, 1), d(2022, 6, 1)),
    ("what did she finish last Friday on 23 January, 2022", d(2022, 1, 23), d(2022, 1, 24)),
    ("what happened in May 2021 or last week", d(2021, 5, 1), d(2021, 6, 1)),
]


@pytest.mark.parametrize(("query", "start", "end"), WINDOWS)
def test_window(query: str, start: datetime | None, end: datetime | None) -> None:
    parsed = parse_time_query(query, NOW)
    assert (parsed.start, parsed.end) == (start, end)


# ------------------------------------------------------------------ boundaries at other times

BOUNDARIES = [
    # year rollover
    (d(2024, 1, 15, 9), "last month", d(2023, 12, 1), d(2024, 1, 1)),
    (d(2024, 1, 1), "yesterday", d(2023, 12, 31), d(2024, 1, 1)),
    (d(2023, 12, 31, 23), "next month", d(2024, 1, 1), d(2024, 2, 1)),
    (d(2024, 1, 3), "last week", d(2023, 12, 25), d(2024, 1, 1)),
    (d(2024, 1, 15), "3 months ago", d(2023, 10, 1), d(2023, 11, 1)),
    (d(2024, 1, 15), "in December", d(2023, 12, 1), d(2024, 1, 1)),
    # leap years and month lengths
    (d(2024, 3, 1), "yesterday", d(2024, 2, 29), d(2024, 3, 1)),
    (d(2023, 3, 1), "yesterday", d(2023, 2, 28), d(2023, 3, 1)),
    (d(2024, 3, 31, 12), "in the past month", d(2024, 2, 29), d(2024, 3, 31, 12)),
    (d(2024, 3, 15), "last month", d(2024, 2, 1), d(2024, 3, 1)),
    (d(2024, 2, 29, 8), "in the last year", d(2023, 2, 28), d(2024, 2, 29, 8)),
    (d(2024, 3, 1), "on 29 February", d(2024, 2, 29), d(2024, 3, 1)),
    (d(2023, 6, 1), "mid-February", d(2023, 2, 10), d(2023, 2, 19)),
    # weeks start on Monday
    (d(2023, 5, 21, 22), "this week", d(2023, 5, 15), d(2023, 5, 22)),
    (d(2023, 5, 22, 1), "this week", d(2023, 5, 22), d(2023, 5, 29)),
    (d(2023, 5, 22, 1), "last weekend", d(2023, 5, 20), d(2023, 5, 22)),
    (d(2023, 5, 22, 1), "this weekend", d(2023, 5, 27), d(2023, 5, 29)),
    (d(2023, 5, 22, 1), "the weekend", d(2023, 5, 20), d(2023, 5, 22)),
    (d(2023, 5, 22, 1), "on Monday", d(2023, 5, 22), d(2023, 5, 23)),
    (d(2023, 5, 22, 1), "last Monday", d(2023, 5, 15), d(2023, 5, 16)),
    # seasons around the turn of the year and inside the season
    (d(2023, 1, 10), "this winter", d(2022, 12, 1), d(2023, 3, 1)),
    (d(2023, 1, 10), "last winter", d(2021, 12, 1), d(2022, 3, 1)),
    (d(2023, 7, 10), "last summer", d(2022, 6, 1), d(2022, 9, 1)),
    (d(2023, 7, 10), "this summer", d(2023, 6, 1), d(2023, 9, 1)),
    (d(2023, 7, 10), "in the summer", d(2023, 6, 1), d(2023, 9, 1)),
    (d(2023, 11, 10), "this spring", d(2023, 3, 1), d(2023, 6, 1)),
    # decades: the latest that has begun
    (d(2015, 6, 1), "in the 20s", d(1920, 1, 1), d(1930, 1, 1)),
]


@pytest.mark.parametrize(("now", "query", "start", "end"), BOUNDARIES)
def test_window_at_boundaries(
    now: datetime, query: str, start: datetime | None, end: datetime | None
) -> None:
    parsed = parse_time_query(query, now)
    assert (parsed.start, parsed.end) == (start, end)


def test_naive_and_non_utc_reference_times_are_read_as_utc() -> None:
    naive = parse_time_query("yesterday", datetime(2023, 5, 20, 14))
    assert (naive.start, naive.end) == (d(2023, 5, 19), d(2023, 5, 20))
    assert naive.start is not None and naive.start.tzinfo is UTC
    shifted = NOW.astimezone(ZoneInfo("Pacific/Kiritimati"))  # UTC+14
    assert shifted.date().day == 21
    assert parse_time_query("today", shifted).start == d(2023, 5, 20)


# ------------------------------------------------------------------ "may" and other non-dates

NOT_DATES = [
    "May I ask what we discussed?",
    "She may go to the gym.",
    "You may remember the recipe",
    "this may help with the garden",
    "We have 2 may be 3 options",
    "What did June say about the trip?",
    "Did April like the concert?",
    "What did May tell you?",
    "They march to the beat",
    "I saw him fall off the bike",
    "the spring in the garden was broken",  # "spring" with no date context
    "He sold 2022 units",
    "I paid $2022 for it",
    "She is in her 90s",
    "What was on 30 February?",
    "Have I told you this before?",
    "February 29, 2023",  # no such day
]


@pytest.mark.parametrize("query", NOT_DATES)
def test_words_that_only_look_like_dates_name_no_time(query: str) -> None:
    parsed = parse_time_query(query, NOW)
    assert (parsed.start, parsed.end, parsed.matched) == (None, None, ())
    assert parsed.remainder == query


MAY_IN_CONTEXT = [
    ("In May I went to Paris", ("In May",)),
    ("what did we do in may", ("in may",)),
    ("May 2023 was busy", ("May 2023",)),
    ("Did she visit on May 8?", ("on May 8",)),
    ("Did May say anything yesterday?", ("yesterday",)),
    ("She may go to Paris next week", ("next week",)),
    ("I moved in 2019 and may go back", ("in 2019",)),
    ("from March to May", ("from March to May",)),
    ("Did I go in May or June?", ("in May", "or June")),
]


@pytest.mark.parametrize(("query", "matched"), MAY_IN_CONTEXT)
def test_month_names_count_only_in_a_date_context(query: str, matched: tuple[str, ...]) -> None:
    assert parse_time_query(query, NOW).matched == matched


# ------------------------------------------------------------------ remainder

REMAINDERS = [
    ("What did I do last week?", "What did I do?"),
    ("What did Caroline paint in May 2023?", "What did Caroline paint?"),
    ("Since 2019, where has she lived?", "where has she lived?"),
    ("yesterday, what did Mel cook", "what did Mel cook"),
    ("What happened between March and May at the studio?", "What happened at the studio?"),
    ("Where did we eat on Friday, and with whom?", "Where did we eat, and with whom?"),
    ("What did I do before the trip last year?", "What did I do before the trip?"),
    ("last week", ""),
    ("When is her birthday?", "When is her birthday?"),
]


@pytest.mark.parametrize(("query", "remainder"), REMAINDERS)
def test_remainder_drops_the_time_expressions(query: str, remainder: str) -> None:
    assert parse_time_query(query, NOW).remainder == remainder


def test_matched_are_the_expressions_with_their_prepositions() -> None:
    parsed = parse_time_query("Who did I meet on Monday and what did I buy in early May?", NOW)
    assert parsed.matched == ("on Monday", "in early May")
    assert parsed.remainder == "Who did I meet and what did I buy?"
    # several windows with no overlap: the span covering both
    assert (parsed.start, parsed.end) == (d(2023, 5, 1), d(2023, 5, 16))


# ------------------------------------------------------------------ asks_when

ASKS_WHEN = [
    ("When did Caroline go to the support group?", True),
    ("when was the concert", True),
    ("When's her birthday?", True),
    ("When is the wedding?", True),
    ("What date did they move?", True),
    ("What year did she start painting?", True),
    ("Which month was the trip?", True),
    ("What time did the party start?", True),
    ("How long ago did they meet?", True),
    ("How long has she lived in Berlin?", True),
    ("Since when has he been vegan?", True),
    ("What did she say when she arrived?", False),
    ("How long was the trip?", False),
    ("How long did the hike take?", False),
    ("What did Mel paint last week?", False),
    ("Where does she live?", False),
]


@pytest.mark.parametrize(("query", "expected"), ASKS_WHEN)
def test_asks_when(query: str, expected: bool) -> None:
    assert parse_time_query(query, NOW).asks_when is expected


# ------------------------------------------------------------------ anchors

ANCHORS = [
    ("What did Mel do after her wedding?", "her wedding", "after"),
    ("Where did they go before the trip to Paris?", "the trip to Paris", "before"),
    ("What changed since the move?", "the move", "after"),
    ("What did he eat during Mel's visit?", "Mel's visit", "during"),
    ("What did she do after moving to Berlin?", "moving to Berlin", "after"),
    ("Did they talk until the end of the party?", "the end of the party", "before"),
    ("What did I do before the trip last year?", "the trip", "before"),
    ("What did we plan after Christmas?", "Christmas", "after"),
    ("What did he say after the game when he got home?", "the game", "after"),
]


@pytest.mark.parametrize(("query", "anchor", "relation"), ANCHORS)
def test_anchor(query: str, anchor: str, relation: str) -> None:
    parsed = parse_time_query(query, NOW)
    assert (parsed.anchor, parsed.relation) == (anchor, relation)
    assert anchor in parsed.remainder  # the event's words stay searchable


NO_ANCHOR = [
    "What did I do before 2022?",
    "What happened after the summer of 2022?",
    "Have I told you this before?",
    "What did she do after she moved?",  # a clause, not an event phrase: known gap
    "Since when has he been vegan?",
    "after all, what did she want",
    "What did we do the day before yesterday?",
    # the value held now is no event: these ask for the value before it
    "What car did I have before the current one?",
    "Which choir was I in before the one I'm in now?",
    "What laptop did I have before my current one?",
    # ... however long the clause that says so
    "Which hairdresser did I use before the one I go to now?",
    "Which gym was I at before the one I go to these days?",
]


def test_a_present_word_outside_the_anchors_clause_keeps_the_event() -> None:
    parsed = parse_time_query("Where did we live before the move, now that I think of it?", NOW)
    assert (parsed.anchor, parsed.relation) == ("the move", "before")


@pytest.mark.parametrize("query", NO_ANCHOR)
def test_no_anchor(query: str) -> None:
    parsed = parse_time_query(query, NOW)
    assert (parsed.anchor, parsed.relation) == (None, None)


def test_query_without_time_is_empty_but_keeps_its_text() -> None:
    assert parse_time_query("What does Mel paint?", NOW) == TimeQuery(
        remainder="What does Mel paint?"
    )
    assert parse_time_query("", NOW) == TimeQuery()


# ------------------------------------------------------------------ content_times

SAID = d(2023, 5, 8, 13, 56)  # Monday 8 May 2023

CONTENT = [
    (
        "I went to the support group yesterday",
        [TimeSpan(d(2023, 5, 7), d(2023, 5, 8), "yesterday")],
    ),
    ("We moved last week", [TimeSpan(d(2023, 5, 1), d(2023, 5, 8), "last week")]),
    (
        "My sister visits next month",
        [TimeSpan(d(2023, 6, 1), d(2023, 7, 1), "next month")],
    ),
    ("I ran a marathon in 2022", [TimeSpan(d(2022, 1, 1), d(2023, 1, 1), "in 2022")]),
    (
        "I started painting two years ago",
        [TimeSpan(d(2021, 1, 1), d(2022, 1, 1), "two years ago")],
    ),
    (
        "Last Saturday we hiked",
        [TimeSpan(d(2023, 5, 6), d(2023, 5, 7), "Last Saturday")],
    ),
    (
        "I'll be in Paris on Friday and in Rome in June",
        [
            TimeSpan(d(2023, 5, 12), d(2023, 5, 13), "on Friday"),
            TimeSpan(d(2023, 6, 1), d(2023, 7, 1), "in June"),
        ],
    ),
    (
        "I was in Rome in June",
        [TimeSpan(d(2022, 6, 1), d(2022, 7, 1), "in June")],
    ),
    (
        "I have lived here since 2019 and worked there from March to May",
        [
            TimeSpan(d(2019, 1, 1), None, "since 2019"),
            TimeSpan(d(2023, 3, 1), d(2023, 6, 1), "from March to May"),
        ],
    ),
    ("She may come by later", []),
    # a thing of the weekend is no time
    ("Kasia's doing the weekend bake with Jonah", []),
    ("I worked the weekend shift", []),
]


@pytest.mark.parametrize(("text", "spans"), CONTENT)
def test_content_times(text: str, spans: list[TimeSpan]) -> None:
    assert content_times(text, SAID) == spans


def test_content_times_are_read_once_per_text_and_moment(monkeypatch: pytest.MonkeyPatch) -> None:
    """A text is scanned once for the moment it was said; each call gets its own
    list, and the same words said on another day resolve against that day."""
    from kenning.retrieval import timeq

    scans: list[str] = []
    scan = timeq._expressions

    def counting(text: str, at: datetime) -> list[object]:
        scans.append(text)
        return scan(text, at)

    monkeypatch.setattr(timeq, "_expressions", counting)
    text = "I moved to Lisbon last May, two weeks ago I found a flat (read once)"
    first = content_times(text, SAID)
    assert content_times(text, SAID) == first and scans == [text]
    first.append(TimeSpan(None, None, "changed by the caller"))
    assert content_times(text, SAID) == first[:-1]
    later = content_times(text, d(2024, 8, 1))
    assert later != first[:-1]
    assert [s.text for s in later] == [s.text for s in first[:-1]]
    assert content_times(text, SAID.astimezone(ZoneInfo("Europe/Berlin"))) == first[:-1]


_PIECES = (
    "I",
    "we",
    "went",
    "to",
    "Rome",
    "in",
    "on",
    "at",
    "the",
    "of",
    "and",
    "or",
    "from",
    "between",
    "since",
    "before",
    "after",
    "until",
    "ago",
    "later",
    "earlier",
    "this",
    "last",
    "next",
    "past",
    "coming",
    "previous",
    "a",
    "few",
    "couple",
    "two",
    "12",
    "3rd",
    "May",
    "may be",
    "June",
    "Sept.",
    "Dec",
    "2021",
    "1990s",
    "'90s",
    "2023-05-01",
    "week",
    "weeks",
    "weekend",
    "month",
    "year",
    "days",
    "Friday",
    "monday",
    "summer",
    "fall",
    "today",
    "tonight",
    "yesterday",
    "tomorrow",
    "morning",
    "night",
    "the other day",
    "recently",
    "lately",
    "market",
    "sunny",
    "decade",
    "Mayor",
    "A380",
    "99%",
    ",",
    ".",
)


@pytest.mark.parametrize(
    "text",
    [
        "I moved last week",
        "two weeks ago",
        "over the weekend",
        "in 2021",
        "on the 3rd of June",
        "on Friday",
        "this summer",
        "back in the '90s",
        "yesterday",
        "tonight",
        "this morning",
        "last night",
        "the other day",
        "recently",
        "lately",
        "earlier this week",
        "later today",
        "2023-05-01",
        "in March",
        "next month",
        "a year ago",
        "the day before yesterday",
        "the week after next",
        "in a couple of days",
        "the past three months",
    ],
)
def test_every_kind_of_expression_passes_the_quick_check(text: str) -> None:
    """One expression of each kind the rules read, each with the one word that
    lets it through the check before the rules."""
    from kenning.retrieval import timeq

    found = timeq._expressions(text, SAID)
    assert found and found == timeq._grammar(text, SAID), text


@given(st.lists(st.sampled_from(_PIECES), min_size=1, max_size=10))
@settings(max_examples=400, deadline=None)
def test_the_quick_check_never_hides_an_expression(pieces: list[str]) -> None:
    """Texts without a word any rule needs skip the rules; the check must never
    drop an expression the rules would find."""
    from kenning.retrieval import timeq

    text = " ".join(pieces)
    assert timeq._expressions(text, SAID) == timeq._grammar(text, SAID)


def test_content_times_and_queries_share_the_grammar() -> None:
    for query, start, end in WINDOWS:
        spans = content_times(query, NOW)
        if len(spans) == 1:
            assert (spans[0].start, spans[0].end) == (start, end), query


# ------------------------------------------------------------------ helpers


def test_overlaps_is_half_open_and_open_sides_are_unbounded() -> None:
    span = TimeSpan(d(2023, 5, 7), d(2023, 5, 8), "yesterday")
    assert overlaps(span, d(2023, 5, 7))
    assert overlaps(span, datetime(2023, 5, 7, 23, 59))  # naive = UTC
    assert not overlaps(span, d(2023, 5, 8))
    assert not overlaps(span, d(2023, 5, 6, 23))
    since = parse_time_query("since 2019", NOW)
    assert overlaps(since, d(2030, 1, 1)) and not overlaps(since, d(2018, 12, 31))
    assert overlaps(TimeQuery(), d(1900, 1, 1))


def test_format_when() -> None:
    assert format_when(d(2023, 5, 8)) == "8 May 2023"
    assert format_when(datetime(2023, 5, 8, 14, 5)) == "8 May 2023, 14:05 UTC"


# ------------------------------------------------------------------ properties

_NOWS = st.datetimes(min_value=datetime(1990, 1, 1), max_value=datetime(2080, 12, 31)).map(
    lambda dt: dt.replace(tzinfo=UTC)
)
_COUNTS = st.sampled_from(["1", "2", "7", "30", "one", "three", "twelve", "a", "a couple of"])
_UNITS = st.sampled_from(["day", "week", "weekend", "month", "year"])
_PAST = st.sampled_from(
    [
        "yesterday",
        "last week",
        "last weekend",
        "last month",
        "last year",
        "the week before last",
        "last Friday",
        "last Sunday",
        "last summer",
        "last winter",
        "the day before yesterday",
        "last May",
        "last December",
        "the other day",
    ]
)
_ANY = st.one_of(
    _PAST,
    st.sampled_from(
        [
            "today",
            "this week",
            "next month",
            "this spring",
            "in March",
            "on Tuesday",
            "recently",
            "earlier this year",
            "over the past 3 days",
            "in 2021",
            "May 8th",
            "the 29th of February",
            "between March and May",
            "since last month",
            "before 2020",
        ]
    ),
)


def _plural(count: str, unit: str) -> str:
    return unit if count in ("1", "one", "a") else unit + "s"


@settings(max_examples=30, deadline=None, database=None)
@given(now=_NOWS, count=_COUNTS, unit=_UNITS)
def test_units_ago_lie_before_now(now: datetime, count: str, unit: str) -> None:
    parsed = parse_time_query(f"What did I do {count} {_plural(count, unit)} ago?", now)
    assert parsed.start is not None and parsed.end is not None
    assert parsed.start < parsed.end <= now
    assert parsed.remainder == "What did I do?"


@settings(max_examples=30, deadline=None, database=None)
@given(now=_NOWS, expr=_PAST)
def test_past_expressions_end_by_today(now: datetime, expr: str) -> None:
    parsed = parse_time_query(f"Where was Mel {expr}?", now)
    today = now.replace(hour=0, minute=0, second=0, microsecond=0)
    assert parsed.start is not None and parsed.end is not None
    assert parsed.start < parsed.end <= today


@settings(max_examples=40, deadline=None, database=None)
@given(now=_NOWS, expr=_ANY, before=st.booleans())
def test_windows_are_ordered_and_remainder_drops_matches(
    now: datetime, expr: str, before: bool
) -> None:
    query = f"{expr} what did Caroline paint" if before else f"What did Caroline paint {expr}?"
    parsed = parse_time_query(query, now)
    assert parsed.matched, query
    if parsed.start is not None and parsed.end is not None:
        assert parsed.start < parsed.end
    assert parsed.start is not None or parsed.end is not None
    for matched in parsed.matched:
        assert matched.lower() not in parsed.remainder.lower()
    assert "Caroline paint" in parsed.remainder
    spans = content_times(query, now)
    assert [(s.start, s.end) for s in spans] == [(parsed.start, parsed.end)]


@pytest.mark.parametrize(
    ("text", "month"),
    [
        # an arrangement in the present progressive speaks of the future
        ("I'm flying to Rome in June.", 6),
        ("My sister is getting married in June.", 6),
        ("I'm training for a half marathon in October.", 10),
        # a scheduled event one has
        ("I have a job interview with Spotify in June.", 6),
        ("My flight is in July.", 7),
        # a timetable in the present simple
        ("I start at ABB in June.", 6),
        ("Our lease ends in August.", 8),
        ("The course begins in September.", 9),
        ("My first day at ABB is in June.", 6),
        # a state or a past purchase does not
        ("I'm reading a book I bought in March.", 3),
    ],
)
def test_an_arrangement_in_the_present_progressive_resolves_forward(text: str, month: int) -> None:
    """Said on 20 May 2023: "in June" is June 2023 for an arrangement (not June
    2022), "in March" stays March 2023."""
    (span,) = content_times(text, NOW)
    assert span.start is not None
    assert (span.start.year, span.start.month) == (2023, month)


@pytest.mark.parametrize(
    "text",
    [
        "I started at ABB in June.",
        "Did I start at ABB in June?",
        "My first day at ABB was in June.",
        "I go to Spain in June.",
    ],
)
def test_a_timetable_looks_back_when_asked_or_past(text: str) -> None:
    """Said on 20 May 2023: a timetable's verb in the past, or asked about, keeps
    "in June" the June that has begun (2022); so does a habit."""
    (span,) = content_times(text, NOW)
    assert span.start is not None
    assert (span.start.year, span.start.month) == (2022, 6)
