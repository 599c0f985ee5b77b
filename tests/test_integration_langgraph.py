"""The LangGraph store (kenning.integrations.langgraph) on the real engine and SQLite.

LangGraph publishes a conformance suite for checkpointers only
(``langgraph-checkpoint-conformance``), none for stores. The store cases below
are ported from LangGraph's own store tests (``libs/checkpoint/tests/
test_store.py`` for ``InMemoryStore`` and ``libs/checkpoint-sqlite/tests/
test_store.py`` for ``SqliteStore``): batch order and op kinds, get/put/delete,
filters with operators, pagination, ``list_namespaces`` prefix/suffix/wildcards/
max_depth/pagination, namespace validation, non-ASCII search. Their vector
cases used a character-count fake embedder; here the real MiniLM model and
BM25 rank, so the queries name the words they look for.
"""

from __future__ import annotations

import asyncio
import sys
import uuid
from collections.abc import Callable
from typing import Any

import pytest
from langgraph.graph import END, START, StateGraph
from langgraph.store.base import (
    BaseStore,
    GetOp,
    InvalidNamespaceError,
    Item,
    ListNamespacesOp,
    MatchCondition,
    PutOp,
    SearchOp,
)
from typing_extensions import TypedDict

from kenning import FixedClock, Memory, PermissionDenied, Principal, Role, TeamRole
from kenning.integrations import MissingExtra
from kenning.integrations.langgraph import MARKER_TAG, KenningStore

pytestmark = pytest.mark.stores("sqlite")


@pytest.fixture
def store(mem: Memory) -> KenningStore:
    """A store for the memory's own (admin) principal."""
    return KenningStore(mem)


# -- ported from LangGraph's store tests ---------------------------------------------------


def test_batch_order(store: KenningStore) -> None:
    store.put(("test", "foo"), "key1", {"data": "value1"})
    store.put(("test", "bar"), "key2", {"data": "value2"})
    results = store.batch(
        [
            GetOp(namespace=("test", "foo"), key="key1"),
            PutOp(namespace=("test", "bar"), key="key2", value={"data": "value2"}),
            SearchOp(namespace_prefix=("test",), filter={"data": "value1"}, limit=10, offset=0),
            ListNamespacesOp(match_conditions=None, max_depth=None, limit=10, offset=0),
            GetOp(namespace=("test",), key="key3"),
        ]
    )
    assert len(results) == 5
    first = results[0]
    assert isinstance(first, Item)
    assert (first.value, first.key, first.namespace) == (
        {"data": "value1"},
        "key1",
        ("test", "foo"),
    )
    assert results[1] is None
    found = results[2]
    assert isinstance(found, list) and [(i.key, i.value) for i in found] == [  # type: ignore[union-attr]
        ("key1", {"data": "value1"})
    ]
    assert results[3] == [("test", "bar"), ("test", "foo")]
    assert results[4] is None

    reordered = store.batch(
        [
            SearchOp(namespace_prefix=("test",), filter=None, limit=5, offset=0),
            GetOp(namespace=("test", "bar"), key="key2"),
            ListNamespacesOp(match_conditions=None, max_depth=None, limit=5, offset=0),
            PutOp(namespace=("test",), key="key3", value={"data": "value3"}),
            GetOp(namespace=("test", "foo"), key="key1"),
        ]
    )
    assert len(reordered[0]) == 2  # type: ignore[arg-type]
    assert isinstance(reordered[1], Item) and reordered[1].value == {"data": "value2"}
    assert reordered[3] is None
    assert isinstance(reordered[4], Item) and reordered[4].namespace == ("test", "foo")
    item3 = store.get(("test",), "key3")
    assert item3 is not None and item3.value == {"data": "value3"}


