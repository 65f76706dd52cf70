"""The Python MCP SDK's client (`mcp` on PyPI) driving a served toolkit, for the tests.

Usage: python_client.py (stdio|http) TARGET (auto|legacy)
Prints one JSON object: what it read.
"""
import json
import sys

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters


def dump(model):
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


async def main():
    kind, target, mode = sys.argv[1], sys.argv[2], sys.argv[3]
    server = StdioServerParameters(command=target, args=[]) if kind == "stdio" else target
    async with Client(server, mode=mode) as client:
        listed = await client.list_tools()
        echo = await client.call_tool("echo", {"text": "hi"})
        add = await client.call_tool("add", {"a": 1, "b": 2})
        bad = await client.call_tool("add", {"a": 1})
        failed = await client.call_tool("find_thing", {"id": "x"})
        try:
            unknown = dump(await client.call_tool("nope", {}))
        except Exception as error:  # the server answers a JSON-RPC error
            unknown = {"error": str(error)}
        out = {
            "protocolVersion": client.protocol_version,
            "server": dump(client.server_info) if client.server_info else None,
            "tools": [dump(tool) for tool in listed.tools],
            "echo": dump(echo),
            "add": dump(add),
            "bad": dump(bad),
            "failed": dump(failed),
            "unknown": unknown,
        }
    print(json.dumps(out))


anyio.run(main)
