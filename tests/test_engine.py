"""Engine behaviour of ``Memory``: defaults, lifecycle, feedback, listing, recall, stats, export."""

from __future__ import annotations

import io
import json
import math
import threading
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from embedkit import CountingEmbedder

from kenning import (
    Conflict,
    FixedClock,
    Layer,
    Memory,
    MemoryType,
    NotFound,
    Principal,
    Scope,
    ScoreBreakdown,
    Settings,
    Status,
)
from kenning.embeddings import Embedder


@pytest.fixture
def mem(make_memory: Callable[..., Memory], as_door: Any) -> Memory:
    """A fresh Memory through this test's door: itself, or a kenning.Client to a server
    serving it (tests/doorkit.py); every test taking ``mem`` runs through both."""
    return as_door(make_memory())  # type: ignore[no-any-return]


def _ids(hits: Any) -> list[str]:
    return [h.memory.id for h in hits]


def _list_all(mem: Memory, **kw: Any) -> list[Any]:
    out: list[Any] = []
    cursor = None
    while True:
        page = mem.list(limit=1000, cursor=cursor, **kw)
        out.extend(page.items)
        if page.next_cursor is None:
            return out
        cursor = page.next_cursor


# ---------------------------------------------------------------------------- remember defaults


def test_remember_defaults(mem: Memory, clock: FixedClock) -> None:
    rec = mem.remember("  Alice prefers tea over coffee  ")
    assert rec.content == "Alice prefers tea over coffee"
    assert rec.scope == Scope.user("default") and rec.org_id == "default"
    assert rec.layer is Layer.PERSONAL
    assert rec.memory_type is MemoryType.SEMANTIC and rec.importance == 3
    assert rec.status is Status.ACTIVE and rec.version == 1
    assert rec.source == "api" and rec.confidence == 0.85
    assert rec.created_by == "default"
    assert rec.created_at == rec.updated_at == clock.now()
    assert rec.tags == () and rec.metadata == {} and rec.key is None
    assert mem.get(rec.id).to_dict() == rec.to_dict()


def test_default_scope_follows_the_caller(mem: Memory) -> None:
    mia = Principal.member("mia", personas={"helpdesk"})
    assert mem.remember("Mia's desk is by the window", principal=mia).scope == Scope.user("mia")
    acting = Principal.member("mia", personas={"helpdesk"}, active_persona="helpdesk")
    rec = mem.remember("Mia prefers email over phone", principal=acting)
    assert rec.scope == Scope.persona_user("helpdesk", "mia")
    assert rec.scope.key == "persona_user:helpdesk/mia" and rec.created_by == "mia"


@pytest.mark.parametrize(
    ("source", "expected"),
    [("api", 0.85), ("mcp_tool", 0.95), ("user_input", 0.8), ("webhook", 0.9), ("extraction", 0.7)],
)
def test_confidence_defaults_to_source_reliability(
    mem: Memory, source: str, expected: float
) -> None:
    rec = mem.remember(f"A fact that came from {source}", source=source)
    assert rec.source == source and rec.confidence == expected
    assert mem.get(rec.id).confidence == expected


def test_explicit_confidence_is_kept(mem: Memory) -> None:
    assert mem.remember("Low trust rumour", source="mcp_tool", confidence=0.42).confidence == 0.42
    assert mem.remember("Certain fact", confidence=1).confidence == 1.0
    assert mem.remember("Zero trust", confidence=0.0).confidence == 0.0


def test_remember_keeps_every_field(mem: Memory, clock: FixedClock) -> None:
    event = clock.now() - timedelta(days=2)
    rec = mem.remember(
        "Kickoff meeting decided to ship in May",
        key="ship date",
        memory_type="episodic",
        importance=5,
        confidence=0.7,
        tags=["release", "planning", "release"],
        metadata={"ticket": 42, "urgent": True, "owner": "dana"},
        source="user_input",
        source_channel_id="chan-1",
        agent_id="agent.7",
        session_id="s1",
        episode_id="ep1",
        sector_id="work",
        event_at=event.isoformat(),
        valid_from=event,
        valid_to=event + timedelta(days=30),
        status="pending_review",
    )
    got = mem.get(rec.id)
    assert got.to_dict() == rec.to_dict()
    assert got.tags == ("release", "planning")  # deduplicated, order kept
    assert got.metadata == {"ticket": 42, "urgent": True, "owner": "dana"}
    assert got.event_at == event and got.valid_to == event + timedelta(days=30)
    assert got.status is Status.PENDING_REVIEW and got.memory_type is MemoryType.EPISODIC
    assert (got.session_id, got.agent_id, got.episode_id, got.source_channel_id, got.sector_id) == (
        "s1",
        "agent.7",
        "ep1",
        "chan-1",
        "work",
    )


