"""Time expressions in recall queries and in memory text, resolved to UTC windows.

Pure functions, no I/O: every call takes the reference time it resolves
against (``now`` for a query, ``said_at`` for a memory), so results are
reproducible under an injected clock. One grammar serves both sides:
:func:`parse_time_query` folds what it finds into one window plus the query
text without it; :func:`content_times` lists each expression's window.

Conventions (all windows are half-open ``[start, end)``, aware UTC; naive
inputs are taken as UTC; ``None`` means unbounded on that side):

* Calendar units are whole units: days start at midnight UTC, **weeks start on
  Monday**, a weekend is Saturday and Sunday of that week. "last week" is the
  previous Monday-to-Sunday, "N weeks/months/years ago" the calendar unit N
  units back ("two weeks ago" is the week before last week); "a few" is 2 to 4,
  "a couple of" 2, "several" 3 to 6, so a fuzzy count gives a wider window.
* Rolling spans end at the reference time: "the past 3 days" / "over the last
  week" start at midnight N days (weeks, months...) back; "recently" and
  "lately" are the last 30 days; "earlier this year" runs from 1 January.
* A bare month, date or season is the latest one that has begun by the
  reference time ("in June" asked in May 2023 is June 2022, "in May" is May
  2023); a bare weekday is the latest on or before today, "last Friday" the
  latest strictly before today, "next Friday" the first strictly after, "this
  Friday" the one in the current week. If the text speaks of the future
  ("will", "going to", "'ll", "plan to"..., an arrangement in the present
  progressive: "I'm flying to Rome on Friday", "is getting married in June",
  a scheduled event one has: "I have a meeting with Anna on Friday", "My
  flight is on Monday", or a timetable in the present simple, said, not asked:
  "I start at ABB in June", "Our lease ends in August"), bare names resolve
  forward.
* Seasons are northern meteorological: spring is March to May, summer June to
  August, autumn/fall September to November, winter December to February
  ("winter 2022" starts in December 2022).
* "early/mid/late X" and "the beginning/middle/end of X" take a third of a
  window longer than a week. "before X" ends where X starts, "after X" starts
  where X ends, "since/from X" starts where X starts, "until/till/through X"
  ends where X ends; "between X and Y" and "from X to Y" span both.
* A month name alone counts only in a date context: with a day or a year
  ("May 8", "8 May", "May 2023"), after a preposition or modifier ("in May",
  "since May", "last May", "mid-May", "the end of May"), or right after another
  date as the other end of a range or list ("from March to May", "in May or
  June"; a lowercase "may"/"march"/"fall"/"spring" after "and"/"or" stays a
  word). "may" followed by be/have/not/... is never the month. So "May I
  ask...", "she may go", "what did June say" and "this may help" name no
  month. Bare years and seasons follow the same rule ("in 2022", "in the
  fall"); "the year 2022", "summer 2022", "last summer" need no preposition.
* Several expressions in one query: the window is their intersection when that
  is not empty; otherwise, when some of them name their year, the window of
  those alone ("recently, in May 2022"); otherwise the span covering them all.
* Event-relative expressions ("before the trip", "after her wedding", "since
  the move", "during Mel's visit") give :attr:`TimeQuery.anchor` and
  :attr:`TimeQuery.relation` ("since" counts as "after", "until" as
  "before"); the caller resolves the event. The anchor phrase stays in
  :attr:`TimeQuery.remainder` (its words are the topic); dates are removed.
"""

from __future__ import annotations

import calendar
import functools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Literal, Protocol

from ..lifecycle.slots import CALENDAR_NAMES, MONTH_NAMES, WEEKDAY_NAMES, says_now
from ..models import as_utc

__all__ = [
    "CALENDAR_NAMES",
    "TimeQuery",
    "TimeSpan",
    "Relation",
    "parse_time_query",
    "content_times",
    "overlaps",
    "format_when",
]

#: How a query relates to an event it names: before it, after it, or during it.
Relation = Literal["before", "after", "during"]


@dataclass(frozen=True, slots=True)
class TimeSpan:
    """A window ``[start, end)`` that a piece of text refers to, with that text.

    ``start`` or ``end`` is ``None`` when the text leaves that side open
    ("before 2020", "since May").
    """

    start: datetime | None
    end: datetime | None
    text: str


@dataclass(frozen=True, slots=True)
class TimeQuery:
    """What a recall query says about time.

    ``start``/``end``: the half-open window the query refers to (both ``None``
    if it names no time). ``asks_when``: the question asks for a time.
    ``anchor``/``relation``: an event the query is relative to ("the trip",
    "before"). ``matched``: the time expressions recognised, as written, with
    the preposition that governs them ("in May", "before 2022").
    ``remainder``: the query without them, for keyword and dense search.
    """

    start: datetime | None = None
    end: datetime | None = None
    asks_when: bool = False
    anchor: str | None = None
    relation: Relation | None = None
    matched: tuple[str, ...] = ()
    remainder: str = ""


