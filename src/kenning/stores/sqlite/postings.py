"""In-process BM25 over the ``memories_fts`` postings, scored with numpy.

FTS5 computes ``bm25()`` once per matching row through an auxiliary-function
call; a query whose words are in a few percent of a large index each scores
tens of thousands of rows that way (7-11 ms at 100k memories on this machine,
on the recall's critical path). This module keeps the index's postings in
numpy arrays and computes the same score, vectorised: FTS5's formula with
its constants (k1 = 1.2, b = 0.75, every column weighted 1), its IDF
(``log((N - n + 0.5) / (n + 0.5))``, at least 1e-6), its row count and its
average row length, so the numbers are FTS5's numbers.

The index is the truth. The mirror is loaded from it (``fts5vocab`` in
``instance`` mode) on first use and then follows the ``history`` table, which
every write that changes a memory's text, status or existence appends to in
the same transaction, so it also sees other processes' writes: a changed
row's old postings are masked and its new ones, tokenised by SQLite's own
tokenizer in a scratch table, kept beside them until the next full load.

Only single-word ASCII query terms are answered here; anything else (a word
FTS5 splits into a phrase) returns None and the caller asks FTS5.
"""

from __future__ import annotations

import math
import re
import sqlite3
from collections.abc import Sequence

import numpy as np

from .follow import HistoryMirror

__all__ = ["PostingsIndex", "TEMP_TOKENIZER"]

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
_PLAIN = re.compile(r"[a-z0-9]+")
_BATCH = 50_000


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
        self._delta: dict[str, dict[int, int]] = {}  # term -> pk -> tf, rows changed since
        self._delta_terms: dict[int, list[str]] = {}  # pk -> its terms in ``_delta``
        self._delta_rows = 0
        self._pk_of: dict[str, int] = {}
        self._rows = 0
        self._tokens = 0.0

    # -- keeping current (refresh: see HistoryMirror) -------------------------

    def _reload_all_instead(self, changed: int) -> bool:
        return self._delta_rows + changed > max(5000, self.rebuild_ratio * self._rows)

    def _load_all(self, conn: sqlite3.Connection) -> None:
        self._pk_of = dict(conn.execute("SELECT id, pk FROM memories").fetchall())
        present_pks = np.asarray(
            [r[0] for r in conn.execute("SELECT id FROM memories_fts_docsize")], dtype=np.int64
        )
        size = int(present_pks.max()) + 1 if len(present_pks) else 1
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
        self._delta = {}
        self._delta_terms = {}
        self._delta_rows = 0
        self._rows = len(present_pks)
        self._tokens = float(self._length.sum())

    def _reload(self, conn: sqlite3.Connection, ids: Sequence[str]) -> None:
        """Re-read the rows of ``ids`` (deleted ones drop out)."""
        for start in range(0, len(ids), 500):
            chunk = list(ids[start : start + 500])
            marks = ",".join("?" * len(chunk))
            sql = f"SELECT id, pk FROM memories WHERE id IN ({marks})"
            now = dict(conn.execute(sql, chunk).fetchall())
            pks = {self._pk_of.get(i) for i in chunk} | set(now.values())
            pks.discard(None)
            for pk in pks:
                self._drop(int(pk))  # type: ignore[arg-type]
            self._pk_of.update(now)
            for mid in chunk:
                if mid not in now:
                    self._pk_of.pop(mid, None)
            self._add(conn, sorted(int(p) for p in pks))  # type: ignore[arg-type]

    def _drop(self, pk: int) -> None:
        """Forget row ``pk``'s postings (base masked, delta removed)."""
        if pk < len(self._present) and self._present[pk]:
            self._rows -= 1
            self._tokens -= float(self._length[pk])
            self._length[pk] = 0.0
            self._present[pk] = False
        if pk < len(self._stale):
            self._stale[pk] = True
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

    # -- searching ------------------------------------------------------------

    def scores(self, stems: Sequence[str]) -> tuple[np.ndarray, np.ndarray] | None:
        """(row pks, BM25 score) of every row matching any of ``stems`` (FTS5's bm25
        of ``"s1" OR "s2" ...``, sign flipped: higher is better), or None when a
        stem is not one plain token (FTS5 would read it as a phrase)."""
        if not stems or not all(_PLAIN.fullmatch(s) for s in stems):
            return None
        with self._lock.read():
            if self._rows <= 0:
                return _EMPTY_I, _EMPTY_F
            avgdl = self._tokens / self._rows
            total = np.zeros(len(self._length), dtype=np.float64)
            for stem in stems:  # one phrase per term, duplicates included, as FTS5 does
                docs, freqs = self._postings(stem)
                if len(docs) == 0:
                    continue
                hits = len(docs)
                idf = math.log((self._rows - hits + 0.5) / (hits + 0.5))
                idf = idf if idf > 0.0 else MIN_IDF
                norm = K1 * (1.0 - B + B * self._length[docs] / avgdl)
                total[docs] += idf * ((freqs * (K1 + 1.0)) / (freqs + norm))
        matched = np.flatnonzero(total)
        return matched, total[matched]

    def _postings(self, stem: str) -> tuple[np.ndarray, np.ndarray]:
        docs, freqs = self._base.postings(stem)
        if len(docs) and self._stale[docs].any():
            keep = ~self._stale[docs]
            docs, freqs = docs[keep], freqs[keep]
        extra = self._delta.get(stem)
        if extra:
            docs = np.concatenate([docs, np.fromiter(extra.keys(), np.int64, len(extra))])
            freqs = np.concatenate([freqs, np.fromiter(extra.values(), np.float64, len(extra))])
        return docs, freqs
