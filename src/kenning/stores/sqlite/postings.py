"""In-process BM25 over the ``memories_fts`` postings, scored with numpy.

FTS5 computes ``bm25()`` once per matching row through an auxiliary-function
call; a query whose words are in a few percent of a large index each scores
tens of thousands of rows that way (7-11 ms at 100k memories on this machine,
on the recall's critical path). This module keeps the index's postings in
numpy arrays and computes the same score, vectorised: FTS5's formula with
its constants (k1 = 1.2, b = 0.75, every column weighted 1) and its IDF
(``log((N - n + 0.5) / (n + 0.5))``, at least 1e-6).

The statistics are the *reader's*: N (rows), n (rows holding the term) and
the average row length are counted over the memories in the scopes the reader
may read (whatever their status), never over the whole index, so nothing
another organization (or a scope the reader cannot read) stores moves a
reader's scores. A reader who can read every row gets FTS5's own numbers.
The reader's rows are a boolean mask over the row numbers, kept per scope
set until the mirror changes; N, the token total and each n are sums over it.

The index is the truth. The mirror is loaded from it (``fts5vocab`` in
``instance`` mode) on first use and then follows the ``history`` table, which
every write that changes a memory's text, status or existence appends to in
the same transaction, so it also sees other processes' writes: a changed
row's old postings are masked and its new ones, tokenised by SQLite's own
tokenizer in a scratch table, kept beside them until the next full load.

A query term is one token of the index, or a phrase of several (a word the
tokenizer splits); a phrase's rows and counts come from the index's
``instance`` vocabulary (consecutive tokens in one column), as FTS5 matches it.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .driver import sqlite3
from .follow import HistoryMirror

__all__ = ["PostingsIndex", "ReaderRows", "TEMP_TOKENIZER"]

K1 = 1.2
B = 0.75
#: FTS5's floor for a non-positive IDF (a term in more than half of the rows).
MIN_IDF = 1e-6
#: Scratch tables on every connection: the index's instances, and a
#: tokenizer with the index's settings for rows written since the load.
TEMP_TOKENIZER = """
CREATE VIRTUAL TABLE IF NOT EXISTS temp.fts_instances USING fts5vocab(main, memories_fts, instance);
CREATE VIRTUAL TABLE IF NOT EXISTS temp.tokenizer USING fts5(
    t, tokenize = 'porter unicode61 remove_diacritics 2');
