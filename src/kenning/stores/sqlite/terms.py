"""Query words as the keyword index reads them, cached.

The keyword index stores Porter stems of ``unicode61`` tokens. A query word
becomes its index token (the usual case) or, when the tokenizer splits it, a
phrase of several tokens; the empty tuple when it holds no token at all.
Finding that out costs a round trip through a scratch FTS5 table, so the
answers are kept (a pure function of the word).

Term *counts* are not kept here: they are the reader's and come from the
postings mirror (:mod:`.postings`), which knows which rows each reader may read.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

from .driver import sqlite3

__all__ = ["TermStats"]

_MAX_CACHED = 100_000


class TermStats:
    """Cached index tokens of query words (one store)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._tokens: dict[str, tuple[str, ...]] = {}

    def forget(self) -> None:
        """Nothing to drop: tokens depend on the word alone (kept for the write
        block's rollback hook)."""

    def phrases(self, conn: sqlite3.Connection, terms: Sequence[str]) -> list[tuple[str, ...]]:
        """Each term's index tokens, in order."""
        todo = [t for t in dict.fromkeys(terms) if t not in self._tokens]
        if todo:
            found = self._tokenise(conn, todo)
            with self._lock:
                if len(self._tokens) > _MAX_CACHED:
                    self._tokens.clear()
                self._tokens.update(zip(todo, found, strict=True))
        out: list[tuple[str, ...]] = []
        for term in terms:
            hit = self._tokens.get(term)
            out.append(hit if hit is not None else self._tokenise(conn, [term])[0])
        return out

    @classmethod
    def _tokenise(cls, conn: sqlite3.Connection, terms: Sequence[str]) -> list[tuple[str, ...]]:
        """All words in one pass when each is one token, else word by word."""
        tokens = cls._tokens_of(conn, " ".join(terms))
        if len(tokens) == len(terms):
            return [(t,) for t in tokens]
        if len(terms) == 1:
            return [tuple(tokens)]
        return [tuple(cls._tokens_of(conn, t)) for t in terms]

    @staticmethod
    def _tokens_of(conn: sqlite3.Connection, text: str) -> list[str]:
        """Insert ``text`` into the connection's scratch FTS5 table and read its tokens back."""
        conn.execute("INSERT INTO temp.stemmer (rowid, t) VALUES (1, ?)", (text,))
        try:
            rows = conn.execute("SELECT term FROM temp.stemmer_vocab ORDER BY offset").fetchall()
        finally:
            conn.execute("DELETE FROM temp.stemmer WHERE rowid = 1")
        return [r[0] for r in rows]