# ---------------------------------------------------------------------------- upsert / update


def test_upsert_creates_then_updates(mem: Memory) -> None:
    first = mem.upsert("favourite drink", "Alice's favourite drink is green tea")
    assert first.version == 1 and first.key == "favourite drink"
    second = mem.upsert("favourite drink", "Alice's favourite drink is black coffee")
    assert second.id == first.id and second.version == 2
    assert second.content == "Alice's favourite drink is black coffee"
    assert [h.op for h in mem.history(first.id)] == ["create", "upsert"]
    assert mem.history(first.id)[1].changes["content"] == [
        "Alice's favourite drink is green tea",
        "Alice's favourite drink is black coffee",
    ]
    same = mem.upsert("favourite drink", "Alice's favourite drink is black coffee")
    assert same.version == 2 and len(mem.history(first.id)) == 2  # nothing changed: no write
    assert len(_list_all(mem)) == 1


def test_upsert_in_another_scope_creates_a_second_memory(mem: Memory) -> None:
    a = mem.upsert("standup", "Standup is at 9:30")
    b = mem.upsert("standup", "Team standup is at 10:00", scope="team:eng")
    assert a.id != b.id and b.scope == Scope.team("eng")


def test_upsert_brings_back_an_archived_memory(mem: Memory) -> None:
    rec = mem.upsert("gym", "Gym membership renews in June")
    mem.archive(rec.id)
    again = mem.upsert("gym", "Gym membership renews in July")
    assert again.id == rec.id and again.status is Status.ACTIVE
    assert _ids(mem.recall("gym membership renewal")) == [rec.id]


def test_upsert_twice_with_the_same_provenance_fields(mem: Memory) -> None:
    """An agent repeating a save with the same arguments must not fail the second time."""
    kw: dict[str, Any] = {"source": "mcp_tool", "session_id": "s1", "agent_id": "bot"}
    first = mem.upsert("editor", "Bruno uses vim", **kw)
    second = mem.upsert("editor", "Bruno switched to emacs", **kw)
    assert second.id == first.id and second.content == "Bruno switched to emacs"
    assert second.source == "mcp_tool" and second.session_id == "s1"


def test_update_re_embeds_content(mem: Memory) -> None:
    decoy = mem.remember("The dog sleeps on the green rug")
    rec = mem.remember("The cat sleeps on the red sofa")
    updated = mem.update(rec.id, content="Quarterly revenue grew by twelve percent")
    assert updated.version == 2 and updated.content_hash != rec.content_hash
    hits = mem.recall("How much did quarterly revenue grow?", explain=True)
    assert hits[0].memory.id == rec.id
    assert hits[0].explain is not None and hits[0].explain.keyword is not None
    assert hits[0].explain.dense is not None and hits[0].explain.dense > 0.6
    old = mem.recall("cat sleeping on the red sofa", explain=True)
    assert old[0].memory.id == decoy.id
    stale = [h for h in old if h.memory.id == rec.id]
    assert all(h.explain is not None and h.explain.keyword is None for h in stale)
    assert all(h.explain is not None and (h.explain.dense or 0) < 0.3 for h in stale)


def test_update_changes_fields_and_logs_the_diff(mem: Memory, clock: FixedClock) -> None:
    rec = mem.remember("Office plants need water", tags=["office"], importance=2)
    clock.advance(hours=1)
    new = mem.update(rec.id, tags=["office", "plants"], importance=4, metadata={"room": "3.14"})
    assert new.updated_at == clock.now() and new.created_at == rec.created_at
    entry = mem.history(rec.id)[-1]
    assert entry.op == "update" and entry.content is None
    assert entry.changes == {
        "tags": [["office"], ["office", "plants"]],
        "importance": [2, 4],
        "metadata": [{}, {"room": "3.14"}],
    }


