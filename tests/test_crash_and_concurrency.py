"""Crash safety and multi-process writes, on both stores.

(a) A writer process is SIGKILLed mid-stream: every id it acknowledged is in the
    database and no memory lacks its vector or keyword row (nor the reverse).
(b) Four processes write one database at once: nothing is lost, nobody sees
    "database is locked", and every table agrees.
(c) The same with four clients in four threads of one process.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kenning import Memory, Settings
from kenning.stores.postgres.schema import MIGRATIONS as PG_MIGRATIONS
from kenning.stores.sqlite.migrations import MIGRATIONS as SQLITE_MIGRATIONS

Rows = Callable[..., list[Any]]

SRC = str(Path(__file__).resolve().parents[1] / "src")

CRASH_CHILD = textwrap.dedent(
    """
    import sys
    from kenning import Memory
    from kenning.embeddings import MiniLMEmbedder

    mem = Memory(embedder=MiniLMEmbedder(threads=1))  # KENNING_DATABASE_URL picks the store
    topics = ["gardening", "taxes", "chess", "sailing", "baking", "astronomy", "jazz", "hiking"]
    i = 0
    while True:
        if i % 4 == 3:
            items = [{"content": f"Batch {i} note {j} about {topics[j % 8]} and day {i}",
                      "tags": ["batch"]} for j in range(20)]
            records = mem.remember_many(items)
            sys.stdout.write("".join(r.id + "\\n" for r in records))
        else:
            record = mem.remember(f"Single note {i} about {topics[i % 8]}", key=f"single {i}")
            sys.stdout.write(record.id + "\\n")
        sys.stdout.flush()  # printed only after the write returned, i.e. committed
        i += 1
    """
)

CONCURRENT_CHILD = textwrap.dedent(
    """
    import json, os, sys, time
    from kenning import Memory
    from kenning.embeddings import MiniLMEmbedder

    name, go = sys.argv[1], sys.argv[2]
    ids, errors = [], []
    try:
        mem = Memory(embedder=MiniLMEmbedder(threads=1))  # KENNING_DATABASE_URL picks the store
        texts = [f"Writer {name} remembers fact {i} about project {name}-{i % 7}"
                 for i in range(40)]
        mem.embedder.embed_many(texts)  # warm the cache: the writes below then overlap tightly
    except Exception as exc:
        errors.append("open: " + repr(exc))
        texts = []
    print("ready", flush=True)
    while not os.path.exists(go):
        time.sleep(0.005)
    plan = [("one", [i]) for i in range(10)] + [("many", list(range(10, 25)))] + \\
           [("one", [i]) for i in range(25, 30)] + [("many", list(range(30, 40)))]
    for kind, idx in (plan if texts else []):
        try:
            if kind == "one":
                ids.append(mem.remember(texts[idx[0]], scope=f"team:{name}").id)
            else:
                items = [{"content": texts[i], "scope": f"team:{name}"} for i in idx]
                recs = mem.remember_many(items)
                ids.extend(r.id for r in recs)
            if len(ids) % 5 == 0:
                mem.recall(f"project {name}", k=3, scopes="all")
                mem.list(limit=5, scopes="all")
        except Exception as exc:
            errors.append(repr(exc))
    print(json.dumps({"ids": ids, "errors": errors}), flush=True)
    """
)


def _env(url: str) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = SRC + os.pathsep + env.get("PYTHONPATH", "")
    env["KENNING_DATABASE_URL"] = url
    return env


def _open(url: str, embedder: Any) -> Memory:
    return Memory(settings=Settings(database_url=url), embedder=embedder)


#: The same questions asked of each store's own tables (PostgreSQL keeps the
#: vector and the tsvector on the memory row; SQLite has separate tables).
_CHECKS: dict[str, dict[str, str]] = {
    "sqlite": {
        "integrity": "PRAGMA integrity_check",
        "memories": "SELECT COUNT(*) FROM memories",
        "vectors": "SELECT COUNT(*) FROM vectors",
        "fts": "SELECT COUNT(*) FROM memories_fts",
        "creates": "SELECT COUNT(*) FROM history WHERE op = 'create'",
        "history": "SELECT COUNT(*) FROM history",
        "memory_without_vector": "SELECT COUNT(*) FROM memories m "
        "LEFT JOIN vectors v ON v.pk = m.pk WHERE v.pk IS NULL",
        "memory_without_fts": "SELECT COUNT(*) FROM memories m "
        "WHERE m.pk NOT IN (SELECT rowid FROM memories_fts)",
        "memory_without_history": "SELECT COUNT(*) FROM memories m WHERE m.id NOT IN "
        "(SELECT memory_id FROM history WHERE op = 'create')",
        "orphan_vectors": "SELECT COUNT(*) FROM vectors v "
        "WHERE v.pk NOT IN (SELECT pk FROM memories)",
        "orphan_fts": "SELECT COUNT(*) FROM memories_fts "
        "WHERE rowid NOT IN (SELECT pk FROM memories)",
        "orphan_history": "SELECT COUNT(*) FROM history WHERE memory_id NOT IN "
        "(SELECT id FROM memories)",
        "migrations": "SELECT COUNT(*) FROM _migrations",
    },
    "postgresql": {
        "integrity": "SELECT CASE WHEN bool_and(i.indisvalid AND i.indisready) THEN 'ok' "
        "ELSE 'invalid index' END FROM pg_index i WHERE i.indrelid IN "
        "('memories'::regclass, 'history'::regclass)",
        "memories": "SELECT COUNT(*) FROM memories",
        "vectors": "SELECT COUNT(embedding) FROM memories",
        "fts": "SELECT COUNT(DISTINCT pk) FROM postings",
        "creates": "SELECT COUNT(*) FROM history WHERE op = 'create'",
        "history": "SELECT COUNT(*) FROM history",
        "memory_without_vector": "SELECT COUNT(*) FROM memories WHERE embedding IS NULL "
        "OR vector_dims(embedding) <> 384",
        "memory_without_fts": "SELECT COUNT(*) FROM memories m WHERE NOT EXISTS "
        "(SELECT 1 FROM postings p WHERE p.pk = m.pk)",
        "orphan_fts": "SELECT COUNT(*) FROM postings p WHERE NOT EXISTS "
        "(SELECT 1 FROM memories m WHERE m.pk = p.pk)",
        "memory_without_history": "SELECT COUNT(*) FROM memories m WHERE m.id NOT IN "
        "(SELECT memory_id FROM history WHERE op = 'create')",
        "orphan_history": "SELECT COUNT(*) FROM history WHERE memory_id NOT IN "
        "(SELECT id FROM memories)",
        "migrations": "SELECT COUNT(*) FROM kenning_migrations",
    },
}
_PER_SCOPE = {
    "sqlite": "SELECT s.key, COUNT(*) FROM memories m JOIN scopes s ON s.pk = m.scope_pk "
    "GROUP BY s.key",
    "postgresql": "SELECT scope_key, COUNT(*) FROM memories GROUP BY scope_key",
}


def _integrity(mem: Memory, db_rows: Rows) -> dict[str, Any]:
    """Every check of ``_CHECKS`` for ``mem``'s store, read past kenning (raw SQL)."""
    kind = mem.store.kind
    state: dict[str, Any] = {
        name: db_rows(mem, {kind: sql})[0][0] for name, sql in _CHECKS[kind].items()
    }
    state["ids"] = {r[0] for r in db_rows(mem, {kind: "SELECT id FROM memories"})}
    state["per_scope"] = dict(db_rows(mem, {kind: _PER_SCOPE[kind]}))
    state["expected_migrations"] = len(PG_MIGRATIONS if kind == "postgresql" else SQLITE_MIGRATIONS)
    return state


