"""In-process vector index over the SQLite ``vectors`` table.

The table is the truth; this module keeps a mirror of it in numpy arrays, one
partition per organization, and follows the ``history`` table (every write that
touches a vector, a scope or a status writes a history row in the same
transaction) to stay current even when other processes write.

Search applies the access filter *inside* the search: a boolean mask built
from the caller's readable scope ids and the wanted statuses. Small readable
sets are scanned exactly (gather + matrix product); large ones go through an
HNSW index (usearch) over the whole partition, asked for enough neighbours
that ``limit`` of them survive the mask, widening until they do, with an
exact scan as the last resort. So a principal who reads four memories and one
who reads a million both get their true top ``limit``.
"""

from __future__ import annotations

import threading
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from .driver import sqlite3
from .follow import HistoryMirror

if TYPE_CHECKING:
    from usearch.index import BatchMatches, Index

__all__ = ["VectorIndex", "STATUS_CODES", "SearchPlan"]

#: Status codes stored in the mask arrays; DEAD marks a hole left by a delete.
STATUS_CODES = {"active": 0, "pending_review": 1, "archived": 2, "superseded": 3}
_DEAD = 4
_N_CODES = 5


@dataclass(slots=True)
class SearchPlan:
    """How the last search ran (for ``explain``)."""

    method: str = "none"
    allowed: int = 0
    probes: int = 0


def _usearch_index(**kwargs: Any) -> Index:
    """Create a usearch index, importing usearch on first use.

    onnxruntime 1.32 segfaults when it is imported *after* usearch 2.26 in one
    process (seen here), so onnxruntime, when installed, is imported first.
    """
    try:
        import onnxruntime  # noqa: F401
    except ImportError:  # pragma: no cover - onnxruntime is a dependency
        pass
    from usearch.index import Index

    return Index(**kwargs)