# ---------------------------------------------------------------------------- archive / restore


def test_archive_hides_from_recall_until_restored(mem: Memory) -> None:
    rec = mem.remember("The summer party is at the lake")
    mem.remember("The winter party is in the office")
    assert rec.id in _ids(mem.recall("summer party lake"))
    archived = mem.archive(rec.id)
    assert archived.status is Status.ARCHIVED
    assert rec.id not in _ids(mem.recall("summer party lake", k=50))
    assert rec.id not in [r.id for r in mem.list().items]
    shown = mem.list(filters={"statuses": ["archived"]}).items
    assert [r.id for r in shown] == [rec.id]
    both = mem.list(filters={"statuses": ["active", "archived"]}).items
    assert len(both) == 2
    assert mem.get(rec.id).status is Status.ARCHIVED  # still readable by id
    assert mem.archive(rec.id).version == archived.version  # archiving twice writes nothing
    restored = mem.restore(rec.id)
    assert restored.status is Status.ACTIVE
    assert _ids(mem.recall("summer party lake"))[0] == rec.id
    assert [h.op for h in mem.history(rec.id)] == ["create", "archive", "restore"]


# ---------------------------------------------------------------------------- feedback


@pytest.mark.parametrize(
    ("kind", "delta"),
    [
        ("upvote", 0.05),
        ("downvote", -0.10),
        ("validate", 0.15),
        ("contradict", -0.20),
        ("confirm", 0.10),
    ],
)
def test_feedback_adjusts_confidence(mem: Memory, kind: str, delta: float) -> None:
    rec = mem.remember("A claim to be judged", confidence=0.5)
    new = mem.feedback(rec.id, kind)
    assert new.confidence == pytest.approx(0.5 + delta)
    assert mem.get(rec.id).confidence == pytest.approx(0.5 + delta)
    entry = mem.history(rec.id)[-1]
    assert entry.op == "feedback"
    assert entry.changes["feedback"] == kind
    assert entry.changes["confidence"] == [0.5, pytest.approx(0.5 + delta)]


def test_feedback_is_clamped_to_zero_and_one(mem: Memory) -> None:
    high = mem.remember("Almost certain", confidence=0.97)
    assert mem.feedback(high.id, "validate").confidence == 1.0
    assert mem.feedback(high.id, "upvote").confidence == 1.0
    low = mem.remember("Almost certainly wrong", confidence=0.1)
    assert mem.feedback(low.id, "contradict").confidence == 0.0
    assert mem.feedback(low.id, "downvote").confidence == 0.0
    assert mem.feedback(low.id, "confirm").confidence == pytest.approx(0.1)


def test_feedback_sequence_accumulates(mem: Memory) -> None:
    rec = mem.remember("Sequence of votes", confidence=0.5)
    for kind in ("upvote", "upvote", "downvote", "validate", "contradict", "confirm"):
        mem.feedback(rec.id, kind)
    assert mem.get(rec.id).confidence == pytest.approx(
        0.5 + 0.05 + 0.05 - 0.10 + 0.15 - 0.20 + 0.10
    )


# ---------------------------------------------------------------------------- history


def test_history_is_oldest_first_with_who_and_when(mem: Memory, clock: FixedClock) -> None:
    rec = mem.remember("Version one of the plan")
    times = [clock.now()]
    steps: list[Callable[[], Any]] = [
        lambda: mem.update(rec.id, content="Version two of the plan"),
        lambda: mem.archive(rec.id),
        lambda: mem.restore(rec.id),
        lambda: mem.feedback(rec.id, "confirm"),
        lambda: mem.update(rec.id, importance=5),
    ]
    for step in steps:
        clock.advance(minutes=5)
        times.append(clock.now())
        step()
    entries = mem.history(rec.id)
    assert [e.op for e in entries] == [
        "create",
        "update",
        "archive",
        "restore",
        "feedback",
        "update",
    ]
    assert [e.version for e in entries] == [1, 2, 3, 4, 5, 6]
    assert [e.at for e in entries] == times
    assert [e.seq for e in entries] == sorted(e.seq for e in entries)
    assert all(e.actor == "default" and e.memory_id == rec.id for e in entries)
    assert entries[0].content == "Version one of the plan"
    assert entries[1].content == "Version two of the plan"
    assert all(e.content is None for e in entries[2:])
    with pytest.raises(NotFound):
        mem.history("f" * 32)


