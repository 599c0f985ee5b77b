"""Term statistics of the keyword index, with the caches that keep them cheap.

Recall asks two questions about its query words before the keyword search:
which of them are so common among the *reader's* memories that they should be
left out (common-term suppression), and how many memories of the whole index
contain each (to keep FTS5 from scoring enormous match lists). Answering them
from scratch costs more than the search itself, so this module caches:

* Porter stems of words (a pure function of the word);
* document frequencies over the whole index, dropped once the index has grown
  or shrunk by 5%;
* the number of active memories a reader can see, per scope filter, valid
  until the next write (the history sequence moves);
* per reader and word, whether the word is in more than the ratio of the
  reader's memories, valid while that reader's visible count stays within 5%
  of the count it was decided at.

None of these decide access or which memory is returned: they only steer which
query words are searched, as the counts they replace did.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Sequence

from ...access import ScopeFilter
from .sql import scope_clause

__all__ = ["TermStats"]

_MAX_CACHED = 100_000


def _quoted(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


def _close(a: int, b: int) -> bool:
    """True when two sizes differ by at most 5% (the caches' tolerance)."""
    return abs(a - b) <= max(a, b) // 20


class TermStats:
    """Cached term counts over one store's ``memories_fts`` index."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._stems: dict[str, str] = {}
        self._df: dict[str, int] = {}
        self._df_size = -1
        self._visible: dict[tuple[ScopeFilter, int], tuple[int, int]] = {}
        self._common: dict[tuple[ScopeFilter, str, float], tuple[int, bool]] = {}

    def forget(self) -> None:
        """Drop the counts (a write block that read them rolled back); stems stay."""
        with self._lock:
            self._df.clear()
            self._df_size = -1
            self._visible.clear()
            self._common.clear()

    # -- stems and index-wide counts -------------------------------------------

    def stems(self, conn: sqlite3.Connection, terms: Sequence[str]) -> list[str]:
        """Porter stems of ``terms`` (plain word tokens), in order."""
        todo = [t for t in dict.fromkeys(terms) if t not in self._stems]
        if todo:
            found = self._stem_uncached(conn, todo)
            with self._lock:
                if len(self._stems) > _MAX_CACHED:
                    self._stems.clear()
                self._stems.update(zip(todo, found, strict=True))
        return [self._stems.get(t, t) for t in terms]

    @staticmethod
    def _stem_uncached(conn: sqlite3.Connection, terms: Sequence[str]) -> list[str]:
        """Insert the words into the connection's scratch FTS5 table and read the stems back."""
        conn.execute("INSERT INTO temp.stemmer (rowid, t) VALUES (1, ?)", (" ".join(terms),))
        try:
            rows = conn.execute("SELECT term FROM temp.stemmer_vocab ORDER BY offset").fetchall()
        finally:
            conn.execute("DELETE FROM temp.stemmer WHERE rowid = 1")
        stems = [r[0] for r in rows]
        return stems if len(stems) == len(terms) else list(terms)

    @staticmethod
    def index_size(conn: sqlite3.Connection) -> int:
        """Upper bound of the number of indexed memories (cheap: the highest rowid)."""
        return int(conn.execute("SELECT COALESCE(MAX(rowid), 0) FROM memories_fts").fetchone()[0])

    def doc_freqs(
        self, conn: sqlite3.Connection, terms: Sequence[str], size: int
    ) -> dict[str, int]:
        """How many indexed memories (all scopes) contain each term.

        ``size`` is :meth:`index_size`; the cache is dropped once it has moved by 5%.
        """
        with self._lock:
            if abs(size - self._df_size) > max(50, size // 20):
                self._df.clear()
                self._df_size = size
        out: dict[str, int] = {}
        for term, stem in zip(terms, self.stems(conn, terms), strict=True):
            df = self._df.get(stem)
            if df is None:
                row = conn.execute(
                    "SELECT doc FROM memories_fts_vocab WHERE term = ?", (stem,)
                ).fetchone()
                df = self._df[stem] = 0 if row is None else int(row[0])
            out[term] = df
        return out

    # -- per-reader counts -----------------------------------------------------

    def visible(self, conn: sqlite3.Connection, scopes: ScopeFilter, at_most: int) -> int:
        """Active memories visible through ``scopes``, counted up to ``at_most``.

        Cached until the next write (the newest history row changes).
        """
        (seq,) = conn.execute("SELECT COALESCE(MAX(seq), 0) FROM history").fetchone()
        key = (scopes, at_most)
        with self._lock:
            hit = self._visible.get(key)
        if hit is not None and hit[0] == seq:
            return hit[1]
        n = self._count(conn, scopes, at_most)
        with self._lock:
            if len(self._visible) > 10_000:
                self._visible.clear()
            self._visible[key] = (int(seq), n)
        return n

    @staticmethod
    def _count(conn: sqlite3.Connection, scopes: ScopeFilter, at_most: int) -> int:
        swhere, sparams = scope_clause(scopes)
        return int(
            conn.execute(
                f"SELECT count(*) FROM (SELECT 1 FROM memories m WHERE {swhere} "
                "AND m.status = 'active' LIMIT ?)",
                [*sparams, at_most],
            ).fetchone()[0]
        )

    def is_common(
        self, conn: sqlite3.Connection, scopes: ScopeFilter, term: str, ratio: float, visible: int
    ) -> bool:
        """Is ``term`` in more than ``ratio`` of the ``visible`` memories of ``scopes``?

        A bounded count inside the scope filter (it stops at the threshold),
        remembered per reader and word while the reader's visible count stays
        within 5% of the one it was decided at.
        """
        key = (scopes, term, ratio)
        with self._lock:
            hit = self._common.get(key)
        if hit is not None and _close(hit[0], visible):
            return hit[1]
        cap = int(ratio * visible) + 1
        swhere, sparams = scope_clause(scopes)
        (n,) = conn.execute(
            "SELECT count(*) FROM (SELECT 1 FROM memories_fts "
            "JOIN memories m ON m.pk = memories_fts.rowid WHERE memories_fts MATCH ? "
            f"AND {swhere} AND m.status = 'active' LIMIT ?)",
            [_quoted(term), *sparams, cap],
        ).fetchone()
        common = bool(n >= cap)
        with self._lock:
            if len(self._common) > _MAX_CACHED:
                self._common.clear()
            self._common[key] = (visible, common)
        return common
