"""Backups taken while writers run, and restores into a new database.

SQLite: one consistent snapshot through SQLite's online backup API, in a
single step. The copy runs in one read transaction on its own connection; in
WAL mode a reader never blocks writers (they keep committing to the
write-ahead log), and the copy holds every write committed before that
transaction began, including the ones still in the log. A page-stepped copy
would give writers nothing more, and the backup API restarts a stepped copy
each time another connection writes, so under steady writes it might never
finish. ``VACUUM INTO`` gives the same snapshot but rebuilds every table and
index (slower on a large store); the page copy keeps the file's layout as is.
The row counts read inside that same snapshot are compared with the copy's,
and the copy passes ``PRAGMA integrity_check`` before it takes its name.

PostgreSQL: ``pg_dump --format=custom`` (one consistent snapshot of the whole
database, taken without blocking writers) and ``pg_restore`` into a new,
empty database. Row-level security binds kenning's own role (its tables force
it), so the dump and the restore connect as a superuser or a ``BYPASSRLS``
role; see "Backup and restore" in ``docs/operations.md`` for that role and for
point-in-time recovery (base backup + WAL archiving).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
from collections.abc import Iterator, Mapping
from contextlib import closing, contextmanager, suppress
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import quote

from .config import Settings
from .errors import ConfigError, InvalidInput, StoreError
from .stores import database_url, display_url, inspect_database, open_store
from .stores.sqlite.driver import sqlite3

__all__ = ["BackupReport", "RestoreReport", "backup", "restore", "pg_tool", "COUNTED_TABLES"]

#: The tables whose rows a backup and a restore count and compare (those present).
COUNTED_TABLES = (
    "memories",
    "vectors",
    "memories_fts",
    "history",
    "scopes",
    "entities",
    "mentions",
    "links",
    "access_log",
    "sectors",
    "policies",
    "directory",
    "api_keys",
    "audit_log",
)
_PG_TABLES = (
    "memories",
    "postings",
    "history",
    "entities",
    "mentions",
    "links",
    "access_log",
    "sectors",
    "policies",
    "directory",
    "api_keys",
    "audit_log",
)


@dataclass(frozen=True, slots=True)
class BackupReport:
    """What a backup wrote: where, how, its size, schema and verified row counts."""

    source: str
    path: str
    method: str
    bytes: int
    schema: str | None
    counts: Mapping[str, int] = field(default_factory=dict)
    integrity: str = "ok"
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {**asdict(self), "counts": dict(self.counts)}


@dataclass(frozen=True, slots=True)
class RestoreReport:
    """What a restore produced: the new database, the migrations it needed, its counts."""

    source: str
    database: str
    method: str
    schema: str | None
    migrated: list[str] = field(default_factory=list)
    counts: Mapping[str, int] = field(default_factory=dict)
    integrity: str = "ok"
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {**asdict(self), "counts": dict(self.counts)}


_R = TypeVar("_R", BackupReport, RestoreReport)


def backup(
    source: str,
    dest: str | Path,
    *,
    force: bool = False,
    dump_url: str | None = None,
) -> BackupReport:
    """Copy the store at ``source`` (URL or file path) to the file ``dest``, online.

    SQLite: a verified snapshot (see the module docstring). PostgreSQL:
    ``pg_dump`` as ``dump_url`` (a superuser or ``BYPASSRLS`` role of the same
    database; default ``source``, which must then be such a role). ``dest``
    must not exist unless ``force``; a failed backup leaves nothing there.
    """
    url = database_url(source, field="source")
    target = _new_file(dest, force, "dest")
    started = time.perf_counter()
    if url.startswith("sqlite:"):
        report = _sqlite_backup(url, target)
    elif url.startswith("postgresql:"):
        report = _pg_backup(_same_database(url, dump_url) if dump_url else url, target)
    else:
        raise InvalidInput(f"source: no backup method for {display_url(url)}", field="source")
    return _timed(report, started)


def restore(
    src: str | Path,
    to: str,
    *,
    force: bool = False,
    settings: Settings | None = None,
) -> RestoreReport:
    """Restore the backup file ``src`` into the database ``to`` (URL or file path).

    SQLite: ``to`` must not exist unless ``force`` (a forced restore writes the
    backup's pages into the existing file under SQLite's locks; stop kenning
    servers on it first). The restored store is opened once, so a backup from
    an older kenning is migrated, then checked (integrity, row counts equal to
    the backup's). A backup from a newer kenning is refused. PostgreSQL: ``to``
    names an empty database and a superuser or ``BYPASSRLS`` role (``pg_restore``).
    """
    path = Path(src).expanduser()
    if not path.is_file():
        raise InvalidInput(f"src: no backup file at {path}", field="src")
    url = database_url(to, field="to")
    started = time.perf_counter()
    if url.startswith("sqlite:"):
        report = _sqlite_restore(path, url, force, settings or _settings())
    elif url.startswith("postgresql:"):
        report = _pg_restore(path, url)
    else:
        raise InvalidInput(f"to: no restore method for {display_url(url)}", field="to")
    return _timed(report, started)


# -- shared ---------------------------------------------------------------------------------


def _settings() -> Settings:
    try:
        return Settings()
    except ValueError as exc:
        raise ConfigError(f"invalid KENNING_* setting: {exc}") from None


def _timed(report: _R, started: float) -> _R:
    return replace(report, seconds=round(time.perf_counter() - started, 3))


def _new_file(dest: str | Path, force: bool, name: str) -> Path:
    """``dest`` as a path whose parent exists; ``Conflict``-like refusal when it exists."""
    path = Path(dest).expanduser()
    if path.exists() and not force:
        raise InvalidInput(f"{name}: {path} exists (pass --force to replace it)", field=name)
    if path.is_dir():
        raise InvalidInput(f"{name}: {path} is a directory", field=name)
    if not path.parent.is_dir():
        raise InvalidInput(f"{name}: no directory {path.parent}", field=name)
    return path


def _same_database(url: str, dump_url: str) -> str:
    """``dump_url``, checked to reach the database ``url`` does (as another role)."""
    other = database_url(dump_url, field="dump_url")
    if inspect_database(other, field="dump_url").identity != inspect_database(url).identity:
        raise InvalidInput(
            f"dump_url: {display_url(other)} is not the database of {display_url(url)}",
            field="dump_url",
        )
    return other


def _known_migrations() -> list[str]:
    from .stores.sqlite.migrations import MIGRATIONS

    return [name for name, _ in MIGRATIONS]


# -- SQLite ---------------------------------------------------------------------------------


def _sqlite_path(url: str) -> Path:
    from .stores.sqlite.backend import SQLiteBackend

    return SQLiteBackend.path(url)


def _ro(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(f"file:{quote(str(path))}?mode=ro", uri=True, isolation_level=None)


def _counts(conn: sqlite3.Connection) -> dict[str, int]:
    present = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    return {
        t: int(conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0])
        for t in COUNTED_TABLES
        if t in present
    }


def _schema(conn: sqlite3.Connection) -> list[str]:
    if not conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '_migrations'"
    ).fetchone():
        return []
    return [r[0] for r in conn.execute("SELECT name FROM _migrations ORDER BY name")]


def _integrity(conn: sqlite3.Connection, what: str) -> str:
    rows = [r[0] for r in conn.execute("PRAGMA integrity_check")]
    if rows != ["ok"]:
        raise StoreError(f"{what} failed its integrity check: {'; '.join(rows[:5])}")
    return "ok"


@contextmanager
def _part(target: Path) -> Iterator[Path]:
    """A scratch file beside ``target``, moved over it when the block succeeds."""
    part = target.with_name(target.name + ".part")
    for stale in (part, Path(f"{part}-journal")):
        stale.unlink(missing_ok=True)
    try:
        yield part
        os.replace(part, target)
    finally:
        for leftover in (part, Path(f"{part}-journal"), Path(f"{part}-wal"), Path(f"{part}-shm")):
            leftover.unlink(missing_ok=True)


def _snapshot_copy(source: sqlite3.Connection, target: Path) -> dict[str, int]:
    """Copy ``source`` into the new file ``target`` in one read transaction; return the
    row counts that snapshot holds (read in the same transaction)."""
    source.execute("BEGIN")
    try:
        counts = _counts(source)  # opens the read transaction: the snapshot
        with closing(sqlite3.connect(target, isolation_level=None)) as out:
            source.backup(out, pages=-1)  # one step, inside the snapshot
    finally:
        source.execute("ROLLBACK")
    return counts


def _verify_copy(target: Path, expected: Mapping[str, int], what: str) -> tuple[str, str | None]:
    with closing(_ro(target)) as copy:
        integrity = _integrity(copy, what)
        got = _counts(copy)
        if got != dict(expected):
            raise StoreError(f"{what} does not match its source: {got} != {dict(expected)}")
        names = _schema(copy)
    return integrity, names[-1] if names else None


def _sqlite_backup(url: str, target: Path) -> BackupReport:
    path = _sqlite_path(url)
    if not path.is_file():
        raise InvalidInput(f"source: no database at {path}", field="source")
    with closing(sqlite3.connect(path, isolation_level=None, timeout=60.0)) as source:
        if not _schema(source):
            raise InvalidInput(f"source: {path} holds no kenning store", field="source")
        with _part(target) as part:
            counts = _snapshot_copy(source, part)
            integrity, schema = _verify_copy(part, counts, f"the backup of {path}")
    return BackupReport(
        source=str(path),
        path=str(target),
        method="sqlite-backup-api",
        bytes=target.stat().st_size,
        schema=schema,
        counts=counts,
        integrity=integrity,
    )


def _sqlite_restore(src: Path, url: str, force: bool, settings: Settings) -> RestoreReport:
    target = _sqlite_path(url)
    if target.exists() and not force:
        raise InvalidInput(
            f"to: {target} exists; restore into a new file, or pass --force to overwrite it "
            "(stop every kenning process using it first)",
            field="to",
        )
    try:
        with closing(_ro(src)) as backup_conn:
            _integrity(backup_conn, f"the backup {src}")
            names = _schema(backup_conn)
            counts = _counts(backup_conn)
    except sqlite3.DatabaseError as exc:
        raise InvalidInput(
            f"src: {src} is not a kenning SQLite backup ({exc})", field="src"
        ) from None
    if not names:
        raise InvalidInput(f"src: {src} holds no kenning store", field="src")
    newer = sorted(set(names) - set(_known_migrations()))
    if newer:
        raise ConfigError(
            f"{src} was made by a newer kenning (schema {', '.join(newer)}); upgrade kenning "
            "to restore it"
        )
    pending = [n for n in _known_migrations() if n not in names]
    target.parent.mkdir(parents=True, exist_ok=True)
    with closing(_ro(src)) as backup_conn:
        if target.exists():  # --force: through SQLite's locks, as one write
            with closing(sqlite3.connect(target, isolation_level=None, timeout=60.0)) as out:
                backup_conn.backup(out, pages=-1)
        else:
            with _part(target) as part, closing(sqlite3.connect(part)) as out:
                backup_conn.backup(out, pages=-1)
    model = inspect_database(url, field="to").model
    if model is None:
        raise InvalidInput(f"src: {src} records no embedding model", field="src")
    open_store(settings.model_copy(update={"database_url": url}), *model).close()  # migrates
    with closing(_ro(target)) as restored:
        integrity = _integrity(restored, f"the restored {target}")
        got = _counts(restored)
        mismatch = {t: (n, got.get(t)) for t, n in counts.items() if got.get(t) != n}
        if mismatch:
            raise StoreError(f"the restored {target} lost rows (backup, restored): {mismatch}")
        schema = _schema(restored)
    return RestoreReport(
        source=str(src),
        database=str(target),
        method="sqlite-backup-api",
        schema=schema[-1] if schema else None,
        migrated=pending,
        counts=got,
        integrity=integrity,
    )


# -- PostgreSQL -----------------------------------------------------------------------------


def _major(tool: Path) -> int:
    """The major version ``tool --version`` reports (0 when it cannot say)."""
    done = subprocess.run([str(tool), "--version"], capture_output=True, text=True, check=False)
    found = re.search(r"(\d+)(?:\.\d+)?", done.stdout)
    return int(found.group(1)) if found and done.returncode == 0 else 0


def pg_tool(name: str, server_major: int = 0) -> Path:
    """``pg_dump`` / ``pg_restore`` of major version ``server_major`` or newer (they
    refuse older servers' peers): from ``PATH``, else the PostgreSQL of the ``pg`` extra."""
    candidates: list[Path] = []
    if found := shutil.which(name):
        candidates.append(Path(found))
    with suppress(ConfigError):
        from .stores.postgres.throwaway import pg_bin_dir

        candidates.append(pg_bin_dir() / name)
    seen = []
    for tool in candidates:
        if tool.is_file():
            major = _major(tool)
            if major >= server_major:
                return tool
            seen.append(f"{tool} ({major})")
    raise ConfigError(
        f"no {name} of PostgreSQL {server_major} or newer was found"
        + (f" (found {', '.join(seen)})" if seen else "")
        + "; install the PostgreSQL client tools of the server's version"
    )


def _pg_connect(url: str) -> Any:
    import psycopg

    try:
        return psycopg.connect(url, autocommit=True, connect_timeout=10)
    except psycopg.Error as exc:
        raise StoreError(f"cannot connect to PostgreSQL at {display_url(url)}: {exc}") from exc


def _pg_check_role(conn: Any, url: str, what: str) -> None:
    row = conn.execute(
        "SELECT rolsuper OR rolbypassrls FROM pg_roles WHERE rolname = current_user"
    ).fetchone()
    if not (row and row[0]):
        raise ConfigError(
            f"{what} must connect as a superuser or a BYPASSRLS role: row-level security "
            f"hides every tenant's rows from {display_url(url)}'s role (kenning's own role "
            "is bound by it). See 'Backup and restore' in docs/operations.md"
        )


def _pg_counts(conn: Any) -> dict[str, int]:
    present = {
        r[0]
        for r in conn.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = current_schema()"
        ).fetchall()
    }
    return {
        t: int(conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0])
        for t in _PG_TABLES
        if t in present
    }


