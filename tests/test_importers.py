"""Importers (:mod:`kenning.importers`): mem0's ``get_all`` output, JSONL and CSV
through a mapping, and the ``kenning import --from`` command; real engine, real
stores, the real model.

Every import is checked whole before anything is written, keeps the origin's
times and metadata, refuses scopes the importer may not write, and a re-import
of the same input changes nothing.
"""

from __future__ import annotations

import copy
import io
import json
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import typer.main
import typer.testing
from typer.testing import CliRunner

from kenning import InvalidInput, Memory, MemoryRecord, PermissionDenied, Principal, Scope
from kenning import core as kenning_core
from kenning.cli import app
from kenning.embeddings import Embedder
from kenning.importers import import_mem0, import_table, parse_mapping

LOCOMO = Path(__file__).resolve().parents[2] / "shared" / "bench" / "locomo10.json"


def mem0_items() -> list[dict[str, Any]]:
    """What mem0's get_all returns for four owners (v1.1 items), oldest first."""
    return [
        {
            "id": "9f1c-alice-tea",
            "memory": "Alice prefers green tea over coffee",
            "hash": "5d41402abc4b2a76b9719d911017c592",
            "metadata": {"topic": "drinks", "confidence": 3},
            "created_at": "2024-05-01T09:30:00-07:00",
            "updated_at": None,
            "user_id": "alice",
        },
        {
            "id": "9f1c-alice-mac",
            "memory": "Alice's work laptop is a MacBook Pro",
            "hash": "7d793037a0760186574b0282f2f435e7",
            "metadata": None,
            "created_at": "2024-05-02T10:00:00-07:00",
            "updated_at": "2024-06-02T10:00:00-07:00",
            "user_id": "alice",
            "agent_id": "helpdesk",
            "run_id": "ticket-42",
            "actor_id": "alice",
            "role": "user",
        },
        {
            "id": "9f1c-helpdesk-hours",
            "memory": "The helpdesk answers between 8am and 6pm",
            "hash": "1a79a4d60de6718e8e5b326e338ae533",
            "metadata": {"kind": "policy"},
            "created_at": "2024-05-03T08:00:00+00:00",
            "updated_at": None,
            "agent_id": "helpdesk",
            "expiration_date": "2030-12-31",
        },
        {
            "id": "9f1c-run-only",
            "memory": "The standup moved to Thursdays",
            "hash": "ab56b4d92b40713acc5af89985d4b786",
            "created_at": "2024-05-04T12:00:00Z",
            "run_id": "weekly-sync",
            "categories": ["work", "schedule"],
        },
    ]


def everything(mem: Memory) -> list[MemoryRecord]:
    """Every memory the default admin can read (any status), oldest first."""
    statuses = ["active", "archived", "pending_review", "superseded"]
    page = mem.list(scopes="all", filters={"statuses": statuses}, limit=1000)
    return sorted(page.items, key=lambda r: r.created_at)


def by_origin(mem: Memory) -> dict[str, MemoryRecord]:
    return {r.metadata["import"]["id"]: r for r in everything(mem)}


# -- mem0 -----------------------------------------------------------------------------------


def test_mem0_round_trip_keeps_scopes_fields_metadata_and_times(mem: Memory) -> None:
    report = import_mem0(mem, {"results": mem0_items()})
    assert (len(report.added), len(report.updated), report.unchanged) == (4, 0, 0)
    got = by_origin(mem)
    tea, mac, hours, run = (got[i["id"]] for i in mem0_items())

    assert tea.scope == Scope.user("alice")
    assert mac.scope == Scope.persona_user("helpdesk", "alice")
    assert hours.scope == Scope.persona("helpdesk")
    assert run.scope == Scope.user(mem.principal.user_id)  # no owner: the importer's own

    assert tea.content == "Alice prefers green tea over coffee"
    assert tea.source == "mem0" and tea.memory_type.value == "semantic"
    assert tea.metadata == {
        "topic": "drinks",
        "confidence": 3,
        "import": {
            "from": "mem0",
            "id": "9f1c-alice-tea",
            "hash": "5d41402abc4b2a76b9719d911017c592",
            "user_id": "alice",
            "digest": tea.metadata["import"]["digest"],
        },
    }
    assert tea.created_at == datetime(2024, 5, 1, 16, 30, tzinfo=UTC)
    assert tea.updated_at == tea.created_at  # mem0 never updated it
    assert tea.said_at == tea.created_at
    # its strength counts from the import, not from 2024: consolidation keeps it
    assert tea.last_accessed == mem.clock.now()
    assert mem.strength(tea.id) == pytest.approx(tea.strength)

    assert mac.agent_id == "helpdesk" and mac.session_id == "ticket-42"
    assert mac.metadata["actor_id"] == "alice" and mac.metadata["role"] == "user"
    assert mac.updated_at == datetime(2024, 6, 2, 17, 0, tzinfo=UTC)

    assert hours.valid_to == datetime(2031, 1, 1, tzinfo=UTC)  # after mem0's last day
    assert hours.metadata["expiration_date"] == "2030-12-31"
    assert run.session_id == "weekly-sync" and run.tags == ("work", "schedule")

    # recall finds them, in the scopes the ids named
    hit = mem.recall("what does alice like to drink?", 3, scopes=["user:alice"]).hits[0]
    assert hit.memory.id == tea.id
    hit = mem.recall("when is the helpdesk open", 3, scopes="all").hits[0]
    assert hit.memory.id == hours.id

    # and an export carries them whole
    out = io.StringIO()
    assert mem.export_jsonl(out) == 4
    exported = {
        row["record"]["metadata"]["import"]["id"]: row["record"]
        for row in map(json.loads, out.getvalue().splitlines())
    }
    assert exported["9f1c-alice-mac"]["scope"] == "persona_user:helpdesk/alice"
    assert exported["9f1c-alice-mac"]["created_at"] == "2024-05-02T17:00:00+00:00"
    assert exported["9f1c-alice-tea"]["metadata"]["topic"] == "drinks"