_NO_ORPHANS = (
    "memory_without_vector",
    "memory_without_fts",
    "memory_without_history",
    "orphan_vectors",
    "orphan_fts",
    "orphan_history",
)


def test_sigkill_mid_write_loses_nothing_acknowledged(
    tmp_path: Path, embedder: Any, database_url: Callable[..., str], db_rows: Rows
) -> None:
    script = tmp_path / "kenning_crash_writer.py"
    script.write_text(CRASH_CHILD)
    url = database_url(tmp_path / "crash")
    child = subprocess.Popen(
        [sys.executable, str(script)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_env(url),
    )
    watchdog = threading.Timer(240, child.kill)
    watchdog.start()
    acked: list[str] = []
    try:
        assert child.stdout is not None
        while len(acked) < 60:
            line = child.stdout.readline()
            if not line:
                break
            acked.append(line.strip())
        os.kill(child.pid, signal.SIGKILL)  # the child is still writing
        rest, err = child.communicate(timeout=60)
    finally:
        watchdog.cancel()
    assert len(acked) >= 60, f"writer died early: {err[-2000:]}"
    assert child.returncode == -signal.SIGKILL
    acked.extend(x for x in rest.split() if x)  # printed (committed) before the kill landed

    mem = _open(url, embedder)
    state = _integrity(mem, db_rows)
    assert state["integrity"] == "ok"
    assert set(acked) <= state["ids"], "an acknowledged write was lost"
    for name in _NO_ORPHANS:
        assert state.get(name, 0) == 0, (name, state[name])
    assert (
        state["memories"]
        == state["vectors"]
        == state["fts"]
        == state["creates"]
        == state["history"]
    )
    # unacknowledged writes are all-or-nothing: whole batches of 20 plus single notes
    assert len(set(acked)) == len(acked)
    assert state["memories"] - len(acked) in range(0, 21)

    try:
        for mid in acked:
            assert mem.get(mid).id == mid
        hits = mem.recall("notes about sailing", k=5)
        assert len(hits) == 5 and all("sailing" in h.memory.content for h in hits[:1])
        assert mem.remember("Written after the crash").id in _integrity(mem, db_rows)["ids"]
    finally:
        mem.close()


def test_four_processes_write_at_once(
    tmp_path: Path, embedder: Any, database_url: Callable[..., str], db_rows: Rows
) -> None:
    script = tmp_path / "kenning_writer.py"
    script.write_text(CONCURRENT_CHILD)
    # not migrated yet: the four also race on the schema
    url = database_url(tmp_path / "shared", migrated=False)
    go = tmp_path / "go"
    names = ["w1", "w2", "w3", "w4"]
    children = [
        subprocess.Popen(
            [sys.executable, str(script), name, str(go)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=_env(url),
        )
        for name in names
    ]
    watchdog = threading.Timer(240, lambda: [c.kill() for c in children])
    watchdog.start()
    try:
        for child in children:
            assert child.stdout is not None
            line = child.stdout.readline()
            if line.strip() != "ready":
                child.wait(timeout=60)
                raise AssertionError(
                    f"writer failed to start: {line!r} {child.stderr.read()[-3000:]}"
                )  # type: ignore[union-attr]
        go.touch()
        outputs = [child.communicate(timeout=240) for child in children]
    finally:
        watchdog.cancel()
    reports = []
    for child, (out, err) in zip(children, outputs, strict=True):
        assert child.returncode == 0, err[-2000:]
        assert "locked" not in err.lower()
        report = json.loads(out.strip().splitlines()[-1])
        assert report["errors"] == [], report["errors"]
        assert not any("locked" in e.lower() for e in report["errors"])
        assert len(report["ids"]) == 40
        reports.append(report)
    all_ids = [i for r in reports for i in r["ids"]]
    assert len(set(all_ids)) == 160
    mem = _open(url, embedder)
    try:
        state = _integrity(mem, db_rows)
    finally:
        mem.close()
    assert state["integrity"] == "ok"
    assert state["ids"] == set(all_ids)
    assert state["memories"] == state["vectors"] == state["fts"] == state["history"] == 160
    for name in _NO_ORPHANS:
        assert state.get(name, 0) == 0, (name, state[name])
    assert state["per_scope"] == {f"team:{n}": 40 for n in names}
    # each migration applied once despite four racing processes
    assert state["migrations"] == state["expected_migrations"]


def test_threads_with_separate_clients_write_at_once(
    tmp_path: Path, embedder: Any, database_url: Callable[..., str], db_rows: Rows
) -> None:
    """Four clients in one process (separate connections), each in its own thread."""
    url = database_url(tmp_path / "threads")
    mems = [_open(url, embedder) for _ in range(4)]
    texts = [
        [
            f"Thread {t} stores fact {i} about the {['north', 'south'][i % 2]} office"
            for i in range(20)
        ]
        for t in range(4)
    ]
    embedder.embed_many([x for group in texts for x in group])  # warm: the writes overlap tightly
    barrier = threading.Barrier(4)
    results: dict[int, list[str]] = {}
    errors: list[str] = []

    def work(t: int) -> None:
        mem, ids = mems[t], []
        try:
            barrier.wait(timeout=60)
            for i in range(0, 10):
                ids.append(mem.remember(texts[t][i], scope=f"team:t{t}").id)
            ids.extend(
                r.id
                for r in mem.remember_many(
                    [{"content": x, "scope": f"team:t{t}"} for x in texts[t][10:]]
                )
            )
            mem.recall("north office", k=3, scopes="all")
        except Exception as exc:  # reported below
            errors.append(repr(exc))
        results[t] = ids

    threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(timeout=120)
    for mem in mems[1:]:
        mem.close()
    assert errors == []
    all_ids = {i for ids in results.values() for i in ids}
    assert len(all_ids) == 80
    try:
        state = _integrity(mems[0], db_rows)
    finally:
        mems[0].close()
    assert state["ids"] == all_ids
    assert state["memories"] == state["vectors"] == state["fts"] == state["history"] == 80