# ---------------------------------------------------------------------------- list


def test_list_pages_cover_everything_exactly_once(
    mem: Memory, clock: FixedClock, make_sentences: Callable[..., list[str]]
) -> None:
    texts = make_sentences(23, offset=600)
    for i, text in enumerate(texts):
        if i % 4 == 0:
            clock.advance(seconds=1)  # some share a timestamp, some do not
        mem.remember(text)
    everything = _list_all(mem)
    assert len(everything) == 23
    expected_order = sorted(everything, key=lambda r: (r.created_at, r.id), reverse=True)
    assert [r.id for r in everything] == [r.id for r in expected_order]

    seen: list[str] = []
    sizes: list[int] = []
    cursor = None
    while True:
        page = mem.list(limit=5, cursor=cursor)
        seen.extend(r.id for r in page.items)
        sizes.append(len(page.items))
        if page.next_cursor is None:
            break
        cursor = page.next_cursor
        if len(sizes) == 1:  # a write between pages must not shift the rest
            clock.advance(seconds=10)
            mem.remember("Written while paging")
    assert sizes == [5, 5, 5, 5, 3]
    assert seen == [r.id for r in everything]


def test_list_of_an_exact_multiple_has_no_empty_last_page(mem: Memory) -> None:
    for i in range(4):
        mem.remember(f"Numbered note {i}")
    first = mem.list(limit=2)
    second = mem.list(limit=2, cursor=first.next_cursor)
    assert len(first.items) == len(second.items) == 2 and second.next_cursor is None


@pytest.fixture
def varied(mem: Memory, clock: FixedClock) -> dict[str, Any]:
    now = clock.now()
    spec = {
        "a": dict(
            content="Flight to Oslo booked for the conference",
            memory_type="episodic",
            tags=["travel", "work"],
            metadata={"n": 3, "ok": True, "city": "Oslo", "r": 0.5},
            importance=5,
            session_id="s1",
            event_at=now - timedelta(days=40),
        ),
        "b": dict(
            content="Hotel in Oslo is near the station",
            memory_type="semantic",
            tags=["travel"],
            metadata={"n": 4, "ok": False, "city": "Oslo"},
            importance=2,
            session_id="s1",
            event_at=now - timedelta(days=5),
        ),
        "c": dict(
            content="How to file travel expenses: receipts first",
            memory_type="procedural",
            tags=["work", "finance"],
            metadata={"n": 3, "ok": True, "city": None},
            importance=3,
            session_id="s2",
        ),
        "d": dict(
            content="Currently drafting the Oslo conference talk",
            memory_type="working",
            tags=[],
            metadata={"n": 1, "city": "Bergen"},
            importance=4,
            event_at=now - timedelta(days=400),
        ),
    }
    return {name: mem.remember(**kw) for name, kw in spec.items()}


