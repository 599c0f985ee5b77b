"""The memory graph: extraction, projection in the write transaction, paths.

See :mod:`kenning.graph.model` for the node and edge types.
"""

from .model import (
    RELATION_PRIORS,
    Entity,
    EntityMention,
    GraphEdge,
    GraphPath,
    MemoryLink,
    NodeKind,
    Projection,
    Relation,
)

__all__ = [
    "RELATION_PRIORS",
    "Entity",
    "EntityMention",
    "GraphEdge",
    "GraphPath",
    "MemoryLink",
    "NodeKind",
    "Projection",
    "Relation",
]
