"""Value types of the memory graph (seeds 002 and 003); plain data, no I/O.

Nodes are memories, entities (people, places, things) and topics (tags).
Memories link to entities and topics (``MENTIONS``, ``TAGGED_WITH``) and to
each other with typed, weighted edges (:class:`Relation`). Entities are
resolved within an organization, but a reader only ever sees an entity, an
edge or a path through memories it may read: the graph never widens what a
principal can see.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

__all__ = [
    "Relation",
    "NodeKind",
    "RELATION_PRIORS",
    "EntityMention",
    "MemoryLink",
    "Projection",
    "GraphEdge",
    "Entity",
    "GraphPath",
    "unique_by_norm",
]


class Relation(str, Enum):
    """Types of memory-to-memory edges (DESIGN.md §1, seed 002 §2.2)."""

    CO_OCCURS = "co_occurs"
    SEMANTIC_NEIGHBOR = "semantic_neighbor"
    TEMPORAL_NEXT = "temporal_next"
    CAUSES = "causes"
    ELABORATES = "elaborates"
    CONTRASTS = "contrasts"
    SAME_SERIES = "same_series"
    CONTRADICTION = "contradiction"
    REFERENCE = "reference"
    RELATED = "related"


class NodeKind(str, Enum):
    """What a non-memory node stands for."""

    ENTITY = "entity"  # MENTIONS edges: people, places, organizations, things
    TOPIC = "topic"  # TAGGED_WITH edges: the memory's tags


#: Seed 002 §3.4 relation-type priors (read side); ``episode`` is the prior of
#: the implicit same-episode link, ``related`` of an untyped one.
RELATION_PRIORS: Mapping[str, float] = {
    "causes": 0.90,
    "elaborates": 0.90,
    "same_series": 0.85,
    "contrasts": 0.70,
    "temporal_next": 0.70,
    "co_occurs": 0.55,
    "episode": 0.55,
    "related": 0.50,
    "reference": 0.50,
    "contradiction": 0.50,
    "semantic_neighbor": 0.35,
}


@dataclass(frozen=True, slots=True)
class EntityMention:
    """An entity or topic found in (or given with) one memory.

    ``norm`` is the resolution key (see ``graph.resolve.normalise_name``):
    "Caroline", "caroline's" and "CAROLINE" share one. ``label`` is the
    surface form shown to people; ``entity_type`` the NER label (``PERSON``,
    ``GPE``, ...) or None for topics and key phrases.
    """

    label: str
    norm: str
    kind: NodeKind = NodeKind.ENTITY
    entity_type: str | None = None


@dataclass(frozen=True, slots=True)
class MemoryLink:
    """A directed, weighted edge between two memories (``src`` -> ``dst``).

    ``temporal_next`` runs from the earlier memory to the later one; the
    symmetric relations are stored once and read in both directions.
    """

    src: str
    dst: str
    relation: Relation
    weight: float = 1.0


@dataclass(frozen=True, slots=True)
class Projection:
    """What one write adds to the graph, committed in the write's transaction.

    ``mentions`` maps a memory id to its entities and topics; ``links`` are
    the new memory-to-memory edges (their endpoints are new memories or
    existing ones of the same organization).
    """

    mentions: Mapping[str, Sequence[EntityMention]] = field(default_factory=dict)
    links: Sequence[MemoryLink] = ()

    @property
    def empty(self) -> bool:
        """True when the projection adds nothing."""
        return not self.links and not any(self.mentions.values())


@dataclass(frozen=True, slots=True)
class GraphEdge:
    """An edge as a reader sees it: both endpoints are memories it may read."""

    src: str
    dst: str
    relation: str
    weight: float

    def other(self, memory_id: str) -> str:
        """The endpoint that is not ``memory_id``."""
        return self.dst if self.src == memory_id else self.src

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {"src": self.src, "dst": self.dst, "relation": self.relation, "weight": self.weight}


@dataclass(frozen=True, slots=True)
class Entity:
    """An entity or topic node as a reader sees it.

    ``mentions`` counts only the memories the reader may read.
    """

    id: str
    label: str
    norm: str
    kind: NodeKind
    entity_type: str | None
    mentions: int

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {
            "id": self.id,
            "label": self.label,
            "norm": self.norm,
            "kind": self.kind.value,
            "entity_type": self.entity_type,
            "mentions": self.mentions,
        }


@dataclass(frozen=True, slots=True)
class GraphPath:
    """A chain of memories joined by edges (seed 003's multi-hop query).

    ``nodes`` has one more element than ``relations``; ``strength`` is the
    product over the hops of edge weight x relation prior. ``forward[i]`` is
    False when hop ``i`` walks a directed edge against its direction (for
    ``temporal_next``: later -> earlier).
    """

    nodes: tuple[str, ...]
    relations: tuple[str, ...]
    strength: float
    forward: tuple[bool, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {
            "nodes": list(self.nodes),
            "relations": list(self.relations),
            "strength": self.strength,
            "forward": list(self.forward),
        }


def unique_by_norm(mentions: Iterable[EntityMention]) -> list[EntityMention]:
    """``mentions`` without empty norms and without repeats of a (kind, norm); first wins."""
    seen: set[tuple[NodeKind, str]] = set()
    out: list[EntityMention] = []
    for m in mentions:
        key = (m.kind, m.norm)
        if m.norm and key not in seen:
            seen.add(key)
            out.append(m)
    return out
