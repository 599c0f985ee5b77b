"""Calibrated scores and ``min_score`` (DESIGN.md §2: a score means the same in every
query): scores in [0, 1], a question the store does not answer scores lower than
one it does, the ranking is the priority's, ``min_score`` filters at every door
and a bad value is refused everywhere with a precise error."""

from __future__ import annotations

import asyncio
import json
import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from serverkit import Api, bootstrap_org
from typer.testing import CliRunner

from kenning import FixedClock, Memory
from kenning.cli.app import app
from kenning.config import ABSTAIN_BELOW
from kenning.embeddings import Embedder
from kenning.errors import InvalidInput
from kenning.mcp import build_mcp, fixed_resolver
from kenning.models import Hit, Principal
from kenning.retrieval import calibration, pipeline

pytestmark = pytest.mark.stores("sqlite")

FACTS = [
    "Alice drinks green tea every morning before work",
    "Alice's sister Maya lives in Lisbon and teaches piano",
    "The Falcon project launches in May with Priya as technical lead",
    "Bob runs a half marathon every autumn in Berlin",
    "The office coffee machine is broken since Tuesday",
    "Maya adopted a grey cat called Pixel last winter",
    "Priya prefers code reviews in the morning",
    "The team offsite is planned for Porto in September",
]
ANSWERED = "What does Alice drink in the morning?"
UNRELATED = "What is the melting point of tungsten carbide in a vacuum furnace?"


def _fill(mem: Memory, principal: Principal | None = None) -> None:
    mem.remember_many([{"content": f} for f in FACTS], principal=principal)


def _abstaining(mem: Memory, bar: float | None = ABSTAIN_BELOW) -> None:
    """Set ``retrieval.abstain_below`` (None: off, every hit comes back)."""
    retrieval = mem.settings.retrieval.model_copy(update={"abstain_below": bar})
    mem.settings = mem.settings.model_copy(update={"retrieval": retrieval})


def test_scores_are_in_unit_interval_and_an_unanswered_question_scores_lower(
    mem: Memory,
) -> None:
    _fill(mem)
    answered = mem.recall(ANSWERED, 8)
    unrelated = mem.recall(UNRELATED, 8)
    for hit in [*answered, *unrelated]:
        assert 0.0 <= hit.score <= 1.0
    assert answered[0].memory.content == FACTS[0]
    assert answered[0].score > max(h.score for h in unrelated) + 0.1


def test_explain_shows_how_the_score_was_computed(mem: Memory) -> None:
    _fill(mem)
    hits = mem.recall(ANSWERED, 5, explain=True)
    for hit in hits:
        e = hit.explain
        assert e is not None and e.priority == e.final
        c = e.calibration
        assert set(c["inputs"]) == set(calibration.INPUTS)
        assert set(c["contributions"]) == {"intercept", *calibration.INPUTS}
        assert math.isclose(sum(c["contributions"].values()), c["logit"])
        assert math.isclose(hit.score, 1 / (1 + math.exp(-c["logit"])), abs_tol=1e-6)
        assert e.to_dict()["calibration"]["inputs"]["dense"] == c["inputs"]["dense"]
    # the ranking value orders the hits, whatever the calibrated scores do
    priorities = [h.explain.priority for h in hits if h.explain]
    assert priorities == sorted(priorities, reverse=True)


def test_calibration_changes_no_ranking(mem: Memory, monkeypatch: pytest.MonkeyPatch) -> None:
    _fill(mem)
    queries = [ANSWERED, UNRELATED, "Where does Maya live?", "When is the offsite?"]
    calibrated = [[h.memory.id for h in mem.recall(q, 8)] for q in queries]

    def off(ctx: Any, hits: Sequence[Hit], terms: frozenset[str], explain: bool) -> list[Hit]:
        return list(hits)

    monkeypatch.setattr(pipeline, "calibrated", off)
    assert [[h.memory.id for h in mem.recall(q, 8)] for q in queries] == calibrated


def _cut(hits: Sequence[Hit]) -> float:
    """A threshold between the hits' scores (some pass, some do not)."""
    scores = sorted(h.score for h in hits)
    assert scores[0] < scores[-1]
    return (scores[0] + scores[-1]) / 2


