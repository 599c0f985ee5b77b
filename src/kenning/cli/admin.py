"""``kenning serve`` and ``kenning admin``: the server, and the directory from the
command line (organizations, users, teams, personas, API keys, audit).

``admin`` acts as the CLI's principal (``--user``; the default user is an
org admin), through the same directory service the REST API uses.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer

from .._extras import require_extra
from ..directory.userdata import ERASED_AUTHOR, jsonl
from ..errors import InvalidInput
from ..models import DEFAULT_USER, Role, TeamRole
from ..stores import database_url, location
from . import render
from .args import JsonOpt
from .session import Command, memory_of, state_of

__all__ = ["admin_app", "serve_command"]

admin_app: typer.Typer = typer.Typer(
    help="Organizations, users, teams, personas, API keys, audit; erase or export a user.",
    no_args_is_help=True,
)
key_app = typer.Typer(help="API keys: create (shown once), list, revoke.", no_args_is_help=True)
admin_app.add_typer(key_app, name="key")

F = TypeVar("F", bound=Callable[..., Any])
OnOff = Annotated[bool | None, typer.Option(help="on or off")]


def _show(data: Any, as_json: bool) -> None:
    if as_json:
        render.emit(data)
        return
    items = data if isinstance(data, list) else [data]
    for item in items:
        render.say("  ".join(f"{k}={v}" for k, v in item.items()))


def serve_command(
    ctx: typer.Context,
    host: Annotated[str | None, typer.Option(help="Address to bind (default 127.0.0.1).")] = None,
    port: Annotated[int | None, typer.Option(help="Port (default 8765).")] = None,
    workers: Annotated[int | None, typer.Option(help="Worker processes (default 1).")] = None,
    new_key: Annotated[
        bool, typer.Option("--new-key", help="Mint a fresh admin API key for --user and print it.")
    ] = False,
) -> None:
    """Run the REST API, MCP endpoint and web UI (uvicorn)."""
    require_extra("server", "kenning serve")
    from ..server.run import bootstrap, serve

    state = state_of(ctx)
    mem = memory_of(ctx)
    settings = mem.settings
    updates = {
        k: v for k, v in {"host": host, "port": port, "workers": workers}.items() if v is not None
    }
    server = settings.server.model_copy(update=updates)
    base = f"http://{server.host}:{server.port}"
    render.say(f"kenning server on {base}  (store: {location(settings)})", err=True)
    render.say(f"  web UI    {base}/      API docs  {base}/docs      MCP  {base}/mcp/", err=True)
    if new_key:
        user = state.user or DEFAULT_USER
        secret = bootstrap(mem, state.org, user)
        render.say(f"  API key for {user} (org admin; shown once): {secret}", err=True)
        render.say(f'  try:  curl -H "Authorization: Bearer {secret}" {base}/v1/me', err=True)
    state.close()
    url = database_url(state.db, field="db") if state.db is not None else settings.database_url
    serve(settings.model_copy(update={"server": server, "database_url": url}))


def _cmd(app: typer.Typer, name: str) -> Callable[[F], F]:
    return app.command(name, cls=Command)


@_cmd(admin_app, "init-org")
def init_org(
    ctx: typer.Context,
    org_id: str,
    admin: Annotated[str, typer.Option("--admin", help="The first admin's user id.")] = "admin",
    name: Annotated[str | None, typer.Option()] = None,
    mode: Annotated[str, typer.Option(help="personal | org | org_no_global")] = "org",
    as_json: JsonOpt = False,
) -> None:
    """Create an organization with its first admin and print that admin's API key
    (once). Whoever can run this has the database: it is the operator's command."""
    mem = memory_of(ctx)
    mem.directory.ensure_org(org_id, name, mode)
    key, secret = mem.directory.bootstrap(org_id, admin, "init-org")
    _show({"org": mem.directory.org(org_id).to_dict(), **key.to_dict(), "secret": secret}, as_json)


