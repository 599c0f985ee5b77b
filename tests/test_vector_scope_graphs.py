"""A scope past the exact scan gets a graph of its own in the SQLite vector mirror.

In the organization's graph a big scope's nearest neighbours are rare, so a search
of one scope asked for a pool many times its limit and still missed some. The
scope's own graph answers such a search; these tests hold it to the exact answer
while rows come, change their vector, move to another scope, retire or go.
"""

from __future__ import annotations

import numpy as np
import pytest

from kenning.stores.sqlite.vectors import VectorIndex

DIM = 16
ORG = "o"
BIG, SMALL, OTHER = 1, 2, 3


def _index() -> VectorIndex:
    # tiny thresholds: a scope of more than 10 rows is past the exact scan
    return VectorIndex(DIM, exact_max=10, ann_min_rows=10, connectivity=16, expansion=64)


def _row(pk: int, scope: int, vec: np.ndarray, status: str = "active") -> tuple:
    return (ORG, pk, f"m{pk}", scope, status, float(pk), vec.astype(np.float32).tobytes())


def _unit(rng: np.random.Generator, n: int) -> np.ndarray:
    x = rng.standard_normal((n, DIM)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def _exact(
    rows: dict[int, tuple[int, np.ndarray, str]], q: np.ndarray, scope: int, k: int
) -> list[str]:
    mine = [(pk, vec) for pk, (s, vec, status) in rows.items() if s == scope and status == "active"]
    mine.sort(key=lambda p: -float(p[1] @ q))
    return [f"m{pk}" for pk, _ in mine[:k]]


@pytest.fixture
def world() -> tuple[VectorIndex, dict[int, tuple[int, np.ndarray, str]], np.random.Generator]:
    rng = np.random.default_rng(5)
    vecs = _unit(rng, 160)
    rows = {
        pk: (BIG if pk < 120 else SMALL if pk < 140 else OTHER, vecs[pk], "active")
        for pk in range(160)
    }
    index = _index()
    index._apply([_row(pk, s, v) for pk, (s, v, _) in rows.items()])
    return index, rows, rng


def _check(index: VectorIndex, rows: dict, rng: np.random.Generator, scope: int = BIG) -> None:
    for q in _unit(rng, 12):
        got = [mid for mid, _ in index.search(ORG, q, [scope], ["active"], 5)]
        assert index.last_plan.method == "hnsw-scope"
        assert got == _exact(rows, q, scope, 5)
    batch = [(scope, q) for q in _unit(rng, 6)]
    for (_, q), hits in zip(batch, index.search_by_scope(ORG, batch, ["active"], 5), strict=True):
        assert [mid for mid, _ in hits] == _exact(rows, q, scope, 5)


def test_a_big_scope_is_searched_through_its_own_graph(world) -> None:
    index, rows, rng = world
    _check(index, rows, rng)
    part = index._parts[ORG]
    assert set(part.scope_ann) == {BIG} and len(part.scope_ann[BIG]) == 120
    # a search of several scopes walks the organization's graph
    q = _unit(rng, 1)[0]
    got = [mid for mid, _ in index.search(ORG, q, [BIG, SMALL], ["active"], 5)]
    assert index.last_plan.method == "hnsw"
    both = sorted(
        (p for p, (s, _, _) in rows.items() if s in (BIG, SMALL)),
        key=lambda p: -float(rows[p][1] @ q),
    )
    assert got == [f"m{p}" for p in both[:5]]


def test_the_scope_graph_follows_rows_that_come_change_move_retire_and_go(world) -> None:
    index, rows, rng = world
    _check(index, rows, rng)  # builds the graph before the changes
    part = index._parts[ORG]
    fresh = _unit(rng, 40)
    changes = []
    for n, pk in enumerate(range(160, 180)):  # new rows in the big scope
        rows[pk] = (BIG, fresh[n], "active")
        changes.append(_row(pk, BIG, fresh[n]))
    for n, pk in enumerate(range(0, 10)):  # new vectors for rows of the big scope
        rows[pk] = (BIG, fresh[20 + n], "active")
        changes.append(_row(pk, BIG, fresh[20 + n]))
    for pk in range(10, 20):  # moved out of the big scope
        rows[pk] = (SMALL, rows[pk][1], "active")
        changes.append(_row(pk, SMALL, rows[pk][1]))
    for pk in range(140, 150):  # moved into it
        rows[pk] = (BIG, rows[pk][1], "active")
        changes.append(_row(pk, BIG, rows[pk][1]))
    for pk in range(20, 30):  # retired: in the graph, kept out by the status filter
        rows[pk] = (BIG, rows[pk][1], "superseded")
        changes.append(_row(pk, BIG, rows[pk][1], "superseded"))
    index._apply(changes)
    for pk in range(30, 35):  # gone
        part.remove(f"m{pk}")
        del rows[pk]
    assert len(part.scope_ann[BIG]) == sum(1 for s, _, _ in rows.values() if s == BIG)
    _check(index, rows, rng)
    retired = [(BIG, rows[pk][1]) for pk in range(20, 30)]
    for hits in index.search_by_scope(ORG, retired, ["superseded"], 1):
        assert hits and hits[0][0] in {f"m{pk}" for pk in range(20, 30)}