class _Window(Protocol):
    @property
    def start(self) -> datetime | None: ...

    @property
    def end(self) -> datetime | None: ...


# --------------------------------------------------------------------------- calendar arithmetic

_Span = tuple[datetime, datetime]
_Open = tuple[datetime | None, datetime | None]


@dataclass(frozen=True, slots=True)
class _Ctx:
    now: datetime
    today: date
    future: bool


def _at(day: date, hours: int = 0) -> datetime:
    return datetime(day.year, day.month, day.day, tzinfo=UTC) + timedelta(hours=hours)


def _days(day: date, count: int = 1) -> _Span:
    return _at(day), _at(day + timedelta(days=count))


def _add_months(year: int, month: int, n: int) -> tuple[int, int]:
    k = year * 12 + month - 1 + n
    return k // 12, k % 12 + 1


def _month(year: int, month: int) -> _Span:
    ny, nm = _add_months(year, month, 1)
    return _at(date(year, month, 1)), _at(date(ny, nm, 1))


def _year(year: int) -> _Span:
    return _at(date(year, 1, 1)), _at(date(year + 1, 1, 1))


def _week_start(day: date) -> date:
    return day - timedelta(days=day.weekday())


def _unit(unit: str, today: date, n: int) -> _Span:
    """The calendar ``unit`` (day/week/weekend/month/year) ``n`` units from today's."""
    if unit == "day":
        return _days(today + timedelta(days=n))
    if unit == "week":
        return _days(_week_start(today) + timedelta(weeks=n), 7)
    if unit == "weekend":
        return _days(_week_start(today) + timedelta(weeks=n, days=5), 2)
    if unit == "month":
        return _month(*_add_months(today.year, today.month, n))
    return _year(today.year + n)


def _back(unit: str, today: date, n: int) -> date:
    """The day ``n`` units before ``today`` (month ends clamp: 31 March - 1 month = 28/29 Feb)."""
    if unit == "day":
        return today - timedelta(days=n)
    if unit == "week":
        return today - timedelta(weeks=n)
    y, m = _add_months(today.year, today.month, -n if unit == "month" else -12 * n)
    return date(y, m, min(today.day, calendar.monthrange(y, m)[1]))


_SEASONS = {"spring": 3, "summer": 6, "autumn": 9, "fall": 9, "winter": 12}


def _season(name: str, year: int) -> _Span:
    start = _SEASONS[name]
    ey, em = _add_months(year, start, 3)
    return _at(date(year, start, 1)), _at(date(ey, em, 1))


