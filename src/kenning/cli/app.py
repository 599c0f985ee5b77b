"""The ``kenning`` commands: parse arguments, call :class:`~kenning.Memory`, render.

No business logic lives here. Every :class:`~kenning.errors.KenningError` is
translated in one place (:class:`~kenning.cli.session.RootGroup`): ``error:
<message>`` on stderr (plus a JSON error object on stdout with ``--json``) and
exit code 2 invalid input, 3 permission denied, 4 not found, 5 conflict, 1 any
other kenning error. The command groups in :mod:`kenning.cli.graph`,
:mod:`kenning.cli.admin` and :mod:`kenning.cli.mcp` are mounted here; they
share :mod:`kenning.cli.session` with this module and never import it.
"""

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, TextIO, TypeVar, cast

import typer

from ..audit import door
from ..bench.cli import bench_app
from ..errors import (
    InvalidInput,
)
from ..migrate import copy_store, count_memories, move_org, open_stores
from ..models import ALL_SCOPES, DEFAULT_ORG, Role
from ..stores import database_url, display_url, location
from . import render
from .admin import admin_app, serve_command
from .args import (
    AgentOpt,
    AllScopesOpt,
    ConfidenceOpt,
    EventAtOpt,
    IdArg,
    ImportanceOpt,
    JsonOpt,
    KeyOpt,
    LayersOpt,
    MetaOpt,
    ScopeOpt,
    ScopesOpt,
    SessionOpt,
    SinceOpt,
    SourceOpt,
    TagsOpt,
    TypeOpt,
    TypesOpt,
    UntilOpt,
    filters_arg,
    given,
    parse_meta,
    read_lines,
    scopes_arg,
    stdin_or,
)
from .backup import backup_command, restore_command
from .graph import graph_app
from .mcp import mcp_command
from .session import EXIT_CODES, Command, RootGroup, State, command, memory_of, state_of

__all__ = ["app", "main", "EXIT_CODES"]

F = TypeVar("F", bound=Callable[..., Any])

app = typer.Typer(
    cls=RootGroup,
    name="kenning",
    help="Long-term memory for AI agents: remember, recall, inspect and move memories.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_show_locals=False,
)


def _command(name: str) -> Callable[[F], F]:
    return command(app, name)


def _version(value: bool) -> None:
    if value:
        from .. import __version__

        render.say(f"kenning {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    ctx: typer.Context,
    db: Annotated[
        str | None,
        typer.Option(
            "--db",
            metavar="PATH|URL",
            help="A SQLite file, sqlite:///PATH or "
            "postgresql://USER@HOST/DB (default: $KENNING_DATABASE_URL, else "
            "$KENNING_HOME/kenning.db, else ~/.kenning/kenning.db).",
        ),
    ] = None,
    org: Annotated[
        str, typer.Option("--org", metavar="ID", help="Your organization.")
    ] = DEFAULT_ORG,
    user: Annotated[
        str | None,
        typer.Option(
            "--user", metavar="ID", help="Your user id (default: 'default', an org admin)."
        ),
    ] = None,
    role: Annotated[
        Role | None,
        typer.Option("--role", help="Org role (default: admin for the default user, else member)."),
    ] = None,
    team: Annotated[
        list[str] | None,
        typer.Option("--team", metavar="ID", help="A team you are a member of (repeatable)."),
    ] = None,
    persona: Annotated[
        list[str] | None,
        typer.Option("--persona", metavar="ID", help="A persona you may use (repeatable)."),
    ] = None,
    active_persona: Annotated[
        str | None, typer.Option("--active-persona", metavar="ID", help="The persona you act as.")
    ] = None,
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_version, is_eager=True, help="Show the version and exit."
        ),
    ] = False,
) -> None:
    """kenning: scoped long-term memory for agents, local-first."""
    state = State(db, org, user, role, team or [], persona or [], active_persona)
    ctx.obj = state
    ctx.with_resource(door("cli"))  # what the command does is audited as the CLI's
    ctx.call_on_close(state.close)


# -- commands ----------------------------------------------------------------------------