def test_min_score_filters_the_sdk_recall_and_the_settings_default(
    mem: Memory, make_memory: Callable[..., Memory]
) -> None:
    _fill(mem)
    full = mem.recall(ANSWERED, 8)
    t = _cut(full.hits)
    kept = mem.recall(ANSWERED, 8, min_score=t)
    assert [h.memory.id for h in kept] == [h.memory.id for h in full if h.score >= t]
    assert 0 < len(kept) < len(full)
    assert len(mem.recall(ANSWERED, 8, min_score=0.0)) == len(full)
    mem.settings = mem.settings.model_copy(
        update={"retrieval": mem.settings.retrieval.model_copy(update={"min_score": t})}
    )
    assert [h.memory.id for h in mem.recall(ANSWERED, 8)] == [h.memory.id for h in kept]


def test_min_score_async_matches_sync(mem: Memory) -> None:
    from kenning.aio import AsyncMemory

    _fill(mem)
    t = _cut(mem.recall(ANSWERED, 8).hits)
    amem = AsyncMemory(memory=mem)
    hits = asyncio.run(amem.recall(ANSWERED, 8, min_score=t))
    assert [h.memory.id for h in hits] == [
        h.memory.id for h in mem.recall(ANSWERED, 8, min_score=t)
    ]


@pytest.mark.parametrize("bad", [-0.1, 1.5, float("nan"), "high", True])
def test_bad_min_score_is_refused_by_the_sdk(mem: Memory, bad: Any) -> None:
    _fill(mem)
    with pytest.raises(InvalidInput, match="min_score must be"):
        mem.recall(ANSWERED, min_score=bad)


def test_the_hint_leaves_out_what_does_not_answer(mem: Memory) -> None:
    _fill(mem)
    assert "green tea" in mem.build_hint(query=ANSWERED)
    assert not any(f[:20] in mem.build_hint(query=UNRELATED) for f in FACTS)


def _filled_api(mem: Memory) -> tuple[Api, dict[str, str]]:
    """The REST door over ``mem`` with the facts written by alice, and the keys."""
    keys = bootstrap_org(mem, "acme")
    api = Api(mem)
    made = [api.call("POST", "/v1/memories", key=keys["alice"], json={"content": f}) for f in FACTS]
    if any(m.status_code not in (200, 201) for m in made):
        api.close()
        raise AssertionError([m.text for m in made])
    return api, keys


def test_min_score_at_the_rest_door(mem: Memory) -> None:
    api, keys = _filled_api(mem)
    try:
        full = api.call("POST", "/v1/recall", key=keys["alice"], json={"query": ANSWERED, "k": 8})
        hits = full.json()["hits"]
        t = (min(h["score"] for h in hits) + max(h["score"] for h in hits)) / 2
        body = {"query": ANSWERED, "k": 8, "min_score": t}
        kept = api.call("POST", "/v1/recall", key=keys["alice"], json=body).json()["hits"]
        assert [h["memory"]["id"] for h in kept] == [
            h["memory"]["id"] for h in hits if h["score"] >= t
        ]
        assert 0 < len(kept) < len(hits)
        for bad in (1.5, -1, "x"):
            body = {"query": ANSWERED, "min_score": bad}
            refused = api.call("POST", "/v1/recall", key=keys["alice"], json=body)
            assert refused.status_code == 422, refused.text
            assert "min_score" in refused.text
    finally:
        api.close()


def test_min_score_at_the_cli_door(tmp_path: Path, embedder: Embedder, clock: FixedClock) -> None:
    db = tmp_path / "kenning.db"
    with Memory(db, embedder=embedder, clock=clock) as mem:
        _fill(mem)
        full = mem.recall(ANSWERED, 8)
    t = _cut(full.hits)
    runner = CliRunner()
    args = ["--db", str(db), "recall", ANSWERED, "-k", "8", "--json"]
    out = runner.invoke(app, [*args, "--min-score", str(t)], env={"COLUMNS": "220"})
    assert out.exit_code == 0, (out.stdout, out.exception)
    kept = json.loads(out.stdout)["hits"]
    assert [h["memory"]["id"] for h in kept] == [h.memory.id for h in full if h.score >= t]
    bad = runner.invoke(app, [*args, "--min-score", "2"], env={"COLUMNS": "220"})
    assert bad.exit_code != 0
    assert "min_score must be from 0 to 1" in bad.output