def test_mem0_bare_list_of_v1_0_is_the_same_import(make_memory: Callable[..., Memory]) -> None:
    new_shape, old_shape = make_memory("new"), make_memory("old")
    import_mem0(new_shape, {"results": mem0_items(), "relations": [{"source": "alice"}]})
    import_mem0(old_shape, mem0_items())

    def view(mem: Memory) -> list[tuple[Any, ...]]:
        return [
            (r.scope.key, r.content, r.created_at, r.updated_at, r.metadata, r.session_id)
            for r in everything(mem)
        ]

    assert view(new_shape) == view(old_shape)
    assert len(view(old_shape)) == 4


def test_mem0_file_path_and_scope_override(mem: Memory, tmp_path: Path) -> None:
    path = tmp_path / "mem0.json"
    path.write_text(json.dumps({"results": mem0_items()[:2]}), encoding="utf-8")
    report = import_mem0(mem, path, scope="team:support")
    assert len(report.added) == 2
    records = everything(mem)
    assert {r.scope.key for r in records} == {"team:support"}
    # the ids mem0 named are kept in the import record
    assert records[1].metadata["import"]["agent_id"] == "helpdesk"


def test_reimport_changes_nothing_and_picks_up_mem0_updates(
    mem: Memory, db_counts: Callable[[Memory], dict[str, int]]
) -> None:
    items = mem0_items()
    import_mem0(mem, {"results": items})
    before, counts = by_origin(mem), db_counts(mem)

    again = import_mem0(mem, {"results": items})
    assert (again.added, again.updated, again.unchanged) == ([], [], 4)
    assert db_counts(mem) == counts
    assert by_origin(mem) == before

    changed = copy.deepcopy(items)
    changed[0]["memory"] = "Alice prefers oolong tea over coffee"
    changed[0]["hash"] = "0cc175b9c0f1b6a831c399e269772661"
    changed[0]["updated_at"] = "2024-07-01T00:00:00+00:00"
    changed[2]["metadata"] = {"kind": "policy", "reviewed": True}
    report = import_mem0(mem, {"results": changed})
    tea, hours = before["9f1c-alice-tea"], before["9f1c-helpdesk-hours"]
    assert sorted(report.updated) == sorted([tea.id, hours.id]) and report.unchanged == 2
    after = by_origin(mem)
    assert after["9f1c-alice-tea"].id == tea.id  # the same memory, updated in place
    assert after["9f1c-alice-tea"].content == "Alice prefers oolong tea over coffee"
    assert after["9f1c-alice-tea"].updated_at == datetime(2024, 7, 1, tzinfo=UTC)
    assert after["9f1c-alice-tea"].created_at == tea.created_at
    assert after["9f1c-alice-tea"].version == tea.version + 1
    assert after["9f1c-helpdesk-hours"].metadata["reviewed"] is True
    assert [h.op for h in mem.history(tea.id)] == ["create", "import"]
    hit = mem.recall("oolong", 1, scopes=["user:alice"]).hits[0]
    assert hit.memory.id == tea.id  # re-embedded and re-indexed
    assert db_counts(mem)["memories"] == counts["memories"]
    # and once more: nothing
    assert import_mem0(mem, {"results": changed}).unchanged == 4