@pytest.mark.parametrize(
    ("filters", "expected"),
    [
        ({"types": ["episodic", "procedural"]}, "ac"),
        ({"types": "working"}, "d"),
        ({"tags_any": ["finance", "travel"]}, "abc"),
        ({"tags_all": ["travel", "work"]}, "a"),
        ({"tags": "work"}, "ac"),
        ({"event_after": "T-30"}, "bc"),  # c has no event_at: its creation time counts
        ({"event_before": "T-30"}, "ad"),
        ({"event_after": "T-100", "event_before": "T-10"}, "a"),
        ({"metadata": {"city": "Oslo"}}, "ab"),
        ({"metadata": {"n": 3}}, "ac"),
        ({"metadata": {"r": 0.5}}, "a"),
        ({"metadata": {"ok": True}}, "ac"),
        ({"metadata": {"ok": False}}, "b"),
        ({"metadata": {"city": None}}, "c"),
        ({"metadata": {"n": 3, "city": "Oslo"}}, "a"),
        ({"min_importance": 4}, "ad"),
        ({"session_id": "s1"}, "ab"),
        ({"session_id": "s1", "types": ["semantic"]}, "b"),
    ],
)
def test_list_and_recall_filters(
    mem: Memory, clock: FixedClock, varied: dict[str, Any], filters: dict[str, Any], expected: str
) -> None:
    resolved = {
        k: (
            clock.now() + timedelta(days=int(v[1:]))
            if isinstance(v, str) and v.startswith("T")
            else v
        )
        for k, v in filters.items()
    }
    want = {varied[name].id for name in expected}
    assert {r.id for r in mem.list(filters=resolved).items} == want
    hits = mem.recall("Oslo conference travel", k=10, filters=resolved)
    assert set(_ids(hits)) <= want
    assert set(_ids(hits)) == want  # every match is a candidate in a set this small


def test_bool_metadata_filter_does_not_match_numbers(mem: Memory) -> None:
    flag = mem.remember("Feature flag enabled", metadata={"enabled": True})
    count = mem.remember("Enabled count is one", metadata={"enabled": 1})
    assert [r.id for r in mem.list(filters={"metadata": {"enabled": True}}).items] == [flag.id]
    assert [r.id for r in mem.list(filters={"metadata": {"enabled": 1}}).items] == [count.id]


# ---------------------------------------------------------------------------- recall


def test_recall_explain_fields(mem: Memory) -> None:
    mem.remember("Sven teaches sailing on the lake every summer")
    mem.remember("The lake freezes in January")
    result = mem.recall("sailing lessons on the lake", explain=True)
    assert len(result) == 2
    for hit in result:
        assert isinstance(hit.explain, ScoreBreakdown)
        d = hit.explain.to_dict()
        assert set(d) == {
            "dense",
            "keyword",
            "fused",
            "relevance",
            "confidence",
            "temporal",
            "strength",
            "layer_boost",
            "scope_boost",
            "exact_match",
            "final",
            "graph",
            "time",
            "context",
            "signals",
            "learned",
            "priority",
            "calibration",
        }
        assert set(d["signals"]) == {
            "graph",
            "episode",
            "author",
            "time",
            "layer",
            "persona",
            "exact_match",
            "high_confidence",
        }
        assert hit.explain.final == hit.explain.priority and 0.0 <= hit.score <= 1.0
        assert 0.0 <= hit.explain.relevance <= 1.0 and 0.0 <= hit.explain.temporal <= 1.0
        assert hit.explain.confidence == hit.memory.confidence
    assert result[0].explain is not None and result[0].explain.relevance == 1.0
    assert result[0].score >= result[1].score
    assert set(result.timings_ms) >= {"keyword", "embed", "dense", "fetch", "rank", "total"}
    assert result.candidates == {"dense": 2, "keyword": 2, "fused": 2, "collapsed": 0}
    plain = mem.recall("sailing lessons on the lake")
    assert all(h.explain is None for h in plain) and plain.candidates == {}
    assert plain.timings_ms["total"] > 0  # stage timings always (the server's metrics)
    assert _ids(plain) == _ids(result) and [h.score for h in plain] == [h.score for h in result]
    json.dumps(result.to_dict())


def test_recall_fills_k_when_k_exceeds_the_candidate_pool(
    make_memory: Callable[..., Memory],
) -> None:
    """Each side contributes at least ``k`` candidates, so a large ``k`` is not cut
    short by the candidate settings."""
    mem = make_memory(settings=Settings(candidates_dense=2, candidates_keyword=2))
    texts = [
        "Oskar sails to Gotland every July",
        "The ferry to Gotland is cheaper in May",
        "Mira paints boats in the harbour",
        "Sailing lessons start at the yacht club",
        "A storm closed the harbour on Tuesday",
        "Oskar bought a new mainsail",
        "The lighthouse keeper logs every passing boat",
        "Visby is the largest town on Gotland",
    ]
    for text in texts:
        mem.remember(text)
    assert len(mem.recall("boats and sailing around Gotland", k=6)) == 6
    assert len(mem.recall("boats and sailing around Gotland", k=50)) == len(texts)
    assert len(mem.recall("boats and sailing around Gotland", k=1)) == 1