def test_min_score_at_the_mcp_door(mem: Memory) -> None:
    _fill(mem)
    server = build_mcp(mem, fixed_resolver(Principal()))
    full = mem.recall(ANSWERED, 8)
    t = _cut(full.hits)

    async def call(**args: Any) -> Any:
        async with Client(server) as client:
            return await client.call_tool("memory_recall", args)

    kept = asyncio.run(call(query=ANSWERED, max_results=8, min_score=t))
    assert not kept.is_error, kept.content
    data = kept.structured_content
    assert data is not None
    items = data["result"]
    assert [i["id"] for i in items] == [h.memory.id for h in full if h.score >= t]
    refused = asyncio.run(call(query=ANSWERED, min_score=3))
    assert refused.is_error
    assert "invalid_input: min_score must be from 0 to 1" in refused.content[0].text  # type: ignore[union-attr]


# ----------------------------------------------------------------- abstention

OTHER_ANSWERED = ("Where does Maya live?", "Who leads the Falcon project?")
NOTHING = (UNRELATED, "What's my favourite colour?")


def test_a_question_nothing_answers_gets_no_hits(mem: Memory) -> None:
    _fill(mem)
    # off by default: every question gets its hits
    assert mem.settings.retrieval.abstain_below is None
    assert len(mem.recall(UNRELATED, 8).hits) == 8
    _abstaining(mem)
    for query in NOTHING:
        result = mem.recall(query, 8)
        assert result.hits == [] and result.abstained, query
        assert result.to_dict()["abstained"] is True
    for query in (ANSWERED, *OTHER_ANSWERED):
        result = mem.recall(query, 8)
        assert not result.abstained and len(result.hits) == 8, query
    # switched off, the same question gets its (low-scoring) hits
    _abstaining(mem, None)
    result = mem.recall(UNRELATED, 8)
    assert not result.abstained and len(result.hits) == 8
    assert max(h.score for h in result.hits) < ABSTAIN_BELOW
    # the bar is a checked setting
    with pytest.raises(ValueError, match="abstain_below"):
        mem.settings.retrieval.model_validate({"abstain_below": 1.5})


def test_abstaining_keeps_every_hit_of_an_answered_question(mem: Memory) -> None:
    # unlike min_score, abstention keeps the low-scoring hits beside a good one
    _fill(mem)
    _abstaining(mem)
    hits = mem.recall(ANSWERED, 8).hits
    assert len(hits) == 8 and min(h.score for h in hits) < ABSTAIN_BELOW < hits[0].score


def test_abstention_at_the_rest_cli_and_mcp_doors(
    mem: Memory, tmp_path: Path, embedder: Embedder, clock: FixedClock
) -> None:
    _abstaining(mem)
    api, keys = _filled_api(mem)
    try:
        body = {"query": UNRELATED, "k": 8}
        out = api.call("POST", "/v1/recall", key=keys["alice"], json=body).json()
        assert out["hits"] == [] and out["abstained"] is True
        body = {"query": ANSWERED, "k": 8}
        out = api.call("POST", "/v1/recall", key=keys["alice"], json=body).json()
        assert len(out["hits"]) == 8 and out["abstained"] is False
    finally:
        api.close()
    db = tmp_path / "kenning.db"
    with Memory(db, embedder=embedder, clock=clock) as local:
        _fill(local)
    runner = CliRunner()
    args = ["--db", str(db), "recall", UNRELATED, "-k", "8"]
    env = {"COLUMNS": "220", "KENNING_RETRIEVAL_ABSTAIN_BELOW": str(ABSTAIN_BELOW)}
    shown = runner.invoke(app, args, env=env)
    assert shown.exit_code == 0, (shown.stdout, shown.exception)
    assert "no memory answers this" in shown.stdout
    data = json.loads(runner.invoke(app, [*args, "--json"], env=env).stdout)
    assert data["hits"] == [] and data["abstained"] is True
    plain = Memory(tmp_path / "mcp.db", embedder=embedder, clock=clock)
    try:
        _fill(plain)
        _abstaining(plain)
        server = build_mcp(plain, fixed_resolver(Principal()))

        async def call(query: str) -> Any:
            async with Client(server) as client:
                return await client.call_tool("memory_recall", {"query": query})

        nothing = asyncio.run(call(UNRELATED))
        assert not nothing.is_error and nothing.structured_content == {"result": []}
        found = asyncio.run(call(ANSWERED))
        assert found.structured_content is not None and found.structured_content["result"]
    finally:
        plain.close()