@pytest.mark.parametrize(
    ("mutate", "where", "field"),
    [
        (lambda items: items[2].pop("id"), "results[2]", "id"),
        (lambda items: items[2].update(memory=""), "results[2]", "content"),
        (lambda items: items[2].update(memory=None), "results[2]", "content"),
        (lambda items: items[3].update(user_id="has space"), "results[3]", "user_id"),
        (lambda items: items[1].update(created_at="last tuesday"), "results[1]", "created_at"),
        (lambda items: items[1].update(metadata=["a"]), "results[1]", "metadata"),
        (lambda items: items[0].update(expiration_date="soon"), "results[0]", "expiration_date"),
        (lambda items: items[3].update(run_id={"x": 1}), "results[3]", "run_id"),
        (lambda items: items.append("not an object"), "results[4]", "results"),
        (lambda items: items.append(dict(items[0])), "results[4]", "id"),
        (lambda items: items[0]["metadata"].update(payload="x" * 20_000), "results[0]", "metadata"),
    ],
)
def test_bad_mem0_item_is_named_and_changes_nothing(
    mem: Memory, mutate: Callable[[list[dict[str, Any]]], Any], where: str, field: str
) -> None:
    items = mem0_items()
    mutate(items)
    with pytest.raises(InvalidInput) as caught:
        import_mem0(mem, {"results": items})
    assert str(caught.value).startswith(f"{where}: "), str(caught.value)
    assert caught.value.field == field
    assert everything(mem) == []


@pytest.mark.parametrize("data", [{"memories": []}, None, 42, {"results": {"id": "x"}}])
def test_not_mem0_output_is_refused(mem: Memory, data: Any) -> None:
    with pytest.raises(InvalidInput, match="results|mem0"):
        import_mem0(mem, data)


def test_scopes_the_importer_may_not_write_are_refused(mem: Memory) -> None:
    mia = Principal.member("mia")
    items = [
        {"id": "1", "memory": "Mia takes the early train", "user_id": "mia"},
        {"id": "2", "memory": "Bob takes the late train", "user_id": "bob"},
    ]
    with pytest.raises(PermissionDenied, match=r"^results\[1\]: "):
        import_mem0(mem, {"results": items}, principal=mia)
    assert everything(mem) == []
    report = import_mem0(mem, {"results": items[:1]}, principal=mia)
    assert [r.scope.key for r in mem.list(principal=mia).items] == ["user:mia"]
    assert len(report.added) == 1


# -- JSONL and CSV ------------------------------------------------------------------------


def test_jsonl_mapping(mem: Memory) -> None:
    lines = [
        json.dumps(
            {
                "uid": "u1",
                "text": "Dana is allergic to peanuts",
                "ts": "2023-11-05T08:00:00Z",
                "kind": "health",
                "labels": ["diet", "allergy"],
                "prio": 5,
            }
        ),
        "",
        json.dumps(
            {"uid": "u2", "bot": "coach", "text": "Eli trains for a marathon", "ts": 1700000000}
        ),
        json.dumps({"scope": "team:eng", "text": "The deploy freeze starts Friday", "id": 7}),
    ]
    mapping = "content=text,user=uid,agent=bot,created_at=ts,tags=labels,importance=prio"
    report = import_table(mem, lines, "jsonl", mapping)
    assert len(report.added) == 3
    dana, eli, freeze = everything(mem)
    assert dana.scope == Scope.user("u1") and dana.content == "Dana is allergic to peanuts"
    assert dana.created_at == datetime(2023, 11, 5, 8, tzinfo=UTC)
    assert dana.tags == ("diet", "allergy") and dana.importance == 5
    assert dana.metadata["kind"] == "health"  # an unmapped column is kept
    assert dana.metadata["import"]["from"] == "jsonl" and dana.source == "import"
    assert eli.scope == Scope.persona_user("coach", "u2") and eli.agent_id == "coach"
    assert eli.created_at == datetime.fromtimestamp(1700000000, UTC)
    assert freeze.scope == Scope.team("eng") and freeze.metadata["import"]["id"] == "7"
    assert import_table(mem, lines, "jsonl", mapping).unchanged == 3


