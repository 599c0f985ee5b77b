"""The currency and abstention benchmarks: the dataset, the scoring, a tiny run of each."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

import pytest
from typer.testing import CliRunner

from kenning.bench.abstain import GRID, Asked, report, run_abstain
from kenning.bench.cli import bench_app
from kenning.bench.currency import (
    aggregate,
    classify,
    run_currency,
    score_before,
    score_now,
    user_principal,
    write_links,
)
from kenning.bench.currency_data import (
    DEV_KINDS,
    HOLDOUT_KINDS,
    PROBE,
    TUNE,
    Question,
    Statement,
    User,
    generate,
    kinds_of,
)
from kenning.bench.currency_phrases import KINDS, PROBE_KINDS
from kenning.bench.currency_tune import TUNE_KINDS
from kenning.bench.stores import open_bench_memory
from kenning.config import ABSTAIN_BELOW, Lifecycle, Settings
from kenning.embeddings import Embedder


def test_the_dataset_is_deterministic_and_big_enough() -> None:
    data = generate()
    assert data == generate()
    assert data != generate(seed=20)
    assert len(data.users) >= 50
    assert len({u.uid for u in data.users}) == len(data.users)
    assert sum(u.stable for u in data.users) >= 5
    counts = data.counts()
    assert counts["statements_lookalike"] > 0 and counts["statements_chatter"] > 0
    assert counts["questions_before"] > 0 and counts["questions_unstated"] > 0


def test_kinds_phrasings_and_split() -> None:
    assert len(KINDS) >= 10
    for kind, table in KINDS.items():
        for role in ("first", "update", "now", "before"):
            assert len(set(table[role])) >= 4, (kind, role)
        assert len(table["values"]) >= 8
    assert not set(DEV_KINDS) & set(HOLDOUT_KINDS)
    assert set(DEV_KINDS) | set(HOLDOUT_KINDS) == set(KINDS)
    assert kinds_of("all") == DEV_KINDS + HOLDOUT_KINDS
    # the probe kinds: as many phrasings, no kind of either split
    for kind, table in PROBE_KINDS.items():
        for role in ("first", "update", "now", "before"):
            assert len(set(table[role])) >= 4, (kind, role)
    assert kinds_of("probe") == PROBE and not set(PROBE) & set(KINDS)
    # the tune kinds too, and none of the probe's
    for kind, table in TUNE_KINDS.items():
        for role in ("first", "update", "now", "before"):
            assert len(set(table[role])) >= 4, (kind, role)
        assert len(table["values"]) >= 8
    assert kinds_of("tune") == TUNE and not set(TUNE) & (set(KINDS) | set(PROBE))


def test_the_probe_dataset_holds_no_held_out_kind_and_leaves_the_others_alone() -> None:
    probe = generate(10, table="probe")
    asked = {q.kind for u in probe.users for q in u.questions if q.kind}
    said = {s.kind for u in probe.users for s in u.statements if s.kind}
    assert set(PROBE) <= asked and not (asked | said) & set(HOLDOUT_KINDS)
    assert (asked | said) <= set(PROBE) | set(DEV_KINDS)
    # the dev and held-out dataset keeps its own table of kinds
    plain = generate(10)
    assert {s.kind for u in plain.users for s in u.statements if s.kind} <= set(KINDS)
    assert plain == generate(10) and plain != probe
    # the tune dataset: its kinds beside the dev kinds, as the probe's
    tune = generate(10, table="tune")
    asked = {q.kind for u in tune.users for q in u.questions if q.kind}
    said = {s.kind for u in tune.users for s in u.statements if s.kind}
    assert set(TUNE) <= asked and (asked | said) <= set(TUNE) | set(DEV_KINDS)


def test_updates_come_after_first_statements_and_questions_point_at_them() -> None:
    for user in generate().users:
        said = {s.sid: s for s in user.statements}
        assert [s.at for s in user.statements] == sorted(s.at for s in user.statements)
        if user.stable:
            assert not any(s.role == "update" for s in user.statements)
        for q in user.questions:
            if q.role == "now":
                assert q.current in said and said[q.current].kind == q.kind
            for old in q.stale:
                assert said[old].at < said[q.current or ""].at
                assert said[old].value != said[q.current or ""].value
            for look in q.lookalike:
                assert said[look].role == "lookalike" and said[look].kind == q.kind
            if q.role == "before":
                assert q.previous in q.stale
                if " in 20" in q.text:  # "what car did I have in 2022?": the previous value
                    assert f" in {said[q.previous or ''].at.year}?" in q.text
    phrasings = Counter(q.text for u in generate().users for q in u.questions if q.role == "now")
    assert len(phrasings) >= 4 * len(KINDS)


_Q = Question("u/q", "u", "home", "now", "Where do I live now?", "cur", ("old",), None, ("look",))
_B = Question("u/b", "u", "home", "before", "Where did I live before?", "cur", ("old",), "old")


def _r(*items: str) -> list[frozenset[str]]:
    return [frozenset(i.split("+")) if i else frozenset() for i in items]


def test_now_scoring_on_hand_built_rankings() -> None:
    best = score_now(_r("cur", "old", "look"), _Q)
    assert best == {
        "current@1": True,
        "current@5": True,
        "stale_above_current": False,
        "lookalike_above_current": False,
        "top1": "current",
    }
    stale_first = score_now(_r("old", "", "cur"), _Q)
    assert not stale_first["current@1"] and stale_first["current@5"]
    assert stale_first["stale_above_current"] and not stale_first["lookalike_above_current"]
    # the current value missing while a stale one or a look-alike is present
    missing = score_now(_r("", "look", "old"), _Q)
    assert missing["stale_above_current"] and missing["lookalike_above_current"]
    assert missing["top1"] == "other" and not missing["current@5"]
    assert score_now(_r("", "", "", "", "", "cur"), _Q)["current@5"] is False
    assert score_now([], _Q)["top1"] == "none"
    # a fact standing for the current and a stale statement counts as current
    assert classify(frozenset({"old", "cur"}), _Q) == "current"
    no_stale = Question("u/x", "u", "home", "now", "?", "cur")
    assert score_now(_r("cur"), no_stale)["stale_above_current"] is None


def test_before_scoring_and_aggregate() -> None:
    assert score_before(_r("cur", "", "old"), _B) == {"previous@3": True}
    assert score_before(_r("cur", "", "", "old"), _B) == {"previous@3": False}
    rows = [
        {**score_now(_r("cur"), _Q), "role": "now", "kind": "home", "changed": True},
        {**score_now(_r("old", "cur"), _Q), "role": "now", "kind": "home", "changed": True},
        {**score_before(_r("old"), _B), "role": "before", "kind": "home", "changed": True},
    ]
    out = aggregate(rows)
    assert out["current@1"] == 0.5 and out["current@5"] == 1.0
    assert out["stale_above_current"] == 0.5 and out["previous@3"] == 1.0
    assert out["top1"]["stale"] == 0.5
    assert out["questions"] == {"now": 2, "now_changed": 2, "now_with_lookalike": 2, "before": 1}


def test_abstain_report_on_hand_built_scores() -> None:
    rows = [
        Asked(True, "now", 0.8, 0.8),
        Asked(True, "now", 0.6, 0.4),
        Asked(False, "unstated", 0.3),
        Asked(False, "unknown", None),
    ]
    out = report(rows, min_score=0.5)
    at = out["at_min_score"]
    assert at["unanswerable_abstained"] == 1.0 and at["answerable_kept"] == 0.5
    assert [g["min_score"] for g in out["grid"]] == list(GRID)
    assert out["grid"][0]["unanswerable_abstained"] == 0.5  # the None top-1 abstains
    assert out["top1_auc"] == 1.0


def test_abstaining_keeps_every_hit_of_a_question_something_answers() -> None:
    # evidence 0.4 under a best hit of 0.6: min_score 0.5 drops it, abstaining keeps it;
    # an unanswerable question whose second hit scores 0.55 has a hit kept at 0.5
    rows = [
        Asked(True, "now", 0.8, 0.8, 0.8, 1.0),
        Asked(True, "now", 0.6, 0.4, 0.6, 0.5),
        Asked(True, "now", 0.2, 0.2, 0.2, 1.0),
        Asked(False, "unstated", 0.3, None, 0.55),
        Asked(False, "unknown", 0.1, None, 0.1),
    ]
    out = report(rows, abstain_below=0.5)
    at = out["at_abstain_below"]
    assert at["answerable_kept"] == round(1 / 3, 4)
    assert at["answerable_kept_abstaining"] == round(2 / 3, 4)
    assert at["unanswerable_abstained"] == 0.5  # the best hit counts, not the first
    assert at["recall"] == round((1.0 + 0.5 + 1.0) / 3, 4)
    assert at["recall_abstaining"] == 0.5  # the third question gets no hits


_KEYS = ("current@1", "current@5", "stale_above_current", "lookalike_above_current", "previous@3")


@pytest.mark.parametrize("via", ["write", "ingest"])
def test_a_small_currency_run_reports_every_key(
    via: Literal["write", "ingest"], embedder: Embedder
) -> None:
    result = run_currency("all", via, n_users=5, embedder=embedder)
    for key in _KEYS:
        assert result[key] is not None and 0.0 <= result[key] <= 1.0, key
    assert result["foreign_hits"] == 0
    assert result["latency_ms"]["p50"] > 0
    assert set(result["by_split"]) == {"dev", "holdout"}
    assert set(result["by_kind"]) == set(KINDS)
    assert result["dataset"]["users"] == 5
    links = result["links"]
    assert set(links["by_kind"]) == set(KINDS) and links["updates"] > 0
    assert 0.0 <= links["linked"] <= 1.0 and links["retired_by_another"] >= 0


@pytest.mark.parametrize(("split", "kinds"), [("probe", PROBE), ("tune", TUNE)])
def test_a_small_probe_or_tune_run_reports_its_own_kinds(
    split: Literal["probe", "tune"], kinds: tuple[str, ...], embedder: Embedder
) -> None:
    result = run_currency(split, "write", n_users=3, embedder=embedder)
    assert set(result["by_split"]) == {split} and set(result["by_kind"]) == set(kinds)
    assert result["foreign_hits"] == 0 and 0.0 <= result["current@1"] <= 1.0


def test_write_links_count_updates_linked_and_facts_retired_by_another(
    tmp_path: Path, embedder: Embedder
) -> None:
    """An update whose memory retired the earlier value's is linked; the same
    retirement by a memory that stands for chatter hides a true fact instead."""
    at = [datetime(2022, 3, day, tzinfo=UTC) for day in (1, 2)]
    said = [
        Statement("s1", "u1", "employer", "first", "I work at Nokia.", "Nokia", at[0], 0),
        Statement(
            "s2",
            "u1",
            "employer",
            "update",
            "I quit Nokia and joined Philips.",
            "Philips",
            at[1],
            1,
        ),
        Statement("c1", "u1", None, "chatter", "Traffic was terrible today.", None, at[1], 1),
    ]
    user = User("u1", "Ada", False, tuple(said), ())
    rules = Settings(lifecycle=Lifecycle(reconcile="rules"))  # the tests' default is off
    mem = open_bench_memory(None, tmp_path / "links.db", rules, embedder=embedder)
    try:
        who = user_principal("u1")
        old, new = (
            mem.write([{"content": s.text, "event_at": s.at}], principal=who)[0].record.id
            for s in said[:2]
        )
        assert mem.get(old, principal=who).superseded_by == new  # reconcile's documented case
        linked = write_links(
            mem, [user], ["employer"], {old: frozenset({"s1"}), new: frozenset({"s2"})}
        )
        hidden = write_links(
            mem, [user], ["employer"], {old: frozenset({"s1"}), new: frozenset({"c1"})}
        )
    finally:
        mem.close()
    assert linked == {
        "updates": 1,
        "linked": 1.0,
        "retired_by_another": 0,
        "by_kind": {"employer": {"updates": 1, "linked": 1.0, "retired_by_another": 0}},
    }
    assert hidden["updates"] == 1 and hidden["linked"] == 0.0
    assert hidden["retired_by_another"] == 1


def test_a_small_abstain_run(embedder: Embedder) -> None:
    result = run_abstain("holdout", n_users=4, embedder=embedder, min_score=0.5)
    cur = result["currency"]
    assert cur["answerable"] > 0 and cur["unanswerable"] > 0
    assert len(cur["grid"]) == len(GRID) and "at_min_score" in cur
    assert result["abstain_below"] == ABSTAIN_BELOW and "at_abstain_below" in cur
    for point in cur["grid"]:
        assert 0.0 <= point["unanswerable_abstained"] <= 1.0
        assert 0.0 <= point["answerable_kept"] <= 1.0


@pytest.mark.parametrize("option", ["--abstain-below", "--min-score"])
def test_an_abstain_threshold_outside_0_1_is_refused(option: str) -> None:
    out = CliRunner().invoke(bench_app, ["abstain", option, "1.5", "--json"])
    assert out.exit_code == 2 and option in out.output and "less than or equal to 1" in out.output


def test_an_unknown_split_is_refused_with_the_choices() -> None:
    runner = CliRunner()
    out = runner.invoke(bench_app, ["currency", "--split", "heldout", "--json"])
    assert out.exit_code == 2 and "split must be dev, holdout, tune, probe or all" in out.output
    # probe is the currency benchmark's own: the LoCoMo commands do not take it
    out = runner.invoke(bench_app, ["locomo", "--data", "x.json", "--split", "probe"])
    assert out.exit_code == 2 and "split must be dev, holdout or all" in out.output
