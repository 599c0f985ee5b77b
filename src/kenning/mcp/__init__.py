"""kenning's MCP door: memory tools, a hint prompt and a hint resource (see :mod:`.server`).

``build_mcp(memory, resolve)`` returns an :class:`mcp.server.mcpserver.MCPServer`;
``python -m kenning.mcp`` (or ``kenning mcp``) serves it over stdio.
"""

from .._extras import require_extra

require_extra("server", "kenning.mcp")  # before importing the server's libraries

from .server import (  # noqa: E402
    MAX_RESULTS,
    TOOL_NAMES,
    Resolver,
    build_mcp,
    error_code,
    fixed_resolver,
    key_resolver,
)

__all__ = [
    "MAX_RESULTS",
    "TOOL_NAMES",
    "Resolver",
    "build_mcp",
    "error_code",
    "fixed_resolver",
    "key_resolver",
]
