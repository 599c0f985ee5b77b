"""A short live demo of the engine on a local store (``make run``).

Run with ``python -m kenning.demo [--db PATH]``. It writes a few memories in
several scopes, recalls them with score breakdowns, shows that scopes isolate
users, corrects a memory and forgets one, then ingests a short conversation
(facts extracted, a changed value superseded) and prints the memory hint.
Until the server exists this is what ``make run`` starts.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from .engine import Memory
from .errors import NotFound, PermissionDenied
from .models import Principal, Role, Scope, TeamRole

__all__ = ["main"]

_SEED = [
    ("alice", "user:alice", "Alice prefers green tea over coffee in the morning"),
    ("alice", "user:alice", "Alice's daughter Mia starts school in Lisbon in September"),
    ("alice", "team:platform", "The platform team deploys with Kubernetes and Traefik"),
    ("alice", "team:platform", "Decision: Postgres 16 is the primary database for billing"),
    ("bob", "user:bob", "Bob is allergic to peanuts"),
    ("admin", "org:acme", "Company policy: remote work is allowed three days a week"),
    ("admin", "persona:helpdesk", "Refunds are possible within 30 days of purchase"),
]


def _principals() -> dict[str, Principal]:
    team = {"platform": TeamRole.MEMBER}
    return {
        "alice": Principal(
            "acme", "alice", frozenset({Role.MEMBER}), team, frozenset({"helpdesk"})
        ),
        "bob": Principal("acme", "bob", frozenset({Role.MEMBER})),
        "admin": Principal("acme", "admin", frozenset({Role.ADMIN})),
    }


def _show(console: Console, title: str, mem: Memory, query: str, who: Principal) -> None:
    result = mem.recall(query, 3, explain=True, principal=who)
    table = Table(title=f"{title}: [italic]{query}[/] (as {who.user_id})", title_justify="left")
    for col in ("score", "scope", "memory", "relevance", "conf", "temporal"):
        table.add_column(col)
    for hit in result:
        e = hit.explain
        assert e is not None
        table.add_row(
            f"{hit.score:.3f}",
            hit.memory.scope.key,
            hit.memory.content,
            f"{e.relevance:.2f}",
            f"{e.confidence:.2f}",
            f"{e.temporal:.2f}",
        )
    console.print(table)
    console.print(f"  [dim]timings ms: {result.timings_ms}[/]")


def _lifecycle(console: Console, mem: Memory, alice: Principal) -> None:
    """A conversation in, facts out, a contradiction superseded, and the prompt hint."""
    console.rule("conversation and lifecycle")
    result = mem.ingest(
        [
            {"role": "user", "name": "Alice", "content": "I moved to Porto last month."},
            {"role": "assistant", "name": "helper", "content": "Nice! How is it going?"},
            {"role": "user", "name": "Alice", "content": "I love the riverside walks."},
        ],
        "demo-chat",
        principal=alice,
    )
    for fact in result.facts:
        console.print(f"  fact [bold]{fact.action.value}[/]: {fact.record.content}")
    first = mem.remember("Alice's badge number is 4471", principal=alice)
    (change,) = mem.write([{"content": "Alice's badge number is 5102"}], principal=alice)
    console.print(
        f"  '{change.record.content}': {change.action.value} "
        f"({change.reason}); the old value stays in history"
    )
    assert change.target in (first.id, None)
    console.print("memory hint for a system prompt:")
    console.print(
        mem.build_hint(query="where does Alice live?", max_chars=600, principal=alice),
        markup=False,
        highlight=False,
    )


def main(argv: list[str] | None = None) -> None:
    """Run the demo."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--db", type=Path, help="store file (default: a temporary one)")
    args = parser.parse_args(argv)
    console = Console()
    with tempfile.TemporaryDirectory(prefix="kenning-demo-") as tmp:
        path = args.db or Path(tmp) / "demo.db"
        console.rule("[bold]kenning[/] — live demo of the embedded engine")
        t = time.perf_counter()
        who = _principals()
        with Memory(path, principal=who["admin"]) as mem:
            for user, scope, text in _SEED:
                mem.remember(text, scope=scope, principal=who[user], source="user_input")
            console.print(
                f"stored {len(_SEED)} memories in {path} "
                f"({time.perf_counter() - t:.1f}s incl. model load)"
            )
            _show(console, "recall", mem, "what does Alice drink?", who["alice"])
            _show(console, "recall", mem, "which database do we use for billing?", who["alice"])
            _show(console, "isolation", mem, "food allergies", who["alice"])
            bob_note = mem.list(scopes="user:bob", principal=who["bob"]).items[0]
            try:
                mem.get(bob_note.id, principal=who["alice"])
            except NotFound:
                console.print("[green]alice cannot see bob's personal memory (NotFound)[/]")
            try:
                mem.remember("I am the admin now", scope=Scope.org("acme"), principal=who["alice"])
            except PermissionDenied as exc:
                console.print(f"[green]alice cannot write the org layer:[/] {exc}")
            tea = mem.recall("Alice tea", 1, principal=who["alice"])[0].memory
            mem.update(
                tea.id, content="Alice switched from green tea to oolong", principal=who["alice"]
            )
            console.print("history of the corrected memory:")
            for entry in mem.history(tea.id, principal=who["alice"]):
                console.print(f"  v{entry.version} {entry.op:<8} {entry.content}")
            mem.forget(tea.id, principal=who["alice"])
            ops = [e.op for e in mem.history(tea.id, principal=who["alice"])]
            console.print(f"forgotten; history keeps: {ops}")
            _lifecycle(console, mem, who["alice"])
            for layer in mem.stats(principal=who["admin"]):
                console.print(
                    f"  layer {layer.layer}: {layer.total_memories} memories, "
                    f"avg confidence {layer.avg_confidence}"
                )
        console.rule("done — try `kenning --help`")


if __name__ == "__main__":
    main()