def test_batch_put_ops_and_delete(store: KenningStore) -> None:
    results = store.batch(
        [
            PutOp(namespace=("test",), key="key1", value={"data": "value1"}),
            PutOp(namespace=("test",), key="key2", value={"data": "value2"}),
            PutOp(namespace=("test",), key="key3", value=None),
        ]
    )
    assert results == [None, None, None]
    item1, item2 = store.get(("test",), "key1"), store.get(("test",), "key2")
    assert item1 is not None and item1.value == {"data": "value1"}
    assert item2 is not None and item2.value == {"data": "value2"}
    assert store.get(("test",), "key3") is None
    # the same key twice in one batch: the last put wins
    store.batch([PutOp(("test",), "k", {"v": 1}), PutOp(("test",), "k", {"v": 2})])
    again = store.get(("test",), "k")
    assert again is not None and again.value == {"v": 2}


def test_batch_search_ops(store: KenningStore) -> None:
    for namespace, key, value in [
        (("test", "foo"), "key1", {"data": "value1", "tag": "a"}),
        (("test", "bar"), "key2", {"data": "value2", "tag": "a"}),
        (("test", "baz"), "key3", {"data": "value3", "tag": "b"}),
    ]:
        store.put(namespace, key, value)
    results = store.batch(
        [
            SearchOp(namespace_prefix=("test",), filter={"tag": "a"}, limit=10, offset=0),
            SearchOp(namespace_prefix=("test",), filter=None, limit=2, offset=0),
            SearchOp(namespace_prefix=("test", "foo"), filter=None, limit=10, offset=0),
        ]
    )
    assert sorted(i.key for i in results[0]) == ["key1", "key2"]  # type: ignore[union-attr]
    assert len(results[1]) == 2  # type: ignore[arg-type]
    assert [i.namespace for i in results[2]] == [("test", "foo")]  # type: ignore[union-attr]


def test_batch_list_namespaces_ops(store: KenningStore) -> None:
    data = [
        (("test", "documents", "public"), "doc1", {"content": "public doc"}),
        (("test", "documents", "private"), "doc2", {"content": "private doc"}),
        (("test", "images", "public"), "img1", {"content": "public image"}),
        (("prod", "documents", "public"), "doc3", {"content": "prod doc"}),
    ]
    for namespace, key, value in data:
        store.put(namespace, key, value)
    results = store.batch(
        [
            ListNamespacesOp(match_conditions=None, max_depth=None, limit=10, offset=0),
            ListNamespacesOp(match_conditions=None, max_depth=2, limit=10, offset=0),
            ListNamespacesOp(
                match_conditions=(MatchCondition("suffix", ("public",)),), limit=10, offset=0
            ),
        ]
    )
    assert sorted(results[0]) == sorted(ns for ns, _, _ in data)  # type: ignore[arg-type]
    assert results[1] == [("prod", "documents"), ("test", "documents"), ("test", "images")]
    assert results[2] == [
        ("prod", "documents", "public"),
        ("test", "documents", "public"),
        ("test", "images", "public"),
    ]


def test_basic_store_ops(store: KenningStore, clock: FixedClock) -> None:
    namespace = ("test", "documents")
    value = {"title": "Test Document", "content": "Hello, World!"}
    store.put(namespace, "doc1", value)
    item = store.get(namespace, "doc1")
    assert item is not None
    assert (item.namespace, item.key, item.value) == (namespace, "doc1", value)
    assert item.created_at == item.updated_at == clock.now()

    clock.advance(minutes=5)
    updated = {"title": "Updated Document", "content": "Hello, Updated!"}
    store.put(namespace, "doc1", updated)
    again = store.get(namespace, "doc1")
    assert again is not None and again.value == updated
    assert again.created_at == item.created_at  # created time kept
    assert again.updated_at == clock.now() > item.updated_at

    assert store.get(("test", "other_documents"), "doc1") is None
    store.delete(namespace, "doc1")
    assert store.get(namespace, "doc1") is None