def test_csv_mapping_round_trip(mem: Memory, tmp_path: Path) -> None:
    path = tmp_path / "notes.csv"
    path.write_text(
        "note_id,who,body,when,chan,topic\n"
        "n1,alice,Alice moved to Lisbon in March,2024-03-10T12:00:00+00:00,slack,move\n"
        'n2,bob,"Bob\'s favourite editor is Vim, he says",2024-04-01,,tools\n',
        encoding="utf-8",
    )
    mapping = ["id=note_id,user=who", "content=body", "event_at=when,metadata.channel=chan"]
    report = import_table(mem, path, "csv", mapping)
    assert len(report.added) == 2
    got = by_origin(mem)
    alice, bob = got["n1"], got["n2"]
    assert alice.scope == Scope.user("alice") and alice.content == "Alice moved to Lisbon in March"
    assert alice.event_at == datetime(2024, 3, 10, 12, tzinfo=UTC)
    assert alice.said_at == alice.event_at
    assert alice.metadata["channel"] == "slack" and alice.metadata["topic"] == "move"
    assert "channel" not in bob.metadata  # an empty cell is a missing value
    assert bob.content == "Bob's favourite editor is Vim, he says"
    hit = mem.recall("where does alice live now", 1, scopes="all").hits[0]
    assert hit.memory.id == alice.id
    assert import_table(mem, path, "csv", mapping).unchanged == 2
    # an edited row updates its memory (same id)
    text = path.read_text(encoding="utf-8").replace("Lisbon", "Porto")
    path.write_text(text, encoding="utf-8")
    again = import_table(mem, path, "csv", mapping)
    assert again.updated == [alice.id] and by_origin(mem)["n1"].content.endswith("Porto in March")


@pytest.mark.parametrize(
    ("text", "message", "field"),
    [
        ("body,who\nok,alice\n,bob\n", "row 2 (line 3): content is missing", "content"),
        ("body,who\nok,alice\nfine,bo b\n", "row 2 (line 3): user must be", "user"),
        ("body,who,when\nok,alice,soon\n", "row 1 (line 2): created_at must be", "created_at"),
        ("body,who\nok,alice,extra\n", "row 1 (line 2): 3 values for 2 columns", "file"),
        ("body,body\nok,ok\n", "line 1: the header needs distinct", "file"),
        ("body,who,prio\nok,alice,high\n", "row 1 (line 2): importance must be", "importance"),
        ("body,who,prio\nok,alice,9\n", "row 1 (line 2): importance must be", "importance"),
        ("body,scope\nok,nowhere\n", "row 1 (line 2): scope must look like", "scope"),
    ],
)
def test_bad_csv_row_is_named_and_changes_nothing(
    mem: Memory, text: str, message: str, field: str
) -> None:
    mapping = "content=body,user=who,created_at=when,importance=prio"
    with pytest.raises(InvalidInput) as caught:
        import_table(mem, io.StringIO(text), "csv", mapping)
    assert str(caught.value).startswith(message), str(caught.value)
    assert caught.value.field == field
    assert everything(mem) == []


def test_bad_column_is_named(mem: Memory) -> None:
    with pytest.raises(InvalidInput, match=r"created_at must be .*\(column 'ts'\)"):
        import_table(mem, ['{"text": "x", "ts": "never"}'], "jsonl", "content=text,created_at=ts")
    with pytest.raises(InvalidInput, match=r"^line 2: not valid JSON"):
        import_table(mem, ['{"content": "x"}', "{oops"], "jsonl")
    assert everything(mem) == []


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("content", "TARGET=COLUMN"),
        ("body=text", "unknown mapping target 'body'"),
        ("content=a,content=b", "given twice"),
        ("metadata.=x", "unknown mapping target"),
    ],
)
def test_bad_mapping(spec: str, message: str) -> None:
    with pytest.raises(InvalidInput, match=message):
        parse_mapping(spec)


# -- a LoCoMo conversation as mem0 would have stored it ----------------------------------------


