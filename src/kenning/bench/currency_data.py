"""The currency benchmark's dataset: facts that change, among chatter and look-alikes.

A deterministic generator (:func:`generate`, seeded) of users who tell an
agent facts about themselves over two to three years. The phrasings are
hand-written (:mod:`.currency_phrases`): per attribute kind a pool of values
and four or more phrasings each for the first statement, an update, a
question about now and a question about before.

Attribute kinds (12) and the split, by kind:

* dev (tune on these only): ``home``, ``pet``, ``car``, ``diet``, ``phone``,
  ``gym``, ``bank``;
* held-out (report only): ``employer``, ``partner``, ``school``, ``hobby``,
  ``doctor``;
* tune (tuned on, as dev): ``instrument``, ``manager``, ``team``, ``coffee``,
  ``carrier`` — its own dataset (:data:`~.currency_tune.TUNE_KINDS`, with the
  dev kinds as the other attributes users state): values in lower case,
  values that are people, changes told as something done;
* probe (a check, never tuned on): ``laptop``, ``language``, ``streaming``,
  ``commute``, ``club`` — its own dataset (:data:`~.currency_phrases.PROBE_KINDS`,
  with the dev kinds as the other attributes users state), for seeing whether
  a change made on the dev and tune kinds carries to kinds it has not seen.

Each user (60 by default, ``u00`` … ``u59``, one principal and one ``user``
scope each, all in organization ``currency``):

* states 8 of the 12 kinds (the other 4 are never stated: the abstention
  benchmark asks about them); first statements are dated in 2022;
* changes each stated kind with probability 0.7 — except every fifth user
  (``u00``, ``u05``, …), whose facts never change — with an update dated
  between February 2023 and October 2024 (always after the first statement,
  so a question about ``{year}`` of the first statement names the previous
  value);
* has, per stated kind with probability 0.5 and for one unstated kind, a
  look-alike fact about another person ("My sister lives in Rome"), with a
  value the user never held;
* says 8 lines of chatter.

Everything is said in sessions (four in 2022, six from 2023 to 2024, dates per
user); each message has its own time inside its session. "Now" is
:data:`NOW`. Questions: one about now per stated kind, one about before per
changed kind; for abstention, one per unstated kind, one about a relative
nobody described (``other``), and one about nothing any user states.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Final, Literal

from .currency_phrases import (
    CHATTER,
    KINDS,
    LOOKALIKE_RELATIONS,
    NAMES,
    OTHER_RELATIONS,
    PROBE_KINDS,
    UNKNOWN,
)
from .currency_tune import TUNE_KINDS

__all__ = [
    "DEV_KINDS",
    "HOLDOUT_KINDS",
    "NOW",
    "PROBE",
    "TUNE",
    "Dataset",
    "Question",
    "Statement",
    "User",
    "generate",
    "kinds_of",
    "select",
]

DEV_KINDS: Final[tuple[str, ...]] = ("home", "pet", "car", "diet", "phone", "gym", "bank")
HOLDOUT_KINDS: Final[tuple[str, ...]] = ("employer", "partner", "school", "hobby", "doctor")
PROBE: Final[tuple[str, ...]] = tuple(PROBE_KINDS)
#: The probe dataset's table: the probe kinds and, as the other attributes its
#: users state, the dev kinds.
_PROBE_TABLE: Final = {**{k: KINDS[k] for k in DEV_KINDS}, **PROBE_KINDS}
TUNE: Final[tuple[str, ...]] = tuple(TUNE_KINDS)
#: The tune dataset's table: the tune kinds beside the dev kinds.
_TUNE_TABLE: Final = {**{k: KINDS[k] for k in DEV_KINDS}, **TUNE_KINDS}
#: Which table each dataset draws from.
Table = Literal["main", "probe", "tune"]
#: The time the questions are asked.
NOW: Final[datetime] = datetime(2024, 12, 1, 12, 0, tzinfo=UTC)

StatementRole = Literal["first", "update", "lookalike", "chatter"]
QuestionRole = Literal["now", "before", "unstated", "other", "unknown"]

_Table = Mapping[str, Mapping[str, tuple[str, ...]]]
#: Each dataset's table of kinds.
_TABLES: Final[Mapping[Table, _Table]] = {
    "main": KINDS,
    "probe": _PROBE_TABLE,
    "tune": _TUNE_TABLE,
}
_STATED = 8
_CHANGE_P = 0.7
_LOOKALIKE_P = 0.5
_CHATTER = 8
_EARLY = (datetime(2022, 1, 10, tzinfo=UTC), datetime(2022, 11, 30, tzinfo=UTC))
_LATE = (datetime(2023, 2, 1, tzinfo=UTC), datetime(2024, 10, 31, tzinfo=UTC))


@dataclass(frozen=True, slots=True)
class Statement:
    """One thing a user said: an id, its kind (None for chatter) and its time."""

    sid: str
    user: str
    kind: str | None
    role: StatementRole
    text: str
    value: str | None
    at: datetime
    session: int


@dataclass(frozen=True, slots=True)
class Question:
    """A question a user asks, with the statements that answer it.

    ``current``: the statement holding the value true now (now-questions);
    ``stale``: statements of older values of the same attribute;
    ``previous``: the statement of the value before the current one
    (before-questions); ``lookalike``: the user's statements about another
    person's same attribute. Unanswerable questions (``unstated``, ``other``,
    ``unknown``) have none of the first three.
    """

    qid: str
    user: str
    kind: str | None
    role: QuestionRole
    text: str
    current: str | None = None
    stale: tuple[str, ...] = ()
    previous: str | None = None
    lookalike: tuple[str, ...] = ()

    @property
    def answerable(self) -> bool:
        """True if something the user said answers the question."""
        return self.role in ("now", "before")


@dataclass(frozen=True, slots=True)
class User:
    """One user: what they said (in time order) and what they ask."""

    uid: str
    name: str
    stable: bool
    statements: tuple[Statement, ...]
    questions: tuple[Question, ...]

    def sessions(self) -> list[list[Statement]]:
        """The statements grouped by session, in time order."""
        out: dict[int, list[Statement]] = {}
        for s in self.statements:
            out.setdefault(s.session, []).append(s)
        return [out[k] for k in sorted(out)]


@dataclass(frozen=True, slots=True)
class Dataset:
    """The users, the split and the time of the questions."""

    seed: int
    users: tuple[User, ...]
    dev_kinds: tuple[str, ...] = DEV_KINDS
    holdout_kinds: tuple[str, ...] = HOLDOUT_KINDS
    now: datetime = NOW

    def counts(self) -> dict[str, int]:
        """Users, statements and questions by role (for the JSON report)."""
        out: dict[str, int] = {"users": len(self.users)}
        out["stable_users"] = sum(u.stable for u in self.users)
        for u in self.users:
            for s in u.statements:
                out[f"statements_{s.role}"] = out.get(f"statements_{s.role}", 0) + 1
            for q in u.questions:
                out[f"questions_{q.role}"] = out.get(f"questions_{q.role}", 0) + 1
        out["sessions"] = sum(len(u.sessions()) for u in self.users)
        return out


def kinds_of(split: Literal["dev", "holdout", "tune", "probe", "all"]) -> tuple[str, ...]:
    """The attribute kinds of a split ("all": dev and held-out)."""
    if split == "dev":
        return DEV_KINDS
    if split == "holdout":
        return HOLDOUT_KINDS
    if split == "tune":
        return TUNE
    if split == "probe":
        return PROBE
    return DEV_KINDS + HOLDOUT_KINDS


def table_of(split: str) -> Table:
    """The dataset a split's questions are asked of: its own for ``tune`` and
    ``probe``, the main one for the others."""
    if split == "tune":
        return "tune"
    return "probe" if split == "probe" else "main"


def _day(rng: random.Random, span: tuple[datetime, datetime]) -> datetime:
    days = (span[1] - span[0]).days
    return span[0] + timedelta(days=rng.randint(0, days), hours=rng.randint(8, 20))


def _sessions(rng: random.Random) -> tuple[list[datetime], list[datetime]]:
    """Four session dates in 2022 and six from 2023 to 2024, each sorted."""
    early = sorted(_day(rng, _EARLY) for _ in range(4))
    late = sorted(_day(rng, _LATE) for _ in range(6))
    return early, late


class _Builder:
    """Collects one user's statements and questions."""

    def __init__(self, uid: str, rng: random.Random, table: _Table) -> None:
        self.uid = uid
        self.rng = rng
        self.table = table
        self.early, self.late = _sessions(rng)
        self.said: list[tuple[int, Statement]] = []
        self.asked: list[Question] = []
        self._slots: dict[int, int] = {}

    def say(
        self, kind: str | None, role: StatementRole, text: str, value: str | None, session: int
    ) -> Statement:
        """Add a statement in ``session`` (0-3 early, 4-9 late), a few minutes after the last."""
        when = (self.early + self.late)[session]
        slot = self._slots[session] = self._slots.get(session, -1) + 1
        at = when + timedelta(minutes=2 * slot)
        n = len(self.said)
        sid = f"{self.uid}/{kind or 'chatter'}/{role}/{n}"
        st = Statement(sid, self.uid, kind, role, text, value, at, session)
        self.said.append((n, st))
        return st

    def ask(
        self,
        kind: str | None,
        role: QuestionRole,
        text: str,
        *,
        current: str | None = None,
        stale: tuple[str, ...] = (),
        previous: str | None = None,
        lookalike: tuple[str, ...] = (),
    ) -> None:
        """Add a question and the statements that answer it."""
        qid = f"{self.uid}/q{len(self.asked)}"
        q = Question(qid, self.uid, kind, role, text, current, stale, previous, lookalike)
        self.asked.append(q)

    def statements(self) -> tuple[Statement, ...]:
        """Statements in time order."""
        return tuple(s for _, s in sorted(self.said, key=lambda p: (p[1].at, p[0])))