def test_search_filters_and_pagination(store: KenningStore) -> None:
    data = [
        (
            ("test", "docs"),
            "doc1",
            {"title": "First Doc", "author": "Alice", "tags": ["important"]},
        ),
        (("test", "docs"), "doc2", {"title": "Second Doc", "author": "Bob", "tags": ["draft"]}),
        (("test", "images"), "img1", {"title": "Image 1", "author": "Alice", "tags": ["final"]}),
    ]
    for namespace, key, value in data:
        store.put(namespace, key, value)
    assert len(store.search(("test",))) == 3
    docs = store.search(("test", "docs"))
    assert sorted(i.key for i in docs) == ["doc1", "doc2"]
    alice = store.search(("test",), filter={"author": "Alice"})
    assert sorted(i.key for i in alice) == ["doc1", "img1"]
    assert [i.key for i in store.search(("test",), filter={"tags": ["draft"]})] == ["doc2"]
    assert [i.key for i in store.search(("test",), filter={"author": {"$ne": "Alice"}})] == ["doc2"]
    assert len(store.search(("test",), limit=2)) == 2
    assert len(store.search(("test",), offset=2)) == 1
    page1, page2 = store.search(("test",), limit=2), store.search(("test",), limit=2, offset=2)
    assert {i.key for i in page1} | {i.key for i in page2} == {"doc1", "doc2", "img1"}


def test_vector_search_with_filters(store: KenningStore) -> None:
    docs = [
        ("doc1", {"text": "red apple", "color": "red", "score": 4.5}),
        ("doc2", {"text": "red car", "color": "red", "score": 3.0}),
        ("doc3", {"text": "green apple", "color": "green", "score": 4.0}),
        ("doc4", {"text": "blue car", "color": "blue", "score": 3.5}),
    ]
    text_store = KenningStore(store.memory, text_fields=["text"])
    for key, value in docs:
        text_store.put(("test",), key, value)
    results = text_store.search(("test",), query="apple", filter={"color": "red"})
    assert [r.key for r in results][:1] == ["doc1"] and len(results) == 2
    results = text_store.search(("test",), query="car", filter={"color": "red"})
    assert [r.key for r in results][:1] == ["doc2"] and len(results) == 2
    results = text_store.search(("test",), query="blue", filter={"score": {"$gt": 3.2}})
    assert len(results) == 3 and results[0].key == "doc4"
    assert all(r.score is not None and 0.0 <= r.score <= 1.0 for r in results)
    results = text_store.search(
        ("test",), query="apple", filter={"score": {"$gte": 4.0}, "color": "green"}
    )
    assert [r.key for r in results] == ["doc3"]


def test_vector_search_pagination(store: KenningStore) -> None:
    for i in range(5):
        store.put(("test",), f"doc{i}", {"text": f"test document number {i}"})
    page1 = store.search(("test",), query="test", limit=2)
    page2 = store.search(("test",), query="test", limit=2, offset=2)
    assert len(page1) == 2 and len(page2) == 2
    assert not {r.key for r in page1} & {r.key for r in page2}
    assert len(store.search(("test",), query="test", limit=10)) == 5


def test_list_namespaces_basic(store: KenningStore) -> None:
    namespaces = [
        ("a", "b", "c"),
        ("a", "b", "d", "e"),
        ("a", "b", "d", "i"),
        ("a", "b", "f"),
        ("a", "c", "f"),
        ("b", "a", "f"),
        ("users", "123"),
        ("users", "456", "settings"),
        ("admin", "users", "789"),
    ]
    store.batch(
        [PutOp(ns, f"id_{i}", {"data": f"value_{i:02d}"}) for i, ns in enumerate(namespaces)]
    )
    ab = [("a", "b", "c"), ("a", "b", "d", "e"), ("a", "b", "d", "i"), ("a", "b", "f")]
    assert store.list_namespaces(prefix=("a", "b")) == ab
    f_end = [("a", "b", "f"), ("a", "c", "f"), ("b", "a", "f")]
    assert store.list_namespaces(suffix=("f",)) == f_end
    assert store.list_namespaces(prefix=("a",), suffix=("f",)) == f_end[:2]
    assert store.list_namespaces(prefix=("a", "b"), max_depth=3) == [
        ("a", "b", "c"),
        ("a", "b", "d"),
        ("a", "b", "f"),
    ]
    assert store.list_namespaces(prefix=("a", "b"), limit=2) == ab[:2]
    assert store.list_namespaces(prefix=("a", "b"), offset=2) == ab[2:]
    assert store.list_namespaces(prefix=("a", "*", "f")) == f_end[:2]
    assert store.list_namespaces(suffix=("*", "f")) == f_end
    assert store.list_namespaces(prefix=("nonexistent",)) == []
    assert store.list_namespaces(prefix=("users", "123")) == [("users", "123")]
    assert store.list_namespaces(max_depth=2) == [
        ("a", "b"),
        ("a", "c"),
        ("admin", "users"),
        ("b", "a"),
        ("users", "123"),
        ("users", "456"),
    ]


