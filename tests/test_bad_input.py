"""Bad input at the SDK door: a precise error, and the database is left exactly as it was."""

from __future__ import annotations

import base64
import io
import json
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import pytest
from doorkit import DoorServer, HttpDoor

from kenning import (
    InvalidInput,
    KenningError,
    Memory,
    MemoryRecord,
    NotFound,
    PermissionDenied,
    Principal,
    Settings,
)

Call = Callable[[Memory, MemoryRecord], Any]
JAN = datetime(2025, 1, 1, tzinfo=UTC)
FEB = datetime(2025, 2, 1, tzinfo=UTC)


def _cursor(payload: Any) -> str:
    return base64.urlsafe_b64encode(json.dumps(payload).encode()).decode()


CASES: list[tuple[str, Call, type[KenningError], str]] = [
    # content
    ("empty content", lambda m, r: m.remember(""), InvalidInput, "content must not be empty"),
    (
        "blank content",
        lambda m, r: m.remember("  \n\t "),
        InvalidInput,
        "content must not be empty",
    ),
    (
        "huge content",
        lambda m, r: m.remember("x" * 20_001),
        InvalidInput,
        r"content is 20001 characters; the limit is 20000",
    ),
    (
        "invalid utf-8",
        lambda m, r: m.remember(b"caf\xc3 \xff"),
        InvalidInput,
        "content is not valid UTF-8",
    ),
    ("lone surrogate", lambda m, r: m.remember("abc\ud800def"), InvalidInput, "lone surrogate"),
    ("NUL char", lambda m, r: m.remember("abc\x00def"), InvalidInput, "NUL"),
    ("content None", lambda m, r: m.remember(None), InvalidInput, "content must be a string"),  # type: ignore[arg-type]
    ("content int", lambda m, r: m.remember(42), InvalidInput, "content must be a string"),  # type: ignore[arg-type]
    # confidence / importance / type
    (
        "confidence 1.5",
        lambda m, r: m.remember("ok", confidence=1.5),
        InvalidInput,
        "confidence must be from 0 to 1",
    ),
    ("confidence -0.1", lambda m, r: m.remember("ok", confidence=-0.1), InvalidInput, "confidence"),
    (
        "confidence NaN",
        lambda m, r: m.remember("ok", confidence=float("nan")),
        InvalidInput,
        "confidence",
    ),
    (
        "confidence inf",
        lambda m, r: m.remember("ok", confidence=float("inf")),
        InvalidInput,
        "confidence",
    ),
    (
        "confidence str",
        lambda m, r: m.remember("ok", confidence="high"),
        InvalidInput,
        "confidence must be a number",
    ),
    ("confidence bool", lambda m, r: m.remember("ok", confidence=True), InvalidInput, "confidence"),
    (
        "importance 0",
        lambda m, r: m.remember("ok", importance=0),
        InvalidInput,
        "importance must be an integer from 1 to 5",
    ),
    ("importance 6", lambda m, r: m.remember("ok", importance=6), InvalidInput, "importance"),
    ("importance str", lambda m, r: m.remember("ok", importance="3"), InvalidInput, "importance"),
    ("importance float", lambda m, r: m.remember("ok", importance=2.5), InvalidInput, "importance"),
    (
        "memory type",
        lambda m, r: m.remember("ok", memory_type="dream"),
        InvalidInput,
        "memory_type must be one of",
    ),
    (
        "status archived",
        lambda m, r: m.remember("ok", status="archived"),
        InvalidInput,
        "'active' or 'pending_review'",
    ),
    # scopes
    (
        "scope kind",
        lambda m, r: m.remember("ok", scope="galaxy:x"),
        InvalidInput,
        "unknown scope kind 'galaxy'",
    ),
    (
        "scope no colon",
        lambda m, r: m.remember("ok", scope="user"),
        InvalidInput,
        "scope must look like",
    ),
    (
        "scope empty owner",
        lambda m, r: m.remember("ok", scope="user:"),
        InvalidInput,
        "scope owner",
    ),
    (
        "scope empty kind",
        lambda m, r: m.remember("ok", scope=":alice"),
        InvalidInput,
        "unknown scope kind",
    ),
    (
        "scope owner chars",
        lambda m, r: m.remember("ok", scope="user:al ice"),
        InvalidInput,
        "scope owner",
    ),
    (
        "scope owner slash",
        lambda m, r: m.remember("ok", scope="team:a/b"),
        InvalidInput,
        "scope owner",
    ),
    (
        "scope owner long",
        lambda m, r: m.remember("ok", scope="team:" + "a" * 200),
        InvalidInput,
        "scope owner",
    ),
    (
        "persona_user no user",
        lambda m, r: m.remember("ok", scope="persona_user:helpdesk"),
        InvalidInput,
        "persona_user:PERSONA/USER",
    ),
    (
        "persona_user bad user",
        lambda m, r: m.remember("ok", scope="persona_user:helpdesk/"),
        InvalidInput,
        "scope user",
    ),
    ("scope int", lambda m, r: m.remember("ok", scope=7), InvalidInput, "scope must look like"),  # type: ignore[arg-type]
    # other remember fields
    (
        "unknown field",
        lambda m, r: m.remember("ok", colour="blue"),
        InvalidInput,
        r"unknown field\(s\) \['colour'\]",
    ),
    (
        "valid_to < valid_from",
        lambda m, r: m.remember("ok", valid_from=FEB, valid_to=JAN),
        InvalidInput,
        "valid_to is before valid_from",
    ),
    (
        "tags str",
        lambda m, r: m.remember("ok", tags="a,b"),
        InvalidInput,
        "tags must be a list of strings",
    ),
    (
        "tags int",
        lambda m, r: m.remember("ok", tags=5),
        InvalidInput,
        "tags must be a list of strings",
    ),
    (
        "tag not str",
        lambda m, r: m.remember("ok", tags=["fine", 3]),
        InvalidInput,
        "tag must be a string",
    ),
    ("tag empty", lambda m, r: m.remember("ok", tags=[" "]), InvalidInput, "tag must not be empty"),
    (
        "too many tags",
        lambda m, r: m.remember("ok", tags=[f"t{i}" for i in range(33)]),
        InvalidInput,
        "at most 32 tags",
    ),
    (
        "metadata str",
        lambda m, r: m.remember("ok", metadata="x=1"),
        InvalidInput,
        "metadata must be a JSON object",
    ),
    (
        "metadata list",
        lambda m, r: m.remember("ok", metadata=[1, 2]),
        InvalidInput,
        "metadata must be a JSON object",
    ),
    (
        "metadata set",
        lambda m, r: m.remember("ok", metadata={"a": {1, 2}}),
        InvalidInput,
        "metadata is not JSON-serialisable",
    ),
    (
        "metadata NaN",
        lambda m, r: m.remember("ok", metadata={"a": float("nan")}),
        InvalidInput,
        "metadata is not JSON-serialisable",
    ),
    (
        "metadata object",
        lambda m, r: m.remember("ok", metadata={"a": object()}),
        InvalidInput,
        "metadata is not JSON-serialisable",
    ),
    (
        "metadata int key",
        lambda m, r: m.remember("ok", metadata={1: "a"}),
        InvalidInput,
        "metadata keys must be strings",
    ),
    (
        "metadata huge",
        lambda m, r: m.remember("ok", metadata={"a": "x" * 20_000}),
        InvalidInput,
        "metadata is larger than",
    ),
    (
        "event_at text",
        lambda m, r: m.remember("ok", event_at="yesterday"),
        InvalidInput,
        "event_at must be an ISO-8601",
    ),
    (
        "event_at number",
        lambda m, r: m.remember("ok", event_at=1700000000),
        InvalidInput,
        "event_at must be a datetime",
    ),
    ("key empty", lambda m, r: m.remember("ok", key=" "), InvalidInput, "key must not be empty"),
    (
        "key long",
        lambda m, r: m.remember("ok", key="k" * 121),
        InvalidInput,
        "key is 121 characters",
    ),
    (
        "source empty",
        lambda m, r: m.remember("ok", source=""),
        InvalidInput,
        "source must not be empty",
    ),
    (
        "session id int",
        lambda m, r: m.remember("ok", session_id=5),
        InvalidInput,
        "session_id must be a string",
    ),
    (
        "principal str",
        lambda m, r: m.remember("ok", principal="admin"),
        InvalidInput,  # type: ignore[arg-type]
        "principal must be a Principal",
    ),
    # batches
    (
        "items dict",
        lambda m, r: m.remember_many({"content": "x"}),
        InvalidInput,  # type: ignore[arg-type]
        "items must be a list",
    ),
    (
        "items generator",
        lambda m, r: m.remember_many({"content": "x"} for _ in range(2)),
        InvalidInput,  # type: ignore[arg-type]
        "items must be a list",
    ),
    (
        "item str",
        lambda m, r: m.remember_many([{"content": "fine"}, "x"]),
        InvalidInput,  # type: ignore[list-item]
        r"items\[1\] must be an object",
    ),
    (
        "one bad item",
        lambda m, r: m.remember_many(
            [{"content": "fine one"}, {"content": "fine two"}, {"content": "bad", "importance": 0}]
        ),
        InvalidInput,
        r"items\[2\].*importance",
    ),
    (
        "one empty item",
        lambda m, r: m.remember_many([{"content": "fine one"}, {"content": ""}]),
        InvalidInput,
        r"items\[1\].*content must not be empty",
    ),
    # recall
    ("empty query", lambda m, r: m.recall(""), InvalidInput, "query must not be empty"),
    ("query NUL", lambda m, r: m.recall("a\x00"), InvalidInput, "query contains a NUL"),
    ("k 0", lambda m, r: m.recall("tea", k=0), InvalidInput, "k must be an integer from 1 to 1000"),
    (
        "k 10**6",
        lambda m, r: m.recall("tea", k=10**6),
        InvalidInput,
        "k must be an integer from 1 to 1000",
    ),
    ("k str", lambda m, r: m.recall("tea", k="5"), InvalidInput, "k must be"),  # type: ignore[arg-type]
    ("k bool", lambda m, r: m.recall("tea", k=True), InvalidInput, "k must be"),
    (
        "unknown filter",
        lambda m, r: m.recall("tea", filters={"colour": "red"}),
        InvalidInput,
        r"unknown filter\(s\) \['colour'\]",
    ),
    (
        "filters str",
        lambda m, r: m.recall("tea", filters="types=episodic"),
        InvalidInput,  # type: ignore[arg-type]
        "filters must be a mapping",
    ),
    (
        "filter bad date",
        lambda m, r: m.recall("tea", filters={"event_after": "last week"}),
        InvalidInput,
        "event_after must be an ISO-8601",
    ),
    (
        "filter created date",
        lambda m, r: m.list(filters={"created_before": "31/12/2024"}),
        InvalidInput,
        "created_before must be an ISO-8601",
    ),
    (
        "filter nested metadata",
        lambda m, r: m.recall("tea", filters={"metadata": {"a": {"b": 1}}}),
        InvalidInput,
        "metadata filter 'a' must be a string, number, boolean or null",
    ),
    (
        "filter list metadata",
        lambda m, r: m.list(filters={"metadata": {"a": [1]}}),
        InvalidInput,
        "metadata filter 'a'",
    ),
    (
        "filter metadata str",
        lambda m, r: m.list(filters={"metadata": "a=1"}),
        InvalidInput,
        "metadata must be a JSON object",
    ),
    (
        "filter type",
        lambda m, r: m.recall("tea", filters={"types": ["dream"]}),
        InvalidInput,
        "memory_type",
    ),
    (
        "filter types int",
        lambda m, r: m.list(filters={"types": 5}),
        InvalidInput,
        "types must be a string or a list",
    ),
    (
        "filter no statuses",
        lambda m, r: m.list(filters={"statuses": []}),
        InvalidInput,
        "statuses must name at least one status",
    ),
    (
        "filter status",
        lambda m, r: m.list(filters={"statuses": ["deleted"]}),
        InvalidInput,
        "status must be one of",
    ),
    (
        "filter importance",
        lambda m, r: m.list(filters={"min_importance": 9}),
        InvalidInput,
        "importance",
    ),
    (
        "filter session",
        lambda m, r: m.list(filters={"session_id": ""}),
        InvalidInput,
        "session_id must not be empty",
    ),
    (
        "min_confidence",
        lambda m, r: m.recall("tea", min_confidence=2),
        InvalidInput,
        "min_confidence",
    ),
    (
        "min_score above 1",
        lambda m, r: m.recall("tea", min_score=1.5),
        InvalidInput,
        "min_score must be from 0 to 1, got 1.5",
    ),
    (
        "min_score not a number",
        lambda m, r: m.recall("tea", min_score="high"),
        InvalidInput,
        "min_score must be a number from 0 to 1",
    ),
    (
        "no scopes",
        lambda m, r: m.recall("tea", scopes=[]),
        InvalidInput,
        "scopes must name at least one scope",
    ),
    (
        "recall scope kind",
        lambda m, r: m.recall("tea", scopes=["galaxy:x"]),
        InvalidInput,
        "unknown scope kind",
    ),
    (
        "recall layer",
        lambda m, r: m.recall("tea", layers=["galactic"]),
        InvalidInput,
        "unknown layer",
    ),
    ("stats scope", lambda m, r: m.stats(scopes="user:bad id"), InvalidInput, "scope owner"),
    # list
    (
        "cursor garbage",
        lambda m, r: m.list(cursor="!!not-a-cursor!!"),
        InvalidInput,
        "invalid cursor",
    ),
    (
        "cursor json object",
        lambda m, r: m.list(cursor=_cursor({"a": 1})),
        InvalidInput,
        "invalid cursor",
    ),
    (
        "cursor three items",
        lambda m, r: m.list(cursor=_cursor([1, 2, 3])),
        InvalidInput,
        "invalid cursor",
    ),
    (
        "cursor wrong types",
        lambda m, r: m.list(cursor=_cursor(["x", "y"])),
        InvalidInput,
        "invalid cursor",
    ),
    ("cursor int", lambda m, r: m.list(cursor=123), InvalidInput, "cursor"),  # type: ignore[arg-type]
    ("limit 0", lambda m, r: m.list(limit=0), InvalidInput, "limit"),
    ("limit huge", lambda m, r: m.list(limit=10**6), InvalidInput, "limit"),
    # by id
    ("get empty id", lambda m, r: m.get(""), InvalidInput, "memory id must not be empty"),
    ("get None id", lambda m, r: m.get(None), InvalidInput, "memory id must be a string"),  # type: ignore[arg-type]
    ("get unknown", lambda m, r: m.get("0" * 32), NotFound, "not found"),
    ("history unknown", lambda m, r: m.history("0" * 32), NotFound, "not found"),
    ("forget unknown", lambda m, r: m.forget("0" * 32), NotFound, "not found"),
    ("archive unknown", lambda m, r: m.archive("0" * 32), NotFound, "not found"),
    # update / feedback
    (
        "update unknown field",
        lambda m, r: m.update(r.id, colour="blue"),
        InvalidInput,
        r"cannot update \['colour'\]",
    ),
    (
        "update source",
        lambda m, r: m.update(r.id, source="api"),
        InvalidInput,
        r"cannot update \['source'\]",
    ),
    (
        "update status",
        lambda m, r: m.update(r.id, status="archived"),
        InvalidInput,
        r"cannot update \['status'\]",
    ),
    (
        "update bad importance",
        lambda m, r: m.update(r.id, importance=7),
        InvalidInput,
        "importance",
    ),
    (
        "update empty content",
        lambda m, r: m.update(r.id, content=" "),
        InvalidInput,
        "content must not be empty",
    ),
    (
        "update bad valid_to",
        lambda m, r: m.update(r.id, valid_from=FEB, valid_to=JAN),
        InvalidInput,
        "valid_to is before valid_from",
    ),
    ("update tags str", lambda m, r: m.update(r.id, tags="x"), InvalidInput, "tags must be a list"),
    ("update unknown id", lambda m, r: m.update("0" * 32, importance=2), NotFound, "not found"),
    (
        "feedback love",
        lambda m, r: m.feedback(r.id, "love"),
        InvalidInput,
        "feedback must be one of",
    ),
    ("feedback unknown id", lambda m, r: m.feedback("0" * 32, "upvote"), NotFound, "not found"),
    # access
    (
        "write other user",
        lambda m, r: m.remember("ok", scope="user:zoe", principal=Principal.member("ann")),
        PermissionDenied,
        "may not write scope 'user:zoe'",
    ),
    (
        "read other user",
        lambda m, r: m.recall("tea", scopes="user:zoe", principal=Principal.member("ann")),
        PermissionDenied,
        "may not read scope 'user:zoe'",
    ),
    (
        "get other user",
        lambda m, r: m.get(r.id, principal=Principal.member("ann")),
        NotFound,
        "not found",
    ),
    (
        "update other user",
        lambda m, r: m.update(r.id, importance=1, principal=Principal.member("ann")),
        NotFound,
        "not found",
    ),
]