def test_new_ids_count_up_within_a_millisecond_and_stay_unique() -> None:
    from kenning.models import new_id

    ids = [new_id() for _ in range(20_000)]  # many share a millisecond
    assert ids == sorted(ids) and len(set(ids)) == len(ids)
    assert all(len(i) == 32 and int(i, 16) >= 0 for i in ids)
    assert len({i[:12] for i in ids}) < len(ids)  # some did share one


def test_recall_embeds_the_query_first_only_when_the_model_takes_every_core(
    make_memory: Callable[..., Memory], embedder: Embedder
) -> None:
    """A model that runs one text on every core embeds the query on the calling
    thread, before the searches; any other embeds it on the worker, beside the
    keyword search. The answers are the same either way."""
    answers = []
    for parallel in (True, False):
        noting = CountingEmbedder(embedder, parallel)
        mem = make_memory(f"db-{parallel}", embedder=noting)
        for text in (
            "Sven teaches sailing on the lake every summer",
            "The lake freezes in January",
            "Ada bakes rye bread on Sundays",
        ):
            mem.remember(text)
        noting.threads.clear()
        result = mem.recall("sailing lessons on the lake", explain=True)
        assert len(noting.threads) == 1
        assert (noting.threads[0] == threading.get_ident()) is parallel
        assert {"embed", "dense", "keyword", "fetch"} <= set(result.timings_ms)
        answers.append([(h.memory.content, h.score) for h in result])
    assert answers[0] == answers[1] and answers[0][0][0].startswith("Sven")


@pytest.mark.parametrize("copies", [2, 3, 5])
def test_identical_content_gets_identical_relevance(mem: Memory, copies: int) -> None:
    """Equal candidates must not be split by float noise (min-max over near-ties)."""
    for i in range(copies):
        mem.remember("The helpdesk ticket queue closes at five", scope=f"user:u{i}", confidence=0.8)
    hits = mem.recall("helpdesk ticket queue", k=10, explain=True, scopes="all")
    assert len(hits) == copies
    assert len({h.explain.relevance for h in hits if h.explain is not None}) == 1
    assert len({h.score for h in hits}) == 1


def test_recall_k_limits_hits(mem: Memory, make_sentences: Callable[..., list[str]]) -> None:
    mem.remember_many([{"content": t} for t in make_sentences(30, offset=700)])
    assert len(mem.recall("who likes music", k=7)) == 7
    assert len(mem.recall("who likes music", k=1)) == 1


def test_min_confidence_filter(make_memory: Callable[..., Memory]) -> None:
    mem = make_memory()
    low = mem.remember("Rumour: the canteen closes for good", confidence=0.3)
    mid = mem.remember("Memo: the canteen closes for renovation", confidence=0.6)
    high = mem.remember("Notice: the canteen closes on Friday", confidence=0.9)
    assert set(_ids(mem.recall("canteen closes"))) == {low.id, mid.id, high.id}
    assert set(_ids(mem.recall("canteen closes", min_confidence=0.5))) == {mid.id, high.id}
    assert set(_ids(mem.recall("canteen closes", min_confidence=0.9))) == {high.id}
    strict = make_memory(settings=Settings(min_confidence=0.7))
    assert set(_ids(strict.recall("canteen closes"))) == {high.id}
    assert set(_ids(strict.recall("canteen closes", min_confidence=0.0))) == {
        low.id,
        mid.id,
        high.id,
    }