def _thirds(span: _Span, part: str) -> _Span:
    """The early, mid or late third of a window: by months when it is whole quarters."""
    start, end = span
    months = (end.year - start.year) * 12 + end.month - start.month
    if start.day == end.day == 1 and months >= 3 and months % 3 == 0:
        a = _at(date(*_add_months(start.year, start.month, months // 3), 1))
        b = _at(date(*_add_months(start.year, start.month, 2 * months // 3), 1))
    else:
        third = (end - start) / 3
        a, b = _at((start + third).date()), _at((start + 2 * third).date())
    return {"early": (start, a), "mid": (a, b)}.get(part, (b, end))


# --------------------------------------------------------------------------- resolvers

_Match = re.Match[str]
_Resolver = Callable[[_Match, _Ctx], "_Span | None"]

_MONTHS = {name[:3].lower(): i + 1 for i, name in enumerate(MONTH_NAMES)}
_WEEKDAYS = {name[:3].lower(): i for i, name in enumerate(WEEKDAY_NAMES)}
_NUMBERS = {
    w: i + 1
    for i, w in enumerate("one two three four five six seven eight nine ten eleven twelve".split())
}


def _norm(text: str | None) -> str:
    return " ".join((text or "").lower().split())


def _count(text: str) -> tuple[int, int] | None:
    """(fewest, most) for a spoken count: "3", "three", "a", "a couple of", "a few"."""
    t = _norm(text)
    if t.isdigit():
        return (int(t), int(t)) if int(t) > 0 else None
    if "couple" in t:
        return 2, 2
    if "few" in t:
        return 2, 4
    if t == "several":
        return 3, 6
    if t in ("a", "an"):
        return 1, 1
    n = _NUMBERS.get(t)
    return (n, n) if n else None


def _r_iso(m: _Match, ctx: _Ctx) -> _Span:
    return _days(date(int(m["y"]), int(m["m"]), int(m["d"])))


def _date_near(month: int, day: int, ctx: _Ctx) -> _Span | None:
    """The latest ``month``/``day`` on or before today (the first on or after, if future)."""
    step = 1 if ctx.future else -1
    for k in range(9):
        try:
            d = date(ctx.today.year + step * k, month, day)
        except ValueError:
            continue
        if (d >= ctx.today) if ctx.future else (d <= ctx.today):
            return _days(d)
    return None


def _r_date(m: _Match, ctx: _Ctx) -> _Span | None:
    month, day = _MONTHS[m["mon"][:3].lower()], int(m["day"])
    if m["year"]:
        return _days(date(int(m["year"]), month, day))
    return _date_near(month, day, ctx)


def _r_month_year(m: _Match, ctx: _Ctx) -> _Span:
    return _month(int(m["year"]), _MONTHS[m["mon"][:3].lower()])


def _r_month(m: _Match, ctx: _Ctx) -> _Span | None:
    rel, mon = _norm(m.groupdict().get("rel")), _MONTHS[m["mon"][:3].lower()]
    if rel == "this" and m["mon"] == "may":  # "this may help": the verb
        return None
    y, cur = ctx.today.year, ctx.today.month
    if rel == "this":
        return _month(y, mon)
    if rel in ("last", "past"):
        return _month(y if mon < cur else y - 1, mon)
    if rel == "next" or (not rel and ctx.future):
        later = mon > cur if rel else mon >= cur
        return _month(y if later else y + 1, mon)
    return _month(y if mon <= cur else y - 1, mon)


def _r_month_of(m: _Match, ctx: _Ctx) -> _Span:
    return _month(ctx.today.year + _RELS[_norm(m["rel"])], _MONTHS[m["mon"][:3].lower()])


def _r_year(m: _Match, ctx: _Ctx) -> _Span:
    return _year(int(m["year"]))


def _r_decade(m: _Match, ctx: _Ctx) -> _Span | None:
    decade = int(m["dec"]) * 10
    if m["cent"]:
        start = int(m["cent"]) * 100 + decade
    else:
        start = 2000 + decade if 2000 + decade <= ctx.today.year else 1900 + decade
    return _at(date(start, 1, 1)), _at(date(start + 10, 1, 1))


def _r_season(m: _Match, ctx: _Ctx) -> _Span | None:
    name, rel = m["season"].lower(), _norm(m.groupdict().get("rel"))
    if m.groupdict().get("year"):
        return _season(name, int(m["year"]))
    now = ctx.now
    options = [_season(name, ctx.today.year + k) for k in (-2, -1, 0, 1)]
    if rel == "this":
        inside = [o for o in options if o[0] <= now < o[1]]
        return inside[0] if inside else _season(name, ctx.today.year)
    if rel in ("last", "past"):
        return max(o for o in options if o[1] <= now)
    if rel == "next" or ctx.future:
        return min(o for o in options if (o[0] > now if rel else o[1] > now))
    return max(o for o in options if o[0] <= now)


def _r_weekday(m: _Match, ctx: _Ctx) -> _Span:
    target, rel, today = _WEEKDAYS[m["wd"][:3].lower()], _norm(m["rel"]), ctx.today
    back = (today.weekday() - target) % 7
    ahead = (target - today.weekday()) % 7
    if rel in ("last", "past"):
        return _days(today - timedelta(days=back or 7))
    if rel in ("next", "coming"):
        return _days(today + timedelta(days=ahead or 7))
    if rel == "this":
        return _days(_week_start(today) + timedelta(days=target))
    return _days(today + timedelta(days=ahead) if ctx.future else today - timedelta(days=back))


def _r_weekday_of(m: _Match, ctx: _Ctx) -> _Span:
    week = _week_start(ctx.today) + timedelta(weeks=_RELS[_norm(m["rel"])])
    return _days(week + timedelta(days=_WEEKDAYS[m["wd"][:3].lower()]))


def _r_weekend(m: _Match, ctx: _Ctx) -> _Span:
    in_weekend = ctx.today.weekday() >= 5
    return _unit("weekend", ctx.today, 0 if in_weekend or ctx.future else -1)


_PARTS = {"morning": (0, 12), "afternoon": (12, 18), "evening": (18, 24), "night": (18, 30)}
_DAY_WORDS = {"yesterday": -1, "today": 0, "this": 0, "tonight": 0, "tomorrow": 1}


def _r_words(m: _Match, ctx: _Ctx) -> _Span | None:
    w, today, now = _norm(m[0]), ctx.today, ctx.now
    if w in ("recently", "lately"):
        return _at(today - timedelta(days=30)), now
    if w == "the other day":
        return _days(today - timedelta(days=7), 7)
    if w.startswith("the day"):
        return _days(today + timedelta(days=-2 if "before" in w else 2))
    if w in ("tonight", "last night"):
        day = today - timedelta(days=1) if w == "last night" else today
        return _at(day, 18), _at(day, 30)
    words = w.split()
    day = today + timedelta(days=_DAY_WORDS[words[0]])
    if len(words) == 1:
        return _days(day)
    lo, hi = _PARTS[words[1]]
    return _at(day, lo), _at(day, hi)


_RELS = {"this": 0, "last": -1, "previous": -1, "next": 1, "coming": 1}


def _r_unit(m: _Match, ctx: _Ctx) -> _Span:
    rel, unit = _norm(m["rel"]), m["unit"].lower()
    if unit == "weekend":
        return _r_weekend(m, ctx) if "past" in rel else _unit(unit, ctx.today, _RELS[rel])
    if "past" in rel or (m["the"] and rel == "last"):
        return _at(_back(unit, ctx.today, 1)), ctx.now
    return _unit(unit, ctx.today, _RELS[rel])


def _r_before_last(m: _Match, ctx: _Ctx) -> _Span:
    return _unit(m["unit"].lower(), ctx.today, -2 if "last" in m["dir"].lower() else 2)


def _r_ago(m: _Match, ctx: _Ctx) -> _Span | None:
    n = _count(m["num"])
    if n is None:
        return None
    unit = m["unit"].lower()
    return _unit(unit, ctx.today, -n[1])[0], _unit(unit, ctx.today, -n[0])[1]


def _r_ahead(m: _Match, ctx: _Ctx) -> _Span | None:
    n = _count(m["num"])
    if n is None or not (m["pre"] or m["tail"]):
        return None
    unit = m["unit"].lower()
    return _unit(unit, ctx.today, n[0])[0], _unit(unit, ctx.today, n[1])[1]


def _r_rolling(m: _Match, ctx: _Ctx) -> _Span | None:
    n = _count(m["num"])
    return None if n is None else (_at(_back(m["unit"].lower(), ctx.today, n[1])), ctx.now)


def _r_earlier(m: _Match, ctx: _Ctx) -> _Span:
    unit = (m["unit"] or "day").lower()
    start, end = _unit(unit, ctx.today, 0)
    return (start, ctx.now) if m["dir"].lower() == "earlier" else (ctx.now, end)


# --------------------------------------------------------------------------- the grammar


@dataclass(frozen=True, slots=True)
class _Rule:
    pattern: re.Pattern[str]
    resolve: _Resolver
    weak: bool = False  # counts only in a date context (preposition, modifier, range)


def _rx(pattern: str) -> re.Pattern[str]:
    return re.compile(rf"(?<!\w)(?:{pattern})(?!\w)", re.IGNORECASE)


# "may" followed by what usually follows the verb is never the month ("2 may be").
_MAY = r"may(?!\s+(?:be|have|not|also|well|never|still|just|want|need|help|get|take)\b)"
_MON_FULL = "|".join(n.lower() for n in MONTH_NAMES if n != "May") + f"|sept|{_MAY}"
_MON = (
    rf"(?P<mon>jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|{_MAY}|june?|july?|aug(?:ust)?"
    r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?"
)
_DAY = r"(?P<day>[12]\d|3[01]|0?[1-9])(?:st|nd|rd|th)?"
_YEAR = r"(?P<year>(?:19|20)\d\d)"
_NUM = (
    r"(?P<num>\d{1,3}|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve"
    r"|an?\s+couple\s+of|couple\s+of|a\s+few|few|several|an?)"
)
_UNITS = r"(?P<unit>day|week|month|year)s?"
_SEASON = r"(?P<season>spring|summer|autumn|fall|winter)"
_WEEKDAY = rf"(?P<wd>{'|'.join(n.lower() for n in WEEKDAY_NAMES)})"
_REL = r"(?P<rel>last|this|next|past)\s+"

#: Things "the weekend" names, no time: "Kasia's doing the weekend bake".
_WEEKEND_THINGS = (
    "bakes?|baking|shifts?|rota|crowd|staff|market|jobs?|team|brunch|menu|papers?|edition"
    "|special|trip|break|getaway|warrior"
)

_RULES: tuple[_Rule, ...] = (
    _Rule(_rx(r"(?P<y>\d{4})([-/])(?P<m>\d{1,2})\2(?P<d>\d{1,2})"), _r_iso),
    _Rule(_rx(rf"(?:the\s+)?{_DAY}(?:\s+of)?\s+{_MON}(?:,?\s+{_YEAR})?"), _r_date),
    _Rule(_rx(rf"{_MON}\s+(?:the\s+)?{_DAY}(?:,?\s+{_YEAR})?"), _r_date),
    _Rule(_rx(rf"{_MON}(?:\s+of|,)?\s+{_YEAR}"), _r_month_year),
    _Rule(_rx(rf"{_REL}(?P<mon>{_MON_FULL})"), _r_month),
    _Rule(_rx(rf"(?P<mon>{_MON_FULL})\s+(?:of\s+)?(?P<rel>last|this|next)\s+year"), _r_month_of),
    _Rule(_rx(rf"(?P<mon>{_MON_FULL})(?!'s)"), _r_month, weak=True),
    _Rule(_rx(rf"(?:the\s+)?year\s+{_YEAR}"), _r_year),
    _Rule(_rx(rf"{_YEAR}(?!%)"), _r_year, weak=True),
    _Rule(_rx(r"the\s+(?:(?P<cent>19|20)|')?(?P<dec>\d)0'?s"), _r_decade),
    _Rule(_rx(rf"{_REL}{_SEASON}"), _r_season),
    _Rule(_rx(rf"(?:the\s+)?{_SEASON}(?:\s+of|,)?\s+{_YEAR}"), _r_season),
    _Rule(_rx(rf"(?:the\s+)?{_SEASON}"), _r_season, weak=True),
    _Rule(_rx(rf"(?:(?P<rel>last|this|next|past|coming)\s+)?{_WEEKDAY}"), _r_weekday),
    _Rule(_rx(rf"the\s+weekend(?!\s+(?:{_WEEKEND_THINGS})\b)"), _r_weekend),
    _Rule(_rx(rf"{_WEEKDAY}\s+(?:of\s+)?(?P<rel>last|this|next)\s+week"), _r_weekday_of),
    _Rule(
        _rx(
            r"(?:yesterday|today|tomorrow|this)\s+(?:morning|afternoon|evening)"
            r"|(?:yesterday|tomorrow)\s+night|the\s+day\s+(?:before\s+yesterday|after\s+tomorrow)"
            r"|today|tonight|yesterday|tomorrow|recently|lately|last\s+night|the\s+other\s+day"
        ),
        _r_words,
    ),
    _Rule(
        _rx(
            r"(?P<the>the\s+)?(?P<rel>this\s+past|this|last|next|previous|past|coming)\s+"
            r"(?P<unit>week|month|year|weekend)"
        ),
        _r_unit,
    ),
    _Rule(
        _rx(r"the\s+(?P<unit>day|week|month|year|weekend)\s+(?P<dir>before\s+last|after\s+next)"),
        _r_before_last,
    ),
    _Rule(_rx(rf"{_NUM}\s+(?P<unit>day|week|weekend|month|year)s?\s+ago"), _r_ago),
    _Rule(_rx(rf"(?P<pre>in\s+)?{_NUM}\s+{_UNITS}(?P<tail>\s+from\s+now|\s+later)?"), _r_ahead),
    _Rule(_rx(rf"(?:the\s+)?(?:last|past|previous)\s+{_NUM}\s+{_UNITS}"), _r_rolling),
    _Rule(_rx(r"(?P<dir>earlier|later)\s+(?:this\s+(?P<unit>week|month|year)|today)"), _r_earlier),
)

#: Verbs of a timetable, whose present simple speaks of what is to come: "I start
#: at ABB in June", "The course begins in September" (:data:`_FUTURE`).
_TIMETABLE = r"start|begin|end|leave|move|finish|graduate|retire|expire|open|close"
#: Events one has on a day ahead (:data:`_FUTURE`).
_SCHEDULED = (
    r"(?:meeting|appointment|interview|exam|flight|deadline|presentation|surgery|operation"
    r"|check-?up)s?"
)
_FUTURE = re.compile(
    r"\b(?:will|won't|shall|going\s+to|gonna|plan(?:s|ned|ning)?\s+to|upcoming)\b|\w'll\b"
    # an arrangement in the present progressive: "I'm flying to Rome on Friday",
    # "My sister is getting married in June", "I'm training for a marathon in October"
    r"|\b(?:am|is|are|'m|'s|'re)\s+(?:\w+ly\s+)?(?:flying|leaving|moving|relocating|starting"
    r"|visiting|travell?ing|hosting|attending|heading|returning|getting\s+married"
    r"|training\s+for|preparing\s+for|celebrating)\b"
    # a scheduled event one has, in the present: "I have a meeting with Anna on
    # Friday", "We've got a dentist appointment on Monday", "My flight is on Monday"
    r"|\b(?:have|has|'ve\s+got)\s+(?:a|an|my|our|the|this|that)\s+(?:[\w-]+\s+){0,2}?"
    rf"{_SCHEDULED}\b|\b{_SCHEDULED}\s+(?:is|'s|are)\b"
    # a timetable in the present simple, said, not asked: "I start at ABB in June",
    # "Our lease ends in April", "My first day at ABB is in June" ("Did I start at
    # ABB in June?" and "I started in June" look back)
    rf"|(?<!\bdid\s)(?<!\bdo\s)\b(?:i|we|they)\s+(?:{_TIMETABLE})\b(?![^?]*\?)"
    rf"|\b(?:{_TIMETABLE})s\b(?![^?]*\?)|\bfirst\s+day\b[^.?!]*\bis\b(?![^?]*\?)",
    re.IGNORECASE,
)
_PART_BEFORE = re.compile(
    r"(?:\b(?P<p>early|mid|late)\s*-?\s*|\b(?:the\s+)?(?P<q>beginning|start|middle|end)\s+of\s+)$",
    re.IGNORECASE,
)
_PAIR_BEFORE = re.compile(r"\b(?:between|from)\s+$", re.IGNORECASE)
_BOUND_BEFORE = re.compile(
    r"\b(?P<w>before|after|since|until|till|through|from|prior\s+to|up\s+to)\s+$", re.IGNORECASE
)
_PLAIN_BEFORE = re.compile(
    r"\b(?:in|on|at|during|over|around|throughout|within|for)\s+$", re.IGNORECASE
)
_CONTEXT_BEFORE = re.compile(
    r"\b(?:in|on|during|around|throughout|since|until|till|before|after|from|between|through"
    r"|early|late|mid|(?:beginning|start|middle|end)\s+of)\s*-?\s*$",
    re.IGNORECASE,
)
_CONNECTOR = re.compile(r"\s*(?:and|or|to|until|till|through|-|–)\s*", re.IGNORECASE)
_VERB_LIKE = frozenset({"may", "march", "fall", "spring"})
_QUARTER = {"early": "early", "beginning": "early", "start": "early", "mid": "mid"}
_QUARTER |= {"middle": "mid", "late": "late", "end": "late"}


def _near(pos: int) -> int:
    """Where to start looking for the words governing an expression at ``pos``."""
    return max(0, pos - 30)


@dataclass(frozen=True, slots=True)
class _Hit:
    pos: int
    stop: int
    start: datetime | None
    end: datetime | None
    weak: bool = False


def _candidates(text: str, ctx: _Ctx) -> list[_Hit]:
    found: list[_Hit] = []
    for rule in _RULES:
        for m in rule.pattern.finditer(text):
            try:
                span = rule.resolve(m, ctx)
            except (ValueError, OverflowError):  # "30 February", year 0
                span = None
            if span is not None and span[0] < span[1]:
                weak = rule.weak and not _CONTEXT_BEFORE.search(text, _near(m.start()), m.start())
                found.append(_Hit(m.start(), m.end(), span[0], span[1], weak))
    return found


def _scan(text: str, ctx: _Ctx) -> list[_Hit]:
    """Recognised expressions, longest first among overlaps, in text order.

    A weak hit (bare month/year/season without a date context) survives only
    as the second end of a range right after a hit: "from March to May".
    """
    chosen: list[_Hit] = []
    for hit in sorted(_candidates(text, ctx), key=lambda h: (h.pos - h.stop, h.weak, h.pos)):
        if all(hit.stop <= c.pos or hit.pos >= c.stop for c in chosen):
            chosen.append(hit)
    kept: list[_Hit] = []
    for hit in sorted(chosen, key=lambda h: h.pos):
        if not hit.weak or (kept and _continues(text, kept[-1], hit)):
            kept.append(hit)
    return kept


def _continues(text: str, last: _Hit, hit: _Hit) -> bool:
    """Whether a weak ``hit`` is the other end of a range or list begun by ``last``.

    "March to May", "between May and June", "in May or June"; but a lowercase
    verb-like word after "and"/"or" stays a word: "in 2019 and may go".
    """
    joint = _CONNECTOR.fullmatch(text, last.stop, hit.pos)
    if joint is None:
        return False
    if _norm(joint[0]) not in ("and", "or"):
        return True
    if _norm(joint[0]) == "and" and _PAIR_BEFORE.search(text, _near(last.pos), last.pos):
        return True
    return text[hit.pos : hit.stop] not in _VERB_LIKE


def _narrow(text: str, hit: _Hit) -> _Hit:
    """Apply "early/mid/late" or "the beginning/middle/end of" to a window over a week."""
    m = _PART_BEFORE.search(text, _near(hit.pos), hit.pos)
    if m is None or hit.start is None or hit.end is None:
        return hit
    if hit.end - hit.start <= timedelta(days=7):
        return hit
    start, end = _thirds((hit.start, hit.end), _QUARTER[(m["p"] or m["q"]).lower()])
    return _Hit(m.start(), hit.stop, start, end)


def _bound(word: str, hit: _Hit) -> _Open:
    w = _norm(word)
    if w in ("before", "prior to"):
        return None, hit.start
    if w == "after":
        return hit.end, None
    if w in ("since", "from"):
        return hit.start, None
    return None, hit.end


def _compose(text: str, hits: Sequence[_Hit]) -> list[_Hit]:
    """Join ranges ("between X and Y") and apply prepositions ("before X", "in X")."""
    hits = [_narrow(text, h) for h in hits]
    out: list[_Hit] = []
    i = 0
    while i < len(hits):
        hit = hits[i]
        floor = max(out[-1].stop if out else 0, _near(hit.pos))
        pair = _PAIR_BEFORE.search(text, floor, hit.pos)
        if pair and i + 1 < len(hits) and _CONNECTOR.fullmatch(text, hit.stop, hits[i + 1].pos):
            other = hits[i + 1]
            starts = [s for s in (hit.start, other.start) if s is not None]
            ends = [e for e in (hit.end, other.end) if e is not None]
            start, end = min(starts, default=None), max(ends, default=None)
            out.append(_Hit(pair.start(), other.stop, start, end))
            i += 2
            continue
        bound = _BOUND_BEFORE.search(text, floor, hit.pos)
        if bound:
            out.append(_Hit(bound.start(), hit.stop, *_bound(bound["w"], hit)))
        elif plain := _PLAIN_BEFORE.search(text, floor, hit.pos):
            out.append(_Hit(plain.start(), hit.stop, hit.start, hit.end))
        elif out and _CONNECTOR.fullmatch(text, out[-1].stop, hit.pos):  # "May or June"
            gap = text[out[-1].stop : hit.pos]
            out.append(_Hit(hit.pos - len(gap.lstrip()), hit.stop, hit.start, hit.end))
        else:
            out.append(hit)
        i += 1
    return out


#: A word every rule of :data:`_RULES` needs at the start of one of its words (a
#: digit, a month or weekday, a season, a unit or a day word): a text without one
#: names no time, and most texts have none (72% of LoCoMo's turns and the currency
#: dataset's sentences), so they skip the rules (about 0.1 ms a text).
_MAY_NAME_TIME = re.compile(
    r"\b(?:\d|jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec|mon|tue|wed|thu|fri|sat|sun"
    r"|spring|summer|autumn|fall|winter|day|week|month|year|today|tonight|tomorrow"
    r"|yesterday|recently|lately|night|morning|afternoon|evening|earlier|later)",
    re.IGNORECASE,
)


def _expressions(text: str, at: datetime) -> list[_Hit]:
    """The time expressions of ``text`` resolved against ``at`` (:func:`_grammar`),
    once :data:`_MAY_NAME_TIME` says there may be one."""
    return _grammar(text, at) if _MAY_NAME_TIME.search(text) else []


def _grammar(text: str, at: datetime) -> list[_Hit]:
    now = as_utc(at)
    ctx = _Ctx(now=now, today=now.date(), future=bool(_FUTURE.search(text)))
    return _compose(text, _scan(text, ctx))


# --------------------------------------------------------------------------- queries

_ASKS_WHEN = re.compile(
    r"\bwhen(?:'s|\s+(?:did|do|does|was|were|is|are|will|would|had|has|have|could|can|should)\b)"
    r"|\b(?:what|which)\s+(?:date|year|month|day|time|week|season|decade)\b"
    r"|\bhow\s+long\s+(?:ago|has|have|had)\b|\bsince\s+when\b|\bhow\s+recently\b",
    re.IGNORECASE,
)
_ANCHOR = re.compile(
    r"\b(?P<rel>before|after|since|until|till|during|following|prior\s+to)\s+"
    r"(?=(?P<rest>[^?.!,;:]+))",
    re.IGNORECASE,
)
_ANCHOR_RELATION: dict[str, Relation] = {"before": "before", "until": "before", "till": "before"}
_ANCHOR_RELATION |= {"prior to": "before", "during": "during"}
_DETERMINERS = frozenset("the a an my his her their our your its this that these those".split())
_ANCHOR_STOP = frozenset(
    """and but or so because when while where which who whom whose that did do does was were is
    are am has have had will would could should can may might must i you he she they we it then
    than if""".split()
)


def _anchor_words(rest: str) -> list[str]:
    words = rest.split()
    first = words[0] if words else ""
    low = first.lower()
    if low in _DETERMINERS:
        ok = len(words) > 1 and words[1].lower() not in _ANCHOR_STOP
    else:
        ok = (
            low.endswith("'s")
            or (low.endswith("ing") and len(low) > 4)
            or (first[:1].isupper() and first != "I" and low not in _ANCHOR_STOP)
        )
    if not ok:
        return []
    taken = [first]
    for word in words[1:6]:
        if word.lower() in _ANCHOR_STOP:
            break
        taken.append(word)
    if _names_the_present(rest):
        return []  # "before the current one", "before the one I go to now": no event
    return taken


def _names_the_present(rest: str) -> bool:
    """Whether the anchor's clause (``rest`` up to a comma or the end of the
    sentence) says the value it names is the one held now, as a question about now
    says it (:func:`.slots.says_now`: "the one I go to now", "the gym I use these
    days"), or "the current one", "the present one": "What car did I have before
    the current one?" asks for the one before it."""
    clause = re.split(r"[,;.?!]", rest, maxsplit=1)[0]
    return says_now(clause) or not _PRESENT_VALUE.isdisjoint(clause.lower().split())


#: Words that make an anchor the value held now beside :func:`.slots.says_now`'s.
_PRESENT_VALUE = frozenset("current present".split())


def _anchor(query: str, spans: Sequence[_Hit]) -> tuple[str, Relation] | None:
    """The first event-relative phrase not already read as a date (dates end the phrase)."""
    for hit in spans:  # same length, so positions still match
        query = f"{query[: hit.pos]}{';' * (hit.stop - hit.pos)}{query[hit.stop :]}"
    for m in _ANCHOR.finditer(query):
        words = _anchor_words(m["rest"])
        if words:
            return " ".join(words), _ANCHOR_RELATION.get(_norm(m["rel"]), "after")
    return None


_EXPLICIT_YEAR = re.compile(r"(?<!\d)(?:1[6-9]|2\d)\d\d(?!\d)")


def _window(spans: Sequence[_Hit], text: str) -> _Open:
    """Intersection of the windows if not empty; otherwise, if some expressions
    name their year ("recently, in May 2022"), the window of those alone;
    otherwise the span covering them all."""
    if not spans:
        return None, None
    starts = [h.start for h in spans]
    ends = [h.end for h in spans]
    lo = max((s for s in starts if s is not None), default=None)
    hi = min((e for e in ends if e is not None), default=None)
    if lo is None or hi is None or lo < hi:
        return lo, hi
    explicit = [h for h in spans if _EXPLICIT_YEAR.search(text, h.pos, h.stop)]
    if explicit and len(explicit) < len(spans):
        return _window(explicit, text)
    lo = None if None in starts else min(s for s in starts if s is not None)
    hi = None if None in ends else max(e for e in ends if e is not None)
    return lo, hi


def _remove(text: str, spans: Sequence[_Hit]) -> str:
    for hit in sorted(spans, key=lambda h: h.pos, reverse=True):
        text = f"{text[: hit.pos]} {text[hit.stop :]}"
    text = " ".join(text.split())
    text = re.sub(r"\s+([?.!,;:])", r"\1", text)
    text = re.sub(r"([,;:])(?=[?.!,;:]|$)", "", text)
    return text.strip(" ,;:")


def parse_time_query(query: str, now: datetime) -> TimeQuery:
    """Read the time a recall query refers to, relative to ``now``.

    Returns the window (``start``/``end``, both ``None`` if the query names no
    time), whether the question asks for a time, an event anchor ("after her
    wedding" -> ``"her wedding"``, ``"after"``), the expressions recognised and
    the query without them. See the module docstring for the conventions.
    """
    spans = _expressions(query, now)
    start, end = _window(spans, query)
    anchor = _anchor(query, spans)
    return TimeQuery(
        start=start,
        end=end,
        asks_when=bool(_ASKS_WHEN.search(query)),
        anchor=anchor[0] if anchor else None,
        relation=anchor[1] if anchor else None,
        matched=tuple(query[h.pos : h.stop] for h in spans),
        remainder=_remove(query, spans),
    )


def content_times(text: str, said_at: datetime) -> list[TimeSpan]:
    """The windows a memory's ``text`` refers to, resolved against ``said_at``, in text order.

    "I went to the support group yesterday" said on 8 May 2023 gives
    ``[TimeSpan(7 May 2023, 8 May 2023, "yesterday")]``. The same grammar as
    :func:`parse_time_query`; each expression (a range counts as one) is one span.
    """
    return list(_content_times(text, said_at))


#: Memories whose time expressions are kept once read (a text and the moment it
#: was said; about 300 bytes each): a question asking "when" reads the text of its
#: best 30 candidates, about 0.1 ms each with every rule's pattern, and the same
#: memories come up again and again.
CONTENT_TIMES_CACHE = 16_384


@functools.lru_cache(maxsize=CONTENT_TIMES_CACHE)
def _content_times(text: str, said_at: datetime) -> tuple[TimeSpan, ...]:
    return tuple(
        TimeSpan(h.start, h.end, text[h.pos : h.stop]) for h in _expressions(text, said_at)
    )


def overlaps(window: _Window, at: datetime) -> bool:
    """Whether the instant ``at`` falls inside ``window`` ([start, end)).

    ``window`` is a :class:`TimeSpan` or :class:`TimeQuery`; an open side
    (``None``) is unbounded, so a window with neither side set contains every instant.
    """
    at = as_utc(at)
    return (window.start is None or window.start <= at) and (window.end is None or at < window.end)


def format_when(dt: datetime) -> str:
    """A short human date: "8 May 2023", with "14:05 UTC" appended when not midnight."""
    dt = as_utc(dt)
    day = f"{dt.day} {MONTH_NAMES[dt.month - 1]} {dt.year}"
    return day if (dt.hour, dt.minute) == (0, 0) else f"{day}, {dt:%H:%M} UTC"
