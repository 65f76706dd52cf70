"""The Python MCP SDK's client (`mcp` on PyPI) holding one stdio session of the gateway across a
reload, for reload.rs: lists the tools, prints a line `ready`, waits (at most 20 s) for
notifications/tools/list_changed, lists the tools again and calls TOOL on the same session, then
prints {before, after, heard, called}.

Usage: reload_client.py TOOL COMMAND [ARG...] (with the Python of target/peers/mcp-python)
"""
import json
import sys

import anyio
from mcp import ClientSession, types
from mcp.client.stdio import StdioServerParameters, stdio_client


async def main():
    tool, command, *args = sys.argv[1:]
    heard = anyio.Event()

    async def on_message(message):
        if isinstance(message, types.ToolListChangedNotification) or (
            getattr(message, "root", None) is not None
            and isinstance(message.root, types.ToolListChangedNotification)
        ):
            heard.set()

    server = StdioServerParameters(command=command, args=args)
    async with stdio_client(server) as (read, write):
        async with ClientSession(read, write, message_handler=on_message) as session:
            await session.initialize()
            before = [t.name for t in (await session.list_tools()).tools]
            print("ready", flush=True)
            with anyio.move_on_after(20):
                await heard.wait()
            after = [t.name for t in (await session.list_tools()).tools]
            result = await session.call_tool(tool, {})
            print(json.dumps({"before": before, "after": after, "heard": heard.is_set(),
                              "called": not result.is_error}), flush=True)


anyio.run(main)