def _pg_major(conn: Any) -> int:
    return int(conn.execute("SHOW server_version_num").fetchone()[0]) // 10000


def _pg_schema(conn: Any) -> list[str]:
    if conn.execute("SELECT to_regclass('kenning_migrations')").fetchone()[0] is None:
        return []
    return [r[0] for r in conn.execute("SELECT name FROM kenning_migrations ORDER BY name")]


def _run(args: list[str], what: str) -> str:
    done = subprocess.run(args, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise StoreError(f"{what} failed ({done.returncode}): {done.stderr.strip()[-2000:]}")
    return done.stdout


def _pg_backup(url: str, target: Path) -> BackupReport:
    with closing(_pg_connect(url)) as conn:
        _pg_check_role(conn, url, "pg_dump")
        names = _pg_schema(conn)
        major = _pg_major(conn)
        if not names:
            raise InvalidInput(f"source: {display_url(url)} holds no kenning store", field="source")
    with _part(target) as part:
        _run(
            [
                str(pg_tool("pg_dump", major)),
                "--format=custom",
                f"--file={part}",
                f"--dbname={url}",
            ],
            "pg_dump",
        )
        listing = _run(
            [str(pg_tool("pg_restore", major)), "--list", str(part)], "pg_restore --list"
        )
        tables = {
            line.split()[-2]
            for line in listing.splitlines()
            if " TABLE DATA " in line and not line.startswith(";")
        }
        missing = sorted({"memories", "history", "directory", "api_keys"} - tables)
        if missing:
            raise StoreError(f"the dump lacks the data of {', '.join(missing)}")
    return BackupReport(
        source=display_url(url),
        path=str(target),
        method="pg_dump",
        bytes=target.stat().st_size,
        schema=names[-1],
        counts={"tables_with_data": len(tables)},
    )


def _pg_restore(src: Path, url: str) -> RestoreReport:
    with closing(_pg_connect(url)) as conn:
        _pg_check_role(conn, url, "pg_restore")
        major = _pg_major(conn)
        if _pg_schema(conn):
            raise InvalidInput(
                f"to: {display_url(url)} already holds a kenning store; restore into a new, "
                "empty database (CREATE DATABASE ... OWNER <kenning's role>)",
                field="to",
            )
    _run(
        [
            str(pg_tool("pg_restore", major)),
            "--exit-on-error",
            "--single-transaction",
            f"--dbname={url}",
            str(src),
        ],
        "pg_restore",
    )
    from .stores.postgres.schema import MIGRATIONS

    with closing(_pg_connect(url)) as conn:
        names = _pg_schema(conn)
        counts = _pg_counts(conn)
    newer = sorted(set(names) - {n for n, _ in MIGRATIONS})
    if newer:
        raise ConfigError(f"{src} was made by a newer kenning (schema {', '.join(newer)})")
    return RestoreReport(
        source=str(src),
        database=display_url(url),
        method="pg_restore",
        schema=names[-1] if names else None,
        migrated=[n for n, _ in MIGRATIONS if n not in names],  # applied at kenning's next start
        counts=counts,
    )
