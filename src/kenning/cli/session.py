"""What every ``kenning`` command module shares: error translation and the session.

:class:`RootGroup` is the root command group and the one place a
:class:`~kenning.errors.KenningError` of any subcommand is translated (see
:mod:`kenning.cli.app`); :class:`Command` is the class of every command; a
:class:`State` holds the root options and the lazily opened
:class:`~kenning.engine.Memory`. The command modules import this module; only
:mod:`kenning.cli.app` imports them, so imports point one way.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar, cast

import typer
from typer.core import TyperCommand, TyperGroup

from .._extras import MissingExtra
from ..engine import Memory
from ..errors import (
    Conflict,
    InvalidInput,
    KenningError,
    NotFound,
    PermissionDenied,
    Unauthenticated,
)
from ..models import DEFAULT_USER, Principal, Role, TeamRole
from ..stores import database_url
from . import render

if TYPE_CHECKING:
    from typer._click import Context as ClickContext  # typer 0.29 vendors click

__all__ = [
    "EXIT_CODES",
    "Command",
    "RootGroup",
    "State",
    "command",
    "memory_of",
    "report_error",
    "state_of",
]

F = TypeVar("F", bound=Callable[..., Any])

#: Exit code of each error kind; any other KenningError exits with 1.
EXIT_CODES: tuple[tuple[type[KenningError], int], ...] = (
    (InvalidInput, 2),
    (MissingExtra, 2),
    (PermissionDenied, 3),
    (Unauthenticated, 3),
    (NotFound, 4),
    (Conflict, 5),
)
JSON_FLAG = "kenning.json"


# -- the one place errors are translated ----------------------------------------------


def report_error(exc: KenningError, as_json: bool) -> int:
    """Print a kenning error for people (stderr) and machines (stdout); return the exit code."""
    render.say(f"error: {exc}", err=True)
    if as_json:
        field_ = getattr(exc, "field", None)
        render.emit({"error": {"type": type(exc).__name__, "message": str(exc), "field": field_}})
    return next((code for kind, code in EXIT_CODES if isinstance(exc, kind)), 1)


class RootGroup(TyperGroup):
    """The root group: any KenningError of any subcommand becomes a clean exit."""

    def invoke(self, ctx: ClickContext) -> Any:
        try:
            return super().invoke(ctx)
        except KenningError as exc:
            raise typer.Exit(report_error(exc, bool(ctx.meta.get(JSON_FLAG)))) from None


class Command(TyperCommand):
    """Records the command's ``--json`` flag where the error handler finds it."""

    def invoke(self, ctx: ClickContext) -> Any:
        ctx.meta[JSON_FLAG] = bool(ctx.params.get("as_json"))
        return super().invoke(ctx)


# -- session: the principal and a lazily opened Memory ----------------------------------


@dataclass
class State:
    """The root options of one invocation and the Memory opened for them (on first use)."""

    db: str | None
    org: str
    user: str | None
    role: Role | None
    teams: list[str] = field(default_factory=list)
    personas: list[str] = field(default_factory=list)
    active_persona: str | None = None
    memory: Memory | None = None

    def principal(self) -> Principal:
        """The caller the root options describe (the default user is an org admin)."""
        user = self.user or DEFAULT_USER
        role = self.role or (Role.ADMIN if user == DEFAULT_USER else Role.MEMBER)
        return Principal(
            org_id=self.org,
            user_id=user,
            roles=frozenset({role}),
            teams={t: TeamRole.MEMBER for t in self.teams},
            personas=frozenset(self.personas),
            active_persona=self.active_persona,
        )

    def open(self) -> Memory:
        """The session's Memory, opened on the first call."""
        if self.memory is None:
            url = database_url(self.db, field="db") if self.db is not None else None
            self.memory = Memory(url, principal=self.principal())
        return self.memory

    def close(self) -> None:
        """Close the Memory if it was opened."""
        memory, self.memory = self.memory, None
        if memory is not None:
            memory.close()


def state_of(ctx: typer.Context) -> State:
    """The session of the invocation ``ctx`` belongs to."""
    return cast(State, ctx.find_root().obj)


def memory_of(ctx: typer.Context) -> Memory:
    """The session's Memory (opened now if it was not yet)."""
    return state_of(ctx).open()


def command(app: typer.Typer, name: str) -> Callable[[F], F]:
    """Register the decorated function as command ``name`` of ``app`` (class :class:`Command`)."""
    return app.command(name, cls=Command)