def _stated_kind(b: _Builder, kind: str, changes: bool) -> None:
    """First statement, maybe an update, look-alike maybe, and the questions about it."""
    rng, table = b.rng, b.table[kind]
    v0, v1, other = rng.sample(table["values"], 3)
    first = b.say(kind, "first", rng.choice(table["first"]).format(v=v0), v0, rng.randint(0, 3))
    looks: list[str] = []
    if rng.random() < _LOOKALIKE_P:
        looks.append(_lookalike(b, kind, other).sid)
    if not changes:
        b.ask(kind, "now", rng.choice(table["now"]), current=first.sid, lookalike=tuple(looks))
        return
    text = rng.choice(table["update"]).format(old=v0, new=v1)
    update = b.say(kind, "update", text, v1, rng.randint(4, 9))
    b.ask(
        kind,
        "now",
        rng.choice(table["now"]),
        current=update.sid,
        stale=(first.sid,),
        lookalike=tuple(looks),
    )
    before = rng.choice(table["before"]).format(year=first.at.year)
    b.ask(kind, "before", before, previous=first.sid, stale=(first.sid,), current=update.sid)


def _lookalike(b: _Builder, kind: str, value: str) -> Statement:
    """Another person's same attribute, said at any time."""
    rel = b.rng.choice(LOOKALIKE_RELATIONS)
    text = b.rng.choice(b.table[kind]["lookalike"]).format(rel=rel, v=value)
    text = text[0].upper() + text[1:]
    return b.say(kind, "lookalike", text, value, b.rng.randint(0, 9))


