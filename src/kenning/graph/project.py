"""The write side of the memory graph: what a write adds, and rebuilding it.

:class:`Projector` turns a batch of new records (and their vectors) into a
:class:`~kenning.graph.model.Projection` that the store commits in the write's
own transaction (DESIGN.md §2):

* **mentions**: the extractor's entities plus one topic per tag;
* ``co_occurs``: memories of one write batch and one scope, each linked to
  at most ``graph_co_occurs_max`` neighbours in batch order (never O(n²));
* ``semantic_neighbor``: up to ``graph_semantic_max`` existing memories of
  the same scope with cosine >= ``graph_semantic_min`` (one scoped vector
  search per new memory; weight = the cosine);
* ``temporal_next``: along event time (``event_at``, else ``created_at``,
  then id) within one scope and one episode (or one session, for memories
  without an episode): the batch in order, plus a link from the latest
  existing memory of the episode at or before the first new one (one store
  lookup per episode, all in one call);
* typed relations (``causes``, ``elaborates``, ...) from an extractor that
  offers ``relations_batch`` and from callers (reconcile, the API).

**Links only ever join memories of one scope.** A link is a fact about two
memories; keeping both in one scope means whoever may see the link may see
both ends, so an edge can never reveal a memory across a scope wall (the
stores enforce it too: they skip any link whose ends are in different scopes).

Rebuild (seed 002 §5) re-derives mentions, topics, ``semantic_neighbor`` from
stored vectors (each memory to its top neighbours in the whole scope; the same
edges as incremental writes whenever no memory has more than
``graph_semantic_max`` neighbours above the threshold) and ``temporal_next``
(the exact chain). ``co_occurs`` and typed relations cannot be rebuilt: the
original write batches and relation decisions are not recorded.
"""

from __future__ import annotations

import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

import numpy as np

from ..access import ScopeFilter
from ..models import MemoryFilter, MemoryRecord, Status
from .extract import Extractor, extractor_from_settings
from .model import EntityMention, MemoryLink, NodeKind, Projection, Relation
from .resolve import normalise_name, resolve

if TYPE_CHECKING:
    from ..config import Settings
    from ..stores.base import Store

#: The extractor's entities per memory id, before resolution.
Extracted = dict[str, list[EntityMention]]

__all__ = [
    "Extractor",
    "Projector",
    "RebuildReport",
    "NOT_REBUILT",
    "tag_topics",
]

#: Relations a rebuild cannot reproduce (seed 002 §5).
NOT_REBUILT = tuple(
    r.value for r in Relation if r not in (Relation.SEMANTIC_NEIGHBOR, Relation.TEMPORAL_NEXT)
)


def tag_topics(tags: Iterable[str]) -> list[EntityMention]:
    """One topic node per tag."""
    out: dict[str, EntityMention] = {}
    for tag in tags:
        norm = normalise_name(tag)
        if norm:
            out.setdefault(norm, EntityMention(tag, norm, NodeKind.TOPIC))
    return list(out.values())


def _episode(r: MemoryRecord) -> tuple[str, str] | None:
    if r.episode_id:
        return ("episode_id", r.episode_id)
    if r.session_id:
        return ("session_id", r.session_id)
    return None


def _order(r: MemoryRecord) -> tuple[float, float, str]:
    return (r.said_at.timestamp(), r.created_at.timestamp(), r.id)


@dataclass
class RebuildReport:
    """What :meth:`kenning.graph.api.Graph.rebuild` did."""

    memories: int = 0
    mentions: int = 0
    links: dict[str, int] = field(default_factory=dict)
    links_written: int = 0
    cleared: bool = False
    seconds: float = 0.0
    not_rebuilt: tuple[str, ...] = NOT_REBUILT

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {
            "memories": self.memories,
            "mentions": self.mentions,
            "links": dict(self.links),
            "links_written": self.links_written,
            "cleared": self.cleared,
            "seconds": round(self.seconds, 3),
            "not_rebuilt": list(self.not_rebuilt),
        }


