"""End-to-end tests of the ``kenning`` command line against real SQLite files and the real model.

The real MiniLM model (conftest's session ``minilm``) is shared by every invocation:
each ``Memory`` the CLI opens would otherwise load its own copy (~1 s each).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
import typer.main
import typer.testing
from typer.testing import CliRunner, Result

from kenning import core
from kenning.cli import app, main
from kenning.embeddings import Embedder
from kenning.stores.sqlite.driver import sqlite3

runner = CliRunner()
ALL_STATUSES = [
    "--status",
    "active",
    "--status",
    "archived",
    "--status",
    "pending_review",
    "--status",
    "superseded",
]


@pytest.fixture(scope="module", autouse=True)
def shared_model(minilm: Embedder) -> Iterator[Embedder]:
    """Every Memory the CLI opens gets the session's already loaded MiniLM model."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(core, "create_embedder", lambda name, **options: minilm)
        if hasattr(typer.testing, "_get_command"):  # build the click command once, not per call
            command = typer.main.get_command(app)
            mp.setattr(typer.testing, "_get_command", lambda typer_app: command)
        yield minilm


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory, shared_model: Embedder) -> Path:
    """One database for the module (tests use their own scopes or contents)."""
    path = tmp_path_factory.mktemp("cli") / "kenning.db"
    ok(path, "init")
    return path


def run(db: Path | str, *args: str, input: str | None = None) -> Result:
    return runner.invoke(app, ["--db", str(db), *args], input=input, env={"COLUMNS": "220"})


def ok(db: Path | str, *args: str, input: str | None = None) -> Any:
    """Run with --json, expect success, return the parsed stdout."""
    result = run(db, *args, "--json", input=input)
    assert result.exit_code == 0, (result.stdout, result.stderr, result.exception)
    return json.loads(result.stdout)


def fails(db: Path | str, code: int, *args: str, input: str | None = None) -> dict[str, Any]:
    """Run with --json, expect exit ``code`` and a clean error; return the error object."""
    result = run(db, *args, "--json", input=input)
    assert result.exit_code == code, (result.stdout, result.stderr, result.exception)
    assert "Traceback" not in result.output
    error: dict[str, Any] = json.loads(result.stdout)["error"]
    assert result.stderr == f"error: {error['message']}\n"
    return error


def everything(db: Path | str) -> list[dict[str, Any]]:
    """Every memory of the default org, all statuses, as list --json prints it."""
    items: list[dict[str, Any]] = ok(db, "list", "--all-scopes", *ALL_STATUSES, "--limit", "1000")[
        "items"
    ]
    return items


def rows(db: Path) -> dict[str, int]:
    """Row counts of every table a write touches, read straight from the SQLite file."""
    with closing(sqlite3.connect(db)) as conn:
        return {
            t: conn.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0]
            for t in ("memories", "vectors", "memories_fts", "history", "scopes")
        }


def remember(db: Path, content: str, *args: str, input: str | None = None) -> dict[str, Any]:
    record: dict[str, Any] = ok(db, "remember", content, *args, input=input)
    return record


# -- commands -----------------------------------------------------------------------------


