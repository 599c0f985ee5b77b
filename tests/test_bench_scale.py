"""The scale benchmark end to end, tiny: synthetic vectors, a few hundred memories."""

from __future__ import annotations

from pathlib import Path

import pytest

from kenning.bench.scale import run_scale
from kenning.config import Settings


def _settings(**update: object) -> Settings:
    return Settings().model_copy(update=update)


def test_scale_bench_reports_ingest_against_both_models_and_recall(tmp_path: Path) -> None:
    db = tmp_path / "scale.db"
    result = run_scale(
        300,
        synthetic=True,
        queries=5,
        batch=100,
        repeat=2,
        db_path=db,
        settings=_settings(graph_extractor="rules"),
    )
    assert result["n"] == 300 and result["store"] == "sqlite" and not result["reused_db"]
    assert result["ingest_per_s"] > 0 and result["model_only_per_s"] > 0
    # the graph's extractor is the write path's second model: the ratio that
    # measures storage is taken against both, run as a write runs them
    models = result["models_only_per_s"]
    assert models is not None and models > 0
    assert result["ingest_vs_models"] == pytest.approx(result["ingest_per_s"] / models, abs=2e-3)
    assert result["ingest_vs_model"] == pytest.approx(
        result["ingest_per_s"] / result["model_only_per_s"], abs=2e-3
    )
    assert len(result["passes"]) == 2
    for key in ("recall_ms", "recall_ms_typical"):
        assert {"p50", "p95", "p99"} <= set(result[key])
        assert 0 < result[key]["p50"] <= result[key]["p99"]
    # a second run on the same database times recall only
    again = run_scale(
        300, synthetic=True, queries=5, db_path=db, settings=_settings(graph_extractor="rules")
    )
    assert again["reused_db"] and again["ingest_per_s"] is None
    assert again["ingest_vs_models"] is None


@pytest.mark.parametrize("update", [{"graph_enabled": False}, {"graph_extractor": "none"}])
def test_scale_bench_without_an_extractor_has_one_model(
    tmp_path: Path, update: dict[str, object]
) -> None:
    result = run_scale(
        120,
        synthetic=True,
        queries=3,
        batch=60,
        db_path=tmp_path / "s.db",
        settings=_settings(**update),
    )
    assert result["models_only_per_s"] is None and result["ingest_vs_models"] is None
    assert result["ingest_vs_model"] > 0