@_command("init")
def init(ctx: typer.Context, as_json: JsonOpt = False) -> None:
    """Create the database and show where it lives."""
    state = state_of(ctx)
    mem = state.open()
    who = mem.principal
    roles = sorted(r.value for r in who.roles)
    info = {
        "database": location(mem.settings),
        "embedder": mem.embedder.model_id,
        "dim": mem.embedder.dim,
        "reranker": mem.settings.retrieval.rerank.model,
        "principal": {"org_id": who.org_id, "user_id": who.user_id, "roles": roles},
    }
    state.close()
    if as_json:
        render.emit(info)
        return
    render.say(f"database:  {info['database']}")
    render.say(f"embedder:  {info['embedder']} ({info['dim']} dimensions)")
    render.say(f"reranker:  {info['reranker'] or 'off (KENNING_RETRIEVAL_RERANK_MODEL)'}")
    render.say(f"principal: org={who.org_id} user={who.user_id} roles={','.join(roles)}")


@_command("remember")
def remember(
    ctx: typer.Context,
    content: Annotated[
        str | None,
        typer.Argument(
            metavar="[CONTENT]", help="The memory text; - reads it from stdin.", show_default=False
        ),
    ] = None,
    file: Annotated[
        str | None,
        typer.Option(
            "--file",
            "-f",
            metavar="FILE",
            help="JSONL batch (- for stdin): one object of remember "
            "fields per line; options given here are defaults for every line. All or nothing.",
        ),
    ] = None,
    scope: ScopeOpt = None,
    key: KeyOpt = None,
    memory_type: TypeOpt = None,
    importance: ImportanceOpt = None,
    confidence: ConfidenceOpt = None,
    tag: TagsOpt = None,
    meta: MetaOpt = None,
    source: SourceOpt = None,
    event_at: EventAtOpt = None,
    session: SessionOpt = None,
    agent: AgentOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Store a memory (or a batch of them with --file)."""
    fields = given(
        scope=scope,
        key=key,
        memory_type=memory_type,
        importance=importance,
        confidence=confidence,
        tags=tag,
        metadata=parse_meta(meta),
        source=source,
        event_at=event_at,
        session_id=session,
        agent_id=agent,
    )
    if (content is None) == (file is None):
        raise InvalidInput(
            "give CONTENT (- for stdin) or --file FILE, not both or neither", field="content"
        )
    if content is not None:
        record = memory_of(ctx).remember(stdin_or(content), **fields)
        if as_json:
            render.emit(record.to_dict())
        else:
            render.say(
                f"remembered {record.id} in {record.scope.key} (confidence {record.confidence:.2f})"
            )
        return
    assert file is not None
    items: list[Any] = []
    for n, line in enumerate(read_lines(file, "file"), 1):
        if line.strip():
            try:
                item = json.loads(line)
            except ValueError as exc:
                msg = f"{file} line {n}: not valid JSON ({exc})"
                raise InvalidInput(msg, field="file") from None
            items.append({**fields, **item} if isinstance(item, dict) else item)
    mem = memory_of(ctx)
    with render.progress("remembering", len(items)) as step:
        records = mem.remember_many(items, progress=step)
    if as_json:
        render.emit({"stored": len(records), "ids": [r.id for r in records]})
    else:
        render.say(f"remembered {len(records)} memories")


@_command("recall")
def recall(
    ctx: typer.Context,
    query: Annotated[str, typer.Argument(metavar="QUERY", help="What to look for.")],
    k: Annotated[int, typer.Option("-k", "--k", metavar="N", help="How many hits.")] = 10,
    scope: ScopesOpt = None,
    all_scopes: AllScopesOpt = False,
    layer: LayersOpt = None,
    memory_type: TypesOpt = None,
    tag: TagsOpt = None,
    since: SinceOpt = None,
    until: UntilOpt = None,
    meta: MetaOpt = None,
    min_confidence: Annotated[
        float | None,
        typer.Option("--min-confidence", metavar="0-1", help="Drop hits below this confidence."),
    ] = None,
    explain: Annotated[
        bool, typer.Option("--explain", help="Show the score breakdown and per-stage timings.")
    ] = False,
    min_score: Annotated[
        float | None,
        typer.Option(
            "--min-score", metavar="0-1", help="Drop hits whose calibrated score is below this."
        ),
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """The memories that best answer QUERY, ranked."""
    result = memory_of(ctx).recall(
        query,
        k,
        scopes=scopes_arg(scope, all_scopes),
        layers=layer or None,
        filters=filters_arg(memory_type, tag, since, until, meta),
        min_confidence=min_confidence,
        explain=explain,
        min_score=min_score,
    )
    if as_json:
        render.emit(result.to_dict())
    else:
        render.show_recall(result, explain)


@_command("get")
def get(ctx: typer.Context, memory_id: IdArg, as_json: JsonOpt = False) -> None:
    """Show one memory."""
    record = memory_of(ctx).get(memory_id)
    if as_json:
        render.emit(record.to_dict())
    else:
        render.show_record(record)


@_command("list")
def list_(
    ctx: typer.Context,
    scope: ScopesOpt = None,
    all_scopes: AllScopesOpt = False,
    layer: LayersOpt = None,
    memory_type: TypesOpt = None,
    tag: TagsOpt = None,
    since: SinceOpt = None,
    until: UntilOpt = None,
    meta: MetaOpt = None,
    status: Annotated[
        list[str] | None,
        typer.Option(
            "--status",
            metavar="STATUS",
            help="active (default), pending_review, archived or superseded (repeatable).",
        ),
    ] = None,
    limit: Annotated[int, typer.Option("--limit", metavar="N", help="Page size.")] = 50,
    cursor: Annotated[
        str | None,
        typer.Option(
            "--cursor", metavar="CURSOR", help="The next cursor the previous page printed."
        ),
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Memories newest first, one page at a time."""
    page = memory_of(ctx).list(
        scopes=scopes_arg(scope, all_scopes),
        layers=layer or None,
        limit=limit,
        cursor=cursor,
        filters=filters_arg(memory_type, tag, since, until, meta, status),
    )
    if as_json:
        render.emit(page.to_dict())
        return
    render.show_records(page.items)
    if page.next_cursor:
        render.say(f"next cursor: {page.next_cursor}")


@_command("update")
def update(
    ctx: typer.Context,
    memory_id: IdArg,
    content: Annotated[
        str | None,
        typer.Option("--content", metavar="TEXT", help="New text (- reads stdin); re-embedded."),
    ] = None,
    key: KeyOpt = None,
    tag: Annotated[
        list[str] | None,
        typer.Option("--tag", metavar="TAG", help="Replaces all tags (repeatable)."),
    ] = None,
    clear_tags: Annotated[bool, typer.Option("--clear-tags", help="Remove every tag.")] = False,
    importance: ImportanceOpt = None,
    confidence: ConfidenceOpt = None,
    memory_type: TypeOpt = None,
    meta: Annotated[
        list[str] | None,
        typer.Option(
            "--meta",
            metavar="KEY=VALUE",
            help="Replaces the whole metadata object "
            "(repeatable; VALUE parsed as JSON when possible).",
        ),
    ] = None,
    event_at: EventAtOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Change fields of a memory (a new version; history keeps the old one)."""
    if tag and clear_tags:
        raise InvalidInput("give --tag or --clear-tags, not both", field="tags")
    changes = given(
        content=None if content is None else stdin_or(content),
        key=key,
        tags=tag,
        importance=importance,
        confidence=confidence,
        memory_type=memory_type,
        metadata=parse_meta(meta),
        event_at=event_at,
    )
    if clear_tags:
        changes["tags"] = []
    if not changes:
        raise InvalidInput(
            "nothing to update: give --content, --key, --tag, --clear-tags, "
            "--importance, --confidence, --type, --meta or --event-at",
            field="changes",
        )
    record = memory_of(ctx).update(memory_id, **changes)
    if as_json:
        render.emit(record.to_dict())
    else:
        render.say(f"updated {record.id} (version {record.version})")


@_command("upsert")
def upsert(
    ctx: typer.Context,
    key: Annotated[str, typer.Argument(metavar="KEY", help="The memory's key in its scope.")],
    content: Annotated[str, typer.Argument(metavar="CONTENT", help="The text; - reads stdin.")],
    scope: ScopeOpt = None,
    memory_type: TypeOpt = None,
    importance: ImportanceOpt = None,
    confidence: ConfidenceOpt = None,
    tag: TagsOpt = None,
    meta: MetaOpt = None,
    source: SourceOpt = None,
    event_at: EventAtOpt = None,
    session: SessionOpt = None,
    agent: AgentOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Create the memory with KEY in the scope, or update it when it exists."""
    fields = given(
        memory_type=memory_type,
        importance=importance,
        confidence=confidence,
        tags=tag,
        metadata=parse_meta(meta),
        source=source,
        event_at=event_at,
        session_id=session,
        agent_id=agent,
    )
    record = memory_of(ctx).upsert(key, stdin_or(content), scope=scope, **fields)
    if as_json:
        render.emit(record.to_dict())
    else:
        render.say(f"upserted {record.id} (key {record.key!r}, version {record.version})")


@_command("forget")
def forget(
    ctx: typer.Context,
    memory_id: IdArg,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Delete a memory for good (its history keeps only who and when)."""
    mem = memory_of(ctx)
    if not yes:
        record = mem.get(memory_id)
        if not sys.stdin.isatty():
            raise InvalidInput(
                f"refusing to forget {record.id} without confirmation: stdin is "
                "not a terminal; pass --yes",
                field="yes",
            )
        preview = record.content if len(record.content) <= 60 else record.content[:59] + "…"
        if not typer.confirm(f"Forget {record.id} ({preview!r})?"):
            render.say("aborted", err=True)
            raise typer.Exit(1)
    mem.forget(memory_id)
    if as_json:
        render.emit({"forgotten": memory_id})
    else:
        render.say(f"forgot {memory_id}")


def _status_command(name: str, done: str, doc: str) -> None:
    def command(ctx: typer.Context, memory_id: IdArg, as_json: JsonOpt = False) -> None:
        record = getattr(memory_of(ctx), name)(memory_id)
        if as_json:
            render.emit(record.to_dict())
        else:
            render.say(f"{done} {record.id} (status {record.status.value})")

    command.__doc__ = doc
    _command(name)(command)


_status_command("archive", "archived", "Take a memory out of recall (undo with restore).")
_status_command("restore", "restored", "Make an archived memory active again.")


@_command("feedback")
def feedback(
    ctx: typer.Context,
    memory_id: IdArg,
    kind: Annotated[
        str,
        typer.Argument(metavar="KIND", help="upvote, downvote, validate, contradict or confirm."),
    ],
    as_json: JsonOpt = False,
) -> None:
    """Adjust a memory's confidence."""
    record = memory_of(ctx).feedback(memory_id, kind)
    if as_json:
        render.emit(record.to_dict())
    else:
        render.say(f"{kind}: {record.id} confidence now {record.confidence:.3f}")


@_command("history")
def history(ctx: typer.Context, memory_id: IdArg, as_json: JsonOpt = False) -> None:
    """Every change to a memory, oldest first."""
    entries = memory_of(ctx).history(memory_id)
    if as_json:
        render.emit([h.to_dict() for h in entries])
    else:
        render.show_history(entries)


@_command("stats")
def stats(ctx: typer.Context, scope: ScopesOpt = None, as_json: JsonOpt = False) -> None:
    """Per-layer statistics of the memories you may read."""
    layers = memory_of(ctx).stats(scopes=scope or ALL_SCOPES)
    if as_json:
        render.emit([s.to_dict() for s in layers])
    else:
        render.show_stats(layers)


@_command("consolidate")
def consolidate(
    ctx: typer.Context,
    scope: ScopesOpt = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Report what would happen; write nothing.")
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """Consolidate: age working memory, forget the weak, apply retention and capacity,
    promote repeated episodes, split full sectors (reversible with restore)."""
    report = memory_of(ctx).consolidate(scopes=scope or ALL_SCOPES, dry_run=dry_run)
    if as_json:
        render.emit(report.to_dict())
        return
    counts = ", ".join(f"{op} {n}" for op, n in sorted(report.counts.items())) or "nothing to do"
    verb = "would do" if dry_run else "did"
    render.say(f"scanned {report.scanned} memories; {verb}: {counts}")
    for action in report.actions:
        render.say(f"  {action.op:<11} {action.memory_id}  {action.reason}")


@_command("hint")
def hint(
    ctx: typer.Context,
    query: Annotated[
        str | None,
        typer.Option("--query", "-q", help="Best memories for this; default: top by priority."),
    ] = None,
    max_chars: Annotated[int, typer.Option(help="Size cap of the block.")] = 6000,
    persona: Annotated[str | None, typer.Option(help="Act as this persona.")] = None,
    as_json: JsonOpt = False,
) -> None:
    """The memory block for a system prompt (fenced as data)."""
    text = memory_of(ctx).build_hint(query=query, max_chars=max_chars, persona=persona)
    if as_json:
        render.emit({"hint": text})
    else:
        typer.echo(text)


@_command("reinforce")
def reinforce(ctx: typer.Context, memory_id: IdArg, as_json: JsonOpt = False) -> None:
    """Strengthen a memory now (its decay restarts)."""
    mem = memory_of(ctx)
    record = mem.reinforce(memory_id)
    if as_json:
        render.emit({**record.to_dict(), "current_strength": mem.strength(record.id)})
    else:
        render.say(f"reinforced {record.id}: strength {mem.strength(record.id):.3f}")


@_command("ingest")
def ingest(
    ctx: typer.Context,
    session: Annotated[str, typer.Argument(metavar="SESSION", help="The session id.")],
    source: Annotated[
        Path,
        typer.Argument(
            metavar="FILE",
            help="JSON list of messages ({content, role, name, at}); - for stdin.",
            allow_dash=True,
        ),
    ],
    scope: ScopeOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Store a conversation's messages and the facts extracted from them."""
    text = sys.stdin.read() if str(source) == "-" else source.read_text(encoding="utf-8")
    try:
        messages = json.loads(text)
    except ValueError as exc:
        raise InvalidInput(f"{source}: not JSON ({exc})", field="messages") from None
    result = memory_of(ctx).ingest(messages, session, scope=scope)
    if as_json:
        render.emit(result.to_dict())
        return
    render.say(
        f"stored {len(result.turns)} messages, {len(result.facts)} facts "
        f"({result.aged} turns left the context window)"
    )
    for fact in result.facts:
        render.say(f"  {fact.action.value:<9} {fact.record.id}  {fact.record.content}")


@_command("export")
def export(
    ctx: typer.Context,
    out: Annotated[
        Path | None,
        typer.Option("--out", "-o", metavar="FILE", help="Write to FILE (default: stdout)."),
    ] = None,
    scope: ScopesOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Export memories (record, vector, history) as JSON lines."""
    mem = memory_of(ctx)
    scopes = scope or ALL_SCOPES
    if out is None:
        count = mem.export_jsonl(sys.stdout, scopes=scopes)
        render.say(f"exported {count} memories", err=True)
        return
    total = sum(s.total_memories for s in mem.stats(scopes=scopes))
    part = out.with_name(out.name + ".part")
    try:
        with part.open("w", encoding="utf-8") as fh, render.progress("exporting", total) as step:
            count = mem.export_jsonl(cast(TextIO, render.Ticker(fh, step)), scopes=scopes)
        part.replace(out)
    except OSError as exc:
        raise InvalidInput(f"cannot write {out}: {exc.strerror or exc}", field="out") from None
    finally:
        part.unlink(missing_ok=True)
    if as_json:
        render.emit({"exported": count, "path": str(out)})
    else:
        render.say(f"exported {count} memories to {out}")


_IMPORT_FORMATS = ("kenning", "mem0", "jsonl", "csv")


@_command("import")
def import_(
    ctx: typer.Context,
    file: Annotated[str, typer.Argument(metavar="FILE", help="The file to import (- for stdin).")],
    from_: Annotated[
        str,
        typer.Option(
            "--from",
            metavar="FORMAT",
            help="kenning (an export of kenning, lossless), mem0 (the JSON of mem0's "
            "get_all), jsonl or csv (rows through --map).",
        ),
    ] = "kenning",
    mapping: Annotated[
        list[str] | None,
        typer.Option(
            "--map",
            metavar="FIELD=COLUMN,...",
            help="jsonl/csv: which column holds each field, e.g. "
            "content=text,user=uid,created_at=ts (repeatable). Columns named like "
            "a field need none; other columns are kept as metadata.",
        ),
    ] = None,
    scope: Annotated[
        str | None,
        typer.Option(
            "--scope",
            metavar="SCOPE",
            help="mem0/jsonl/csv: put every memory in this scope instead of the one "
            "its user/agent ids name.",
        ),
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Import memories; every row is checked before anything is written, all in one go.

    A re-import of the same mem0, JSONL or CSV file adds nothing twice: rows
    already imported unchanged are skipped, changed ones are updated.
    """
    import io
    from typing import Literal

    from ..importers import import_mem0, import_table
    from .args import read_text

    if from_ not in _IMPORT_FORMATS:
        raise InvalidInput(
            f"--from must be one of {', '.join(_IMPORT_FORMATS)}; got {from_!r}", field="from"
        )
    if mapping and from_ not in ("jsonl", "csv"):
        raise InvalidInput("--map applies to --from jsonl or csv", field="map")
    if from_ == "kenning":
        if scope is not None:
            raise InvalidInput("--scope applies to --from mem0, jsonl or csv", field="scope")
        lines = read_lines(file, "file")
        mem = memory_of(ctx)
        with render.progress("importing", sum(1 for line in lines if line.strip())) as step:
            count = mem.import_jsonl(lines, progress=step)
        if as_json:
            render.emit({"imported": count})
        else:
            render.say(f"imported {count} memories")
        return
    text = read_text(file, "file")
    mem = memory_of(ctx)
    with render.progress("importing", None) as step:
        if from_ == "mem0":
            try:
                data = json.loads(text)
            except ValueError as exc:
                raise InvalidInput(f"{file}: not JSON ({exc})", field="file") from None
            report = import_mem0(mem, data, scope=scope, progress=step)
        else:
            rows = io.StringIO(text, newline="")
            fmt: Literal["jsonl", "csv"] = "jsonl" if from_ == "jsonl" else "csv"
            report = import_table(mem, rows, fmt, mapping, scope=scope, progress=step)
    if as_json:
        render.emit({"imported": len(report.added) + len(report.updated), **report.to_dict()})
    else:
        render.say(
            f"imported {len(report.added) + len(report.updated)} memories from {from_}: "
            f"{len(report.added)} added, {len(report.updated)} updated, "
            f"{report.unchanged} unchanged"
        )


@_command("migrate")
def migrate(
    to_url: Annotated[
        str,
        typer.Option(
            "--to",
            metavar="URL",
            help="Where to copy it (created when missing; must not hold "
            "any of the source's organizations). With --org: a postgresql:// URL, "
            "or 'home' for the home database.",
            show_default=False,
        ),
    ],
    from_url: Annotated[
        str | None,
        typer.Option(
            "--from",
            metavar="URL",
            help="The store to copy: sqlite:///PATH, postgresql://… or a file path. "
            "With --org: the home database (default KENNING_DATABASE_URL).",
            show_default=False,
        ),
    ] = None,
    org: Annotated[
        str | None,
        typer.Option(
            "--org",
            metavar="ID",
            help="Move only this organization to the database --to names, while "
            "the others keep working (its writes pause during the copy).",
            show_default=False,
        ),
    ] = None,
    batch_size: Annotated[
        int,
        typer.Option(
            "--batch-size", metavar="N", min=1, help="Memories per destination transaction."
        ),
    ] = 500,
    write_wait: Annotated[
        float | None,
        typer.Option(
            "--write-wait",
            metavar="SECONDS",
            min=0.1,
            max=3600,
            help="With --org: how long the move waits for the organization's writes "
            "in flight to finish (default 30); past it the move is undone and nothing "
            "changes.",
            show_default=False,
        ),
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Copy a whole store (records, vectors, history) to another database and verify it,
    or move one organization (--org) to another PostgreSQL database.

    No embedding model is loaded: the source records which model its vectors come from.
    """
    if org is not None:
        moved = move_org(org, to_url, from_url, write_wait_s=write_wait)
        if as_json:
            render.emit(moved.to_dict())
            return
        render.show_org_move(moved)
        return
    if from_url is None:
        raise InvalidInput(
            "--from is required (or --org ID to move one organization)", field="from"
        )
    source_url = database_url(from_url, field="from")
    dest_url = database_url(to_url, field="to")
    with open_stores(source_url, dest_url) as (source, dest):
        total = count_memories(source)
        with render.progress("migrating", total) as step:
            report = copy_store(source, dest, batch_size=batch_size, progress=step)
    if as_json:
        ends = {"from": display_url(source_url), "to": display_url(dest_url)}
        render.emit({**ends, **report.to_dict()})
        return
    render.show_migration(report)
    render.say(f"copied and verified {report.memories} memories, {report.history} history entries")


@_command("reembed")
def reembed(
    ctx: typer.Context,
    batch_size: Annotated[
        int,
        typer.Option(
            "--batch-size", metavar="N", min=1, max=10_000, help="Memories per transaction."
        ),
    ] = 256,
    as_json: JsonOpt = False,
) -> None:
    """Re-embed the memories whose vectors another model made (every organization).

    Needed once after changing the embedding model (or after kenning's default
    changed); stop other writers first. Safe to interrupt and run again.
    """
    mem = memory_of(ctx)
    with render.progress("re-embedding", None) as step:
        done = mem.reembed_all(batch_size=batch_size, progress=step)
    if as_json:
        render.emit({"model_id": mem.embedder.model_id, "reembedded": done})
        return
    render.say(f"re-embedded {sum(done.values())} memories with {mem.embedder.model_id}")


# -- bench: reserved for the lead -------------------------------------------------------

app.add_typer(bench_app, name="bench")
app.add_typer(graph_app, name="graph")
app.add_typer(admin_app, name="admin")
app.command("serve", cls=Command)(serve_command)
_command("mcp")(mcp_command)
_command("backup")(backup_command)
_command("restore-backup")(restore_command)


def main() -> None:
    """Console entry point (``kenning``)."""
    app()