def test_list_namespaces_wildcards_and_pagination(store: KenningStore) -> None:
    for i, ns in enumerate(
        [
            ("users", "123"),
            ("users", "456"),
            ("users", "789", "settings"),
            ("admin", "users", "789"),
            ("guests", "123"),
            ("guests", "456", "preferences"),
        ]
    ):
        store.put(ns, f"id_{i}", {"data": f"value_{i:02d}"})
    assert store.list_namespaces(prefix=("users", "*")) == [
        ("users", "123"),
        ("users", "456"),
        ("users", "789", "settings"),
    ]
    assert store.list_namespaces(suffix=("*", "preferences")) == [("guests", "456", "preferences")]
    assert store.list_namespaces(prefix=("*", "users"), suffix=("*", "settings")) == []
    for i in range(12):
        store.put(("namespace", f"sub_{i:02d}"), f"id_{i:02d}", {"data": i})
    assert store.list_namespaces(prefix=("namespace",), limit=5, offset=5) == [
        ("namespace", f"sub_{i:02d}") for i in range(5, 10)
    ]


def test_empty_store_and_namespace_validation(store: KenningStore) -> None:
    assert store.list_namespaces() == []
    assert store.search(("anything",)) == []
    doc = {"foo": "bar"}
    for bad in [(), ("the", "thing.about"), ("some", "fun", ""), ("langgraph", "foo")]:
        with pytest.raises(InvalidNamespaceError):
            store.put(bad, "foo", doc)
    store.put(("foo", "langgraph", "foo"), "bar", doc)
    got = store.get(("foo", "langgraph", "foo"), "bar")
    assert got is not None and got.value == doc
    assert store.search(("foo", "langgraph", "foo"), query="bar")[0].value == doc
    store.delete(("foo", "langgraph", "foo"), "bar")
    assert store.get(("foo", "langgraph", "foo"), "bar") is None
    # past the public put: LangGraph's own stores accept a "langgraph" root in batch
    store.batch([PutOp(("langgraph", "foo"), "bar", doc)])
    assert store.search(("langgraph", "foo"))[0].value == doc
    with pytest.raises(NotImplementedError):
        store.put(("ttl",), "k", doc, ttl=5.0)


def test_non_ascii(store: KenningStore) -> None:
    texts = ["这是中文", "これは日本語です", "이건 한국어야", "Это русский", "यह रूसी है"]
    for i, text in enumerate(texts, 1):
        store.put(("user_123", "memories"), str(i), {"text": text})
    for i, text in enumerate(texts, 1):
        assert store.search(("user_123", "memories"), query=text)[0].key == str(i)


def test_async_api(store: KenningStore) -> None:
    async def run() -> None:
        await store.aput(("async", "ns"), "k1", {"text": "the deploy runs on Fridays"})
        await store.aput(("async", "ns"), "k2", {"text": "lunch is at noon"})
        got = await store.aget(("async", "ns"), "k1")
        assert got is not None and got.value["text"] == "the deploy runs on Fridays"
        hits = await store.asearch(("async",), query="when is the deploy?")
        assert hits[0].key == "k1"
        assert await store.alist_namespaces() == [("async", "ns")]
        results = await store.abatch([GetOp(("async", "ns"), "k2"), GetOp(("async", "ns"), "nope")])
        assert isinstance(results[0], Item) and results[1] is None
        await store.adelete(("async", "ns"), "k1")
        assert await store.aget(("async", "ns"), "k1") is None

    asyncio.run(run())