def test_exact_match_goes_first(mem: Memory) -> None:
    exact = mem.remember("Paris is the capital of France", confidence=0.5)
    mem.remember("The capital of France is Paris, and Paris is a large city", confidence=0.99)
    mem.remember("France: capital Paris, population facts", confidence=0.99)
    hits = mem.recall("paris is the capital of FRANCE!", explain=True)
    assert hits[0].memory.id == exact.id
    assert hits[0].explain is not None and hits[0].explain.exact_match is True
    assert all(h.explain is not None and not h.explain.exact_match for h in hits[1:])
    keyed = mem.remember(
        "The office network is guest-5GHz, code on the whiteboard",
        key="wifi password",
        confidence=0.5,
    )
    mem.remember("The wifi password changes monthly", confidence=0.99)
    top = mem.recall("WiFi password", explain=True)[0]
    assert top.memory.id == keyed.id and top.explain is not None and top.explain.exact_match


def test_temporal_decay_ranks_the_older_memory_lower(mem: Memory, clock: FixedClock) -> None:
    now = clock.now()
    recent = mem.remember(
        "The team offsite is in Lisbon", event_at=now - timedelta(days=2), confidence=0.8
    )
    old = mem.remember(
        "The team offsite is in Lisbon", event_at=now - timedelta(days=300), confidence=0.8
    )
    hits = mem.recall("where is the team offsite", explain=True)
    by_id = {h.memory.id: h for h in hits}
    r, o = by_id[recent.id].explain, by_id[old.id].explain
    assert r is not None and o is not None
    assert r.relevance == o.relevance and r.confidence == o.confidence
    assert r.temporal == 1.0
    assert o.temporal == pytest.approx(math.exp(-math.log(2) / 182.5 * 300))
    assert _ids(hits) == [recent.id, old.id] and r.final > o.final
    # the organization layer decays slower and never drops below its floor of 0.3
    ancient = mem.remember(
        "The offsite used to be in Porto", scope="org:default", event_at=now - timedelta(days=3000)
    )
    hit = next(h for h in mem.recall("offsite Porto", explain=True) if h.memory.id == ancient.id)
    assert hit.explain is not None and hit.explain.temporal == 0.3
    # moving the clock forward lowers the priority of the same memory (not its
    # calibrated score, which weighs how well it answers, not how old it is)
    before = by_id[recent.id]
    clock.advance(days=200)
    later = next(
        h for h in mem.recall("where is the team offsite", explain=True) if h.memory.id == recent.id
    )
    assert later.explain is not None and before.explain is not None
    assert later.explain.final < before.explain.final
    assert later.score == before.score


# ---------------------------------------------------------------------------- stats


def test_stats_per_layer(mem: Memory, clock: FixedClock) -> None:
    now = clock.now()
    personal = [
        (0.5, 0.95, "episodic"),
        (3, 0.8, "semantic"),
        (20, 0.65, "procedural"),
        (100, 0.5, "semantic"),
        (400, 0.2, "working"),
    ]
    made = []
    for days, conf, mtype in personal:
        clock.set(now - timedelta(days=days))
        made.append(
            mem.remember(f"Personal note {days} days old", confidence=conf, memory_type=mtype)
        )
    clock.set(now - timedelta(hours=1))
    mem.remember("Team eng uses trunk-based development", scope="team:eng", confidence=0.9)
    mem.remember("Team eng deploys on Tuesdays", scope="team:eng", confidence=0.7)
    mem.remember("Company holiday on May 1st", scope="org:default", confidence=0.85)
    clock.set(now)
    mem.archive(made[3].id)
    stats = {s.layer: s for s in mem.stats()}
    assert sorted(stats) == ["organization", "personal", "shared"]
    p = stats["personal"]
    assert p.total_memories == 5
    assert p.by_status == {"active": 4, "archived": 1}
    assert p.by_type == {"episodic": 1, "semantic": 2, "procedural": 1, "working": 1}
    assert p.confidence_distribution == {
        "very_high": 1,
        "high": 1,
        "medium": 1,
        "low": 1,
        "very_low": 1,
    }
    assert p.age_distribution == {"<1d": 1, "<7d": 1, "<30d": 1, "<365d": 1, ">=365d": 1}
    assert p.avg_confidence == pytest.approx((0.95 + 0.8 + 0.65 + 0.5 + 0.2) / 5)
    s = stats["shared"]
    assert s.total_memories == 2 and s.by_status == {"active": 2}
    assert s.confidence_distribution == {"very_high": 1, "medium": 1}
    assert s.age_distribution == {"<1d": 2} and s.avg_confidence == pytest.approx(0.8)
    assert stats["organization"].total_memories == 1
    only_team = mem.stats(scopes="team:eng")
    assert [x.layer for x in only_team] == ["shared"] and only_team[0].total_memories == 2
    # a year later every memory has aged
    clock.advance(days=366)
    aged = {x.layer: x for x in mem.stats()}
    assert aged["personal"].age_distribution == {">=365d": 5}
    # a member sees only what it may read: its own (none), the org, no team it is not in
    viewer = {x.layer: x for x in mem.stats(principal=Principal.member("viewer"))}
    assert list(viewer) == ["organization"] and viewer["organization"].total_memories == 1