CREATE VIRTUAL TABLE IF NOT EXISTS temp.tokenizer_vocab USING fts5vocab(temp, tokenizer, instance);
"""
_BATCH = 50_000
#: Reader masks kept (one per scope set) until the mirror changes.
_MAX_READERS = 64
#: A query term: one index token, or the tokens of a phrase.
Phrase = tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ReaderRows:
    """The rows one reader may read: mask by row pk, their count and token total;
    ``active`` also requires the active status (common-term counts)."""

    mask: np.ndarray
    active: np.ndarray
    rows: int
    tokens: float
    active_rows: int

    @property
    def avgdl(self) -> float:
        return self.tokens / self.rows if self.rows else 0.0


class _Base:
    """Postings as CSR: term id -> (row pks, term frequencies), sorted by pk."""

    def __init__(
        self, terms: dict[str, int], indptr: np.ndarray, docs: np.ndarray, freqs: np.ndarray
    ) -> None:
        self.terms = terms
        self.indptr = indptr
        self.docs = docs
        self.freqs = freqs

    def postings(self, term: str) -> tuple[np.ndarray, np.ndarray]:
        tid = self.terms.get(term)
        if tid is None:
            return _EMPTY_I, _EMPTY_F
        a, b = int(self.indptr[tid]), int(self.indptr[tid + 1])
        return self.docs[a:b], self.freqs[a:b]


_EMPTY_I = np.zeros(0, dtype=np.int64)
_EMPTY_F = np.zeros(0, dtype=np.float64)


class PostingsIndex(HistoryMirror):
    """FTS5's BM25 top over the keyword index, from in-process postings (thread-safe)."""

    def __init__(self, rebuild_ratio: float = 0.1) -> None:
        super().__init__()
        self.rebuild_ratio = rebuild_ratio
        self._base = _Base({}, np.zeros(1, dtype=np.int64), _EMPTY_I, _EMPTY_F)
        self._length = np.zeros(0, dtype=np.float64)  # tokens per row, by pk
        self._present = np.zeros(0, dtype=bool)  # the row is in the index
        self._stale = np.zeros(0, dtype=bool)  # base postings of this pk are outdated
        self._has_stale = False
        self._delta: dict[str, dict[int, int]] = {}  # term -> pk -> tf, rows changed since
        self._delta_terms: dict[int, list[str]] = {}  # pk -> its terms in ``_delta``
        self._delta_rows = 0
        self._pk_of: dict[str, int] = {}
        self._scope = np.zeros(0, dtype=np.int64)  # scope pk of each row (0: none)
        self._is_active = np.zeros(0, dtype=bool)  # the row's status is active
        self._rows = 0
        self._tokens = 0.0
        self._version = 0  # moves on every change of the mirror
        self._readers: dict[tuple[int, ...], tuple[int, ReaderRows]] = {}
        self._readers_lock = threading.Lock()

    # -- keeping current (refresh: see HistoryMirror) -------------------------

    def _reload_all_instead(self, changed: int) -> bool:
        return self._delta_rows + changed > max(5000, self.rebuild_ratio * self._rows)

    def _load_all(self, conn: sqlite3.Connection) -> None:
        found = conn.execute("SELECT id, pk, scope_pk, status FROM memories").fetchall()
        self._pk_of = {r[0]: r[1] for r in found}
        present_pks = np.asarray(
            [r[0] for r in conn.execute("SELECT id FROM memories_fts_docsize")], dtype=np.int64
        )
        size = max(int(present_pks.max(initial=0)), max((r[1] for r in found), default=0)) + 1
        terms: dict[str, int] = {}
        cut: list[int] = [0]
        docs_parts: list[np.ndarray] = []
        # instance rows come ordered by term, then row: each term's rows are one run
        cur = conn.execute("SELECT term, doc FROM temp.fts_instances")
        last_term, last_doc, n = None, -1, 0
        doc_buf: list[int] = []
        freq_buf: list[int] = []
        freq_parts: list[np.ndarray] = []
        while batch := cur.fetchmany(_BATCH):
            for term, doc in batch:
                if term != last_term:
                    if last_term is not None:
                        cut.append(n)
                    terms[term] = len(terms)
                    last_term, last_doc = term, -1
                if doc == last_doc:
                    freq_buf[-1] += 1
                    continue
                doc_buf.append(doc)
                freq_buf.append(1)
                last_doc = doc
                n += 1
            # the last row may go on in the next batch: keep it open
            docs_parts.append(np.asarray(doc_buf[:-1], dtype=np.int64))
            freq_parts.append(np.asarray(freq_buf[:-1], dtype=np.float64))
            doc_buf, freq_buf = doc_buf[-1:], freq_buf[-1:]
        docs_parts.append(np.asarray(doc_buf, dtype=np.int64))
        freq_parts.append(np.asarray(freq_buf, dtype=np.float64))
        if last_term is not None:
            cut.append(n)
        docs = np.concatenate(docs_parts) if docs_parts else _EMPTY_I
        freqs = np.concatenate(freq_parts) if freq_parts else _EMPTY_F
        self._base = _Base(terms, np.asarray(cut, dtype=np.int64), docs, freqs)
        self._length = np.bincount(docs, weights=freqs, minlength=size).astype(np.float64)
        self._present = np.zeros(len(self._length), dtype=bool)
        self._present[present_pks] = True  # (a row without tokens counts, as in FTS5)
        self._stale = np.zeros(len(self._length), dtype=bool)
        self._has_stale = False
        self._scope = np.zeros(len(self._length), dtype=np.int64)
        self._is_active = np.zeros(len(self._length), dtype=bool)
        self._set_rows([(r[1], r[2], r[3]) for r in found])
        self._delta = {}
        self._delta_terms = {}
        self._delta_rows = 0
        self._rows = len(present_pks)
        self._tokens = float(self._length.sum())
        self._version += 1

    def _set_rows(self, rows: Sequence[tuple[int, int, str]]) -> None:
        """Record (pk, scope pk, status) of memory rows."""
        if not rows:
            return
        pks = np.fromiter((r[0] for r in rows), np.int64, len(rows))
        self._grow(int(pks.max()) + 1)
        self._scope[pks] = np.fromiter((r[1] for r in rows), np.int64, len(rows))
        self._is_active[pks] = np.fromiter((r[2] == "active" for r in rows), bool, len(rows))

    def _reload(self, conn: sqlite3.Connection, ids: Sequence[str]) -> None:
        """Re-read the rows of ``ids`` (deleted ones drop out)."""
        for start in range(0, len(ids), 500):
            chunk = list(ids[start : start + 500])
            marks = ",".join("?" * len(chunk))
            sql = f"SELECT id, pk, scope_pk, status FROM memories WHERE id IN ({marks})"
            found = conn.execute(sql, chunk).fetchall()
            now = {r[0]: r[1] for r in found}
            pks = {self._pk_of.get(i) for i in chunk} | set(now.values())
            pks.discard(None)
            for pk in pks:
                self._drop(int(pk))  # type: ignore[arg-type]
            self._set_rows([(r[1], r[2], r[3]) for r in found])
            self._pk_of.update(now)
            for mid in chunk:
                if mid not in now:
                    self._pk_of.pop(mid, None)
            self._add(conn, sorted(int(p) for p in pks))  # type: ignore[arg-type]
        self._version += 1

    def _drop(self, pk: int) -> None:
        """Forget row ``pk``'s postings (base masked, delta removed)."""
        if pk < len(self._present) and self._present[pk]:
            self._rows -= 1
            self._tokens -= float(self._length[pk])
            self._length[pk] = 0.0
            self._present[pk] = False
        if pk < len(self._stale):
            self._stale[pk] = True
            self._has_stale = True
            self._scope[pk] = 0
            self._is_active[pk] = False
        for term in self._delta_terms.pop(pk, ()):
            self._delta[term].pop(pk, None)

    def _add(self, conn: sqlite3.Connection, pks: Sequence[int]) -> None:
        """Tokenise the current text of rows ``pks`` with the index's tokenizer and add it."""
        if not pks:
            return
        marks = ",".join("?" * len(pks))
        rows = conn.execute(
            f"SELECT rowid, content, key, tags FROM memories_fts WHERE rowid IN ({marks})",
            list(pks),
        ).fetchall()
        if not rows:
            return
        self._grow(max(r[0] for r in rows) + 1)
        conn.executemany(
            "INSERT INTO temp.tokenizer (rowid, t) VALUES (?, ?)",
            [(r[0], " ".join(str(v) for v in r[1:] if v)) for r in rows],
        )
        try:
            found = conn.execute("SELECT term, doc FROM temp.tokenizer_vocab").fetchall()
        finally:
            conn.execute("DELETE FROM temp.tokenizer")
        for term, doc in found:
            tf = self._delta.setdefault(term, {})
            if doc not in tf:
                self._delta_terms.setdefault(doc, []).append(term)
            tf[doc] = tf.get(doc, 0) + 1
            self._length[doc] += 1.0
        for r in rows:
            self._stale[r[0]] = True  # the base's postings of this row are outdated
            self._has_stale = True
            self._present[r[0]] = True
            self._rows += 1
            self._tokens += float(self._length[r[0]])
        self._delta_rows += len(rows)

    def _grow(self, need: int) -> None:
        have = len(self._length)
        if need <= have:
            return
        size = max(need, have * 2)
        self._length = np.concatenate([self._length, np.zeros(size - have)])
        self._present = np.concatenate([self._present, np.zeros(size - have, dtype=bool)])
        self._stale = np.concatenate([self._stale, np.zeros(size - have, dtype=bool)])
        self._scope = np.concatenate([self._scope, np.zeros(size - have, dtype=np.int64)])
        self._is_active = np.concatenate([self._is_active, np.zeros(size - have, dtype=bool)])

    # -- the reader's rows ------------------------------------------------------

    def reader(self, scope_pks: Sequence[int]) -> ReaderRows:
        """The rows of the scopes ``scope_pks`` (one reader's readable scopes)."""
        with self._lock.read():
            return self._reader(scope_pks)

    def _reader(self, scope_pks: Sequence[int]) -> ReaderRows:
        """:meth:`reader` with the read lock held; cached until the mirror changes."""
        key = tuple(scope_pks)
        hit = self._readers.get(key)
        if hit is not None and hit[0] == self._version:
            return hit[1]
        top = max(int(self._scope.max(initial=0)), max(key, default=0)) + 1
        lut = np.zeros(top, dtype=bool)
        lut[np.asarray(key, dtype=np.int64)] = True
        lut[0] = False  # rows without a memory
        mask = lut[self._scope] & self._present
        active = mask & self._is_active
        mask.flags.writeable = False
        active.flags.writeable = False
        rows = ReaderRows(
            mask, active, int(mask.sum()), float(self._length[mask].sum()), int(active.sum())
        )
        with self._readers_lock:
            if len(self._readers) >= _MAX_READERS:
                self._readers.clear()
            self._readers[key] = (self._version, rows)
        return rows

    # -- searching ------------------------------------------------------------

    def frequent(
        self,
        conn: sqlite3.Connection,
        phrases: Sequence[Phrase],
        scope_pks: Sequence[int],
        ratio: float,
        min_docs: int,
    ) -> list[bool]:
        """Per phrase: is it in more than ``ratio`` of the reader's active rows? All
        False when the reader has fewer than ``min_docs`` active rows."""
        with self._lock.read():
            view = self._reader(scope_pks)
            if view.active_rows < min_docs:
                return [False] * len(phrases)
            cap = int(ratio * view.active_rows) + 1
            out = []
            for phrase in phrases:
                docs = self._postings_of(conn, phrase)[0] if phrase else _EMPTY_I
                # every row holding it, whoever may read them, bounds the reader's
                # count from above: a rarer phrase needs no count (same answer)
                out.append(len(docs) >= cap and int(view.active[docs].sum()) >= cap)
            return out

    def scores(
        self,
        conn: sqlite3.Connection,
        phrases: Sequence[Phrase],
        scope_pks: Sequence[int],
        max_ratio: float = 1.0,
        min_cap: int = 0,
    ) -> tuple[np.ndarray, np.ndarray]:
        """(row pks, BM25 score) of every row of the scopes ``scope_pks`` matching any
        of ``phrases``: FTS5's bm25 of ``"p1" OR "p2" ...`` (sign flipped: higher is
        better) with the reader's statistics.

        Phrases in more than ``max_ratio`` of the reader's rows (and more than
        ``min_cap``) are left out, the rarest always stays: a cost guard.
        """
        with self._lock.read():
            view = self._reader(scope_pks)
            if view.rows <= 0 or not phrases:
                return _EMPTY_I, _EMPTY_F
            everything = view.rows == self._rows  # the reader may read every row
            found = []
            for phrase in phrases:
                docs, freqs = self._postings_of(conn, phrase)
                if not everything:
                    keep = view.mask[docs]
                    docs, freqs = docs[keep], freqs[keep]
                found.append((docs, freqs))
            cap = max(max_ratio * view.rows, min_cap)
            kept = [f for f in found if len(f[0]) <= cap]
            if not kept:
                kept = [min(found, key=lambda f: len(f[0]))]
            avgdl = view.avgdl
            total = np.zeros(len(self._length), dtype=np.float64)
            for docs, freqs in kept:  # one phrase per term, duplicates included, as FTS5 does
                hits = len(docs)
                if hits == 0:
                    continue
                idf = math.log((view.rows - hits + 0.5) / (hits + 0.5))
                idf = idf if idf > 0.0 else MIN_IDF
                norm = K1 * (1.0 - B + B * self._length[docs] / avgdl)
                total[docs] += idf * ((freqs * (K1 + 1.0)) / (freqs + norm))
        matched = np.flatnonzero(total)
        return matched, total[matched]

    def _postings_of(
        self, conn: sqlite3.Connection, phrase: Phrase
    ) -> tuple[np.ndarray, np.ndarray]:
        """(row pks, occurrences) of a term (one token) or a phrase (several)."""
        if len(phrase) == 1:
            return self._postings(phrase[0])
        if not phrase:
            return _EMPTY_I, _EMPTY_F
        docs, freqs = _phrase_postings(conn, phrase)
        keep = docs < len(self._length)  # (the mirror has caught up with this snapshot)
        return docs[keep], freqs[keep]

    def _postings(self, stem: str) -> tuple[np.ndarray, np.ndarray]:
        docs, freqs = self._base.postings(stem)
        if self._has_stale and len(docs) and self._stale[docs].any():
            keep = ~self._stale[docs]
            docs, freqs = docs[keep], freqs[keep]
        extra = self._delta.get(stem)
        if extra:
            docs = np.concatenate([docs, np.fromiter(extra.keys(), np.int64, len(extra))])
            freqs = np.concatenate([freqs, np.fromiter(extra.values(), np.float64, len(extra))])
        return docs, freqs


def _phrase_postings(conn: sqlite3.Connection, phrase: Phrase) -> tuple[np.ndarray, np.ndarray]:
    """Rows holding the tokens of ``phrase`` one after the other in one column, and
    how often, read from the index itself (this read's snapshot)."""
    places = [
        set(
            conn.execute(
                "SELECT doc, col, offset FROM temp.fts_instances WHERE term = ?", (token,)
            ).fetchall()
        )
        for token in phrase
    ]
    counts: dict[int, int] = {}
    for doc, col, offset in places[0]:
        if all((doc, col, offset + i) in places[i] for i in range(1, len(phrase))):
            counts[doc] = counts.get(doc, 0) + 1
    if not counts:
        return _EMPTY_I, _EMPTY_F
    docs = np.fromiter(sorted(counts), np.int64, len(counts))
    freqs = np.asarray([counts[int(d)] for d in docs], dtype=np.float64)
    return docs, freqs
