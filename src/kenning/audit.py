"""The audit trail of memory operations, kept by the core whatever door a call came
through.

Every memory write, forget, review decision and (with
``server.audit_admin_reads``) every read by an admin of a governed organization
leaves exactly one audit line: actor, door, action, target and outcome. The
doors only say who they are: :func:`door` sets the door of the calls made
inside it (``sdk`` when none did), and the REST middleware adds its request id
the same way. :func:`audited` wraps a façade method; a call made inside another
audited call (``remember`` runs ``write``) is part of the outer one and is not
audited again.
"""

from __future__ import annotations

import contextvars
import functools
import logging
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

from .errors import Conflict, InvalidInput, NotFound, PermissionDenied
from .models import Principal

if TYPE_CHECKING:
    from .directory import Directory

__all__ = ["DOORS", "Auditor", "audited", "current_door", "door", "request_id", "target_of"]

log = logging.getLogger("kenning.audit")

#: The doors a call can come through.
DOORS = ("sdk", "cli", "rest", "mcp")

_door: contextvars.ContextVar[str] = contextvars.ContextVar("kenning_door", default="sdk")
_request: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "kenning_request_id", default=None
)
_inside: contextvars.ContextVar[bool] = contextvars.ContextVar("kenning_audited", default=False)

P = ParamSpec("P")
R = TypeVar("R")


def current_door() -> str:
    """The door of the call being made (``sdk`` unless a door said otherwise)."""
    return _door.get()


@contextmanager
def door(name: str, request: str | None = None) -> Iterator[None]:
    """Calls made inside the block came through door ``name`` (one of :data:`DOORS`),
    as request ``request`` when the door numbers its requests."""
    if name not in DOORS:
        raise ValueError(f"unknown door {name!r}; expected one of {', '.join(DOORS)}")
    token = _door.set(name)
    rtoken = _request.set(request)
    try:
        yield
    finally:
        _request.reset(rtoken)
        _door.reset(token)


def request_id() -> str | None:
    """The request id of the call being made, when its door gave one."""
    return _request.get()


def _outcome(exc: BaseException | None) -> str:
    if exc is None:
        return "ok"
    for kind, name in (
        (PermissionDenied, "denied"),
        (NotFound, "not_found"),
        (Conflict, "conflict"),
        (InvalidInput, "invalid"),
    ):
        if isinstance(exc, kind):
            return name
    return "error"


@dataclass(frozen=True, slots=True)
class Auditor:
    """Writes audit lines through the directory; ``admin_reads`` audits reads by admins
    of organizations the directory governs (one with users)."""

    directory: Directory
    admin_reads: bool

    def wants(self, who: Principal, read: bool) -> bool:
        """Whether a call by ``who`` is audited (every write; reads by governing admins)."""
        if not read:
            return True
        return self.admin_reads and who.is_admin and self.directory.governed(who.org_id)

    def record(
        self,
        who: Principal,
        action: str,
        target: str | None,
        exc: BaseException | None,
        detail: Mapping[str, Any] | None = None,
    ) -> None:
        """One line: ``who`` did ``action`` on ``target`` through the current door."""
        info: dict[str, Any] = {"door": current_door(), **(detail or {})}
        if exc is not None:
            info["error"] = _printable(str(exc)[:300])
        try:
            self.directory.record(
                who,
                action,
                None if target is None else _printable(target),
                info,
                outcome=_outcome(exc),
                request_id=request_id(),
            )
        except Exception:  # the operation's own outcome stands; say why the line is missing
            log.exception("could not write the audit line for %s on %s", action, target)


def _printable(text: str) -> str:
    """``text`` as the audit log can store it (bad input may hold lone surrogates)."""
    safe = text.encode("utf-8", "backslashreplace").decode("utf-8")
    return safe.replace("\x00", "\\x00")


def target_of(result: object, args: tuple[Any, ...]) -> str | None:
    """What a call touched: the id of the memory (or memories) it returned, else its
    first positional argument when that is a string (a memory id)."""
    found = getattr(result, "id", None) or getattr(getattr(result, "record", None), "id", None)
    if isinstance(found, str):
        return found
    if isinstance(result, list) and result:
        found_ids = [getattr(getattr(r, "record", r), "id", None) for r in result]
        ids = [i for i in found_ids if isinstance(i, str)]
        return ",".join(dict.fromkeys(ids))[:500] or None
    if args and isinstance(args[0], str):
        return args[0][:200]
    return None


def _safe(
    target: Callable[[Any, tuple[Any, ...]], str | None], result: object, args: tuple[Any, ...]
) -> str | None:
    """``target(result, args)``, or None when bad input leaves nothing to name."""
    try:
        found = target(result, args)
    except (TypeError, ValueError, AttributeError):
        return None
    return found if isinstance(found, str) else None


def audited(
    action: str,
    *,
    read: bool = False,
    target: Callable[[Any, tuple[Any, ...]], str | None] = target_of,
    detail: Callable[[Mapping[str, Any]], Mapping[str, Any]] | None = None,
) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """Audit a façade method (``self.core.auditor`` writes the line; see the module doc).

    ``read`` marks a read (audited only for governing admins); ``target`` names what
    the call touched, from its result and positional arguments; ``detail`` adds to the
    line from the keyword arguments (a rejection's reason).
    """

    def wrap(fn: Callable[P, R]) -> Callable[P, R]:
        @functools.wraps(fn)
        def run(*args: P.args, **kwargs: P.kwargs) -> R:
            if _inside.get():
                return fn(*args, **kwargs)
            facade = args[0]
            core = facade.core  # type: ignore[attr-defined]
            who = core.who(kwargs.get("principal"))
            if not core.auditor.wants(who, read):
                return fn(*args, **kwargs)
            extra = detail(kwargs) if detail is not None else None
            token = _inside.set(True)
            try:
                result = fn(*args, **kwargs)
            except BaseException as exc:
                core.auditor.record(who, action, _safe(target, None, args[1:]), exc, extra)
                raise
            finally:
                _inside.reset(token)
            core.auditor.record(who, action, _safe(target, result, args[1:]), None, extra)
            return result

        return run

    return wrap