def test_init_creates_the_database(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "new.db"
    info = ok(path, "init")
    assert info["database"] == str(path) and path.exists()
    assert info["embedder"].startswith("all-MiniLM-L6-v2") and info["dim"] == 384
    assert info["principal"] == {"org_id": "default", "user_id": "default", "roles": ["admin"]}
    assert info["reranker"] is None
    human = run(path, "init")
    assert human.exit_code == 0
    assert f"database:  {path}" in human.stdout and "user=default roles=admin" in human.stdout
    assert "reranker:  off" in human.stdout


def test_help_lists_the_commands_and_main_is_the_entry_point() -> None:
    result = runner.invoke(app, ["--help"])
    assert result.exit_code == 0
    names = (
        "init remember recall get list update upsert forget archive restore feedback "
        "history stats export import"
    ).split()
    for name in names:
        assert name in result.stdout
    assert callable(main)


def test_remember_then_recall_finds_it(db: Path) -> None:
    rec = remember(
        db,
        "Alice prefers green tea over coffee",
        "--tag",
        "drink",
        "--meta",
        "n=3",
        "--meta",
        'who="alice"',
        "--meta",
        "note=plain text",
        "--importance",
        "4",
        "--source",
        "user_input",
        "--event-at",
        "2024-05-01T10:00:00Z",
    )
    assert rec["scope"] == "user:default" and rec["tags"] == ["drink"]
    assert rec["metadata"] == {"n": 3, "who": "alice", "note": "plain text"}
    assert rec["importance"] == 4 and rec["confidence"] == 0.8  # user_input reliability
    assert rec["event_at"] == "2024-05-01T10:00:00+00:00"
    hits = ok(db, "recall", "what does Alice drink?", "-k", "3")["hits"]
    assert hits[0]["memory"]["id"] == rec["id"]
    filtered = ok(
        db,
        "recall",
        "Alice drink",
        "--tag",
        "drink",
        "--meta",
        "n=3",
        "--since",
        "2024-01-01",
        "--until",
        "2025-01-01",
    )["hits"]
    assert [h["memory"]["id"] for h in filtered] == [rec["id"]]
    human = run(db, "recall", "what does Alice drink?")
    assert human.exit_code == 0 and rec["id"] in human.stdout and "green tea" in human.stdout


def test_remember_reads_stdin(db: Path) -> None:
    rec = remember(db, "-", input="  The build server is called hopper\n")
    assert rec["content"] == "The build server is called hopper"
    human = run(db, "remember", "Plain output [bold]not markup[/bold]")
    assert human.exit_code == 0 and human.stdout.startswith("remembered ")


def test_recall_explain_shows_breakdown_and_timings(db: Path) -> None:
    rec = remember(db, "The quarterly planning meeting is on Thursdays")
    human = run(db, "recall", "quarterly planning meeting", "--explain")
    assert human.exit_code == 0, human.stderr
    for figure in (
        "dense=",
        "keyword=",
        "relevance=",
        "confidence=",
        "temporal=",
        "layer=",
        "priority=",
        rec["id"],
    ):
        assert figure in human.stdout
    assert "timings (ms):" in human.stdout and "embed=" in human.stdout
    assert "candidates: dense=" in human.stdout
    data = ok(db, "recall", "quarterly planning meeting", "--explain")
    top = data["hits"][0]
    assert top["memory"]["id"] == rec["id"]
    assert {
        "dense",
        "keyword",
        "relevance",
        "confidence",
        "temporal",
        "layer_boost",
        "final",
    } <= set(top["explain"])
    assert data["timings_ms"]["total"] > 0 and data["candidates"]["dense"] >= 1
    assert "explain" not in ok(db, "recall", "quarterly planning")["hits"][0]


def test_list_pages_with_cursor(db: Path, tmp_path: Path) -> None:
    batch = tmp_path / "page.jsonl"
    batch.write_text("".join(json.dumps({"content": f"paging {i}"}) + "\n" for i in range(5)))
    ids = set(ok(db, "remember", "--file", str(batch), "--scope", "team:paging")["ids"])
    seen: list[str] = []
    cursor: list[str] = []
    for _ in range(5):
        page = ok(db, "list", "--scope", "team:paging", "--limit", "2", *cursor)
        seen += [m["id"] for m in page["items"]]
        if page["next_cursor"] is None:
            break
        cursor = ["--cursor", page["next_cursor"]]
    assert len(seen) == 5 and set(seen) == ids
    human = run(db, "list", "--scope", "team:paging", "--limit", "2")
    assert human.exit_code == 0 and "next cursor: " in human.stdout
    assert fails(db, 2, "list", "--cursor", "garbage!")["field"] == "cursor"


def test_update_then_history_shows_both_versions(db: Path) -> None:
    rec = remember(db, "The office wifi password is hunter2", "--tag", "office")
    new = ok(
        db,
        "update",
        rec["id"],
        "--content",
        "The office wifi password is correcthorse",
        "--tag",
        "wifi",
        "--tag",
        "secrets",
        "--importance",
        "5",
        "--meta",
        "rotated=true",
    )
    assert new["version"] == 2 and new["tags"] == ["wifi", "secrets"]
    assert new["metadata"] == {"rotated": True} and new["importance"] == 5
    history = ok(db, "history", rec["id"])
    assert [h["op"] for h in history] == ["create", "update"]
    assert history[0]["content"] == "The office wifi password is hunter2"
    assert history[1]["content"] == "The office wifi password is correcthorse"
    assert history[1]["changes"]["importance"] == [3, 5]
    human = run(db, "history", rec["id"])
    assert human.exit_code == 0 and "update" in human.stdout and "correcthorse" in human.stdout
    cleared = ok(db, "update", rec["id"], "--clear-tags")
    assert cleared["tags"] == [] and cleared["version"] == 3
    assert fails(db, 2, "update", rec["id"])["field"] == "changes"


def test_upsert_creates_then_updates_by_key(db: Path) -> None:
    first = ok(db, "upsert", "favourite colour", "blue", "--tag", "prefs")
    second = ok(db, "upsert", "favourite colour", "green")
    assert second["id"] == first["id"] and second["key"] == "favourite colour"
    assert second["content"] == "green" and second["version"] == 2
    assert ok(db, "get", first["id"])["content"] == "green"
    conflict = fails(db, 5, "remember", "teal", "--key", "favourite colour")
    assert conflict["type"] == "Conflict" and "use upsert" in conflict["message"]


def test_archive_and_restore(db: Path) -> None:
    rec = remember(db, "Zebra crossings are striped", "--scope", "team:zoo")
    assert ok(db, "archive", rec["id"])["status"] == "archived"
    assert ok(db, "list", "--scope", "team:zoo")["items"] == []
    archived = ok(db, "list", "--scope", "team:zoo", "--status", "archived")["items"]
    assert [m["id"] for m in archived] == [rec["id"]]
    hits = ok(db, "recall", "zebra", "--all-scopes")["hits"]
    assert rec["id"] not in {h["memory"]["id"] for h in hits}
    assert ok(db, "restore", rec["id"])["status"] == "active"
    human = run(db, "archive", rec["id"])
    assert human.exit_code == 0 and human.stdout == f"archived {rec['id']} (status archived)\n"
    ok(db, "restore", rec["id"])


def test_feedback_changes_confidence(db: Path) -> None:
    rec = remember(db, "The cafeteria closes at 3pm", "--confidence", "0.5")
    up = ok(db, "feedback", rec["id"], "upvote")
    assert up["confidence"] > 0.5
    down = ok(db, "feedback", rec["id"], "contradict")
    assert down["confidence"] < up["confidence"]
    assert "feedback must be one of" in fails(db, 2, "feedback", rec["id"], "like")["message"]


def test_forget_needs_confirmation_then_is_gone(db: Path) -> None:
    rec = remember(db, "A memory to forget")
    refused = run(db, "forget", rec["id"])
    assert refused.exit_code == 2
    assert "refusing to forget" in refused.stderr and "--yes" in refused.stderr
    assert ok(db, "get", rec["id"])["id"] == rec["id"]
    assert ok(db, "forget", rec["id"], "--yes") == {"forgotten": rec["id"]}
    error = fails(db, 4, "get", rec["id"])
    message = f"memory {rec['id']!r} not found"
    assert error == {"type": "NotFound", "message": message, "field": None}
    plain = run(db, "get", rec["id"])
    assert plain.exit_code == 4 and plain.stdout == ""
    assert plain.stderr == f"error: memory {rec['id']!r} not found\n"
    assert [h["op"] for h in ok(db, "history", rec["id"])][-1] == "delete"


def test_stats(db: Path) -> None:
    remember(db, "Stats need at least one memory")
    layers = {s["layer"]: s for s in ok(db, "stats")}
    personal = layers["personal"]
    assert personal["total_memories"] >= 1 and personal["avg_confidence"] is not None
    assert sum(personal["by_status"].values()) == personal["total_memories"]
    assert set(personal) >= {"by_type", "confidence_distribution", "age_distribution"}
    human = run(db, "stats")
    assert human.exit_code == 0 and "personal" in human.stdout and "avg conf" in human.stdout


def test_export_import_round_trip(db: Path, tmp_path: Path) -> None:
    rec = remember(db, "Exported with history", "--scope", "org:default")
    ok(db, "update", rec["id"], "--content", "Exported with a longer history")
    ok(db, "archive", ok(db, "remember", "An archived memory travels too")["id"])
    out = tmp_path / "dump.jsonl"
    summary = ok(db, "export", "--out", str(out))
    before = everything(db)
    assert summary == {"exported": len(before), "path": str(out)} and len(before) >= 5
    to_stdout = run(db, "export")
    assert to_stdout.exit_code == 0 and to_stdout.stdout == out.read_text()
    assert to_stdout.stderr == f"exported {len(before)} memories\n"

    fresh = tmp_path / "fresh.db"
    assert ok(fresh, "import", str(out)) == {"imported": len(before)}
    assert everything(fresh) == before

    def no_seq(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [{k: v for k, v in e.items() if k != "seq"} for e in entries]  # seq is per database

    assert no_seq(ok(fresh, "history", rec["id"])) == no_seq(ok(db, "history", rec["id"]))
    hits = ok(fresh, "recall", "exported longer history", "--all-scopes")["hits"]
    assert hits[0]["memory"]["id"] == rec["id"]  # vectors came along

    assert fails(fresh, 5, "import", str(out))["type"] == "Conflict"
    assert everything(fresh) == before
    assert fails(fresh, 2, "import", str(tmp_path / "missing.jsonl"))["field"] == "file"


def test_batch_remember_from_jsonl(db: Path, tmp_path: Path) -> None:
    lines = [
        {"content": "Batch one", "tags": ["b"]},
        {},
        {"content": "Batch two", "memory_type": "episodic", "scope": "team:other"},
        {"content": "Batch three", "metadata": {"k": 1}},
    ]
    path = tmp_path / "batch.jsonl"
    path.write_text("\n".join("" if not item else json.dumps(item) for item in lines) + "\n")
    stored = ok(db, "remember", "--file", str(path), "--scope", "team:batch", "--importance", "2")
    assert stored["stored"] == 3
    records = {r["content"]: r for r in everything(db) if r["id"] in stored["ids"]}
    assert records["Batch one"]["scope"] == "team:batch" and records["Batch one"]["tags"] == ["b"]
    assert records["Batch two"]["scope"] == "team:other"  # a line's own fields win
    assert records["Batch two"]["memory_type"] == "episodic"
    assert {r["importance"] for r in records.values()} == {2}
    human = run(db, "remember", "--file", "-", input=json.dumps({"content": "Batch stdin"}) + "\n")
    assert human.exit_code == 0 and human.stdout == "remembered 1 memories\n"


# -- bad input: precise error, right exit code, nothing written -----------------------------


def _batch_with_bad_third_line(tmp_path: Path) -> str:
    path = tmp_path / "bad.jsonl"
    rows = [
        {"content": "never stored 1"},
        {"content": "never stored 2"},
        {"content": "never stored 3", "confidence": 7},
    ]
    path.write_text("\n".join(json.dumps(r) for r in rows))
    return str(path)


def _batch_with_broken_json(tmp_path: Path) -> str:
    path = tmp_path / "broken.jsonl"
    path.write_text('{"content": "never stored 4"}\n{"content": \n')
    return str(path)


@pytest.mark.parametrize(
    ("args", "field", "message"),
    [
        (["remember", ""], "content", "content must not be empty"),
        (["remember", "   "], "content", "content must not be empty"),
        (["remember", "x" * 20_001], "content", "content is 20001 characters; the limit is 20000"),
        (["remember", "x", "--confidence", "2"], "confidence", "confidence must be from 0 to 1"),
        (["remember", "x", "--importance", "9"], "importance", "importance must be an integer"),
        (["remember", "x", "--scope", "galaxy:x"], "scope", "unknown scope kind 'galaxy'"),
        (["remember", "x", "--type", "dream"], "memory_type", "memory_type must be one of"),
        (
            ["remember", "x", "--event-at", "last tuesday"],
            "event_at",
            "event_at must be an ISO-8601 date/time, got 'last tuesday'",
        ),
        (
            ["remember", "x", "--meta", "novalue"],
            "metadata",
            "--meta must be KEY=VALUE; got 'novalue'",
        ),
        (["remember", "x", "--meta", "=1"], "metadata", "--meta must be KEY=VALUE"),
        (["remember", "x", "--meta", "n=NaN"], "metadata", "metadata is not JSON-serialisable"),
        (["remember"], "content", "give CONTENT"),
        (["remember", "x", "--file", "{bad3}"], "content", "give CONTENT"),
        (
            ["remember", "--file", "{bad3}"],
            "confidence",
            "items[2]: confidence must be from 0 to 1",
        ),
        (["remember", "--file", "{broken}"], "file", "line 2: not valid JSON"),
        (
            ["remember", "--file", "/nonexistent/x.jsonl"],
            "file",
            "cannot read /nonexistent/x.jsonl",
        ),
        (["recall", "x", "--since", "soon"], "event_after", "event_after must be an ISO-8601"),
        (["recall", "x", "--layer", "galaxy"], "layers", "unknown layer"),
        (["recall", "x", "--scope", "user:a", "--all-scopes"], "scopes", "not both"),
        (["recall", "x", "-k", "0"], "k", "k must be an integer from 1 to 1000"),
        (["list", "--status", "gone"], "status", "status must be one of"),
        (["--user", "bad id!", "list"], "user id", "user id must be 1-128 characters"),
    ],
)
def test_bad_input_is_refused_and_writes_nothing(
    db: Path, tmp_path: Path, args: list[str], field: str, message: str
) -> None:
    files = {
        "{bad3}": _batch_with_bad_third_line(tmp_path),
        "{broken}": _batch_with_broken_json(tmp_path),
    }
    before = rows(db)
    error = fails(db, 2, *[files.get(a, a) for a in args])
    assert error["type"] == "InvalidInput" and error["field"] == field
    assert message in error["message"]
    assert rows(db) == before


def test_unknown_options_are_usage_errors(db: Path) -> None:
    result = run(db, "remember", "x", "--importance", "high")
    assert result.exit_code == 2 and "Traceback" not in result.output


# -- access control -----------------------------------------------------------------------


def test_members_cannot_read_or_write_each_others_memories(db: Path) -> None:
    mine = ok(db, "--user", "alice", "remember", "Alice's private note about the merger")
    assert mine["scope"] == "user:alice" and mine["created_by"] == "alice"
    bob = ["--user", "bob"]
    assert fails(db, 4, *bob, "get", mine["id"])["type"] == "NotFound"
    assert fails(db, 4, *bob, "forget", mine["id"], "--yes")["type"] == "NotFound"
    assert fails(db, 4, *bob, "history", mine["id"])["type"] == "NotFound"
    denied = fails(db, 3, *bob, "remember", "sneaky", "--scope", "user:alice")
    assert denied == {
        "type": "PermissionDenied",
        "field": None,
        "message": "'bob' may not write scope 'user:alice'",
    }
    assert fails(db, 3, *bob, "recall", "merger", "--scope", "user:alice")["type"] == (
        "PermissionDenied"
    )
    bob_sees = ok(db, *bob, "recall", "merger note", "--all-scopes")["hits"]
    assert mine["id"] not in {h["memory"]["id"] for h in bob_sees}
    assert fails(db, 3, *bob, "remember", "org news", "--scope", "org:default")["type"] == (
        "PermissionDenied"
    )
    assert ok(db, "get", mine["id"])["id"] == mine["id"]  # the default admin reads everything
    assert ok(db, "--user", "alice", "get", mine["id"])["content"].startswith("Alice's")


def test_team_members_share_team_scope(db: Path) -> None:
    note = ok(
        db,
        "--user",
        "carol",
        "--team",
        "eng",
        "remember",
        "Deploys freeze on Fridays",
        "--scope",
        "team:eng",
    )
    assert ok(db, "--user", "dave", "--team", "eng", "get", note["id"])["scope"] == "team:eng"
    assert fails(db, 4, "--user", "erin", "get", note["id"])["type"] == "NotFound"
    assert (
        fails(db, 3, "--user", "erin", "--team", "ops", "remember", "x", "--scope", "team:eng")[
            "type"
        ]
        == "PermissionDenied"
    )
    assert ok(db, "--user", "carol", "--role", "admin", "get", note["id"])["id"] == note["id"]


# -- migrate and database URLs -------------------------------------------------------------


def migrate(*args: str) -> Result:
    return runner.invoke(app, ["migrate", *args], env={"COLUMNS": "220"})


def migrate_fails(code: int, *args: str) -> dict[str, Any]:
    """Run migrate with --json, expect exit ``code`` and a clean error; return the error object."""
    result = migrate(*args, "--json")
    assert result.exit_code == code, (result.stdout, result.stderr, result.exception)
    assert "Traceback" not in result.output
    error: dict[str, Any] = json.loads(result.stdout)["error"]
    assert result.stderr == f"error: {error['message']}\n"
    return error


def _org_view(db: Path | str, org: str) -> dict[str, Any]:
    """Everything an admin of ``org`` lists, with each memory's history (seq is per database)."""
    items = ok(db, "--org", org, "list", "--all-scopes", *ALL_STATUSES, "--limit", "1000")["items"]
    history = {
        m["id"]: [
            {k: v for k, v in h.items() if k != "seq"}
            for h in ok(db, "--org", org, "history", m["id"])
        ]
        for m in items
    }
    return {"items": items, "history": history}


@pytest.fixture
def pg_db(pg_server: Any) -> Iterator[Any]:
    """``pg_db(name)``: the URL of a fresh, empty PostgreSQL database ``name``."""
    made: list[str] = []

    def make(name: str) -> str:
        pg_server.psql("postgres", f"CREATE DATABASE {name} OWNER kenning")
        made.append(name)
        return str(pg_server.url(name))

    yield make
    for name in made:
        pg_server.psql("postgres", f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def test_migrate_sqlite_to_postgresql_and_back(tmp_path: Path, pg_db: Any) -> None:
    src = tmp_path / "src.db"
    for org in ("acme", "globex"):
        at = ["--org", org]
        keyed = ok(
            src,
            *at,
            "remember",
            f"{org} deploys on Tuesdays",
            "--scope",
            "team:eng",
            "--key",
            "deploy day",
            "--tag",
            "ops",
            "--meta",
            "n=2",
        )
        ok(src, *at, "upsert", "deploy day", f"{org} deploys on Wednesdays", "--scope", "team:eng")
        ok(
            src,
            *at,
            "update",
            ok(src, *at, "remember", f"{org} uses Postgres")["id"],
            "--content",
            f"{org} uses PostgreSQL 16",
        )
        ok(
            src,
            *at,
            "archive",
            ok(src, *at, "remember", f"{org} once used MySQL", "--scope", f"org:{org}")["id"],
        )
        ok(src, *at, "forget", ok(src, *at, "remember", f"{org} secret")["id"], "--yes")
        assert keyed["key"] == "deploy day"
    pg = pg_db("cli_mig")
    back = f"sqlite:///{tmp_path / 'back.db'}"
    with pytest.MonkeyPatch.context() as mp:  # the model is never loaded
        mp.setattr(core, "create_embedder", lambda *a, **k: pytest.fail("model loaded"))
        there = migrate("--from", str(src), "--to", pg, "--batch-size", "2", "--json")
        assert there.exit_code == 0, (there.stdout, there.stderr, there.exception)
        again = migrate("--from", pg, "--to", back, "--json")
        assert again.exit_code == 0, (again.stdout, again.stderr, again.exception)
    first, second = json.loads(there.stdout), json.loads(again.stdout)
    assert first["from"] == f"sqlite:///{src}" and first["to"] == pg and second["from"] == pg
    assert first["organizations"] == second["organizations"]
    assert [(o["org_id"], o["memories"]) for o in first["organizations"]] == [
        ("acme", 3),
        ("globex", 3),
    ]
    assert all(len(o["checksum"]) == 64 for o in first["organizations"])
    assert first["verified"] is True and first["memories"] == 6

    for org in ("acme", "globex"):
        before = _org_view(src, org)
        assert _org_view(pg, org) == before and _org_view(back, org) == before
        hits = ok(back, "--org", org, "recall", "which day do we deploy", "--all-scopes")["hits"]
        assert hits[0]["memory"]["content"] == f"{org} deploys on Wednesdays"

    human = migrate("--from", back, "--to", str(tmp_path / "third.db"))
    assert human.exit_code == 0, (human.stdout, human.stderr)
    assert "copied and verified 6 memories" in human.stdout
    for org in first["organizations"]:
        assert org["checksum"] in human.stdout and org["org_id"] in human.stdout


def test_migrate_refuses_and_writes_nothing(tmp_path: Path, pg_db: Any) -> None:
    src, pg = tmp_path / "src.db", pg_db("cli_busy")
    ok(src, "--org", "acme", "remember", "Acme's first memory")
    ok(pg, "--org", "acme", "remember", "Acme already lives in PostgreSQL")
    before = _org_view(pg, "acme")
    error = migrate_fails(5, "--from", str(src), "--to", pg)
    assert error["type"] == "Conflict" and "'acme' (1 memories)" in error["message"]
    assert _org_view(pg, "acme") == before

    same = migrate_fails(2, "--from", str(src), "--to", f"sqlite:///{src}")
    assert same["field"] == "to" and "same database" in same["message"]
    bad = migrate_fails(2, "--from", "mysql://me@db/kenning", "--to", str(tmp_path / "x.db"))
    assert bad == {
        "type": "InvalidInput",
        "field": "from",
        "message": "from: no store for 'mysql' URLs; use sqlite:///PATH, "
        "postgresql://USER@HOST/DB or a file path",
    }
    missing = migrate_fails(2, "--from", str(tmp_path / "nope.db"), "--to", pg)
    assert "holds no kenning store" in missing["message"]
    assert not (tmp_path / "x.db").exists() and not (tmp_path / "nope.db").exists()
    assert migrate("--from", str(src), "--to", pg, "--batch-size", "0").exit_code == 2


def test_db_takes_a_path_or_a_url(tmp_path: Path, pg_db: Any) -> None:
    path = tmp_path / "plain.db"
    rec = remember(path, "Reached through a plain path")
    assert ok(f"sqlite:///{path}", "get", rec["id"])["content"] == "Reached through a plain path"
    pg = pg_db("cli_db_url")
    info = ok(pg.replace("postgresql://", "postgres://"), "init")
    assert info["database"] == pg
    on_pg = ok(pg, "remember", "Stored in PostgreSQL")
    assert ok(pg, "get", on_pg["id"])["content"] == "Stored in PostgreSQL"
    assert fails(path, 4, "get", on_pg["id"])["type"] == "NotFound"
    bad = fails("mysql://me@db/kenning", 2, "list")
    assert bad["field"] == "db" and "no store for 'mysql' URLs" in bad["message"]
    env = runner.invoke(app, ["get", on_pg["id"], "--json"], env={"KENNING_DATABASE_URL": pg})
    assert env.exit_code == 0 and json.loads(env.stdout)["id"] == on_pg["id"]


# -- kenning graph ------------------------------------------------------------------------


def test_graph_commands_link_walk_and_rebuild(tmp_path: Path) -> None:
    db = tmp_path / "graph.db"
    ids = ok(
        db,
        "remember",
        "--file",
        "-",
        "--scope",
        "team:g",
        input='{"content": "Farida repaired the Vienna bridge"}\n'
        '{"content": "Farida inspected the Vienna tunnel"}\n'
        '{"content": "The tunnel reopened in May"}\n',
    )["ids"]
    a, b, c = ids
    near = ok(db, "graph", "neighbours", a)
    assert {n["memory"]["id"] for n in near} == {b, c}
    assert {n["edge"]["relation"] for n in near} == {"co_occurs"}
    edge = ok(db, "graph", "link", a, c, "causes", "--weight", "0.5")
    assert edge == {"src": a, "dst": c, "relation": "causes", "weight": 0.5}
    only = ok(db, "graph", "neighbours", a, "--relation", "causes")
    assert [n["memory"]["id"] for n in only] == [c]
    view = ok(db, "graph", "entity", "farida's")
    assert view["entity"]["label"] == "Farida" and view["entity"]["mentions"] == 2
    assert {r["entity"]["label"] for r in view["related"]} == {"Vienna"}
    by_entity = ok(db, "graph", "neighbours", "--entity", "Vienna")
    assert {n["memory"]["id"] for n in by_entity} == {a, b}
    paths = ok(db, "graph", "paths", a, c, "--hops", "1")
    assert [p["nodes"] for p in paths] == [[a, c]] and paths[0]["relations"] in (
        ["causes"],
        ["co_occurs"],
    )
    human = run(db, "graph", "paths", a, c)
    assert human.exit_code == 0 and "strength" in human.stdout
    assert run(db, "graph", "entity", "Vienna").exit_code == 0
    assert run(db, "graph", "neighbours", a).exit_code == 0
    report = ok(db, "graph", "rebuild", "--scope", "team:g", "--clear-first")
    assert report["memories"] == 3 and report["cleared"] and "co_occurs" in report["not_rebuilt"]
    assert ok(db, "graph", "neighbours", a) == []  # co_occurs and the typed link are gone
    assert ok(db, "graph", "entity", "Farida")["entity"]["mentions"] == 2
    human = run(db, "graph", "rebuild")
    assert human.exit_code == 0 and "rebuilt 3 memories" in human.stdout


def test_graph_commands_reject_bad_input_cleanly(tmp_path: Path) -> None:
    db = tmp_path / "bad.db"
    a = remember(db, "Ada writes compilers")["id"]
    b = remember(db, "Ada reads poetry")["id"]
    t = remember(db, "Team memo", "--scope", "team:x")["id"]
    assert fails(db, 4, "graph", "neighbours", "0" * 32)["type"] == "NotFound"
    assert fails(db, 2, "graph", "neighbours")["field"] == "entity"
    assert fails(db, 2, "graph", "neighbours", a, "--relation", "loves")["field"] == "relation"
    assert fails(db, 4, "graph", "entity", "Nobody")["type"] == "NotFound"
    assert fails(db, 2, "graph", "paths", a, b, "--hops", "7")["field"] == "max_hops"
    assert fails(db, 2, "graph", "paths", a, b, "--hops", "0")["field"] == "max_hops"
    assert fails(db, 2, "graph", "link", a, b, "likes")["field"] == "relation"
    assert fails(db, 2, "graph", "link", a, b, "causes", "--weight", "2")["field"] == "weight"
    assert fails(db, 2, "graph", "link", a, t, "causes")["field"] == "b"
    assert fails(db, 3, "--user", "eve", "graph", "rebuild", "--scope", "team:x")["type"] == (
        "PermissionDenied"
    )
    assert ok(db, "graph", "neighbours", a, "--relation", "causes") == []