class _Partition:
    """The vectors of one organization."""

    def __init__(self, dim: int, number: int) -> None:
        self.dim = dim
        self.number = number
        self.n = 0
        self.live = 0
        self.pks = np.zeros(1024, dtype=np.int64)
        self.scope = np.zeros(1024, dtype=np.int64)
        self.status = np.full(1024, _DEAD, dtype=np.int8)
        self.said = np.zeros(1024, dtype=np.float64)  # COALESCE(event_at, created_at)
        self.vecs = np.zeros((1024, dim), dtype=np.float32)
        self.ids: list[str] = []
        self.pos_of: dict[str, int] = {}
        self.ann: Index | None = None  # usearch.index.Index once built
        #: scope pk -> that scope's own graph (built for a scope past the exact scan)
        self.scope_ann: dict[int, Index] = {}

    def _grow(self, need: int) -> None:
        cap = len(self.pks)
        if need <= cap:
            return
        new = max(need, cap * 2)
        self.pks = np.resize(self.pks, new)
        self.scope = np.resize(self.scope, new)
        self.said = np.resize(self.said, new)
        status = np.full(new, _DEAD, dtype=np.int8)
        status[:cap] = self.status
        self.status = status
        vecs = np.zeros((new, self.dim), dtype=np.float32)
        vecs[:cap] = self.vecs
        self.vecs = vecs

    def upsert_many(self, rows: Sequence[tuple[int, str, int, str, float, bytes]]) -> None:
        """Insert or overwrite rows ``(pk, id, scope_pk, status, said_at, vector_blob)``."""
        new_pos: list[int] = []
        changed: list[int] = []
        left: list[tuple[int, int]] = []  # (position, scope) of rows leaving a scope's graph
        self._grow(self.n + len(rows))
        for pk, mid, scope_pk, status, said, blob in rows:
            vec = np.frombuffer(blob, dtype=np.float32)
            pos = self.pos_of.get(mid)
            if pos is None:
                pos = self.n
                self.n += 1
                self.ids.append(mid)
                self.pos_of[mid] = pos
                self.live += 1
                new_pos.append(pos)
            else:
                was = int(self.scope[pos])
                if not np.array_equal(self.vecs[pos], vec):
                    changed.append(pos)
                    left.append((pos, was))
                elif was != scope_pk:
                    left.append((pos, was))
            self.pks[pos] = pk
            self.scope[pos] = scope_pk
            self.status[pos] = STATUS_CODES.get(status, _DEAD)
            self.said[pos] = said
            self.vecs[pos] = vec
        if self.ann is not None:
            if changed:
                self.ann.remove(np.asarray(changed, dtype=np.uint64))
            add = new_pos + changed
            if add:
                keys = np.asarray(add, dtype=np.uint64)
                threads = 0 if self.parallel_adds(len(add)) else 1
                self.ann.add(keys, self.vecs[keys.astype(np.int64)], threads=threads)
        if self.scope_ann:
            self._follow_scopes(new_pos, left)

    def _follow_scopes(self, new_pos: list[int], left: list[tuple[int, int]]) -> None:
        """Keep the scopes' own graphs in step with rows that came, changed their
        vector or moved to another scope: each leaves the graph of the scope it was
        in and joins the graph of the scope it is in now."""
        for scope_pk, positions in _grouped(left).items():
            graph = self.scope_ann.get(scope_pk)
            if graph is not None:
                graph.remove(np.asarray(positions, dtype=np.uint64))
        joining = _grouped([(p, int(self.scope[p])) for p in [*new_pos, *(p for p, _ in left)]])
        for scope_pk, positions in joining.items():
            graph = self.scope_ann.get(scope_pk)
            if graph is not None:
                keys = np.asarray(positions, dtype=np.uint64)
                threads = 0 if len(graph) + len(keys) >= _SERIAL_BUILD_MAX else 1
                graph.add(keys, self.vecs[keys.astype(np.int64)], threads=threads)

    def parallel_adds(self, count: int) -> bool:
        """Whether ``count`` new vectors go into the graph on every core: when they
        are many, or the graph is past :data:`_SERIAL_BUILD_MAX` (it was built in
        parallel, so one thread would not make its answers repeatable)."""
        return count >= _SERIAL_BUILD_MAX or self.live >= _SERIAL_BUILD_MAX

    def remove(self, mid: str) -> None:
        """Drop one memory (leaves a dead slot)."""
        pos = self.pos_of.pop(mid, None)
        if pos is None:
            return
        self.status[pos] = _DEAD
        self.live -= 1
        if self.ann is not None:
            self.ann.remove(pos)
        graph = self.scope_ann.get(int(self.scope[pos]))
        if graph is not None:
            graph.remove(pos)

    def build_ann(self, connectivity: int, expansion: int) -> None:
        """Build the HNSW index over every live slot."""
        live = np.flatnonzero(self.status[: self.n] != _DEAD)
        self.ann = self._graph(live, connectivity, expansion)

    def build_scope_ann(self, scope_pk: int, connectivity: int, expansion: int) -> None:
        """Build the HNSW index of one scope's live slots: a search of a big scope
        in the organization's graph must ask for as many neighbours as the scope
        is rare (670 for a tenth of the rows, where its own graph needs about 80)."""
        rows = np.flatnonzero((self.scope[: self.n] == scope_pk) & (self.status[: self.n] != _DEAD))
        self.scope_ann[scope_pk] = self._graph(rows, connectivity, expansion)

    def _graph(self, rows: np.ndarray, connectivity: int, expansion: int) -> Index:
        index = _usearch_index(
            ndim=self.dim,
            metric="ip",
            dtype="i8",  # 10x faster to build than f32 here; hits are re-scored in f32
            connectivity=connectivity,
            expansion_add=96,
            expansion_search=expansion,
        )
        if len(rows):
            # parallel inserts build a different graph on every run; small graphs are
            # built on one thread so the same data always gives the same answers
            threads = 1 if len(rows) < _SERIAL_BUILD_MAX else 0
            index.add(rows.astype(np.uint64), self.vecs[rows], threads=threads)
        return index


def _grouped(pairs: Iterable[tuple[int, int]]) -> dict[int, list[int]]:
    """``(position, scope)`` pairs as scope -> positions."""
    out: dict[int, list[int]] = {}
    for pos, scope_pk in pairs:
        out.setdefault(scope_pk, []).append(pos)
    return out


