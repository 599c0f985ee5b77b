"""The SQLite driver kenning opens its databases with.

Every module that opens or queries a kenning database imports ``sqlite3`` from
here, never from the standard library: the two modules' connections and
exception classes are distinct, and a database kenning has written may need the
newer SQLite (see below). The driver is `sqlean.py <https://pypi.org/project/sqlean.py/>`_,
a drop-in build of the standard ``sqlite3`` module linked against a current
SQLite (3.49), with wheels for Linux, macOS and Windows. Kenning needs SQLite
3.44 or later for FTS5's ``secure-delete`` option, which erases a forgotten
memory's terms from the keyword index at once instead of leaving them in the
index's segments until a merge (see "Erasure" in ``docs/operations.md``). The
standard library's SQLite is often older (3.40 on Debian 12 / Python 3.11).

Once a database's keyword index has used ``secure-delete``, SQLite builds older
than 3.44 refuse to read that index (``invalid fts5 file format``); the other
tables stay readable by any SQLite.

For the type checker ``sqlite3`` is the standard library module (the two share
one API); sqlean's optional extensions stay disabled and extension loading
stays off.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import sqlite3
else:
    import sqlean as sqlite3

__all__ = ["sqlite3", "SECURE_DELETE_MIN", "flush_fts"]

#: The oldest SQLite whose FTS5 has the ``secure-delete`` option.
SECURE_DELETE_MIN = (3, 44, 0)

if sqlite3.sqlite_version_info < SECURE_DELETE_MIN:  # pragma: no cover - a broken install
    raise ImportError(
        f"kenning needs SQLite {'.'.join(map(str, SECURE_DELETE_MIN))} or later; "
        f"the SQLite driver has {sqlite3.sqlite_version}"
    )


def flush_fts(conn: sqlite3.Connection) -> None:
    """Make FTS5 write out what the open transaction has changed so far.

    FTS5 (3.44 to at least 3.50) mishandles a row deleted and inserted again
    under the same rowid in one transaction when ``secure-delete`` is on and a
    term occurs 128 times or more in it: the next delete of that row leaves the
    row's entries behind and the index fails its integrity check. A savepoint
    between the delete and the insert makes FTS5 flush the delete first, which
    avoids it (``tests/test_erasure.py`` keeps the case).
    """
    conn.execute("SAVEPOINT fts_flush")
    conn.execute("RELEASE fts_flush")
