"""Sector hierarchy logic (seed 003): routing, decay multipliers, centroids, splits. Pure.

A sector is a node of a hierarchy (Work > Project_A > Meeting_Notes) with a
decay multiplier, topics and a centroid. Nothing here reads or writes a store;
the caller loads :class:`SectorInfo` values, asks a question and applies the answer.

Choices:

* **Routing** (:func:`assign_sector`) trusts explicit tags first: the deepest
  sector whose topics share a tag with the memory wins (ties: more shared
  topics, then the smaller sector, then the id). Only without a topic match
  does the embedding decide: the most similar centroid at or above
  ``min_similarity``; sectors within :data:`NEAR_TIE` of the best cosine count
  as tied and the deepest of them wins (a specific child beats its slightly
  closer generic parent). Tags and topics are compared case-insensitively with
  ``#``, ``_``, ``-`` and spaces folded (``Meeting_Notes`` = ``meeting notes``).
* **Depth** is the number of ancestors present in the given sectors; a
  ``parent_id`` that is missing or part of a cycle simply ends the walk, so
  every function here terminates on corrupt hierarchies.
* **Multipliers** multiply along the path to the root (Work 0.5 > Meetings 2.0
  gives 1.0).
* **Centroids** are stored L2-normalised, so :func:`update_centroid` treats the
  stored centroid as ``size`` unit vectors pointing its way: the result is the
  direction of their sum plus the new vector (exact for the spherical mean when
  members are near their centroid, a close approximation otherwise).
* **Splits** (:func:`plan_split`) run spherical 2-means: members are sorted by
  id (the input order does not matter); ``seed`` picks the start member, the
  first centre is the member farthest from it and the second the member
  farthest from the first; at most :data:`MAX_ITERATIONS` rounds. No split when
  there are fewer than ``2 * min_child_size`` members, when all vectors point
  the same way, or when a side ends with fewer than ``min_child_size``.
  A child's name is ``"<parent>/<term>"`` and its topics the terms most
  distinctive for it against the other child (share of members carrying the
  term here minus there): tags first, content words (no stopwords, 3+
  letters) when no tag is distinctive, ``"<parent>/1"`` / ``"/2"`` if neither is.

The dataclasses hold numpy arrays, so they compare by identity (``eq=False``).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ..errors import InvalidInput
from ..retrieval.text import STOPWORDS, query_terms
from .model import Sector

__all__ = [
    "SectorInfo",
    "SplitPlan",
    "assign_sector",
    "descendants",
    "effective_multiplier",
    "update_centroid",
    "plan_split",
    "normalise_topic",
    "NEAR_TIE",
    "MAX_ITERATIONS",
]

#: Cosine margin within which centroid matches count as tied (the deeper sector wins).
NEAR_TIE = 0.02
#: Rounds of 2-means at most.
MAX_ITERATIONS = 20
#: Two split centres at least this similar mean the sector is one blob.
_SAME_DIRECTION = 1.0 - 1e-6
_TOPICS_PER_CHILD = 5
_FOLD = re.compile(r"[\s_\-]+")


def normalise_topic(term: str) -> str:
    """Canonical tag or topic: lower case, no leading ``#``, ``_``/``-``/spaces folded."""
    return _FOLD.sub(" ", term.strip().lstrip("#").lower()).strip()


@dataclass(frozen=True, slots=True, eq=False)
class SectorInfo:
    """What the pure sector logic needs to know about one sector.

    ``decay_multiplier`` > 0 (>1 fades faster, <1 slower); ``topics`` are the
    tags that route memories to it (normalised on creation); ``centroid`` the
    mean L2-normalised embedding of its memories, or None; ``size`` the memories
    in it now; it should be split when ``size`` exceeds ``max_size``.
    """

    id: str
    name: str
    parent_id: str | None
    decay_multiplier: float
    topics: tuple[str, ...]
    centroid: np.ndarray | None
    size: int
    max_size: int

    def __post_init__(self) -> None:
        if not (self.decay_multiplier > 0 and np.isfinite(self.decay_multiplier)):
            raise InvalidInput(
                f"sector decay multiplier must be a positive number; got {self.decay_multiplier!r}",
                field="decay_multiplier",
            )
        if self.size < 0 or self.max_size < 1:
            raise InvalidInput(
                f"sector size must be >= 0 and max size >= 1; got {self.size}, {self.max_size}",
                field="max_size",
            )
        topics = dict.fromkeys(t for t in map(normalise_topic, self.topics) if t)
        object.__setattr__(self, "topics", tuple(topics))

    @property
    def needs_split(self) -> bool:
        """Whether the sector holds more memories than its ``max_size``."""
        return self.size > self.max_size

    @classmethod
    def from_sector(cls, sector: Sector) -> SectorInfo:
        """The pure view of a stored :class:`~kenning.lifecycle.model.Sector`."""
        return cls(
            id=sector.id,
            name=sector.name,
            parent_id=sector.parent_id,
            decay_multiplier=sector.decay_multiplier,
            topics=sector.topics,
            centroid=sector.centroid,
            size=sector.size,
            max_size=sector.max_size,
        )


