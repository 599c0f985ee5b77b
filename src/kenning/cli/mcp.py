"""``kenning mcp``: serve kenning's memory tools over MCP on stdin/stdout.

Thin like the other commands: open the Memory from the root options, pick the
caller, hand both to :func:`kenning.mcp.build_mcp`. Errors before the server
starts (a bad key) are translated by the root group (see :mod:`kenning.cli.app`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from .._extras import require_extra
from .session import memory_of, state_of

if TYPE_CHECKING:
    from ..mcp import Resolver

__all__ = ["mcp_command"]


def mcp_command(
    ctx: typer.Context,
    key: Annotated[
        str | None,
        typer.Option(
            "--key",
            envvar="KENNING_API_KEY",
            metavar="KEY",
            help="Act as this API key's user (checked on every call). Default: the user of "
            "the root options (--user, --persona, ...), the local default user if none.",
        ),
    ] = None,
) -> None:
    """Serve memory_save, memory_recall, memory_forget and memory_list over MCP (stdio)."""
    require_extra("server", "kenning mcp")
    # imported here: the MCP SDK costs ~1 s of import time no other command should pay
    from ..mcp import build_mcp, fixed_resolver, key_resolver

    state = state_of(ctx)
    memory = memory_of(ctx)
    resolve: Resolver = (
        key_resolver(memory, key, state.active_persona) if key else fixed_resolver(memory.principal)
    )
    resolve(None)  # a bad or revoked key is a CLI error, before the server starts
    build_mcp(memory, resolve).run("stdio")
