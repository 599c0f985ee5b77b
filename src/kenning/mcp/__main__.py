"""``python -m kenning.mcp``: serve the MCP tools over stdio.

The database comes from the environment like every other door
(``KENNING_DATABASE_URL``, else ``$KENNING_HOME/kenning.db``). The caller is the
local default user, or the owner of ``KENNING_API_KEY`` when it is set.
"""

from __future__ import annotations

import os
import sys

from ..engine import Memory
from ..errors import KenningError
from .server import Resolver, build_mcp, fixed_resolver, key_resolver


def main() -> int:
    """Serve until stdin closes; 0 on a clean end, 2 when startup fails."""
    try:
        with Memory() as memory:
            key = os.environ.get("KENNING_API_KEY")
            resolve: Resolver = (
                key_resolver(memory, key) if key else fixed_resolver(memory.principal)
            )
            resolve(None)  # a bad key fails here, before a client connects
            build_mcp(memory, resolve).run("stdio")
    except KenningError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
