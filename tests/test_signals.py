"""Recall signals as a list: a signal registered the way the built-ins are moves
the ranking and shows in ``explain`` (SDK and REST); every read-side knob is
settable in its group, and the old flat names still reach it."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import pytest
from serverkit import Api, bootstrap_org

from kenning import Memory, Settings
from kenning.config import LEGACY_NAMES, Retrieval, ScoringWeights
from kenning.errors import ConfigError
from kenning.retrieval.signals import (
    BUILTINS,
    RecallContext,
    Signal,
    Stage,
    active_signals,
    available_signals,
    register_signal,
)


def _nudge(stage: Stage) -> Callable[[], Signal]:
    """A test-only signal adding 1.0 to memories tagged ``nudge``, in ``stage``."""

    class Nudge:
        name = f"test_nudge_{stage}"
        reads: tuple[str, ...] = ()

        def __init__(self) -> None:
            self.stage: Stage = stage

        def contribute(self, ctx: RecallContext, scores: Mapping[str, float]) -> dict[str, float]:
            return {m: 1.0 for m in scores if "nudge" in ctx.records[m].tags}

    return Nudge


def _with(name: str) -> Settings:
    return Settings(retrieval=Retrieval(signals=(*BUILTINS, name)))


@pytest.mark.parametrize("stage", ["context", "boost"])
def test_a_registered_signal_moves_the_ranking_and_shows_in_explain(
    make_memory: Callable[..., Memory], stage: Stage
) -> None:
    name = f"test_nudge_{stage}"
    register_signal(name, _nudge(stage))
    assert name in available_signals()
    mem = make_memory()
    sven = mem.remember("Sven teaches sailing on the lake every summer")
    ice = mem.remember("The lake freezes in January", tags=["nudge"])
    plain = mem.recall("sailing lessons on the lake", explain=True)
    assert [h.memory.id for h in plain] == [sven.id, ice.id]
    assert all(name not in h.explain.signals for h in plain if h.explain)
    mem.settings = _with(name)
    nudged = mem.recall("sailing lessons on the lake", explain=True)
    assert [h.memory.id for h in nudged] == [ice.id, sven.id]
    by_id = {h.memory.id: h.explain for h in nudged}
    assert by_id[ice.id] is not None and by_id[sven.id] is not None
    assert by_id[ice.id].signals[name] == 1.0 and by_id[sven.id].signals[name] == 0.0
    assert list(by_id[ice.id].signals)[-1] == name  # after the built-ins, in list order
    if stage == "context":  # on the fused scale: part of the stage's sum
        assert by_id[ice.id].context >= 1.0
    else:  # on the final score
        assert plain[1].explain is not None
        assert by_id[ice.id].final - plain[1].explain.final == pytest.approx(1.0)


def test_a_registered_signal_shows_in_the_rest_explain(open_memory: Any, tmp_path: Any) -> None:
    name = "test_nudge_boost"
    register_signal(name, _nudge("boost"))
    mem: Memory = open_memory(tmp_path)
    mem.settings = _with(name)
    keys = bootstrap_org(mem, "acme")
    api = Api(mem)
    try:
        for body in (
            {"content": "Sven teaches sailing on the lake every summer"},
            {"content": "The lake freezes in January", "tags": ["nudge"]},
        ):
            assert api.call("POST", "/v1/memories", key=keys["alice"], json=body).status_code == 201
        hits = api.call(
            "POST",
            "/v1/recall",
            key=keys["alice"],
            json={"query": "sailing lessons on the lake", "k": 2, "explain": True},
        ).json()["hits"]
    finally:
        api.close()
    assert hits[0]["memory"]["content"] == "The lake freezes in January"
    assert hits[0]["explain"]["signals"][name] == 1.0
    assert hits[1]["explain"]["signals"][name] == 0.0
    assert set(BUILTINS) <= set(hits[0]["explain"]["signals"])
    assert hits[0]["explain"]["layer_boost"] == hits[0]["explain"]["signals"]["layer"]


def test_the_signal_list_is_a_setting(make_memory: Callable[..., Memory]) -> None:
    mem = make_memory(settings=Settings(retrieval=Retrieval(signals=("graph", "time"))))
    mem.remember("Sven teaches sailing on the lake every summer", confidence=0.95)
    (hit,) = mem.recall("Sven teaches sailing on the lake every summer", explain=True)
    assert hit.explain is not None and set(hit.explain.signals) == {"graph", "time"}
    assert not hit.explain.exact_match and hit.explain.layer_boost == 0.0
    full = make_memory("full")
    full.remember("Sven teaches sailing on the lake every summer", confidence=0.95)
    (same,) = full.recall("Sven teaches sailing on the lake every summer", explain=True)
    assert same.explain is not None and same.explain.exact_match
    w = ScoringWeights()
    assert same.explain.signals["exact_match"] == w.exact_match_boost
    assert same.explain.signals["high_confidence"] == w.high_confidence_boost
    assert same.explain.final == pytest.approx(
        hit.explain.final + w.exact_match_boost + w.high_confidence_boost
    )
    assert same.score == hit.score  # the calibrated score weighs no boost
    mem.settings = Settings(retrieval=Retrieval(signals=("graph", "no_such_signal")))
    with pytest.raises(ConfigError, match="no_such_signal"):
        mem.recall("sailing")


def test_the_high_confidence_threshold_is_settable(make_memory: Callable[..., Memory]) -> None:
    mem = make_memory()
    mem.remember("Sven teaches sailing on the lake every summer", confidence=0.85)
    (hit,) = mem.recall("sailing lessons", explain=True)
    assert hit.explain is not None and hit.explain.signals["high_confidence"] == 0.0
    mem.settings = Settings(scoring=ScoringWeights(high_confidence_threshold=0.8))
    (lower,) = mem.recall("sailing lessons", explain=True)
    assert lower.explain is not None
    assert lower.explain.signals["high_confidence"] == ScoringWeights().high_confidence_boost
    assert lower.explain.final > hit.explain.final


def _place(s: Settings, path: str) -> Any:
    value: Any = s
    for part in path.split("."):
        value = getattr(value, part)
    return value


#: A value differing from the default, per old flat name.
_CHANGED: dict[str, Any] = {
    "candidates_dense": 7,
    "candidates_keyword": 8,
    "fusion": "rrf",
    "fusion_alpha": 0.25,
    "rrf_k": 11,
    "common_term_ratio": 0.5,
    "common_term_min_docs": 3,
    "common_term_max_docs": 99,
    "time_aware": False,
    "time_window_boost": 0.7,
    "time_when_boost": 0.6,
    "time_content_scan": 5,
    "time_window_candidates": 4,
    "episode_recall_weight": 0.2,
    "episode_recall_top": 9,
    "author_boost": 0.4,
    "author_fields": ("who",),
    "decay_days_personal": 10.0,
    "decay_days_shared": 11.0,
    "decay_days_organization": 12.0,
    "min_temporal_personal": 0.01,
    "min_temporal_shared": 0.02,
    "min_temporal_organization": 0.03,
}


def test_every_moved_knob_is_settable_in_its_group_and_by_its_old_name(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert set(_CHANGED) == set(LEGACY_NAMES)
    default = Settings()
    for old, place in LEGACY_NAMES.items():
        value = _CHANGED[old]
        assert _place(default, place) != value, old
        assert _place(Settings(**{old: value}), place) == value, old  # old keyword
        group, _, rest = place.partition(".")
        nested: dict[str, Any] = {}
        cursor = nested
        *parents, last = rest.split(".")
        for parent in parents:
            cursor = cursor.setdefault(parent, {})
        cursor[last] = value
        assert _place(Settings(**{group: nested}), place) == value, place  # its group
        env_value = ",".join(value) if isinstance(value, tuple) else str(value)
        new_env = "KENNING_" + place.replace(".", "_").upper()
        if isinstance(value, tuple):
            env_value = '["who"]'
        with monkeypatch.context() as m:  # the group's own variable
            m.setenv(new_env, env_value)
            assert _place(Settings(), place) == value, new_env
        with monkeypatch.context() as m:  # the old variable
            m.setenv(f"KENNING_{old.upper()}", env_value)
            assert _place(Settings(), place) == value, old
    # an old name given wins over its group's value; other knobs keep theirs
    s = Settings(fusion_alpha=0.3, retrieval=Retrieval(fusion_alpha=0.9, rrf_k=5))
    assert s.retrieval.fusion_alpha == 0.3 and s.retrieval.rrf_k == 5
    with monkeypatch.context() as m:
        m.setenv("KENNING_RETRIEVAL_RRF_K", "17")
        s = Settings(candidates_dense=3)
        assert s.retrieval.candidates_dense == 3 and s.retrieval.rrf_k == 17


def test_signals_declare_what_they_read() -> None:
    s = Settings()
    for signal in active_signals(s):
        assert signal.name in BUILTINS and signal.reads, signal.name
        for path in signal.reads:
            _place(s, path)  # every declared setting exists
    assert [x.name for x in active_signals(s)] == list(BUILTINS)
