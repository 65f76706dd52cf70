"""A FastMCP server (PyPI `fastmcp`, target/peers/fastmcp-python) over stdio serving the MCP
Skills extension (SEP-2640, `io.modelcontextprotocol/skills`): every folder below DIR that holds
a SKILL.md is a skill (FastMCP's `SkillsDirectoryProvider`: `skills/list`, `skills/get`, and its
files as `skill://<path>/<file>` resources), beside one ordinary tool, `ping` (answers "pong").

Usage: skills_server.py DIR   (SKILLS_RELOAD=1: the folder is read again at each request)
Skills are served on the 2026-07-28 revision only (requests carrying the `_meta` envelope); a
client that opens with `initialize` gets 2025-11-25 and the files as plain resources.
"""
import os
import sys

from fastmcp import FastMCP
from fastmcp.skills.provider import SkillsDirectoryProvider

mcp = FastMCP("skills-peer")
# Registers SkillsExtension itself, so the capability and the two methods come with it.
mcp.add_provider(
    SkillsDirectoryProvider(sys.argv[1], reload=os.environ.get("SKILLS_RELOAD") == "1")
)


@mcp.tool
def ping() -> str:
    """Answers "pong"."""
    return "pong"


if __name__ == "__main__":
    mcp.run(transport="stdio", show_banner=False)