_MAX_RUNS = 256
#: The fewest rows a run must average for multiplying run by run to beat gathering
#: the rows first (2,000-20,000 float32 rows of 384: gathering is 2.2x faster at
#: 16 rows a run, about even at 48-64, slower from 100 on one thread; with
#: several threads scanning at once, faster at every length measured).
_MIN_RUN = 48
#: The widest gap (rows) an exact scan's run multiplies through rather than
#: splitting (about one extra call's overhead in rows of 384 floats).
_GAP = 64
#: The columns a mirrored row is read with (see ``_Partition.upsert_many``).
_ROW = "m.org_id, m.pk, m.id, m.scope_pk, m.status, COALESCE(m.event_at, m.created_at), v.vector"
#: A ``[start, end)`` range of ``COALESCE(event_at, created_at)`` timestamps; None: open.
SaidRange = tuple[float | None, float | None]
#: Search masks kept per (partition, scopes, statuses) until the mirror changes.
_MAX_MASKS = 16
#: HNSW graphs smaller than this are built single-threaded (deterministic).
_SERIAL_BUILD_MAX = 20_000


def _first_pool(size: int, allowed: int, limit: int) -> int:
    """How many neighbours a graph search first asks for when ``allowed`` of the
    graph's ``size`` rows may be returned. The graph holds int8 vectors and hits
    are re-scored in float32, so the pool is generous: at least 64 readable rows
    on average."""
    frac = allowed / max(size, 1)
    return min(size, int(max(limit, 32) / frac * 2) + 16)


def _rescored(
    part: _Partition, rows: np.ndarray, q: np.ndarray, limit: int
) -> list[tuple[str, float]]:
    """The top ``limit`` of a graph search's ``rows``, by their float32 cosine to ``q``
    (the graph holds int8 vectors)."""
    sims = part.vecs[rows] @ q
    order = np.argsort(-sims)[:limit]
    return [(part.ids[int(rows[i])], float(sims[i])) for i in order]


def _said_mask(times: np.ndarray, said: SaidRange) -> np.ndarray:
    """Which of ``times`` fall in ``said`` (start inclusive, end exclusive, as SQL's
    ``event_after`` / ``event_before`` filters)."""
    start, end = said
    ok = np.ones(len(times), dtype=bool)
    if start is not None:
        ok &= times >= start
    if end is not None:
        ok &= times < end
    return ok


