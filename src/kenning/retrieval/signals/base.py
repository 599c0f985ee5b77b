"""What a recall signal is, and what it may read about one recall.

A :class:`Signal` adds to candidates' scores in one :data:`Stage`:

* ``graph``, ``context`` and ``time`` add relevance on the fused scale, before
  it is normalised (in that order: graph support first, then the
  conversation context, then the time match);
* ``boost`` adds to the final priority score, after normalisation.

Within a stage every signal sees the same scores (the stage's input) and
their contributions are summed in list order, then added once; so a signal
never sees a neighbour of its own stage, and the list order inside a stage
changes no score. A signal's contribution to a hit is its entry in the
hit's ``explain`` (``ScoreBreakdown.signals[name]``, 0.0 when it adds
nothing); the stage sums are the breakdown's ``graph``, ``context`` and
``time`` fields.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Literal, Protocol, runtime_checkable

from ...config import Settings
from ...models import MemoryRecord, Principal
from ..time_aware import Window

if TYPE_CHECKING:
    import numpy as np

    from ...access import ScopeFilter
    from ...stores import Store
    from ..graph_rerank import GraphOutcome

__all__ = [
    "Stage",
    "STAGES",
    "RELEVANCE_STAGES",
    "Signal",
    "RecallContext",
    "add_scores",
]

Stage = Literal["graph", "context", "time", "boost"]
#: The stages in the order they run.
STAGES: tuple[Stage, ...] = ("graph", "context", "time", "boost")
#: The stages that add fused relevance (before normalisation).
RELEVANCE_STAGES: tuple[Stage, ...] = ("graph", "context", "time")


@runtime_checkable
class Signal(Protocol):
    """One recall signal: named, in one stage, reading named settings.

    ``name`` is its registered name and its key in ``explain``; ``reads``
    lists the settings it reads (dotted: ``"retrieval.author.boost"``).
    """

    name: str
    stage: Stage
    reads: tuple[str, ...]

    def contribute(self, ctx: RecallContext, scores: Mapping[str, float]) -> Mapping[str, float]:
        """What this signal adds, per candidate id (absent: nothing).

        ``scores`` is the stage's input: fused relevance plus the earlier
        stages (``boost`` stage: the normalised relevance). Candidates are
        the keys of ``scores``; their records are in ``ctx.records``.
        """
        ...


@dataclass(slots=True)
class RecallContext:
    """What signals may read about one recall (and what they leave for later).

    ``store``, ``view`` and ``qvec`` are None outside the read pipeline (the
    empty-query ranking of the memory hint): signals needing I/O add nothing
    then. ``graph`` is the graph signal's outcome (expansions and paths, used
    after ranking); ``contributions`` holds every signal's output by name.
    """

    query: str
    principal: Principal
    settings: Settings
    now: datetime
    records: dict[str, MemoryRecord]
    signals: Sequence[Signal] = ()
    window: Window | None = None
    asks_when: bool = False
    dense: Mapping[str, float] = field(default_factory=dict)
    keyword: Mapping[str, float] = field(default_factory=dict)
    fused: Mapping[str, float] = field(default_factory=dict)
    store: Store | None = None
    view: ScopeFilter | None = None
    qvec: np.ndarray | None = None
    graph: GraphOutcome | None = None
    contributions: dict[str, Mapping[str, float]] = field(default_factory=dict)
    stage_totals: dict[str, dict[str, float]] = field(default_factory=dict)
    #: Candidates the currency step found to be about someone other than the
    #: person the query asks about (the calibrated score reads it).
    elsewhere: set[str] = field(default_factory=set)
    #: The request filters more than statuses (tags, type, times, ...): a memory
    #: fetched from outside the candidates may not pass those filters.
    filtered: bool = False
    #: Superseded memories are candidates (a question about before or about a
    #: time): their confidence counts as it was before the contradiction cut it
    #: (they were replaced, not found less reliable).
    history: bool = False
    #: Superseded memories are candidates only so that each hands its place to the
    #: memory that replaced it (a question about now, :mod:`..successors`).
    successors: bool = False
    #: For a question about now: each memory that replaced a superseded candidate,
    #: with that candidate's id (the currency step; the calibrated score reads
    #: the better of the two's inputs: the newer value answers what the older did).
    replaced: dict[str, str] = field(default_factory=dict)
    #: The learned relevance's raw score of each candidate, when it ran
    #: (:mod:`..order`; ``explain`` shows it).
    learned: dict[str, float] = field(default_factory=dict)

    def run_stage(self, stage: Stage, scores: Mapping[str, float]) -> dict[str, float]:
        """Run the stage's signals on ``scores``; their summed contribution per id."""
        total: dict[str, float] = {}
        for signal in self.signals:
            if signal.stage == stage:
                out = signal.contribute(self, scores)
                self.contributions[signal.name] = out
                total = add_scores(total, out)
        self.stage_totals[stage] = total
        return total


def add_scores(base: Mapping[str, float], extra: Mapping[str, float]) -> dict[str, float]:
    """``base`` plus ``extra`` per key (keys of both; ``base``'s order first)."""
    out = dict(base)
    for k, v in extra.items():
        out[k] = out.get(k, 0.0) + v
    return out
