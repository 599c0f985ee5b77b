"""Store-neutral rules of the graph tables: entity ids, edge direction, edge origin.

* An entity's id is derived from (organization, kind, norm), so a writer never
  has to *read* an entity (which row-level security may hide from it when all
  of its mentions are in scopes the writer cannot see) to link a mention to it.
* Symmetric relations are stored once, ``src`` < ``dst``; a reader walks them
  both ways. ``temporal_next``, ``causes``, ``elaborates`` and ``reference``
  are directed.
* Every link records its origin: ``content`` (derived from a memory's text:
  ``semantic_neighbor`` and an extractor's typed relations; refreshed when the
  text changes), ``batch`` (``co_occurs``), ``time`` (``temporal_next``) or
  ``api`` (added by :meth:`kenning.graph.api.Graph.link`; kept on update).
"""

from __future__ import annotations

import hashlib

from .model import MemoryLink, Relation

__all__ = [
    "SYMMETRIC_RELATIONS",
    "ORIGINS",
    "entity_id",
    "origin_of",
    "canonical",
]

SYMMETRIC_RELATIONS = frozenset(
    {
        Relation.CO_OCCURS.value,
        Relation.SEMANTIC_NEIGHBOR.value,
        Relation.CONTRASTS.value,
        Relation.SAME_SERIES.value,
        Relation.CONTRADICTION.value,
        Relation.RELATED.value,
    }
)

ORIGINS = ("content", "batch", "time", "api")


def entity_id(org_id: str, kind: str, norm: str) -> str:
    """The stable id of the entity node (org, kind, norm): ``e`` + 24 hex digits."""
    digest = hashlib.blake2b(f"{org_id}\x1f{kind}\x1f{norm}".encode(), digest_size=12)
    return "e" + digest.hexdigest()


def origin_of(relation: str) -> str:
    """Where a projected (not API-made) link of this relation comes from."""
    if relation == Relation.CO_OCCURS.value:
        return "batch"
    if relation == Relation.TEMPORAL_NEXT.value:
        return "time"
    return "content"


def canonical(link: MemoryLink) -> MemoryLink:
    """``link`` with a symmetric relation's endpoints in (smaller, larger) order."""
    rel = Relation(link.relation)
    if rel.value in SYMMETRIC_RELATIONS and link.src > link.dst:
        return MemoryLink(link.dst, link.src, rel, link.weight)
    return (
        link
        if isinstance(link.relation, Relation)
        else MemoryLink(link.src, link.dst, rel, link.weight)
    )