def _runs(idx: np.ndarray, gap: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Runs of sorted ``idx`` split where rows are more than ``gap`` apart: each
    run's first position in ``idx``, and its first and past-the-last row."""
    cuts = np.flatnonzero(np.diff(idx) > gap) + 1
    firsts = np.concatenate(([0], cuts))
    ends = idx[np.concatenate((cuts - 1, [len(idx) - 1]))] + 1
    return firsts, idx[firsts], ends


def _dot_rows(vecs: np.ndarray, idx: np.ndarray, q: np.ndarray) -> np.ndarray:
    """``vecs[idx] @ q`` for sorted row numbers ``idx``.

    Rows are loaded grouped by scope, so a reader's rows usually form a few
    runs; each run is multiplied in place (a view, no copy) instead of
    gathering every row first. A run spans holes of up to :data:`_GAP` rows
    (superseded or archived memories inside a scope's block): multiplying a
    few unwanted rows costs less than one more call, and their products are
    dropped. When the holes would add more than a quarter to the rows
    multiplied (rows interleaved with other scopes' rows), runs stop at every
    hole; with too many runs, or runs too short to pay for a call each (a
    store written by many users at once interleaves their rows), the rows are
    gathered.
    """
    if len(idx) == 0:
        return np.zeros(0, dtype=np.float32)
    firsts, starts, ends = _runs(idx, _GAP)
    if int((ends - starts).sum()) * 4 > len(idx) * 5:
        firsts, starts, ends = _runs(idx, 1)
    if len(starts) > _MAX_RUNS or len(idx) < _MIN_RUN * len(starts):
        return _dot(vecs[idx], q)
    spans = np.concatenate([_dot(vecs[a:b], q) for a, b in zip(starts, ends, strict=True)])
    if len(spans) == len(idx):  # no hole bridged: every product is wanted
        return spans
    # where each wanted row sits in ``spans``: its offset in its run plus the run's
    offsets = np.concatenate(([0], np.cumsum(ends - starts)[:-1]))
    run = np.repeat(np.arange(len(starts)), np.diff(np.concatenate((firsts, [len(idx)]))))
    out: np.ndarray = spans[idx - starts[run] + offsets[run]]
    return out


def _dot(rows: np.ndarray, q: np.ndarray) -> np.ndarray:
    """``rows @ q`` on the calling thread.

    A scan is memory-bound; BLAS would spread it over every core and, on a
    small busy machine (the keyword search runs on the other thread), its
    threads wait for each other: einsum's single-threaded SIMD loop is as fast
    when idle and several times faster under load.
    """
    out: np.ndarray = np.einsum("ij,j->i", rows, q)
    return out


#: A call of up to this many queries in all (a single write's) is answered scan by
#: scan on the calling thread (:func:`_dot_rows`); a larger one (a batch's) by one
#: BLAS product per scope.
_FEW_QUERIES = 4


def _scope_products(
    vecs: np.ndarray, mine: np.ndarray, block: np.ndarray, *, scan: bool
) -> np.ndarray:
    """``vecs[mine] @ block.T`` for sorted row numbers ``mine`` and a block of queries.

    With ``scan`` (a single write's few queries) each query is a scan on the
    calling thread, as a search's is (:func:`_dot`): past about 2,000 rows
    numpy's BLAS spreads a product over every core, and its other threads then
    spin waiting for the next one (OpenBLAS keeps them hot for a while), which
    took a whole core beside every single write to a scope of that size
    (measured on a scope of 2,000 memories: 23.6 against 10.5 ms of CPU per
    write, wall time 12.1 against 7.3 ms). A batch (an import's) keeps the BLAS
    product for every scope, even one with a single query of the batch: its
    products follow one another, so the threads pay for themselves.
    """
    if scan:
        return np.stack([_dot_rows(vecs, mine, q) for q in block], axis=1)
    out: np.ndarray = vecs[mine] @ block.T
    return out


class VectorIndex(HistoryMirror):
    """Scope-filtered nearest-neighbour search over every organization's vectors."""

    def __init__(
        self,
        dim: int,
        *,
        exact_max: int,
        ann_min_rows: int,
        connectivity: int,
        expansion: int,
    ) -> None:
        self.dim = dim
        self.exact_max = exact_max
        self.ann_min_rows = ann_min_rows
        self.connectivity = connectivity
        self.expansion = expansion
        self._parts: dict[str, _Partition] = {}
        self._org_of: dict[str, str] = {}
        # Row lookup by memory pk (the keyword search filters FTS5 hits here):
        # partition number and position, -1 when the pk is not mirrored.
        self._pk_part = np.full(0, -1, dtype=np.int32)
        self._pk_pos = np.full(0, -1, dtype=np.int32)
        self._version = 0  # moves on every change of the mirror
        self._masks: dict[tuple[Any, ...], tuple[int, np.ndarray]] = {}
        super().__init__()
        self._ann_lock = threading.Lock()
        self.last_plan = SearchPlan()

    # -- keeping current ------------------------------------------------------

    def _reload_all_instead(self, changed: int) -> bool:
        return changed > max(5000, len(self._org_of) // 4)  # one scan beats that many lookups

    def invalidate(self) -> None:
        """Forget everything: the next search loads the vectors afresh (after a
        change the history table does not record, such as re-embedding)."""
        with self._lock.write():
            self._seq = -1
            self._parts.clear()
            self._org_of.clear()
            self._version += 1

    def _load_all(self, conn: sqlite3.Connection) -> None:
        """Load every vector, grouped by scope: a reader's scopes then lie in a
        few contiguous blocks, which the exact scan reads without a gather."""
        self._parts.clear()
        self._org_of.clear()
        self._pk_part = np.full(0, -1, dtype=np.int32)
        self._pk_pos = np.full(0, -1, dtype=np.int32)
        cur = conn.execute(
            f"SELECT {_ROW} FROM memories m JOIN vectors v ON v.pk = m.pk ORDER BY m.scope_pk, m.pk"
        )
        while batch := cur.fetchmany(5000):
            self._apply(batch)

    def _reload(self, conn: sqlite3.Connection, ids: Sequence[str]) -> None:
        for start in range(0, len(ids), 500):
            chunk = list(ids[start : start + 500])
            marks = ",".join("?" * len(chunk))
            rows = conn.execute(
                f"SELECT {_ROW} FROM memories m JOIN vectors v ON v.pk = m.pk "
                f"WHERE m.id IN ({marks})",
                chunk,
            ).fetchall()
            found = {r[2] for r in rows}
            for mid in chunk:
                if mid not in found and mid in self._org_of:
                    part = self._parts[self._org_of.pop(mid)]
                    pos = part.pos_of.get(mid)
                    if pos is not None:
                        self._pk_pos[int(part.pks[pos])] = -1
                    part.remove(mid)
                    self._version += 1
            self._apply(rows)

    def _apply(self, rows: Iterable[tuple[str, int, str, int, str, float, bytes]]) -> None:
        by_org: dict[str, list[tuple[int, str, int, str, float, bytes]]] = {}
        for org, pk, mid, scope_pk, status, said, blob in rows:
            if len(blob) != self.dim * 4:
                continue  # a vector of another model; re-embedding brings it back
            by_org.setdefault(org, []).append((pk, mid, scope_pk, status, said, blob))
            self._org_of[mid] = org
        for org, items in by_org.items():
            part = self._parts.get(org)
            if part is None:
                part = self._parts[org] = _Partition(self.dim, len(self._parts))
            part.upsert_many(items)
            pks = np.asarray([item[0] for item in items], dtype=np.int64)
            self._grow_pk_lookup(int(pks.max()) + 1)
            self._pk_part[pks] = part.number
            self._pk_pos[pks] = [part.pos_of[item[1]] for item in items]
            self._version += 1

    def _grow_pk_lookup(self, need: int) -> None:
        have = len(self._pk_pos)
        if need <= have:
            return
        size = max(need, have * 2, 1024)
        for name in ("_pk_part", "_pk_pos"):
            grown = np.full(size, -1, dtype=np.int32)
            grown[:have] = getattr(self, name)
            setattr(self, name, grown)

    # -- row filter for the keyword search ------------------------------------

    def visible_ids(
        self, org_id: str, pks: Sequence[int], scope_pks: Sequence[int], statuses: Iterable[str]
    ) -> list[str | None] | None:
        """For each memory pk, its id when it is in ``org_id``, one of
        ``scope_pks`` and one of ``statuses``, else None.

        None as a whole when some pk is not mirrored (no vector of this
        model, or written after the last refresh): the caller asks SQL then.
        """
        with self._lock.read():
            keys = np.asarray(pks, dtype=np.int64)
            ok = self.visible_mask(org_id, keys, scope_pks, statuses)
            if ok is None:
                return None
            ids = self.ids_of(org_id, keys)
            return [i if good else None for i, good in zip(ids, ok, strict=True)]

    def visible_mask(
        self,
        org_id: str,
        keys: np.ndarray,
        scope_pks: Sequence[int],
        statuses: Iterable[str],
        said: SaidRange | None = None,
    ) -> np.ndarray | None:
        """Per memory pk of ``keys``: is it in ``org_id``, one of ``scope_pks``, one of
        ``statuses`` and (given ``said``) in that time range? None when some pk is
        not mirrored (as :meth:`visible_ids`)."""
        with self._lock.read():
            part = self._parts.get(org_id)
            if len(keys) == 0:
                return np.zeros(0, dtype=bool)
            if part is None or int(keys.max()) >= len(self._pk_pos):
                return None
            pos = self._pk_pos[keys]
            if (pos < 0).any():
                return None
            ok: np.ndarray = self._mask_at(part, pos, scope_pks, statuses) & (
                self._pk_part[keys] == part.number
            )
            if said is not None:
                ok &= _said_mask(part.said[pos], said)
            return ok

    def active_pks(
        self,
        org_id: str,
        ids: Sequence[str],
        scope_pks: Collection[int],
        also: Collection[str] = (),
    ) -> tuple[dict[int, str], list[str]]:
        """(pk -> id of the mirrored ``ids`` that are active, or of one of the statuses
        ``also``, in one of ``scope_pks``; the ids the mirror does not hold)."""
        found: dict[int, str] = {}
        with self._lock.read():
            part = self._parts.get(org_id)
            if part is None:
                return found, list(ids)
            rest: list[str] = []
            wanted = {STATUS_CODES["active"], *(STATUS_CODES[s] for s in also)}
            for i in ids:
                pos = part.pos_of.get(i)
                if pos is None:
                    rest.append(i)
                elif part.status[pos] in wanted and int(part.scope[pos]) in scope_pks:
                    found[int(part.pks[pos])] = i
            return found, rest

    def ids_of(self, org_id: str, keys: np.ndarray) -> list[str]:
        """The memory ids of mirrored pks of ``org_id`` (see :meth:`visible_mask`)."""
        if len(keys) == 0:
            return []
        with self._lock.read():
            part = self._parts[org_id]
            return [part.ids[int(p)] for p in self._pk_pos[keys]]

    @staticmethod
    def _mask_at(
        part: _Partition, pos: np.ndarray, scope_pks: Sequence[int], statuses: Iterable[str]
    ) -> np.ndarray:
        status_lut = np.zeros(_N_CODES, dtype=bool)
        for s in statuses:
            status_lut[STATUS_CODES[s]] = True
        scopes = part.scope[pos]
        top = int(max(int(scopes.max(initial=0)), max(scope_pks, default=0))) + 1
        lut = np.zeros(top, dtype=bool)
        lut[np.asarray(list(scope_pks), dtype=np.int64)] = True
        mask: np.ndarray = status_lut[part.status[pos]] & lut[scopes]
        return mask

    # -- searching ------------------------------------------------------------

    def scores(
        self, org_id: str, query: np.ndarray, ids: Sequence[str], scope_pks: set[int]
    ) -> dict[str, float]:
        """Cosine of ``query`` with each id whose scope is in ``scope_pks``."""
        with self._lock.read():
            part = self._parts.get(org_id)
            if part is None:
                return {}
            pos = [
                (i, p)
                for i in ids
                if (p := part.pos_of.get(i)) is not None and int(part.scope[p]) in scope_pks
            ]
            if not pos:
                return {}
            sims = part.vecs[np.asarray([p for _, p in pos], dtype=np.int64)] @ np.asarray(
                query, dtype=np.float32
            ).reshape(-1)
            return {i: float(s) for (i, _), s in zip(pos, sims, strict=True)}

    def search(
        self,
        org_id: str,
        query: np.ndarray,
        scope_pks: Sequence[int] | None,
        statuses: Iterable[str],
        limit: int,
        restrict_pks: Sequence[int] | None = None,
        said: SaidRange | None = None,
    ) -> list[tuple[str, float]]:
        """Top ``limit`` (id, cosine) among vectors in the given scopes and statuses.

        ``scope_pks=None`` means every scope of the organization.
        ``restrict_pks`` further limits the search to those memory rows, and
        ``said`` to those that happened in that range (event time, else
        creation time), checked here instead of in SQL.
        """
        with self._lock.read():
            part = self._parts.get(org_id)
            self.last_plan = SearchPlan()
            if part is None or part.live == 0 or limit <= 0:
                return []
            mask = self._mask(part, scope_pks, statuses, restrict_pks)
            if said is not None:
                mask = mask & _said_mask(part.said[: part.n], said)
            allowed = int(mask.sum())
            self.last_plan.allowed = allowed
            if allowed == 0:
                return []
            q = np.asarray(query, dtype=np.float32).reshape(-1)
            if allowed > self.exact_max and part.live >= self.ann_min_rows:
                graph, size = self._graph_for(part, scope_pks)
                found = self._ann_search(part, graph, size, q, mask, allowed, limit)
                if found is not None:
                    return found
            return self._exact(part, q, mask, allowed, limit)

    def search_by_scope(
        self,
        org_id: str,
        queries: Sequence[tuple[int, np.ndarray]],
        statuses: Iterable[str],
        limit: int,
    ) -> list[list[tuple[str, float]]]:
        """Per ``(scope pk, query)``: the top ``limit`` (id, cosine) of that one scope.

        The write path's reconcile asks this for a whole batch: the queries of
        one scope are answered by one matrix product over its rows instead of
        one scan each. A scope too large for an exact scan goes query by query
        through :meth:`search` (its HNSW graph).
        """
        out: list[list[tuple[str, float]]] = [[] for _ in queries]
        wanted = list(statuses)
        if limit <= 0 or not queries:
            return out
        groups: dict[int, list[int]] = {}
        for n, (scope_pk, _) in enumerate(queries):
            groups.setdefault(scope_pk, []).append(n)
        large: dict[int, list[int]] = {}  # scope pk -> its queries, past the exact scan
        few = len(queries) <= _FEW_QUERIES  # a single write's: no BLAS threads
        with self._lock.read():
            part = self._parts.get(org_id)
            if part is None or part.live == 0:
                return out
            # only the asked scopes' rows (a lookup per row), grouped by scope when
            # there are several: sorting every row of the organization instead cost
            # a single write 6 ms at 100,000 memories and 84 ms at a million
            ok = self._build_mask(part, list(groups), wanted)
            rows = np.flatnonzero(ok)
            if len(groups) > 1:
                rows = rows[np.argsort(part.scope[rows], kind="stable")]
            keys = part.scope[rows]
            for scope_pk, members in groups.items():
                lo, hi = np.searchsorted(keys, [scope_pk, scope_pk + 1])
                mine = rows[lo:hi]
                if len(mine) == 0:
                    continue
                if len(mine) > self.exact_max and part.live >= self.ann_min_rows:
                    large[scope_pk] = members
                    continue
                block = np.stack(
                    [np.asarray(queries[n][1], dtype=np.float32).reshape(-1) for n in members]
                )
                sims = _scope_products(part.vecs, mine, block, scan=few)
                k = min(limit, len(mine))
                for col, n in enumerate(members):
                    column = sims[:, col]
                    top = (
                        np.argpartition(-column, k - 1)[:k]
                        if k < len(column)
                        else np.arange(len(column))
                    )
                    top = top[np.argsort(-column[top])]
                    out[n] = [(part.ids[int(mine[t])], float(column[t])) for t in top]
        for scope_pk, members in large.items():
            self._search_large(org_id, scope_pk, queries, members, wanted, limit, out)
        return out

    def _search_large(
        self,
        org_id: str,
        scope_pk: int,
        queries: Sequence[tuple[int, np.ndarray]],
        ns: list[int],
        statuses: list[str],
        limit: int,
        out: list[list[tuple[str, float]]],
    ) -> None:
        """:meth:`search_by_scope`'s queries ``ns`` of one scope too large for an
        exact scan. Two or more go through the scope's own HNSW graph in one call
        on every core, with the first pool :meth:`_ann_search` asks for (the same
        answers as one :meth:`search` each: a graph search only reads the graph); a
        query whose pool keeps too few of the scope's rows, or a single one, goes
        through :meth:`search`, which widens it."""
        rest = ns
        if len(ns) > 1:
            rest = []
            with self._lock.read():
                part = self._parts.get(org_id)
                if part is None:
                    return
                graph, size = self._graph_for(part, [scope_pk])
                mask = self._mask(part, [scope_pk], statuses, None)
                allowed = int(mask.sum())
                if allowed == 0:
                    return
                count = _first_pool(size, allowed, limit)
                block = np.stack(
                    [np.asarray(queries[n][1], dtype=np.float32).reshape(-1) for n in ns]
                )
                # two or more queries: one row of matches each
                found = cast("BatchMatches", graph.search(block, count, exact=False, threads=0))
                for row, n in enumerate(ns):
                    keys = np.asarray(found.keys[row][: found.counts[row]], dtype=np.int64)
                    keep = keys[mask[keys]]
                    if len(keep) < min(limit, allowed) and count < size:
                        rest.append(n)
                    else:
                        out[n] = _rescored(part, keep, block[row], limit)
        for n in rest:
            out[n] = self.search(org_id, queries[n][1], [scope_pk], statuses, limit)

    def _graph_for(self, part: _Partition, scope_pks: Sequence[int] | None) -> tuple[Index, int]:
        """The graph a search of ``scope_pks`` walks, and how many rows it holds: one
        scope's own (built on its first search past the exact scan), else the
        organization's. In the organization's graph a big scope's nearest are rare:
        for a scope of a tenth of the rows at 1M memories, a search asked for 670
        neighbours and found 85% of the true five; its own graph finds 89% from 80,
        12x faster (``bench/scope_graph.py``)."""
        if scope_pks is not None and len(scope_pks) == 1:
            scope_pk = int(next(iter(scope_pks)))
            if scope_pk not in part.scope_ann:
                with self._ann_lock:  # one builder; searches go on meanwhile
                    if scope_pk not in part.scope_ann:
                        part.build_scope_ann(scope_pk, self.connectivity, self.expansion)
            graph = part.scope_ann[scope_pk]
            return graph, len(graph)
        if part.ann is None:
            self._build_ann(part)
        assert part.ann is not None
        return part.ann, part.live

    def _build_ann(self, part: _Partition) -> None:
        """Build ``part``'s HNSW graph (once) while the caller holds the read side."""
        with self._ann_lock:  # one builder; searches go on meanwhile, exact ones too
            if part.ann is None:
                part.build_ann(self.connectivity, self.expansion)

    def _mask(
        self,
        part: _Partition,
        scope_pks: Sequence[int] | None,
        statuses: Iterable[str],
        restrict_pks: Sequence[int] | None,
    ) -> np.ndarray:
        """Which slots of ``part`` the search may return (read-only when cached).

        Without ``restrict_pks`` the mask depends only on the scopes, the
        statuses and the mirror's contents, so it is kept until the mirror
        changes: a reader's next recall skips two passes over every row.
        """
        if restrict_pks is not None:
            mask = self._build_mask(part, scope_pks, statuses)
            mask &= np.isin(part.pks[: part.n], np.asarray(list(restrict_pks), dtype=np.int64))
            return mask
        key = (part.number, None if scope_pks is None else tuple(scope_pks), tuple(statuses))
        hit = self._masks.get(key)
        if hit is not None and hit[0] == self._version:
            return hit[1]
        mask = self._build_mask(part, scope_pks, statuses)
        mask.flags.writeable = False
        if len(self._masks) >= _MAX_MASKS:
            self._masks.clear()
        self._masks[key] = (self._version, mask)
        return mask

    @staticmethod
    def _build_mask(
        part: _Partition, scope_pks: Sequence[int] | None, statuses: Iterable[str]
    ) -> np.ndarray:
        n = part.n
        status_lut = np.zeros(_N_CODES, dtype=bool)
        for s in statuses:
            status_lut[STATUS_CODES[s]] = True
        mask = status_lut[part.status[:n]]
        if scope_pks is not None:
            scopes = part.scope[:n]
            top = int(max(int(scopes.max(initial=0)), max(scope_pks, default=0))) + 1
            lut = np.zeros(top, dtype=bool)
            lut[np.asarray(list(scope_pks), dtype=np.int64)] = True
            mask &= lut[scopes]
        return mask

    def _exact(
        self, part: _Partition, q: np.ndarray, mask: np.ndarray, allowed: int, limit: int
    ) -> list[tuple[str, float]]:
        self.last_plan.method = "exact"
        if allowed * 3 > part.n:
            sims = _dot(part.vecs[: part.n], q)
            sims[~mask] = -np.inf
            idx = np.arange(part.n)
        else:
            idx = np.flatnonzero(mask)
            sims = _dot_rows(part.vecs, idx, q)
        k = min(limit, allowed)
        top = np.argpartition(-sims, k - 1)[:k] if k < len(sims) else np.arange(len(sims))
        top = top[np.argsort(-sims[top])]
        return [(part.ids[int(idx[t])], float(sims[t])) for t in top if np.isfinite(sims[t])]

    def _ann_search(
        self,
        part: _Partition,
        graph: Index,
        size: int,
        q: np.ndarray,
        mask: np.ndarray,
        allowed: int,
        limit: int,
    ) -> list[tuple[str, float]] | None:
        """Top ``limit`` of the rows ``mask`` allows through ``graph`` (of ``size``
        rows), widening its pool until enough pass; None: an exact scan is cheaper."""
        self.last_plan.method = "hnsw" if graph is part.ann else "hnsw-scope"
        frac = allowed / max(size, 1)
        count = _first_pool(size, allowed, limit)
        while True:
            self.last_plan.probes += 1
            matches = graph.search(q, count, exact=False)
            keys = np.asarray(matches.keys, dtype=np.int64)
            keep = keys[mask[keys]]
            if len(keep) >= min(limit, allowed) or count >= size:
                return _rescored(part, keep, q, limit)
            if count >= 32 * max(limit, 32) / frac:
                self.last_plan.method = "exact-fallback"
                return None
            count = min(size, count * 4)
