"""Shared options of the CLI and the few parsing helpers (no validation of values:
the engine checks everything and raises the precise error)."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any

import typer

from ..errors import InvalidInput
from ..models import ALL_SCOPES

JsonOpt = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON on stdout.")]
ScopeOpt = Annotated[
    str | None,
    typer.Option(
        "--scope",
        "-s",
        metavar="SCOPE",
        help="Scope to write: user:U, team:T, persona:P, org:O or "
        "persona_user:P/U (default: your personal scope).",
    ),
]
ScopesOpt = Annotated[
    list[str] | None,
    typer.Option("--scope", "-s", metavar="SCOPE", help="Scope to read (repeatable)."),
]
AllScopesOpt = Annotated[bool, typer.Option("--all-scopes", help="Every scope you may read.")]
LayersOpt = Annotated[
    list[str] | None,
    typer.Option("--layer", metavar="LAYER", help="personal, shared or organization (repeatable)."),
]
KeyOpt = Annotated[
    str | None, typer.Option("--key", metavar="KEY", help="A short label, unique in its scope.")
]
TypeOpt = Annotated[
    str | None,
    typer.Option(
        "--type", metavar="TYPE", help="episodic, semantic (default), procedural or working."
    ),
]
TypesOpt = Annotated[
    list[str] | None, typer.Option("--type", metavar="TYPE", help="Memory type (repeatable).")
]
ImportanceOpt = Annotated[
    int | None,
    typer.Option("--importance", metavar="1-5", help="1 (trivial) to 5 (critical); default 3."),
]
ConfidenceOpt = Annotated[
    float | None,
    typer.Option("--confidence", metavar="0-1", help="Default: the source's reliability."),
]
TagsOpt = Annotated[
    list[str] | None, typer.Option("--tag", metavar="TAG", help="A tag (repeatable).")
]
MetaOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--meta",
        metavar="KEY=VALUE",
        help="Metadata (repeatable); VALUE is parsed as JSON when "
        "it can be, else kept as a string.",
    ),
]
SourceOpt = Annotated[
    str | None,
    typer.Option(
        "--source", metavar="SOURCE", help="user_input, api (default), webhook, mcp_tool, ..."
    ),
]
EventAtOpt = Annotated[
    str | None, typer.Option("--event-at", metavar="ISO", help="When it happened (ISO-8601).")
]
SessionOpt = Annotated[str | None, typer.Option("--session", metavar="ID", help="Session id.")]
AgentOpt = Annotated[str | None, typer.Option("--agent", metavar="ID", help="Agent id.")]
SinceOpt = Annotated[
    str | None, typer.Option("--since", metavar="ISO", help="Event time on or after.")
]
UntilOpt = Annotated[str | None, typer.Option("--until", metavar="ISO", help="Event time before.")]
IdArg = Annotated[str, typer.Argument(metavar="ID", help="Memory id.", show_default=False)]


def read_text(source: str, what: str) -> str:
    """The text of a file, or of stdin for ``-``; an unreadable file is invalid input."""
    try:
        return sys.stdin.read() if source == "-" else Path(source).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidInput(f"cannot read {source}: {exc}", field=what) from None


def stdin_or(value: str) -> str:
    """``value``, or stdin's text when ``value`` is ``-``."""
    return read_text("-", "content") if value == "-" else value


def read_lines(source: str, what: str) -> list[str]:
    """Lines of a file or stdin, split on newlines only.

    (``str.splitlines`` would also split on U+2028 and friends inside JSON strings.)
    """
    return [line.rstrip("\r") for line in read_text(source, what).split("\n")]


def parse_meta(pairs: Sequence[str] | None) -> dict[str, Any] | None:
    """``KEY=VALUE`` pairs into a dict; VALUE as JSON when it parses, else the raw string."""
    if not pairs:
        return None
    out: dict[str, Any] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep or not key.strip():
            raise InvalidInput(f"--meta must be KEY=VALUE; got {pair!r}", field="metadata")
        try:
            out[key.strip()] = json.loads(raw)
        except ValueError:
            out[key.strip()] = raw
    return out


def given(**values: Any) -> dict[str, Any]:
    """Only the options the user actually gave (the engine supplies the defaults)."""
    return {k: v for k, v in values.items() if v is not None and v != []}


def scopes_arg(scope: list[str] | None, all_scopes: bool) -> str | list[str] | None:
    """``--scope``/``--all-scopes`` as the engine's ``scopes`` argument."""
    if all_scopes and scope:
        raise InvalidInput("give --scope or --all-scopes, not both", field="scopes")
    return ALL_SCOPES if all_scopes else (scope or None)


def filters_arg(
    types: list[str] | None,
    tags: list[str] | None,
    since: str | None,
    until: str | None,
    meta: list[str] | None,
    statuses: list[str] | None = None,
) -> dict[str, Any]:
    """The filter options as the engine's ``filters`` mapping (``--tag``: all must match)."""
    return given(
        types=types,
        tags=tags,
        event_after=since,
        event_before=until,
        metadata=parse_meta(meta),
        statuses=statuses,
    )