@dataclass(frozen=True, slots=True, eq=False)
class SplitPlan:
    """How to split ``parent_id`` into two children.

    ``children`` holds exactly two ``(name, topics, centroid)`` triples;
    ``assignment`` maps each member's memory id to its child's index (0 or 1).
    """

    parent_id: str
    children: tuple[tuple[str, tuple[str, ...], np.ndarray], ...]
    assignment: Mapping[str, int]


# -- helpers --------------------------------------------------------------------------------


def _unit(vector: np.ndarray | None) -> np.ndarray | None:
    """``vector`` as a flat float64 unit vector, or None when it is missing, zero or not finite."""
    if vector is None:
        return None
    flat = np.asarray(vector, dtype=np.float64).ravel()
    norm = float(np.linalg.norm(flat))
    if flat.size == 0 or not np.isfinite(norm) or norm == 0.0:
        return None
    return flat / norm


def _ancestors(sector_id: str, by_id: Mapping[str, SectorInfo]) -> list[SectorInfo]:
    """The sector itself (if known) and its known ancestors, nearest first; stops on a cycle."""
    path: list[SectorInfo] = []
    seen: set[str] = set()
    current: str | None = sector_id
    while current is not None and current not in seen and current in by_id:
        seen.add(current)
        path.append(by_id[current])
        current = by_id[current].parent_id
    return path


def _depth(sector_id: str, by_id: Mapping[str, SectorInfo]) -> int:
    return max(0, len(_ancestors(sector_id, by_id)) - 1)


# -- routing and hierarchy -------------------------------------------------------------------


def assign_sector(
    tags: Sequence[str],
    vector: np.ndarray,
    sectors: Sequence[SectorInfo],
    *,
    min_similarity: float = 0.35,
) -> str | None:
    """The sector a memory with ``tags`` and embedding ``vector`` belongs to, or None.

    1. the deepest sector whose topics share a tag (ties: more shared topics,
       then smaller size, then id);
    2. else the most cosine-similar centroid if at least ``min_similarity``,
       the deepest among those within :data:`NEAR_TIE` of the best;
    3. else None.
    """
    by_id = {s.id: s for s in sectors}
    wanted = {t for t in map(normalise_topic, tags) if t}
    if wanted:
        matches = [(len(wanted.intersection(s.topics)), s) for s in sectors]
        ranked = sorted(
            ((shared, s) for shared, s in matches if shared),
            key=lambda m: (-_depth(m[1].id, by_id), -m[0], m[1].size, m[1].id),
        )
        if ranked:
            return ranked[0][1].id
    unit = _unit(vector)
    if unit is None:
        return None
    scored: list[tuple[float, SectorInfo]] = []
    for sector in sectors:
        centre = _unit(sector.centroid)
        if centre is not None and centre.shape == unit.shape:
            similarity = float(centre @ unit)
            if similarity >= min_similarity:
                scored.append((similarity, sector))
    if not scored:
        return None
    best = max(similarity for similarity, _ in scored)
    near = [m for m in scored if m[0] >= best - NEAR_TIE]
    near.sort(key=lambda m: (-_depth(m[1].id, by_id), -m[0], m[1].id))
    return near[0][1].id


def descendants(sector_id: str, sectors: Sequence[SectorInfo]) -> set[str]:
    """``sector_id`` and every sector below it, recursively (safe on cycles)."""
    children: dict[str, list[str]] = {}
    for sector in sectors:
        if sector.parent_id is not None:
            children.setdefault(sector.parent_id, []).append(sector.id)
    found = {sector_id}
    stack = [sector_id]
    while stack:
        for child in children.get(stack.pop(), ()):
            if child not in found:
                found.add(child)
                stack.append(child)
    return found


def effective_multiplier(sector_id: str | None, sectors: Mapping[str, SectorInfo]) -> float:
    """The product of the decay multipliers from ``sector_id`` up to its root.

    1.0 for None or an unknown sector; a cycle ends the walk (each sector counts once).
    """
    if sector_id is None:
        return 1.0
    product = 1.0
    for sector in _ancestors(sector_id, sectors):
        product *= sector.decay_multiplier
    return product


def update_centroid(centroid: np.ndarray | None, size: int, vector: np.ndarray) -> np.ndarray:
    """The centroid after adding ``vector`` to a sector of ``size`` memories (re-normalised).

    A missing centroid or an empty sector gives the new vector's direction. Raises
    :class:`~kenning.errors.InvalidInput` for a zero vector or a dimension mismatch.
    """
    unit = _unit(vector)
    if unit is None:
        raise InvalidInput("cannot add a zero or non-finite vector to a centroid", field="vector")
    centre = _unit(centroid)
    if centre is None or size <= 0:
        return unit
    if centre.shape != unit.shape:
        raise InvalidInput(
            f"vector has {unit.size} dimensions, the centroid {centre.size}", field="vector"
        )
    merged = _unit(centre * size + unit)
    return unit if merged is None else merged


