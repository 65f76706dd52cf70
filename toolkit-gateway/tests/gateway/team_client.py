"""One person's stateless client of a gateway shared by a team, for isolation.rs: the
Python MCP SDK's client (`mcp` on PyPI) over Streamable HTTP in the 2026-07-28 revision (no
session), with its own bearer token, answering sampling and roots with its person's name.

Usage: team_client.py URL TOKEN NAME TOOL ARGUMENTS_JSON
Prints one JSON object: the protocol version spoken, the tool's result (or the error raised),
and every request the gateway made of this client.
"""
import json
import sys

import anyio
from mcp import Client, types
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client


async def main():
    url, token, name, tool, arguments = sys.argv[1:6]
    asked = []

    async def sampling(_context, params):
        asked.append("sampling/createMessage")
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(type="text", text=f"sampled by {name}"),
            model="team-test",
        )

    async def roots(_context):
        asked.append("roots/list")
        return types.ListRootsResult(
            roots=[types.Root(uri=f"file:///home/{name}", name=f"{name}'s home")]
        )

    http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
    transport = streamable_http_client(url, http_client=http)
    out = {}
    async with Client(
        transport, mode="auto", sampling_callback=sampling, list_roots_callback=roots
    ) as client:
        out["protocolVersion"] = client.protocol_version
        try:
            result = await client.call_tool(tool, json.loads(arguments))
            out["result"] = result.model_dump(mode="json", by_alias=True, exclude_none=True)
        except Exception as error:  # a JSON-RPC error or a transport failure
            out["error"] = str(error)
    out["asked"] = asked
    print(json.dumps(out))


anyio.run(main)
