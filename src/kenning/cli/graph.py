"""``kenning graph``: neighbours, entities, paths, links and rebuilds of the memory graph.

Thin like the other commands: parse, call ``Memory.graph``, render; errors are
translated by the root group (see :mod:`kenning.cli.app`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, TypeVar

import typer

from ..graph.api import EntityView, Neighbour
from ..graph.model import GraphPath
from ..models import ALL_SCOPES
from . import render
from .args import JsonOpt, ScopesOpt
from .session import Command, memory_of

__all__ = ["graph_app"]

F = TypeVar("F", bound=Callable[..., Any])

graph_app = typer.Typer(
    help="The memory graph: neighbours, entities, paths, links, rebuild.", no_args_is_help=True
)


def _command(name: str) -> Callable[[F], F]:
    return graph_app.command(name, cls=Command)


def _show_neighbours(items: list[Neighbour]) -> None:
    if not items:
        render.say("no linked memories")
        return
    rows = []
    for n in items:
        e = n.edge
        rows.append(
            (
                e.relation if e else "mentions",
                e.weight if e else None,
                n.memory.id,
                n.memory.scope.key,
                render.cell(n.memory.content, 120),
            )
        )
    render.table(("relation", "weight", render.id_col(), "scope", render.text_col("content")), rows)


def _show_entity(view: EntityView) -> None:
    e = view.entity
    render.say(
        f"{e.label} ({e.kind.value}{', ' + e.entity_type if e.entity_type else ''}): "
        f"{e.mentions} memories"
    )
    rows = [
        (m.id, m.created_at.strftime("%Y-%m-%d"), m.scope.key, render.cell(m.content, 120))
        for m in view.memories
    ]
    if rows:
        render.table((render.id_col(), "created", "scope", render.text_col("content")), rows)
    if view.related:
        render.say("related: " + ", ".join(f"{x.label} ({n})" for x, n in view.related))


def _show_paths(paths: list[GraphPath]) -> None:
    if not paths:
        render.say("no path")
        return
    rows = []
    for n, p in enumerate(paths, 1):
        hops = [p.nodes[0]]
        for rel, node, fwd in zip(
            p.relations, p.nodes[1:], p.forward or (True,) * 99, strict=False
        ):
            hops.append(f"-{rel}->" if fwd else f"<-{rel}-")
            hops.append(node)
        rows.append((n, p.strength, len(p.relations), render.text_cell(" ".join(hops))))
    render.table(("#", "strength", "hops", render.text_col("path")), rows)


@_command("neighbours")
def neighbours(
    ctx: typer.Context,
    memory_id: Annotated[
        str | None, typer.Argument(metavar="[ID]", help="A memory id.", show_default=False)
    ] = None,
    entity: Annotated[
        str | None,
        typer.Option(
            "--entity", "-e", metavar="NAME", help="An entity or topic instead of a memory."
        ),
    ] = None,
    relation: Annotated[
        list[str] | None,
        typer.Option("--relation", "-r", metavar="REL", help="Only these relations (repeatable)."),
    ] = None,
    limit: Annotated[int, typer.Option("--limit", "-n", metavar="N")] = 20,
    as_json: JsonOpt = False,
) -> None:
    """The memories linked to ID (with the links), or those mentioning --entity."""
    items = memory_of(ctx).graph.neighbours(
        memory_id, entity=entity, relations=relation or None, limit=limit
    )
    if as_json:
        render.emit([n.to_dict() for n in items])
    else:
        _show_neighbours(items)


@_command("entity")
def entity(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(metavar="NAME", help="Entity or topic name (or alias).")],
    as_json: JsonOpt = False,
) -> None:
    """Everything you may read about an entity: its memories and related entities."""
    view = memory_of(ctx).graph.entity(name)
    if as_json:
        render.emit(view.to_dict())
    else:
        _show_entity(view)


@_command("paths")
def paths(
    ctx: typer.Context,
    a: Annotated[str, typer.Argument(metavar="A", help="From this memory id.")],
    b: Annotated[str, typer.Argument(metavar="B", help="To this memory id.")],
    hops: Annotated[int, typer.Option("--hops", metavar="N", help="At most N hops (1-6).")] = 3,
    limit: Annotated[int, typer.Option("--limit", "-n", metavar="N")] = 5,
    as_json: JsonOpt = False,
) -> None:
    """The strongest paths between two memories (strength = product of weight x prior)."""
    found = memory_of(ctx).graph.paths(a, b, max_hops=hops, limit=limit)
    if as_json:
        render.emit([p.to_dict() for p in found])
    else:
        _show_paths(found)


@_command("link")
def link(
    ctx: typer.Context,
    a: Annotated[str, typer.Argument(metavar="A", help="From this memory id.")],
    b: Annotated[str, typer.Argument(metavar="B", help="To this memory id.")],
    relation: Annotated[
        str,
        typer.Argument(
            metavar="RELATION",
            help="causes, elaborates, "
            "contrasts, same_series, contradiction, reference, related, ...",
        ),
    ],
    weight: Annotated[float, typer.Option("--weight", "-w", metavar="W", help="In (0, 1].")] = 1.0,
    as_json: JsonOpt = False,
) -> None:
    """Link two memories of one scope (you must be able to change both)."""
    edge = memory_of(ctx).graph.link(a, b, relation, weight)
    if as_json:
        render.emit(edge.to_dict())
    else:
        render.say(f"linked {edge.src} -{edge.relation}-> {edge.dst} (weight {edge.weight:g})")


@_command("rebuild")
def rebuild(
    ctx: typer.Context,
    scope: ScopesOpt = None,
    clear_first: Annotated[
        bool,
        typer.Option(
            "--clear-first",
            help="Delete the graph of these scopes first (co_occurs and typed "
            "links too: they cannot be rebuilt).",
        ),
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """Re-project stored memories into the graph (default: every scope you may write)."""
    mem = memory_of(ctx)
    total = sum(s.total_memories for s in mem.stats(scopes=scope or ALL_SCOPES))
    with render.progress("rebuilding", total) as step:
        report = mem.graph.rebuild(scope or None, clear_first=clear_first, progress=step)
    if as_json:
        render.emit(report.to_dict())
        return
    links = ", ".join(f"{k}={v}" for k, v in sorted(report.links.items())) or "none"
    render.say(
        f"rebuilt {report.memories} memories: {report.mentions} mentions, links {links} "
        f"({report.links_written} new); not rebuildable: "
        f"{', '.join(report.not_rebuilt)}"
    )