# -- kenning's mapping: scopes, tags, metadata, isolation ----------------------------------


def test_items_are_kenning_memories(store: KenningStore, mem: Memory) -> None:
    store.put(("memories", "prefs"), "tea", {"text": "Alice prefers green tea", "kind": "pref"})
    (record,) = mem.list(filters={"tags": [MARKER_TAG]}).items
    assert record.scope == store.scope and str(record.scope) == "user:default"
    assert set(record.tags) == {MARKER_TAG, "memories", "prefs"}
    assert record.metadata["kind"] == "pref"  # value fields are metadata: kenning filters them
    assert record.source == "langgraph"
    assert record.key == 'langgraph:["memories","prefs","tea"]'
    # kenning's own recall finds it too
    assert mem.recall("what tea does Alice like?", k=1)[0].memory.id == record.id
    # a value too long for a readable key still gets a stable one
    long_ns = ("x" * 60, "y" * 60)
    store.put(long_ns, "k", {"n": 1})
    store.put(long_ns, "k", {"n": 2})
    got = store.get(long_ns, "k")
    assert got is not None and got.value == {"n": 2}
    assert len(store.search(long_ns)) == 1
    with pytest.raises(Exception, match="reserved"):
        store.put(("bad",), "k", {"_langgraph": 1})


def test_text_fields_and_index(store: KenningStore, mem: Memory) -> None:
    text_store = KenningStore(mem, text_fields=["summary", "notes[*]"])
    text_store.put(("docs",), "a", {"summary": "kayak trip", "notes": ["river", "rain"], "n": 1})
    rec = mem.list(filters={"key": 'langgraph:["docs","a"]'}).items[0]
    assert rec.content == "kayak trip\nriver\nrain"
    text_store.put(("docs",), "b", {"summary": "kayak rental"}, index=False)
    hits = text_store.search(("docs",), query="kayak")
    assert [h.key for h in hits] == ["a"]  # not indexed: not ranked by a query
    assert {i.key for i in text_store.search(("docs",))} == {"a", "b"}  # but listed


def test_scope_labels_pick_the_scope(store: KenningStore, mem: Memory) -> None:
    store.put(("team:platform", "decisions"), "db", {"text": "Postgres 16 is the billing DB"})
    store.put(("notes",), "n1", {"text": "mine"})
    (team_rec,) = mem.list(scopes=["team:platform"], filters={"tags": [MARKER_TAG]}).items
    assert str(team_rec.scope) == "team:platform" and "decisions" in team_rec.tags
    # shown relative to the store's own scope, explicit for any other: both read back
    assert store.list_namespaces() == [("notes",), ("team:platform", "decisions")]
    for ns in store.list_namespaces():
        assert store.search(ns)
    assert store.list_namespaces(prefix=("user:default",)) == [("user:default", "notes")]
    same = store.get(("user:default", "notes"), "n1")
    assert same is not None and same.value == {"text": "mine"}
    hits = store.search(("team:platform",), query="billing database")
    assert [(h.namespace, h.key) for h in hits] == [(("team:platform", "decisions"), "db")]


