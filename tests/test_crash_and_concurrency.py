"""Crash safety and multi-process writes on the embedded SQLite store.

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
import sqlite3
import subprocess
import sys
import textwrap
import threading
from pathlib import Path
from typing import Any

from kenning import Memory
from kenning.stores.sqlite.migrations import MIGRATIONS

SRC = str(Path(__file__).resolve().parents[1] / "src")

CRASH_CHILD = textwrap.dedent(
    """
    import sys
    from kenning import Memory
    from kenning.embeddings import MiniLMEmbedder

    mem = Memory(sys.argv[1], embedder=MiniLMEmbedder(threads=1))
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

    db, name, go = sys.argv[1], sys.argv[2], sys.argv[3]
    ids, errors = [], []
    try:
        mem = Memory(db, embedder=MiniLMEmbedder(threads=1))
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


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = SRC + os.pathsep + env.get("PYTHONPATH", "")
    return env


def _integrity(db: Path) -> dict[str, Any]:
    conn = sqlite3.connect(db)
    try:
        q = lambda sql: conn.execute(sql).fetchone()[0]  # noqa: E731
        return {
            "integrity": q("PRAGMA integrity_check"),
            "memories": q("SELECT COUNT(*) FROM memories"),
            "vectors": q("SELECT COUNT(*) FROM vectors"),
            "fts": q("SELECT COUNT(*) FROM memories_fts"),
            "creates": q("SELECT COUNT(*) FROM history WHERE op = 'create'"),
            "history": q("SELECT COUNT(*) FROM history"),
            "memory_without_vector": q(
                "SELECT COUNT(*) FROM memories m LEFT JOIN vectors v ON v.pk = m.pk "
                "WHERE v.pk IS NULL"
            ),
            "memory_without_fts": q(
                "SELECT COUNT(*) FROM memories m WHERE m.pk NOT IN (SELECT rowid FROM memories_fts)"
            ),
            "memory_without_history": q(
                "SELECT COUNT(*) FROM memories m WHERE m.id NOT IN "
                "(SELECT memory_id FROM history WHERE op = 'create')"
            ),
            "orphan_vectors": q(
                "SELECT COUNT(*) FROM vectors v WHERE v.pk NOT IN (SELECT pk FROM memories)"
            ),
            "orphan_fts": q(
                "SELECT COUNT(*) FROM memories_fts WHERE rowid NOT IN (SELECT pk FROM memories)"
            ),
            "orphan_history": q(
                "SELECT COUNT(*) FROM history WHERE memory_id NOT IN (SELECT id FROM memories)"
            ),
            "ids": {r[0] for r in conn.execute("SELECT id FROM memories")},
        }
    finally:
        conn.close()


def test_sigkill_mid_write_loses_nothing_acknowledged(tmp_path: Path, embedder: Any) -> None:
    script = tmp_path / "kenning_crash_writer.py"
    script.write_text(CRASH_CHILD)
    db = tmp_path / "crash.db"
    child = subprocess.Popen(
        [sys.executable, str(script), str(db)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_env(),
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

    state = _integrity(db)
    assert state["integrity"] == "ok"
    assert set(acked) <= state["ids"], "an acknowledged write was lost"
    for name in (
        "memory_without_vector",
        "memory_without_fts",
        "memory_without_history",
        "orphan_vectors",
        "orphan_fts",
        "orphan_history",
    ):
        assert state[name] == 0, (name, state[name])
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

    mem = Memory(db, embedder=embedder)
    try:
        for mid in acked:
            assert mem.get(mid).id == mid
        hits = mem.recall("notes about sailing", k=5)
        assert len(hits) == 5 and all("sailing" in h.memory.content for h in hits[:1])
        assert mem.remember("Written after the crash").id in _integrity(db)["ids"]
    finally:
        mem.close()


def test_four_processes_write_at_once(tmp_path: Path) -> None:
    script = tmp_path / "kenning_writer.py"
    script.write_text(CONCURRENT_CHILD)
    db = tmp_path / "shared.db"  # not created yet: the four also race on the schema
    go = tmp_path / "go"
    names = ["w1", "w2", "w3", "w4"]
    children = [
        subprocess.Popen(
            [sys.executable, str(script), str(db), name, str(go)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=_env(),
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
    state = _integrity(db)
    assert state["integrity"] == "ok"
    assert state["ids"] == set(all_ids)
    assert state["memories"] == state["vectors"] == state["fts"] == state["history"] == 160
    for name in ("memory_without_vector", "memory_without_fts", "orphan_vectors", "orphan_fts"):
        assert state[name] == 0
    conn = sqlite3.connect(db)
    try:
        per_team = dict(
            conn.execute(
                "SELECT s.key, COUNT(*) FROM memories m JOIN scopes s ON s.pk = m.scope_pk "
                "GROUP BY s.key"
            ).fetchall()
        )
        migrations = conn.execute("SELECT COUNT(*) FROM _migrations").fetchone()[0]
    finally:
        conn.close()
    assert per_team == {f"team:{n}": 40 for n in names}
    assert migrations == len(MIGRATIONS)  # each applied once despite four racing processes


def test_threads_with_separate_clients_write_at_once(tmp_path: Path, embedder: Any) -> None:
    """Four clients in one process (separate connections), each in its own thread."""
    db = tmp_path / "threads.db"
    mems = [Memory(db, embedder=embedder) for _ in range(4)]
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
    for mem in mems:
        mem.close()
    assert errors == []
    all_ids = {i for ids in results.values() for i in ids}
    assert len(all_ids) == 80
    state = _integrity(db)
    assert state["ids"] == all_ids
    assert state["memories"] == state["vectors"] == state["fts"] == state["history"] == 80
