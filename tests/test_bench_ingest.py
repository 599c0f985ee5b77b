"""The LoCoMo-through-ingest benchmark's two ways of counting: the first k distinct
turns of the best hits, and the turns of the first k hits (bench/ingest.py)."""

from __future__ import annotations

from kenning.bench.ingest import _turns, _within_k_hits
from kenning.bench.locomo_data import Question


def test_each_turn_counts_once_in_hit_order() -> None:
    # a fact standing for D1 and D3, then the turn D1 again, then D2
    assert _turns([["D1", "D3"], ["D1"], ["D2"], []]) == ["D1", "D3", "D2"]


def test_within_k_hits_counts_only_what_k_hits_hold() -> None:
    q = Question("Where?", "Rome", 1, ("D2",))
    # the turn D1 and the fact drawn from it take the first two hits; D2 is third
    hits = [[["D1"], ["D1"], ["D2"]]]
    got = _within_k_hits(hits, [q], (2, 3))
    assert got == {"recall@2": 0.0, "all_hit@2": 0.0, "recall@3": 1.0, "all_hit@3": 1.0}
    # collapsed, D2 moves into the second slot
    assert _within_k_hits([[["D1"], ["D2"]]], [q], (2,))["recall@2"] == 1.0
