"""Writers of one SQLite file, in several processes, take turns promptly.

SQLite lets one writer in at a time; another process's ``BEGIN IMMEDIATE``
finds the database locked and its busy handler sleeps and retries, with sleeps
growing to 100 ms. Several server workers writing the same file then wait up
to 100 ms past the moment the file is free, and the unlucky ones again and
again. :class:`WriterTurns` queues them on an advisory lock of a small file
beside the database (``<database>-writer``) before they begin: a writer
checks every millisecond or so whether the turn is free (at most 5 ms apart),
so a turn passes on within a few milliseconds of the commit before it.

Where advisory locks are not available (Windows), or the file cannot be
created (a read-only directory), writers fall back to SQLite's own waiting.
"""

from __future__ import annotations

import logging
import os
import time

from ...errors import StoreError

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

__all__ = ["WriterTurns", "TURN_FILE_SUFFIX"]

log = logging.getLogger("kenning.store")

#: The lock file's name is the database's with this suffix.
TURN_FILE_SUFFIX = "-writer"
_FIRST_WAIT_S = 0.0005
_LONGEST_WAIT_S = 0.005


class WriterTurns:
    """An inter-process turn for the writers of the database at ``path`` (``None``:
    an in-memory database, where there is nobody to take turns with)."""

    def __init__(self, path: str | None, timeout_s: float) -> None:
        self._file = path + TURN_FILE_SUFFIX if path and fcntl is not None else None
        self._timeout_s = timeout_s
        self._fd: int | None = None
        self._held = False

    def _open(self) -> int | None:
        if self._fd is None and self._file is not None:
            try:
                self._fd = os.open(self._file, os.O_RDWR | os.O_CREAT, 0o600)
            except OSError as exc:
                log.warning(
                    "no writer turns for %s (%s); SQLite's waiting applies", self._file, exc
                )
                self._file = None
        return self._fd

    def take(self) -> None:
        """Wait for the turn (:class:`StoreError` after ``timeout_s``)."""
        fd = self._open()
        if fd is None:
            return
        deadline = time.monotonic() + self._timeout_s
        wait = _FIRST_WAIT_S
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise StoreError(
                        f"another process kept the database's write turn for "
                        f"{self._timeout_s:.0f}s ({self._file})"
                    ) from None
                time.sleep(wait)
                wait = min(wait * 2, _LONGEST_WAIT_S)
                continue
            self._held = True
            return

    def give(self) -> None:
        """Pass the turn on (nothing when not held)."""
        if self._held and self._fd is not None:
            self._held = False
            fcntl.flock(self._fd, fcntl.LOCK_UN)

    def close(self) -> None:
        """Pass the turn on and close the lock file."""
        self.give()
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