def locomo_as_mem0() -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The first LoCoMo conversation, one mem0 memory per turn: user_id the
    conversation, run_id its session, metadata speaker/dia_id, created_at the
    session's date (plus a second per turn, so the turns keep their order)."""
    sample = json.loads(LOCOMO.read_text(encoding="utf-8"))[0]
    conv = sample["conversation"]
    results: list[dict[str, Any]] = []
    n = 1
    while f"session_{n}" in conv:
        date = conv[f"session_{n}_date_time"]
        when = datetime.strptime(date, "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)
        for i, turn in enumerate(conv[f"session_{n}"]):
            text = f"{turn['speaker']}: {turn['text']}"
            if turn.get("blip_caption"):
                text += f" [shares {turn['blip_caption']}]"
            results.append(
                {
                    "id": f"{sample['sample_id']}-{turn['dia_id']}",
                    "memory": text,
                    "hash": f"h{len(results)}",
                    "metadata": {"speaker": turn["speaker"], "dia_id": turn["dia_id"]},
                    "created_at": (when + timedelta(seconds=i)).isoformat(),
                    "updated_at": None,
                    "user_id": sample["sample_id"],
                    "run_id": f"session_{n}",
                    "actor_id": turn["speaker"],
                    "role": "user",
                }
            )
        n += 1
    return sample, results


def test_locomo_conversation_in_mem0_shape_is_recalled(mem: Memory) -> None:
    sample, results = locomo_as_mem0()
    report = import_mem0(mem, {"results": results})
    assert len(report.added) == len(results) == 419
    scope = f"user:{sample['sample_id']}"

    first = mem.list(scopes=[scope], filters={"metadata": {"dia_id": "D1:3"}}).items[0]
    assert first.session_id == "session_1" and first.metadata["speaker"] == "Caroline"
    assert first.said_at == datetime(2023, 5, 8, 13, 56, 2, tzinfo=UTC)  # "1:56 pm on 8 May, 2023"

    def top(question: str, k: int) -> list[str]:
        hits = mem.recall(question, k, scopes=[scope]).hits
        return [h.memory.metadata["dia_id"] for h in hits]

    for qa in sample["qa"]:  # questions whose evidence turn is known to rank high
        if qa["question"] in {
            "What country is Caroline's grandma from?",
            "What did the charity race raise awareness for?",
            "How long have Mel and her husband been married?",
        }:
            assert qa["evidence"][0] in top(qa["question"], 5), qa
    single = [q for q in sample["qa"] if q["category"] == 4 and len(q["evidence"]) == 1]
    found = sum(q["evidence"][0] in top(q["question"], 10) for q in single)
    assert found / len(single) >= 0.65, (found, len(single))
    assert import_mem0(mem, {"results": results}).unchanged == 419


# -- the command ----------------------------------------------------------------------------

runner = CliRunner()


@pytest.fixture(scope="module")
def shared_model(minilm: Embedder) -> Iterator[Embedder]:
    """Every Memory the CLI opens gets the session's already loaded model."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(kenning_core, "create_embedder", lambda name, **options: minilm)
        if hasattr(typer.testing, "_get_command"):
            command = typer.main.get_command(app)
            mp.setattr(typer.testing, "_get_command", lambda typer_app: command)
        yield minilm


def cli(db: Path, *args: str, input: str | None = None) -> typer.testing.Result:
    return runner.invoke(app, ["--db", str(db), *args], input=input, env={"COLUMNS": "200"})


def test_cli_import_from_mem0_csv_and_jsonl(tmp_path: Path, shared_model: Embedder) -> None:
    db = tmp_path / "k.db"
    path = tmp_path / "mem0.json"
    path.write_text(json.dumps({"results": mem0_items()}), encoding="utf-8")
    result = cli(db, "import", "--from", "mem0", str(path), "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["added"] == 4
    result = cli(db, "import", "--from", "mem0", str(path))
    assert result.stdout == "imported 0 memories from mem0: 0 added, 0 updated, 4 unchanged\n"

    csv_text = "who,body\ncarol,Carol plays the cello\n"
    result = cli(
        db, "import", "--from", "csv", "--map", "user=who,content=body", "-", input=csv_text
    )
    assert result.exit_code == 0, result.output
    assert "1 added" in result.stdout
    result = cli(db, "import", "--from", "jsonl", "-", "--json", input='{"content": "Dee sings"}\n')
    assert json.loads(result.stdout)["added"] == 1

    listed = cli(db, "list", "--all-scopes", "--json", "--limit", "100")
    contents = {item["content"]: item["scope"] for item in json.loads(listed.stdout)["items"]}
    assert contents["Carol plays the cello"] == "user:carol"
    assert contents["Alice prefers green tea over coffee"] == "user:alice"
    assert len(contents) == 6

    # a bad row: exit 2, the row and field named, nothing written
    bad = "who,body\ncarol,fine\nbo b,bad\n"
    result = cli(db, "import", "--from", "csv", "--map", "user=who,content=body", "-", input=bad)
    assert result.exit_code == 2
    assert result.stderr.startswith("error: row 2 (line 3): user must be")
    listed = cli(db, "list", "--all-scopes", "--json", "--limit", "100")
    assert len(json.loads(listed.stdout)["items"]) == 6

    for args, field in [
        (("--from", "nope"), "from"),
        (("--from", "mem0", "--map", "content=x"), "map"),
        (("--scope", "team:x"), "scope"),
    ]:
        result = cli(db, "import", *args, str(path), "--json")
        assert result.exit_code == 2, result.output
        assert json.loads(result.stdout)["error"]["field"] == field