def test_a_store_bound_to_one_user_never_returns_anothers_items(
    make_memory: Callable[..., Memory],
) -> None:
    mem = make_memory()
    org = "acme"
    alice = Principal(
        org_id=org, user_id="alice", roles={Role.MEMBER}, teams={"eng": TeamRole.MEMBER}
    )
    bob = Principal(org_id=org, user_id="bob", roles={Role.MEMBER}, teams={"eng": TeamRole.MEMBER})
    a, b = KenningStore(mem, principal=alice), KenningStore(mem, principal=bob)
    a.put(("memories",), "drink", {"text": "Alice drinks green tea every morning"})
    b.put(("memories",), "drink", {"text": "Bob drinks black coffee every morning"})
    a.put(("team:eng", "memories"), "standup", {"text": "standup is at 9:30"})

    a_item, b_item = a.get(("memories",), "drink"), b.get(("memories",), "drink")
    assert a_item is not None and "Alice" in a_item.value["text"]
    assert b_item is not None and "Bob" in b_item.value["text"]
    for query in ["what does Alice drink?", "black coffee", "tea", "morning drink"]:
        assert all("Alice" not in h.value.get("text", "") for h in b.search((), query=query))
        assert all("Bob" not in h.value.get("text", "") for h in a.search((), query=query))
    assert [h.value["text"] for h in b.search(("memories",))] == [
        "Bob drinks black coffee every morning"
    ]
    # the team's item is shared; the other's personal scope is refused outright
    assert b.list_namespaces() == [("memories",), ("team:eng", "memories")]
    shared = b.get(("team:eng", "memories"), "standup")
    assert shared is not None and shared.value["text"] == "standup is at 9:30"
    with pytest.raises(PermissionDenied):
        b.get(("user:alice", "memories"), "drink")
    with pytest.raises(PermissionDenied):
        b.put(("user:alice", "memories"), "drink", {"text": "overwritten"})
    still = a.get(("memories",), "drink")
    assert still is not None and "Alice" in still.value["text"]


# -- inside a compiled graph ---------------------------------------------------------------


class _State(TypedDict, total=False):
    user: str
    message: str
    recalled: list[str]


def _build_graph(store: BaseStore) -> Any:
    def remember(state: _State, *, store: BaseStore) -> dict[str, Any]:
        namespace = ("memories", state["user"])
        store.put(namespace, uuid.uuid4().hex, {"text": state["message"]})
        return {}

    def recall(state: _State, *, store: BaseStore) -> dict[str, Any]:
        hits = store.search(("memories", state["user"]), query=state["message"], limit=3)
        return {"recalled": [h.value["text"] for h in hits]}

    graph = StateGraph(_State)
    graph.add_node("remember", remember)
    graph.add_node("recall", recall)
    graph.add_edge(START, "remember")
    graph.add_edge("remember", "recall")
    graph.add_edge("recall", END)
    return graph.compile(store=store)


def test_inside_a_compiled_graph(store: KenningStore) -> None:
    app = _build_graph(store)
    app.invoke({"user": "u1", "message": "My favourite city is Lisbon"})
    app.invoke({"user": "u1", "message": "I am allergic to peanuts"})
    out = app.invoke({"user": "u1", "message": "Which city do I like best?"})
    # the statement answers; the question itself (just written) states nothing
    assert out["recalled"][0] == "My favourite city is Lisbon"
    assert "Which city do I like best?" in out["recalled"][1:]
    other = app.invoke({"user": "u2", "message": "anything about Lisbon?"})
    assert other["recalled"] == ["anything about Lisbon?"]  # u1's namespace stays apart
    assert store.list_namespaces(prefix=("memories",)) == [("memories", "u1"), ("memories", "u2")]


def test_inside_a_compiled_graph_async(store: KenningStore) -> None:
    app = _build_graph(store)

    async def run() -> dict[str, Any]:
        await app.ainvoke({"user": "u9", "message": "The office wifi password rotates monthly"})
        result: dict[str, Any] = await app.ainvoke(
            {"user": "u9", "message": "how often does the wifi password change?"}
        )
        return result

    out = asyncio.run(run())
    assert "The office wifi password rotates monthly" in out["recalled"]


# -- the optional extra --------------------------------------------------------------------


def test_without_langgraph_the_error_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "langgraph.store.base", None)
    monkeypatch.delitem(sys.modules, "kenning.integrations.langgraph")
    with pytest.raises(ImportError, match=r"pip install 'kenning\[langgraph\]'") as info:
        import kenning.integrations.langgraph  # noqa: F401
    assert isinstance(info.value, MissingExtra) and info.value.extra == "langgraph"