# -- splitting -------------------------------------------------------------------------------


def _two_means(units: np.ndarray, start: int) -> np.ndarray | None:
    """Labels (0/1) of spherical 2-means from farthest-point centres, or None if degenerate."""
    first = int(np.argmin(units @ units[start]))
    second = int(np.argmin(units @ units[first]))
    if float(units[first] @ units[second]) >= _SAME_DIRECTION:
        return None
    centres = units[[second, first]]
    labels: np.ndarray = (units @ centres[1] > units @ centres[0]).astype(np.int64)
    for _ in range(MAX_ITERATIONS):
        new_centres = _centres(units, labels)
        if new_centres is None:
            return None
        new_labels = (units @ new_centres[1] > units @ new_centres[0]).astype(np.int64)
        if np.array_equal(new_labels, labels):
            break
        labels = new_labels
    return labels


def _centres(units: np.ndarray, labels: np.ndarray) -> np.ndarray | None:
    """The unit mean of each side, or None when a side is empty or sums to zero."""
    rows = []
    for k in (0, 1):
        centre = _unit(units[labels == k].sum(axis=0)) if np.any(labels == k) else None
        if centre is None:
            return None
        rows.append(centre)
    return np.vstack(rows)


def _distinctive(mine: Counter[str], n_mine: int, theirs: Counter[str], n_theirs: int) -> list[str]:
    """Terms more common (by share of members) on this side than the other, best first."""
    scored = [
        (count / n_mine - theirs.get(term, 0) / n_theirs, count, term)
        for term, count in mine.items()
    ]
    scored = [s for s in scored if s[0] > 0]
    scored.sort(key=lambda s: (-s[0], -s[1], s[2]))
    return [term for _, _, term in scored[:_TOPICS_PER_CHILD]]


def _content_words(text: str) -> set[str]:
    return {w for w in query_terms(text) if len(w) >= 3 and w not in STOPWORDS and w.isalpha()}


def _document_counts(groups: Iterable[Iterable[str]]) -> Counter[str]:
    counts: Counter[str] = Counter()
    for group in groups:
        counts.update(set(group))
    return counts


def _name_children(
    parent_name: str, labels: np.ndarray, tags: Sequence[set[str]], contents: Sequence[str]
) -> list[tuple[str, tuple[str, ...]]]:
    """(name, topics) of each child from its most distinctive tags, else content words."""
    sides = [[i for i in range(len(labels)) if labels[i] == k] for k in (0, 1)]
    tag_counts = [_document_counts(tags[i] for i in side) for side in sides]
    word_counts = [_document_counts(_content_words(contents[i]) for i in side) for side in sides]
    named: list[tuple[str, tuple[str, ...]]] = []
    for k in (0, 1):
        other = 1 - k
        mine, theirs = len(sides[k]), len(sides[other])
        terms = _distinctive(tag_counts[k], mine, tag_counts[other], theirs)
        if not terms:
            terms = _distinctive(word_counts[k], mine, word_counts[other], theirs)
        name = f"{parent_name}/{terms[0]}" if terms else f"{parent_name}/{k + 1}"
        named.append((name, tuple(terms)))
    return named


def plan_split(
    sector: SectorInfo,
    members: Sequence[tuple[str, np.ndarray, Sequence[str], str]],
    *,
    seed: int = 0,
    min_child_size: int = 2,
) -> SplitPlan | None:
    """Plan a split of ``sector`` into two children, or None if it cannot split meaningfully.

    ``members`` are ``(memory id, vector, tags, content)``. Deterministic for a
    given ``seed`` whatever the order of ``members`` (see the module docstring).
    """
    if min_child_size < 1:
        raise InvalidInput("min_child_size must be at least 1", field="min_child_size")
    ordered = sorted(members, key=lambda m: m[0])
    if len(ordered) < 2 * min_child_size:
        return None
    units = [_unit(m[1]) for m in ordered]
    dims = {u.shape for u in units if u is not None}
    if len(dims) > 1:
        raise InvalidInput("split members have vectors of different dimensions", field="vector")
    if not dims:
        return None
    (shape,) = dims
    matrix = np.vstack([u if u is not None else np.zeros(shape) for u in units])
    labels = _two_means(matrix, seed % len(ordered))
    if labels is None or min(int(np.sum(labels == 0)), int(np.sum(labels == 1))) < min_child_size:
        return None
    centres = _centres(matrix, labels)
    if centres is None:
        return None
    tags = [{t for t in map(normalise_topic, m[2]) if t} for m in ordered]
    names = _name_children(sector.name, labels, tags, [m[3] for m in ordered])
    return SplitPlan(
        parent_id=sector.id,
        children=tuple((name, topics, centres[k]) for k, (name, topics) in enumerate(names)),
        assignment={m[0]: int(labels[i]) for i, m in enumerate(ordered)},
    )
