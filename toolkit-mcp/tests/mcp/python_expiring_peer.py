"""A server of the Python MCP SDK (`mcp` on PyPI, `MCPServer`) whose `tools/list` says how long it
stays fresh (`ttlMs`, `cacheScope: "public"`, the stateless revision 2026-07-28) and changes
without saying so (no `subscriptions/listen`): each call of `grow` adds a tool `grown_N`.

Usage: python_expiring_peer.py TTL_MS stdio | python_expiring_peer.py TTL_MS http PORT
"""
import sys

from mcp.server.caching import CacheHint
from mcp.server.mcpserver import MCPServer

ttl_ms = int(sys.argv[1])
server = MCPServer(
    "python-expiring-peer",
    cache_hints={"tools/list": CacheHint(ttl_ms=ttl_ms, scope="public")},
    subscriptions=False,
)
grown = 0


@server.tool()
def grow() -> str:
    """Adds a tool to the list."""
    global grown
    grown += 1
    name = f"grown_{grown}"

    def tool() -> str:
        return name

    server.add_tool(tool, name=name, description="A tool that grew.")
    return name


if sys.argv[2] == "stdio":
    server.run("stdio")
else:
    server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[3]), stateless_http=True)
