"""The SQLite store's in-process BM25 (postings mirror), its locks and its mask cache.

Every test compares against what FTS5 itself answers (``bm25()`` over the same
``MATCH``) on an index holding exactly the reader's rows (the reader's
statistics), or against the state before the cache: same rows, same scores,
through inserts, edits, archives, deletes, writes from another connection and
a reload from scratch.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable

import numpy as np
import pytest
from bm25kit import reader_bm25

from kenning import Memory, MemoryFilter, Principal, Settings
from kenning.access import ScopeFilter
from kenning.config import StoreOptions
from kenning.retrieval.text import query_terms
from kenning.stores.sqlite.driver import sqlite3
from kenning.stores.sqlite.rwlock import RWLock
from kenning.stores.sqlite.store import SQLiteStore

pytestmark = pytest.mark.stores("sqlite")

_WORDS = (
    "harbour lantern quartz meadow budget meeting river violin garden pottery camping "
    "painting running runs runner sunrise lake mountain festival"
).split()


def _sqlite(mem: Memory) -> SQLiteStore:
    assert isinstance(mem.store, SQLiteStore)
    return mem.store


def _fts5(store: SQLiteStore, query: str, view: ScopeFilter) -> list[tuple[str, float]]:
    """FTS5's own answer for the same query words with the reader's statistics."""
    terms = [w for w in query.split() if w in _WORDS]
    return reader_bm25(store.path, " OR ".join(f'"{t}"' for t in terms), view)


def _same_ranking(found: list[tuple[str, float]], truth: list[tuple[str, float]]) -> None:
    """Equal scores (to 1e-9) in the same order; rows tied on a score may swap."""
    assert [round(s, 9) for _, s in found] == [round(s, 9) for _, s in truth[: len(found)]]
    if found and len(truth) > len(found):
        cut = round(found[-1][1], 9)
        assert {i for i, s in truth if round(s, 9) > cut} <= {i for i, _ in found}
    else:
        assert {i for i, _ in found} == {i for i, _ in truth}


def _text(rng: random.Random) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(rng.randint(2, 9)))


QUERIES = ("harbour quartz meeting", "running runs", "lantern", "violin lake sunrise garden")


def _check(mem: Memory, store: SQLiteStore) -> None:
    view = mem.policy.readable(mem.principal)
    for query in QUERIES:
        found = store.keyword_search(query, view, MemoryFilter(), 25)
        with store._read() as conn:  # and the row mirror could answer (no SQL needed)
            scope_pks = store._scope_pks(conn, view)
            phrases = store._terms.phrases(conn, query_terms(query))
            pks, scores = store.postings.scores(conn, phrases, scope_pks, 0.25, 2000)
            direct = store._keyword_mirrored(conn, pks, scores, view, MemoryFilter(), 25)
        assert direct == found
        _same_ranking(found, _fts5(store, query, view))


def test_in_process_bm25_equals_fts5_through_every_kind_of_change(
    make_memory: Callable[..., Memory],
) -> None:
    mem = make_memory()
    store = _sqlite(mem)
    assert store.postings is not None
    rng = random.Random(3)
    made = mem.remember_many([{"content": _text(rng)} for _ in range(400)])
    _check(mem, store)  # the first search loads the mirror from the index
    assert store.postings._seq > 0 and store.postings._delta_rows == 0
    for record in made[:20]:
        mem.update(record.id, content=_text(rng))
    for record in made[20:30]:
        mem.archive(record.id)
    for record in made[30:45]:
        mem.forget(record.id)
    mem.remember_many([{"content": _text(rng)} for _ in range(30)])
    _check(mem, store)  # changed rows now come from the delta
    assert store.postings._delta_rows > 0
    for record in made[20:25]:
        mem.restore(record.id)
    for record in made[45:50]:
        mem.update(record.id, content=_text(rng) + " " + _text(rng))
    _check(mem, store)
    mem.close()
    again = make_memory()  # a fresh process would load everything in one go
    _check(again, _sqlite(again))
    assert _sqlite(again).postings._delta_rows == 0


def test_writes_through_another_connection_are_seen(make_memory: Callable[..., Memory]) -> None:
    first = make_memory()
    store = _sqlite(first)
    first.remember("lantern by the harbour")
    view = first.policy.readable(first.principal)
    assert len(store.keyword_search("quartz", view, MemoryFilter(), 10)) == 0
    other = make_memory()  # another Memory on the same file: its own connections and mirror
    added = other.remember("a quartz lantern")
    found = store.keyword_search("quartz lantern", view, MemoryFilter(), 10)
    assert found[0][0] == added.id
    _same_ranking(found, _fts5(store, "quartz lantern", view))
    other.forget(added.id)
    assert [i for i, _ in store.keyword_search("quartz", view, MemoryFilter(), 10)] == []


def test_a_word_outside_ascii_is_scored_like_fts5(
    make_memory: Callable[..., Memory],
) -> None:
    mem = make_memory()
    store = _sqlite(mem)
    city = mem.remember("我们在北京见面")
    mem.remember_many([{"content": "lantern meadow"}, {"content": "quartz river"}])
    view = mem.policy.readable(mem.principal)
    found = store.keyword_search("我们在北京见面", view, MemoryFilter(), 10)
    assert [i for i, _ in found] == [city.id]
    assert dict(found) == pytest.approx(dict(reader_bm25(store.path, '"我们在北京见面"', view)))


def test_the_setting_turns_it_off_with_the_same_answers(
    make_memory: Callable[..., Memory],
) -> None:
    rng = random.Random(9)
    texts = [{"content": _text(rng)} for _ in range(200)]
    on = make_memory("on")
    off = make_memory("off", settings=Settings(store=StoreOptions(keyword_in_process=False)))
    assert _sqlite(off).keyword_in_process is False  # rows checked in SQL
    on.remember_many(texts)
    off.remember_many(texts)
    for query in QUERIES:
        a = on.store.keyword_search(query, on.policy.readable(on.principal), MemoryFilter(), 20)
        b = off.store.keyword_search(query, off.policy.readable(off.principal), MemoryFilter(), 20)
        assert [round(s, 9) for _, s in a] == [round(s, 9) for _, s in b]


def test_vector_search_mask_follows_archive_and_restore(
    make_memory: Callable[..., Memory], make_sentences: Callable[..., list[str]]
) -> None:
    mem = make_memory()
    store = _sqlite(mem)
    mem.remember_many([{"content": s} for s in make_sentences(60)])
    view = mem.policy.readable(mem.principal)
    q = mem.embedder.embed("Who likes jazz music?")
    best = store.vector_search(q, view, MemoryFilter(), 5)[0][0]
    assert store.vectors._masks  # the mask is kept for the next search
    mem.archive(best)
    assert best not in {i for i, _ in store.vector_search(q, view, MemoryFilter(), 5)}
    mem.restore(best)
    assert store.vector_search(q, view, MemoryFilter(), 5)[0][0] == best


# --------------------------------------------------------------------------- the lock


def test_readers_share_the_lock_and_a_writer_waits_for_them() -> None:
    lock = RWLock()
    inside = threading.Barrier(3, timeout=10)
    order: list[str] = []

    def reader() -> None:
        with lock.read():
            inside.wait()  # all three readers are inside at once
            time.sleep(0.05)
            order.append("read")

    readers = [threading.Thread(target=reader) for _ in range(3)]
    for t in readers:
        t.start()
    time.sleep(0.01)

    def writer() -> None:
        with lock.write():
            order.append("write")

    w = threading.Thread(target=writer)
    w.start()
    for t in [*readers, w]:
        t.join(timeout=10)
    assert order == ["read", "read", "read", "write"]


def test_a_nested_read_does_not_wait_for_a_waiting_writer() -> None:
    lock = RWLock()
    got_outer = threading.Event()
    release = threading.Event()
    result: list[str] = []

    def reader() -> None:
        with lock.read():
            got_outer.set()
            release.wait(10)
            with lock.read():  # a writer is queued now: this must not deadlock
                result.append("nested")

    def writer() -> None:
        with lock.write():
            with lock.read():  # the writer may read
                result.append("write")

    r = threading.Thread(target=reader)
    r.start()
    got_outer.wait(10)
    w = threading.Thread(target=writer)
    w.start()
    time.sleep(0.05)
    release.set()
    r.join(timeout=10)
    w.join(timeout=10)
    assert not r.is_alive() and not w.is_alive()
    assert result == ["nested", "write"]


def test_postings_scores_match_fts5_bm25_on_a_raw_index(tmp_path: object) -> None:
    """The formula itself, on a bare FTS5 table with FTS5's own bm25() as truth."""
    from kenning.stores.sqlite.postings import TEMP_TOKENIZER, PostingsIndex

    rng = random.Random(5)
    path = f"{tmp_path}/raw.db"
    conn = sqlite3.connect(path, isolation_level=None)
    conn.executescript(
        "CREATE TABLE memories (pk INTEGER PRIMARY KEY, id TEXT, scope_pk INT, status TEXT);"
        "CREATE TABLE history (seq INTEGER PRIMARY KEY, memory_id TEXT);"
        "CREATE VIRTUAL TABLE memories_fts USING fts5(content, key, tags,"
        " tokenize = 'porter unicode61 remove_diacritics 2');"
    )
    for pk in range(1, 301):
        conn.execute("INSERT INTO memories VALUES (?, ?, 1, 'active')", (pk, f"m{pk}"))
        key = rng.choice(_WORDS) if pk % 3 == 0 else None
        conn.execute(
            "INSERT INTO memories_fts (rowid, content, key, tags) VALUES (?, ?, ?, ?)",
            (pk, _text(rng), key, '["garden"]' if pk % 7 == 0 else "[]"),
        )
    conn.execute("INSERT INTO history VALUES (1, 'm1')")
    conn.executescript(TEMP_TOKENIZER)
    index = PostingsIndex()
    index.refresh(conn)
    phrase_sets: list[list[tuple[str, ...]]] = [
        [("harbour",)],
        [("run",), ("run",)],
        [("garden",), ("lake",), ("quartz",)],
        [("absent",)],
        [("lake", "mountain")],  # a phrase: consecutive tokens in one column
        [("run", "run"), ("violin",)],
    ]
    for stems in phrase_sets:
        match = " OR ".join('"' + " ".join(p) + '"' for p in stems)
        truth = dict(
            conn.execute(
                "SELECT rowid, -bm25(memories_fts) FROM memories_fts WHERE memories_fts MATCH ?",
                (match,),
            ).fetchall()
        )
        pks, scores = index.scores(conn, stems, [1])
        assert len(truth) > 0 or stems == [("absent",)]
        assert dict(zip(pks.tolist(), scores.tolist(), strict=True)) == pytest.approx(truth)
        assert np.all(scores > 0)
    conn.close()


def test_a_word_found_only_in_another_organization_finds_nothing(
    make_memory: Callable[..., Memory],
) -> None:
    """The reader's organization holds no vectors at all: no hit, no error,
    whether the word is in another organization's memories or nowhere."""
    mem = make_memory()
    mem.remember("quartz lantern", principal=Principal.member("a", org_id="o1"))
    other = Principal.member("b", org_id="o2")
    view = mem.policy.readable(other)
    for word in ("quartz", "violin"):
        assert _sqlite(mem).keyword_search(word, view, MemoryFilter(), 10) == []
        assert mem.recall(word, principal=other).hits == []
