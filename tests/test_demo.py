"""`make run` starts the demo: it must run end to end and show isolation holding."""

from __future__ import annotations

from pathlib import Path

import pytest

from kenning import demo


def test_demo_runs_and_shows_isolation(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    demo.main(["--db", str(tmp_path / "demo.db")])
    out = capsys.readouterr().out
    assert "alice cannot see bob's personal memory" in out
    assert "alice cannot write the org layer" in out
    assert "['create', 'update', 'delete']" in out
    assert "Postgres 16" in out  # the billing question finds the team decision