@_cmd(admin_app, "org")
def org(
    ctx: typer.Context,
    name: Annotated[str | None, typer.Option()] = None,
    mode: Annotated[str | None, typer.Option(help="personal | org | org_no_global")] = None,
    memory: OnOff = None,
    review: OnOff = None,
    as_json: JsonOpt = False,
) -> None:
    """Show or change the organization (mode, memory switch, org-layer review)."""
    mem = memory_of(ctx)
    who = mem.principal
    if name is None and mode is None and memory is None and review is None:
        _show(mem.directory.org(who.org_id).to_dict(), as_json)
        return
    _show(
        mem.directory.set_org(
            who, name=name, mode=mode, memory_enabled=memory, review=review
        ).to_dict(),
        as_json,
    )


@_cmd(admin_app, "user")
def user(
    ctx: typer.Context,
    user_id: str,
    name: Annotated[str | None, typer.Option()] = None,
    role: Annotated[Role | None, typer.Option()] = None,
    disabled: Annotated[bool | None, typer.Option("--disabled/--enabled")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Create a user or change their name, role or disabled flag."""
    mem = memory_of(ctx)
    found = mem.directory.put_user(mem.principal, user_id, name=name, role=role, disabled=disabled)
    _show(found.to_dict(), as_json)


@_cmd(admin_app, "users")
def users(ctx: typer.Context, as_json: JsonOpt = False) -> None:
    """List the organization's users."""
    mem = memory_of(ctx)
    _show([u.to_dict() for u in mem.directory.users(mem.principal)], as_json)


@_cmd(admin_app, "erase")
def erase(
    ctx: typer.Context,
    user_id: Annotated[str, typer.Argument(metavar="USER_ID", help="The user to erase.")],
    include_shared: Annotated[
        bool,
        typer.Option(
            "--include-shared",
            help="Also delete the memories they wrote in shared scopes (team, persona, "
            f"organization). Without it those stay, their author replaced by {ERASED_AUTHOR}.",
        ),
    ] = False,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Erase a user and everything stored about them, for good (admins).

    Deletes their personal and persona_user memories (with vectors, keyword and graph
    rows, access log), their record, team memberships, persona grants and API keys.
    Memories they wrote in shared scopes STAY, their author replaced by "(erased)",
    unless --include-shared. History keeps who and when without content; the audit
    log records the erasure. Running it again changes nothing.
    """
    mem = memory_of(ctx)
    if not yes:
        if not sys.stdin.isatty():
            raise InvalidInput(
                f"refusing to erase {user_id!r} without confirmation: stdin is not a "
                "terminal; pass --yes",
                field="yes",
            )
        shared = "deleted too" if include_shared else f"kept, author set to {ERASED_AUTHOR}"
        question = f"Erase user {user_id!r} and all their memories (shared ones: {shared})?"
        if not typer.confirm(question):
            render.say("aborted", err=True)
            raise typer.Exit(1)
    done = mem.directory.erase_user(mem.principal, user_id, include_shared=include_shared)
    _show(done.to_dict(), as_json)


@_cmd(admin_app, "export")
def export_user(
    ctx: typer.Context,
    user_id: Annotated[
        str | None,
        typer.Argument(metavar="[USER_ID]", help="Whose data (default: yours, --user)."),
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option("--out", "-o", metavar="FILE", help="Write to FILE (default: stdout)."),
    ] = None,
) -> None:
    """Export everything stored about a user as JSON lines (yourself; admins anyone).

    One JSON object a line, each with a "type": export (header), user, api_key,
    memory (relation personal or authored), history, access, audit, end (counts).
    """
    mem = memory_of(ctx)
    who = mem.principal
    lines = mem.directory.export_user(who, user_id or who.user_id)
    if out is None:
        sys.stdout.writelines(jsonl(lines))
        return
    part = out.with_name(out.name + ".part")
    try:
        with part.open("w", encoding="utf-8") as fh:
            fh.writelines(jsonl(lines))
        part.replace(out)
    except OSError as exc:
        raise InvalidInput(f"cannot write {out}: {exc.strerror or exc}", field="out") from None
    finally:
        part.unlink(missing_ok=True)
    render.say(f"exported {user_id or who.user_id} to {out}", err=True)


@_cmd(admin_app, "team")
def team(
    ctx: typer.Context,
    team_id: str,
    name: Annotated[str | None, typer.Option()] = None,
    memory: OnOff = None,
    review: OnOff = None,
    as_json: JsonOpt = False,
) -> None:
    """Create a team or change its name or switches."""
    mem = memory_of(ctx)
    found = mem.directory.put_team(
        mem.principal, team_id, name=name, memory_enabled=memory, review=review
    )
    _show(found.to_dict(), as_json)


@_cmd(admin_app, "member")
def member(
    ctx: typer.Context,
    team_id: str,
    user_id: str,
    role: Annotated[TeamRole, typer.Option()] = TeamRole.MEMBER,
    remove: Annotated[bool, typer.Option("--remove")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Put a user in a team (or --remove them)."""
    mem = memory_of(ctx)
    found = mem.directory.set_member(mem.principal, team_id, user_id, None if remove else role)
    _show(found.to_dict(), as_json)


@_cmd(admin_app, "persona")
def persona(
    ctx: typer.Context,
    persona_id: str,
    name: Annotated[str | None, typer.Option()] = None,
    memory: OnOff = None,
    review: OnOff = None,
    as_json: JsonOpt = False,
) -> None:
    """Create a persona or change its name or switches."""
    mem = memory_of(ctx)
    found = mem.directory.put_persona(
        mem.principal, persona_id, name=name, memory_enabled=memory, review=review
    )
    _show(found.to_dict(), as_json)


@_cmd(admin_app, "grant")
def grant(
    ctx: typer.Context,
    persona_id: str,
    user_id: str,
    lead: Annotated[bool, typer.Option("--lead", help="May curate its shared memory.")] = False,
    revoke: Annotated[bool, typer.Option("--revoke")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Let a user use a persona (or --revoke it)."""
    mem = memory_of(ctx)
    found = mem.directory.grant_persona(
        mem.principal, persona_id, user_id, use=not revoke, lead=lead
    )
    _show(found.to_dict(), as_json)


@_cmd(key_app, "create")
def key_create(
    ctx: typer.Context,
    user_id: str,
    name: Annotated[str, typer.Option()] = "cli",
    persona: Annotated[str | None, typer.Option()] = None,
    as_json: JsonOpt = False,
) -> None:
    """Mint an API key for a user; the secret is printed this once."""
    mem = memory_of(ctx)
    key, secret = mem.directory.create_key(mem.principal, user_id, name, persona=persona)
    _show({**key.to_dict(), "secret": secret}, as_json)


@_cmd(key_app, "list")
def key_list(
    ctx: typer.Context,
    user_id: Annotated[str | None, typer.Option("--user-id")] = None,
    as_json: JsonOpt = False,
) -> None:
    """List API keys (never their secrets)."""
    mem = memory_of(ctx)
    _show([k.to_dict() for k in mem.directory.keys(mem.principal, user_id)], as_json)


@_cmd(key_app, "revoke")
def key_revoke(ctx: typer.Context, key_id: str, as_json: JsonOpt = False) -> None:
    """Revoke an API key."""
    mem = memory_of(ctx)
    _show(mem.directory.revoke_key(mem.principal, key_id).to_dict(), as_json)


@_cmd(admin_app, "audit")
def audit(
    ctx: typer.Context,
    user_id: Annotated[str | None, typer.Option("--user-id")] = None,
    action: Annotated[str | None, typer.Option(help="prefix, e.g. admin.")] = None,
    limit: Annotated[int, typer.Option()] = 50,
    as_json: JsonOpt = False,
) -> None:
    """The audit log, newest first."""
    mem = memory_of(ctx)
    lines = mem.directory.audit(mem.principal, user=user_id, action=action, limit=limit)
    _show([a.to_dict() for a in lines], as_json)