# ---------------------------------------------------------------------------- export / import


@pytest.mark.doors("embedded")  # export/import are not served over REST
def test_export_import_round_trip(
    mem: Memory, make_memory: Callable[..., Memory], clock: FixedClock
) -> None:
    a = mem.remember(
        "Export me with everything",
        key="full",
        tags=["x", "y"],
        metadata={"k": [1, 2], "nested": {"a": None}},
        importance=4,
        event_at=clock.now() - timedelta(days=3),
        session_id="s9",
        memory_type="procedural",
    )
    clock.advance(minutes=1)
    mem.update(a.id, content="Export me with everything, edited")
    mem.feedback(a.id, "upvote")
    b = mem.remember("A team memory to export", scope="team:eng")
    c = mem.remember("An archived memory to export", scope="org:default")
    mem.archive(c.id)
    gone = mem.remember("A forgotten memory is not exported")
    mem.forget(gone.id)
    out = io.StringIO()
    assert mem.export_jsonl(out) == 3
    lines = out.getvalue().splitlines()

    copy = make_memory("copy")
    assert copy.import_jsonl(lines) == 3
    original = {
        r.id: r.to_dict() for r in _list_all(mem, scopes="all", filters={"statuses": list(Status)})
    }
    imported = {
        r.id: r.to_dict() for r in _list_all(copy, scopes="all", filters={"statuses": list(Status)})
    }
    assert set(original) == {a.id, b.id, c.id}
    assert imported == original

    def trail(m: Memory, mid: str) -> list[dict[str, Any]]:
        return [{k: v for k, v in h.to_dict().items() if k != "seq"} for h in m.history(mid)]

    for mid in original:
        assert trail(copy, mid) == trail(mem, mid)
    assert [h.op for h in copy.history(a.id)] == ["create", "update", "feedback"]
    # vectors came along: the copy recalls by meaning, and re-exports the same rows
    assert copy.recall("edited export", k=1)[0].memory.id == a.id
    again = io.StringIO()
    copy.export_jsonl(again)

    def rows(text: str) -> dict[str, dict[str, Any]]:
        parsed = [json.loads(line) for line in text.splitlines()]
        for row in parsed:
            for h in row["history"]:
                h.pop("seq")
        return {row["record"]["id"]: row for row in parsed}

    assert rows(again.getvalue()) == rows(out.getvalue())


@pytest.mark.doors("embedded")  # export/import are not served over REST
def test_import_is_all_or_nothing(
    mem: Memory, make_memory: Callable[..., Memory], db_counts: Any
) -> None:
    mem.remember("First exported memory")
    mem.remember("Second exported memory")
    out = io.StringIO()
    mem.export_jsonl(out)
    copy = make_memory("copy")
    copy.import_jsonl(out.getvalue().splitlines())
    before = db_counts(copy)
    with pytest.raises(Conflict):
        copy.import_jsonl(out.getvalue().splitlines())  # same ids again
    assert db_counts(copy) == before


def test_warm_up_loads_the_models_and_writes_nothing(
    tmp_path: Any, embedder: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from kenning.graph import spacy_ner

    monkeypatch.setattr(spacy_ner, "_pipelines", {})  # as in a fresh server process
    mem = Memory(tmp_path / "k.db", embedder=embedder, settings=Settings(graph_extractor="spacy"))
    try:
        mem.warm_up()
        assert len(spacy_ner._pipelines) == 1
        assert mem.list(scopes="all").items == []
    finally:
        mem.close()