def _user(index: int, seed: int, table: _Table) -> User:
    """One user of the dataset (its own random stream: users are independent)."""
    uid = f"u{index:02d}"
    rng = random.Random(f"{seed}/{uid}")
    b = _Builder(uid, rng, table)
    stable = index % 5 == 0
    kinds = sorted(table)
    stated = set(rng.sample(kinds, _STATED))
    for kind in kinds:
        if kind in stated:
            _stated_kind(b, kind, changes=not stable and rng.random() < _CHANGE_P)
    unstated = [k for k in kinds if k not in stated]
    decoy = rng.choice(unstated)
    look = _lookalike(b, decoy, rng.choice(table[decoy]["values"]))
    for kind in unstated:
        decoys = (look.sid,) if kind == decoy else ()
        b.ask(kind, "unstated", rng.choice(table[kind]["now"]), lookalike=decoys)
    kind = rng.choice(kinds)
    rel = rng.choice(OTHER_RELATIONS)
    b.ask(kind, "other", rng.choice(table[kind]["other"]).format(rel=rel))
    b.ask(None, "unknown", rng.choice(UNKNOWN))
    for line in rng.sample(CHATTER, _CHATTER):
        b.say(None, "chatter", line, None, rng.randint(0, 9))
    return User(uid, NAMES[index % len(NAMES)], stable, b.statements(), tuple(b.asked))


def generate(n_users: int = 60, seed: int = 19, *, table: Table = "main") -> Dataset:
    """The dataset: ``n_users`` users (deterministic for a seed). ``table``:
    ``"main"`` (dev and held-out kinds), ``"probe"`` or ``"tune"`` (those kinds
    beside the dev kinds, no held-out kind)."""
    if n_users < 1:
        raise ValueError("n_users must be at least 1")
    kinds = _TABLES[table]
    return Dataset(seed=seed, users=tuple(_user(i, seed, kinds) for i in range(n_users)))


def select(users: Sequence[User], kinds: Sequence[str]) -> list[Question]:
    """The users' answerable questions about ``kinds``."""
    wanted = set(kinds)
    return [q for u in users for q in u.questions if q.answerable and q.kind in wanted]