@pytest.fixture
def mem(make_memory: Callable[..., Memory], as_door: Callable[[Memory], Memory]) -> Memory:
    """A fresh Memory through this test's door: itself, or a kenning.Client to a server
    serving it (tests/doorkit.py)."""
    return as_door(make_memory())


@pytest.fixture
def target(mem: Memory) -> MemoryRecord:
    mem.remember("Another memory so the table is not empty", scope="team:eng")
    return mem.remember("Alice prefers green tea", key="drink", tags=["pref"])


# Through both doors: kenning.Client runs the engine's own checks before it sends
# anything, so each case is the same error (message and field) over HTTP.
@pytest.mark.parametrize(
    ("call", "exc", "pattern"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_bad_input_is_refused_and_changes_nothing(
    mem: Memory,
    target: MemoryRecord,
    db_counts: Callable[[Memory], dict[str, int]],
    call: Call,
    exc: type[KenningError],
    pattern: str,
) -> None:
    before = db_counts(mem)
    with pytest.raises(exc, match=pattern):
        call(mem, target)
    assert db_counts(mem) == before
    assert mem.get(target.id).to_dict() == target.to_dict()


def test_both_doors_word_invalid_input_alike(
    make_memory: Callable[..., Memory], door_server: DoorServer
) -> None:
    """Every InvalidInput case: the same message and field from the engine and from
    kenning.Client (which checks with the engine's own functions before sending)."""
    mem = make_memory()
    door = HttpDoor(mem, door_server)
    try:
        mem.remember("Another memory so the table is not empty", scope="team:eng")
        target = mem.remember("Alice prefers green tea", key="drink", tags=["pref"])
        for name, call, exc, _ in CASES:
            if exc is not InvalidInput:
                continue
            seen = []
            for each in (mem, door):
                with pytest.raises(InvalidInput) as info:
                    call(each, target)
                seen.append((str(info.value), info.value.field))
            assert seen[0] == seen[1], name
    finally:
        door.release()


def test_invalid_input_names_its_field(mem: Memory) -> None:
    for kwargs, field in (
        ({"confidence": 2}, "confidence"),
        ({"importance": 0}, "importance"),
        ({"memory_type": "x"}, "memory_type"),
        ({"scope": "galaxy:x"}, "scope"),
        ({"tags": "x"}, "tags"),
        ({"metadata": []}, "metadata"),
        ({"event_at": "x"}, "event_at"),
    ):
        with pytest.raises(InvalidInput) as info:
            mem.remember("ok", **kwargs)
        assert info.value.field == field
    with pytest.raises(InvalidInput) as info:
        mem.remember_many([{"content": "ok"}, {"content": "ok", "importance": 9}])
    assert info.value.field == "importance"


def test_invalid_input_is_a_value_error(mem: Memory) -> None:
    with pytest.raises(ValueError):
        mem.remember("")
    with pytest.raises(LookupError):
        mem.get("0" * 32)


def test_oversized_batch_is_refused(
    make_memory: Callable[..., Memory], db_counts: Callable[[Memory], dict[str, int]]
) -> None:
    mem = make_memory(settings=Settings(max_batch=5))
    assert len(mem.remember_many([{"content": f"Batch item {i}"} for i in range(5)])) == 5
    before = db_counts(mem)
    with pytest.raises(InvalidInput, match="a batch holds at most 5 memories, got 6"):
        mem.remember_many([{"content": f"Other item {i}"} for i in range(6)])
    assert db_counts(mem) == before


def test_content_limit_follows_settings(
    make_memory: Callable[..., Memory], db_counts: Callable[[Memory], dict[str, int]]
) -> None:
    mem = make_memory(settings=Settings(max_content_chars=40, max_tags=2))
    assert mem.remember("x" * 40 + "   ").content == "x" * 40  # surrounding space does not count
    before = db_counts(mem)
    with pytest.raises(InvalidInput, match="content is 41 characters; the limit is 40"):
        mem.remember("y" * 41)
    with pytest.raises(InvalidInput, match="at most 2 tags"):
        mem.remember("ok", tags=["a", "b", "c"])
    assert db_counts(mem) == before


@pytest.mark.doors("embedded")  # export/import are not served over REST
def test_bad_import_writes_nothing(
    mem: Memory, make_memory: Callable[..., Memory], db_counts: Callable[[Memory], dict[str, int]]
) -> None:
    mem.remember("Exported one")
    mem.remember("Exported two")
    out = io.StringIO()
    mem.export_jsonl(out)
    good = out.getvalue().splitlines()
    copy = make_memory("copy")
    before = db_counts(copy)
    bad_vector = json.loads(good[1])
    bad_vector["vector"] = base64.b64encode(b"\x00" * 16).decode()
    foreign = json.loads(good[1])
    foreign["record"]["org_id"] = "globex"
    for lines, exc, pattern in (
        ([good[0], "{not json"], InvalidInput, "line 2: not a kenning export row"),
        ([good[0], json.dumps({"record": {}})], InvalidInput, "line 2"),
        (
            [good[0], json.dumps(bad_vector)],
            InvalidInput,
            "line 2: vector has 4 dimensions, expected 384",
        ),
        (
            [good[0], json.dumps(foreign)],
            PermissionDenied,
            "line 2: memory belongs to organization 'globex'",
        ),
    ):
        with pytest.raises(exc, match=pattern):
            copy.import_jsonl(lines)
        assert db_counts(copy) == before
    member = Principal.member("ann")
    with pytest.raises(PermissionDenied):  # ann may not write the admin's personal scope
        copy.import_jsonl(good, principal=member)
    assert db_counts(copy) == before
