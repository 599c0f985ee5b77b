"""The scripts in ``bench/`` stay runnable: each imports against the current
package (a renamed helper breaks them silently otherwise), and the calibration
fit's pure parts compute what they say."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"
SCRIPTS = sorted(p for p in BENCH.glob("*.py") if "__main__" in p.read_text())


def _load(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"bench_{path.stem}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("path", SCRIPTS, ids=[p.name for p in SCRIPTS])
def test_bench_script_imports(path: Path) -> None:
    module = _load(path)
    functions = [
        v for v in vars(module).values() if callable(v) and v.__module__ == module.__name__
    ]
    assert functions, f"{path.name} defines nothing to run"


def test_fit_calibration_recovers_a_known_logistic_model() -> None:
    fit_calibration = _load(BENCH / "fit_calibration.py")
    rng = np.random.default_rng(7)
    x = rng.normal(size=(4000, 2))
    true = np.array([-1.0, 2.0, -0.5])
    p = 1 / (1 + np.exp(-(true[0] + x @ true[1:])))
    y = (rng.random(4000) < p).astype(float)
    w = fit_calibration.fit(x, y)
    assert np.allclose(w, true, atol=0.2)
    assert fit_calibration.auc(p, y) > 0.7
    assert fit_calibration.auc(np.array([0.1, 0.9]), np.array([0.0, 1.0])) == 1.0


def test_fit_order_learns_which_feature_marks_the_evidence_and_keeps_signs() -> None:
    fit_order = _load(BENCH / "fit_order.py")
    rng = np.random.default_rng(3)
    rows, labels, qidx = [], [], []
    for q in range(200):  # pools of 12: the evidence has the higher first feature
        x = rng.normal(size=(12, 3))
        y = np.zeros(12)
        y[int(np.argmax(x[:, 0] + 0.3 * rng.normal(size=12)))] = 1.0
        rows.append(x)
        labels.append(y)
        qidx.append(np.full(12, q))
    x, y, q = np.vstack(rows), np.concatenate(labels), np.concatenate(qidx)
    _, _, free = fit_order.fit(x, y, q, 1e-3)
    assert free[0] > 1.0 and abs(free[1]) < 0.3 and abs(free[2]) < 0.3
    # held to be non-positive, the first feature's weight is fixed at 0 instead
    _, _, held = fit_order.fit(x, y, q, 1e-3, signs=[-1, 0, 0])
    assert held[0] == 0.0 and abs(held[1]) < 0.3


def test_reconcile_replay_captures_a_batch_and_replays_it_on_two_trees(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from kenning.bench.scale import run_scale
    from kenning.config import Settings

    db = tmp_path / "scale.db"
    run_scale(
        300, synthetic=True, queries=2, settings=Settings(graph_extractor="rules"), db_path=db
    )
    replay = _load(BENCH / "reconcile_replay.py")
    src = str(BENCH.parent / "src")
    items = tmp_path / "batch.pkl"
    monkeypatch.setattr(
        sys,
        "argv",
        ["x", "capture", "--db", str(db), "--out", str(items), "--batch", "60", "--tree", src],
    )
    replay.main()
    captured = json.loads(capsys.readouterr().out)
    assert captured["decide_many_calls"][0] == 60  # every memory of the batch is decided
    monkeypatch.setattr(
        sys,
        "argv",
        [
            "x",
            "replay",
            "--items",
            str(items),
            "--a",
            src,
            "--b",
            src,
            "--rounds",
            "2",
            "--passes",
            "2",
        ],
    )
    replay.main()
    report = json.loads(capsys.readouterr().out)
    assert report["same_decisions"] is True
    assert len(report["a"]["ms"]) == len(report["b"]["ms"]) == 4
    assert report["decide_many_calls"] == captured["decide_many_calls"]
