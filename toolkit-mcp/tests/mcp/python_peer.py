"""A server of the Python MCP SDK (`mcp` on PyPI, `MCPServer`) for the tests.

Usage: python_peer.py stdio | python_peer.py (sessions|stateless) PORT
"""
import sys
from typing import Annotated

from pydantic import BaseModel, Field

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

server = MCPServer("python-peer")


@server.tool()
def echo(text: str) -> str:
    """Answers with the text it is given."""
    return text


class Weather(BaseModel):
    city: str
    sky: str


@server.tool()
def weather(city: Annotated[str, Field(json_schema_extra={"x-mcp-header": "City"})]) -> Weather:
    """The weather of a city, routed on the city."""
    return Weather(city=city, sky="clear")


@server.tool()
def failing() -> str:
    """Reports that it failed."""
    raise ToolError("the tool failed on purpose")


mode = sys.argv[1]
if mode == "stdio":
    server.run("stdio")
else:
    server.run(
        "streamable-http",
        host="127.0.0.1",
        port=int(sys.argv[2]),
        stateless_http=(mode == "stateless"),
    )
