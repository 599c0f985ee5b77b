"""``kenning recall --explain`` for people: one block per hit, wrapped to the terminal.

At 80 and 120 columns no line is wider than the terminal and the figures a
reader looks for (rank, calibrated score, id, the ranking priority, the dense
and keyword matches, every signal, the timings) are there, equal to what
``--json`` reports; ``--json`` itself is the engine's dict, unchanged.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import typer.main
import typer.testing
from typer.testing import CliRunner, Result

from kenning import core
from kenning.cli import app
from kenning.embeddings import Embedder

runner = CliRunner()
LONG_PERSONA = "customer-success-assistant-for-the-enterprise-accounts-team-" + "x" * 40
LONG_USER = "someone.with.a.very.long.address@an-organisation-with-a-long-domain.example"


@pytest.fixture(scope="module")
def shared_model(minilm: Embedder) -> Iterator[Embedder]:
    """Every Memory the CLI opens gets the session's already loaded model."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(core, "create_embedder", lambda name, **options: minilm)
        if hasattr(typer.testing, "_get_command"):
            command = typer.main.get_command(app)
            mp.setattr(typer.testing, "_get_command", lambda typer_app: command)
        yield minilm


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory, shared_model: Embedder) -> Path:
    path = tmp_path_factory.mktemp("explain") / "kenning.db"
    scope = f"persona_user:{LONG_PERSONA}/{LONG_USER}"
    for content, extra in [
        ("Alice prefers green tea over coffee in the morning", []),
        ("Alice drinks a flat white when she visits the Lisbon office, " * 6, []),
        ("The customer asked for invoices to be sent to the finance mailbox", ["--scope", scope]),
        ("Bob's favourite drink is sparkling water with lime", ["--tag", "drinks"]),
    ]:
        result = run(path, 220, "remember", content, *extra)
        assert result.exit_code == 0, result.output
    return path


def run(db: Path, width: int, *args: str) -> Result:
    return runner.invoke(
        app,
        ["--db", str(db), *args],
        env={"COLUMNS": str(width), "KENNING_LIFECYCLE_REINFORCE_ON_RECALL": "false"},
    )


def recall(db: Path, width: int, *extra: str) -> Result:
    args = ("recall", "what does alice drink", "--all-scopes", "-k", "4", *extra)
    result = run(db, width, *args)
    assert result.exit_code == 0, result.output
    return result


@pytest.mark.parametrize("width", [80, 120])
def test_explain_fits_the_terminal_and_shows_the_figures(db: Path, width: int) -> None:
    data: dict[str, Any] = json.loads(recall(db, width, "--explain", "--json").stdout)
    text = recall(db, width, "--explain").stdout
    lines = text.splitlines()
    too_wide = [line for line in lines if len(line) > width]
    assert not too_wide, too_wide

    hits = data["hits"]
    assert len(hits) == 4
    for n, hit in enumerate(hits, 1):
        e = hit["explain"]
        assert f"#{n} score={hit['score']:.3f}" in text
        assert hit["memory"]["id"] in text.replace("\n", "").replace(" ", "")
        assert f"priority={e['priority']:.3f}" in text
        assert f"relevance={e['relevance']:.3f}" in text
        assert e["learned"] is not None  # a question about Alice: the learned relevance ran
        assert f"learned={e['learned']:.3f}" in text
        assert f"dense={e['dense']:.3f}" in text
        assert f"confidence={e['confidence']:.3f}" in text
    assert text.startswith(f"#1 score={hits[0]['score']:.3f}")
    for name in hits[0]["explain"]["signals"]:
        assert f"{name}=" in text
    assert "Alice prefers green tea" in text
    assert "timings (ms):" in text and "total=" in text
    # the long content is cut to two lines, ending with a mark
    long_block = next(b for b in text.split("\n\n") if "flat white" in b)
    assert sum("flat white" in line or "Lisbon" in line for line in long_block.splitlines()) <= 2
    assert "…" in long_block
    # a scope longer than the terminal is broken, not allowed to overflow
    assert "scope=persona_user:" in text


def test_explain_json_is_unchanged(db: Path) -> None:
    narrow = json.loads(recall(db, 80, "--explain", "--json").stdout)
    wide = json.loads(recall(db, 220, "--explain", "--json").stdout)
    assert set(narrow) == {
        "hits",
        "timings_ms",
        "candidates",
        "dropped_terms",
        "paths",
        "graph",
        "time_window",
        "abstained",
    }
    for a, b in zip(narrow["hits"], wide["hits"], strict=True):
        assert a["memory"] == b["memory"] and a["score"] == b["score"]
        assert set(a["explain"]) >= {"dense", "keyword", "final", "signals", "priority"}


def test_plain_recall_keeps_its_table(db: Path) -> None:
    text = recall(db, 120).stdout
    assert "score" in text.splitlines()[1] and "content" in text.splitlines()[1]
    assert "priority=" not in text