class Projector:
    """Builds projections for writes and rebuilds the graph from stored memories."""

    def __init__(
        self, store: Store, settings: Settings, extractor: Extractor | None = None
    ) -> None:
        self.store = store
        self.settings = settings
        self.extractor: Extractor = extractor or extractor_from_settings(settings)
        self._lock = threading.Lock()
        self._worker: ThreadPoolExecutor | None = None

    def extract_ahead(self, records: Sequence[MemoryRecord]) -> Future[Extracted] | None:
        """Start the extractor on ``records`` on a worker thread (None when the graph is
        off): a write embeds its batch meanwhile, and most of each is native code that
        leaves the other core free. Pass the future's result to :meth:`for_insert`."""
        if not self.settings.graph_enabled or not records:
            return None
        with self._lock:
            if self._worker is None:
                self._worker = ThreadPoolExecutor(1, thread_name_prefix="kenning-extract")
            worker = self._worker
        texts = [r.content for r in records]
        ids = [r.id for r in records]
        return worker.submit(
            lambda: dict(zip(ids, self.extractor.extract_batch(texts), strict=True))
        )

    def close(self) -> None:
        """Stop the extraction worker (after the extraction in progress)."""
        with self._lock:
            worker, self._worker = self._worker, None
        if worker is not None:
            worker.shutdown(wait=True)

    # -- parts -------------------------------------------------------------------------

    def mentions(
        self, records: Sequence[MemoryRecord], extracted: Extracted | None = None
    ) -> dict[str, list[EntityMention]]:
        """Extractor entities (resolved within the batch) plus tag topics, per memory id.

        ``extracted``: the extractor's output per memory id when it already ran
        (see :meth:`extract_ahead`); records missing from it are extracted now.
        """
        missing = [r for r in records if extracted is None or r.id not in extracted]
        more = self.extractor.extract_batch([r.content for r in missing]) if missing else []
        have = {**(extracted or {}), **dict(zip([r.id for r in missing], more, strict=True))}
        found = [have[r.id] for r in records]
        flat = resolve([m for ents in found for m in ents], {}, {})
        out: dict[str, list[EntityMention]] = {}
        at = 0
        for r, ents in zip(records, found, strict=True):
            out[r.id] = [*flat[at : at + len(ents)], *tag_topics(r.tags)]
            at += len(ents)
        return out

    def co_occurs(self, records: Sequence[MemoryRecord]) -> list[MemoryLink]:
        """Batch neighbours in one scope: each memory gets at most ``graph_co_occurs_max``."""
        cap = self.settings.graph_co_occurs_max
        if cap <= 0:
            return []
        by_scope: dict[tuple[str, str], list[MemoryRecord]] = defaultdict(list)
        for r in records:
            by_scope[(r.org_id, r.scope.key)].append(r)
        links: list[MemoryLink] = []
        window = cap // 2
        for group in by_scope.values():
            for i, r in enumerate(group):
                if window == 0:  # cap 1: disjoint pairs
                    if i % 2 == 0 and i + 1 < len(group):
                        links.append(MemoryLink(r.id, group[i + 1].id, Relation.CO_OCCURS))
                    continue
                for other in group[i + 1 : i + 1 + window]:
                    links.append(MemoryLink(r.id, other.id, Relation.CO_OCCURS))
        return links

    def semantic(
        self,
        records: Sequence[MemoryRecord],
        vectors: Sequence[np.ndarray] | np.ndarray,
        known: Mapping[str, Sequence[tuple[str, float]]] | None = None,
    ) -> list[MemoryLink]:
        """Links to stored active memories of the same scope above the threshold.

        ``known``: record id -> its scope's nearest memories when the caller has
        already searched them (reconcile on write does), at least
        ``graph_semantic_max + 1`` deep; the others are searched here.
        """
        s = self.settings
        if s.graph_semantic_max <= 0:
            return []
        known = known or {}
        links: list[MemoryLink] = []
        by_org: dict[str, list[tuple[MemoryRecord, np.ndarray]]] = defaultdict(list)
        for r, vec in zip(records, vectors, strict=True):
            if r.id not in known:
                by_org[r.org_id].append((r, vec))
        found_by_id: dict[str, Sequence[tuple[str, float]]] = dict(known)
        for org, pairs in by_org.items():
            found = self.store.scope_neighbours(
                org, [(r.scope, v) for r, v in pairs], s.graph_semantic_max + 1
            )
            found_by_id.update((r.id, hits) for (r, _), hits in zip(pairs, found, strict=True))
        for r in records:
            hits = found_by_id.get(r.id, ())
            if hits:
                near = [(i, sim) for i, sim in hits if i != r.id and sim >= s.graph_semantic_min]
                links.extend(
                    MemoryLink(r.id, i, Relation.SEMANTIC_NEIGHBOR, round(float(sim), 6))
                    for i, sim in near[: s.graph_semantic_max]
                )
        return links

    def temporal(self, records: Sequence[MemoryRecord], *, tails: bool) -> list[MemoryLink]:
        """``temporal_next`` chains per (scope, episode); ``tails``: join stored episodes."""
        if not self.settings.graph_temporal_spine:
            return []
        groups: dict[tuple[str, str, str, str], list[MemoryRecord]] = defaultdict(list)
        for r in records:
            ep = _episode(r)
            if ep is not None and r.status is not Status.SUPERSEDED:
                groups[(r.org_id, r.scope.key, *ep)].append(r)
        links: list[MemoryLink] = []
        firsts: list[MemoryRecord] = []
        for group in groups.values():
            group.sort(key=_order)
            firsts.append(group[0])
            links.extend(
                MemoryLink(a.id, b.id, Relation.TEMPORAL_NEXT)
                for a, b in zip(group, group[1:], strict=False)
            )
        if tails and firsts:
            by_org: dict[str, list[MemoryRecord]] = defaultdict(list)
            for r in firsts:
                by_org[r.org_id].append(r)
            for org, heads in by_org.items():
                wants = [(r.scope, *(_episode(r) or ("", "")), r.said_at) for r in heads]
                for head, tail in zip(heads, self.store.episode_tails(org, wants), strict=True):
                    if tail is not None and tail != head.id:
                        links.append(MemoryLink(tail, head.id, Relation.TEMPORAL_NEXT))
        return links

    def typed(self, records: Sequence[MemoryRecord]) -> list[MemoryLink]:
        """Typed relations from an extractor that offers ``relations_batch``."""
        method: Callable[[Sequence[str]], Iterable[tuple[int, int, str, float]]] | None = getattr(
            self.extractor, "relations_batch", None
        )
        if method is None or not records:
            return []
        links = []
        for i, j, rel, weight in method([r.content for r in records]):
            if 0 <= i < len(records) and 0 <= j < len(records) and i != j:
                links.append(MemoryLink(records[i].id, records[j].id, Relation(rel), weight))
        return links

    # -- writes ------------------------------------------------------------------------

    def for_insert(
        self,
        records: Sequence[MemoryRecord],
        vectors: Sequence[np.ndarray] | np.ndarray,
        relations: Sequence[MemoryLink] = (),
        neighbours: Mapping[str, Sequence[tuple[str, float]]] | None = None,
        extracted: Extracted | None = None,
    ) -> Projection | None:
        """The projection of a batch of new records (None when the graph is off);
        ``neighbours``: scope searches already made (see :meth:`semantic`);
        ``extracted``: the extractor's output from :meth:`extract_ahead`."""
        if not self.settings.graph_enabled or not records:
            return None
        links = [
            *self.co_occurs(records),
            *self.semantic(records, vectors, neighbours),
            *self.temporal(records, tails=True),
            *self.typed(records),
            *relations,
        ]
        return Projection(self.mentions(records, extracted), links)

    def for_update(self, record: MemoryRecord, vector: np.ndarray | None) -> Projection:
        """New mentions and semantic neighbours of an updated record (``vector``: its new
        vector, or None to use the stored one)."""
        if not self.settings.graph_enabled:
            return Projection()  # clears what the old content projected
        if vector is None:
            view = ScopeFilter(record.org_id, frozenset({record.scope}))
            vector = self.store.memory_vectors([record.id], view).get(record.id)
        links = self.semantic([record], [vector]) if vector is not None else []
        return Projection(self.mentions([record]), links)

    # -- rebuild -----------------------------------------------------------------------

    def rebuild(
        self,
        view: ScopeFilter,
        *,
        clear_first: bool,
        now: datetime,
        progress: Callable[[int], None] | None = None,
        page_size: int = 256,
    ) -> RebuildReport:
        """Re-derive mentions, topics, semantic and temporal links of every memory in ``view``."""
        started = time.perf_counter()
        report = RebuildReport(cleared=clear_first)
        if clear_first:
            self.store.graph_clear(view)
        every = MemoryFilter(statuses=frozenset(Status))
        chains: list[MemoryRecord] = []
        cursor: tuple[float, str] | None = None
        while True:
            page = self.store.list(view, every, limit=page_size, cursor=cursor)
            if not page:
                break
            cursor = (page[-1].created_at.timestamp(), page[-1].id)
            mentions = self.mentions(page)
            links: list[MemoryLink] = []
            if self.settings.graph_semantic_max > 0:
                stored = self.store.memory_vectors([r.id for r in page], view)
                have = [r for r in page if r.id in stored]
                links = self.semantic(have, [stored[r.id] for r in have])
            projection = Projection(mentions, links)
            report.links_written += self.store.graph_write(view.org_id, projection, now)
            report.memories += len(page)
            report.mentions += sum(len(v) for v in mentions.values())
            _count(report, links)
            chains.extend(r for r in page if _episode(r) is not None)
            if progress is not None:
                progress(len(page))
        spine = self.temporal(chains, tails=False)
        for start in range(0, len(spine), 1000):
            part = spine[start : start + 1000]
            report.links_written += self.store.graph_write(view.org_id, Projection(links=part), now)
        _count(report, spine)
        report.seconds = time.perf_counter() - started
        return report


def _count(report: RebuildReport, links: Iterable[MemoryLink]) -> None:
    for link in links:
        name = Relation(link.relation).value
        report.links[name] = report.links.get(name, 0) + 1
