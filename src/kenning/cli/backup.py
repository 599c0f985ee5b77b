"""``kenning backup`` and ``kenning restore-backup``: thin doors onto :mod:`kenning.backup`.

(``kenning restore`` is taken: it makes an archived memory active again.)

Neither loads the embedding model or opens a Memory: a backup reads the
database file (or runs ``pg_dump``); a restore writes a new database and opens
it once as a store, which migrates a backup from an older kenning.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ..backup import backup, restore
from ..config import Settings
from ..errors import ConfigError
from ..stores import database_url, store_url
from . import render
from .args import JsonOpt
from .session import state_of

__all__ = ["backup_command", "restore_command"]

ForceOpt = Annotated[
    bool, typer.Option("--force", help="Replace DEST if it exists (stop kenning on it first).")
]


def _settings() -> Settings:
    try:
        return Settings()
    except ValueError as exc:
        raise ConfigError(f"invalid KENNING_* setting: {exc}") from None


def backup_command(
    ctx: typer.Context,
    dest: Annotated[Path, typer.Argument(metavar="DEST", help="The backup file to write.")],
    dump_url: Annotated[
        str | None,
        typer.Option(
            "--dump-url",
            metavar="URL",
            help="PostgreSQL: run pg_dump as this superuser or BYPASSRLS role "
            "(default: the store's own URL).",
        ),
    ] = None,
    force: ForceOpt = False,
    as_json: JsonOpt = False,
) -> None:
    """Back up the store while it runs: a verified SQLite snapshot, or pg_dump.

    The store is the one --db (or KENNING_DATABASE_URL) names. Every write
    committed before the backup began is in it.
    """
    db = state_of(ctx).db
    source = database_url(db, field="db") if db is not None else store_url(_settings())
    report = backup(source, dest, force=force, dump_url=dump_url)
    if as_json:
        render.emit(report.to_dict())
        return
    counts = ", ".join(f"{n} {t}" for t, n in report.counts.items())
    render.say(
        f"backed up {report.source} to {report.path} ({report.method}, {report.bytes} bytes, "
        f"schema {report.schema}, integrity {report.integrity}, {report.seconds:.2f}s): {counts}"
    )


def restore_command(
    src: Annotated[Path, typer.Argument(metavar="SRC", help="The backup file.")],
    to: Annotated[
        str,
        typer.Option(
            "--to",
            metavar="DEST",
            help="The new database: a file path, sqlite:///PATH or postgresql://… "
            "(an empty database, as a superuser or BYPASSRLS role).",
            show_default=False,
        ),
    ],
    force: ForceOpt = False,
    as_json: JsonOpt = False,
) -> None:
    """Restore a backup into a new database, migrate it if older, and verify it."""
    report = restore(src, to, force=force, settings=_settings())
    if as_json:
        render.emit(report.to_dict())
        return
    migrated = f", migrated {', '.join(report.migrated)}" if report.migrated else ""
    render.say(
        f"restored {report.source} into {report.database} ({report.method}, schema "
        f"{report.schema}{migrated}, integrity {report.integrity}): "
        + ", ".join(f"{n} {t}" for t, n in report.counts.items())
    )
