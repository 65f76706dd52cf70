"""A FastMCP client (PyPI `fastmcp`, target/peers/fastmcp-python) of the MCP Skills extension
(SEP-2640, `io.modelcontextprotocol/skills`) over stdio: starts COMMAND ARGS, lists its skills
(`skills/list`), gets each (`skills/get`), and reads every file its entry lists with
`resources/read`, checked by FastMCP's own `Client.read_skill` (each file's size and sha256
digest against the entry, the frontmatter of the SKILL.md read against the entry's).

Usage: skills_client.py COMMAND [ARG...]
Prints one JSON line: {"skills": [{"uri", "name", "files": {uri: size}, "verified": true}],
"protocolVersion", "capabilities"}, or {"error": "..."} and exits 1 (a digest or size mismatch
is FastMCP's ValueError).
"""
import asyncio
import json
import os
import sys

from fastmcp import Client
from fastmcp.client.transports import StdioTransport
from fastmcp.skills import SkillsClientExtension


async def main(command, args):
    # mode "auto" probes `server/discover` (2026-07-28, where the skills methods live) and falls
    # back to `initialize`; the extension is this client's opt-in to `skills/*`.
    # The whole environment goes to the server: by default the SDK passes on only HOME, PATH, etc.
    transport = StdioTransport(command, args, env=dict(os.environ))
    client = Client(transport, extensions=[SkillsClientExtension()])
    async with client:
        skills = []
        for entry in await client.list_skills():
            got = await client.get_skill(entry.uri)
            # read_skill sends skills/get again and resources/read for every listed file, and
            # raises ValueError unless each file's size and "sha256:<hex>" digest match.
            skill = await client.read_skill(entry.uri)
            files = {r.uri: r.size for r in got.resources} if got.resources != "dynamic" else {}
            skills.append({
                "uri": entry.uri,
                "name": entry.frontmatter.name,
                "frontmatter": entry.frontmatter.root,
                "files": files,
                "verified": sorted(skill.files) == sorted(
                    u.removeprefix(entry.uri.removesuffix("SKILL.md")) for u in files
                ),
            })
        capabilities = client.server_capabilities.model_dump(
            mode="json", by_alias=True, exclude_none=True
        )
        return {
            "skills": skills,
            "protocolVersion": client.protocol_version,
            "capabilities": capabilities,
        }


if __name__ == "__main__":
    try:
        out = asyncio.run(main(sys.argv[1], sys.argv[2:]))
    except Exception as exc:  # one JSON line either way
        print(json.dumps({"error": f"{type(exc).__name__}: {exc}"}))
        sys.exit(1)
    print(json.dumps(out))
