#!/usr/bin/env python3
"""An OpenAPI document served to an agent over stdio, two ways, in one interleaved run:
`toolkit-gen serve` (an `openapi =` source) and FastMCP 4.2's `FastMCP.from_openapi`, both in
front of the same Prism mock of the document, both driven by the MCP Python SDK's client.

For each server and round: the tools served, the bytes of `tools/list`, the share of tools whose call
reached Prism and the share whose request Prism found valid (no violation in its log) (a call per tool, its input made from the tool's own input schema: the
required properties, each the first value its schema allows), the p50 of those calls, the time
from spawn to the first `tools/list`, and the server's peak RSS (VmHWM).

Usage (after scripts/install-test-peers and `cargo build --release -p toolkit-cli`):
  target/peers/fastmcp-python/bin/python scripts/bench-openapi-serving.py DOC [ROUNDS]
"""

import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from serving_bench import free_port, instance, peak_rss_kb

ROOT = Path(__file__).resolve().parent.parent
PEERS = ROOT / "target" / "peers"
OURS = ROOT / "target" / "release" / "toolkit-gen"
TOKEN = "bench-token"

FASTMCP_SERVER = """
import json, sys, httpx2
from fastmcp import FastMCP
spec = json.load(open(sys.argv[1]))
client = httpx2.AsyncClient(base_url=sys.argv[2], headers={"Authorization": "Bearer " + sys.argv[3]}, timeout=30)
FastMCP.from_openapi(openapi_spec=spec, client=client, name="api").run(transport="stdio", show_banner=False)
"""


def start_prism(document):
    port = free_port()
    prism = PEERS / "prism/node_modules/@stoplight/prism-cli/dist/index.js"
    child = subprocess.Popen(
        ["node", str(prism), "mock", "--errors", "-h", "127.0.0.1", "-p", str(port), str(document)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    deadline = time.time() + 120
    for line in child.stdout:
        if "Prism is listening" in line:
            break
        if time.time() > deadline:
            raise SystemExit("Prism did not start")
    # Keep reading its log, so that it never blocks on a full pipe: it judges each request.
    asyncio.get_event_loop().run_in_executor(None, lambda: [PRISM_LOG.append(l) for l in child.stdout])
    return child, f"http://127.0.0.1:{port}"


PRISM_LOG = []


def judged(lines):
    """How many requests Prism received in `lines`, and how many of them broke the document."""
    received, violated, broke = 0, 0, False
    for line in lines:
        if "Request received" in line:
            received += 1
            violated += broke
            broke = False
        elif "[VALIDATOR]" in line and "error" in line:
            broke = True
    return received, violated + broke


async def measure(label, params, prism_pid):
    started = time.perf_counter()
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            listed = await session.list_tools()
            first_list = time.perf_counter() - started
            tools = listed.tools
            raw = json.dumps([tool.model_dump(mode="json", by_alias=True, exclude_none=True) for tool in tools])
            latencies = []
            logged = len(PRISM_LOG)
            for tool in tools:
                schema = tool.input_schema or {}
                arguments = instance(schema, schema.get("$defs", {}))
                begun = time.perf_counter()
                try:
                    result = await asyncio.wait_for(session.call_tool(tool.name, arguments), 30)
                    if result.is_error and os.environ.get("BENCH_SHOW"):
                        words = " ".join(getattr(c, "text", "") for c in result.content)
                        print(f"{label}: {tool.name} {json.dumps(arguments)[:200]}: {words[:300]}")
                except Exception:  # a call that fails in the client sent nothing to judge
                    pass
                latencies.append(time.perf_counter() - begun)
            await asyncio.sleep(0.5)  # Prism's last lines
            received, violated = judged(PRISM_LOG[logged:])
            accepted = received - violated
            rss = peak_rss_kb(os.getpid(), prism_pid)
    return {
        "server": label,
        "tools": len(tools),
        "list_bytes": len(raw.encode()),
        "accepted": accepted / max(1, len(tools)),
        "sent": received / max(1, len(tools)),
        "p50_ms": statistics.median(latencies) * 1000 if latencies else 0.0,
        "first_list_s": first_list,
        "rss_mb": rss / 1024,
    }


async def main():
    document = Path(sys.argv[1]).resolve()
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    prism, base_url = start_prism(document)
    work = Path(tempfile.mkdtemp())
    # The same bearer token both ways: FastMCP's client sends it on every request; ours is
    # given to each bearer scheme of the document, as a host configures credentials.
    schemes = json.loads(document.read_text()).get("components", {}).get("securitySchemes", {})
    bearer = [name for name, scheme in schemes.items()
              if scheme.get("type") == "http" and scheme.get("scheme", "").lower() == "bearer"
              or scheme.get("type") in ("oauth2", "openIdConnect")]
    credentials = ", ".join(f'{name} = "BENCH_TOKEN"' for name in bearer)
    (work / "toolkit.toml").write_text(
        f"""[policy]
default = "allow"

[[sources]]
name = "api"
openapi = "{document}"
base_url = "{base_url}"
credentials = {{ {credentials} }}
"""
    )
    (work / "fastmcp_server.py").write_text(FASTMCP_SERVER)
    env = dict(os.environ, BENCH_TOKEN=TOKEN, RUST_LOG="error", FASTMCP_LOG_LEVEL="ERROR")
    servers = [
        ("toolkit-gen serve", StdioServerParameters(
            command=str(OURS), args=["serve", "--config", str(work / "toolkit.toml")], env=env)),
        ("FastMCP.from_openapi", StdioServerParameters(
            command=sys.executable,
            args=[str(work / "fastmcp_server.py"), str(document), base_url, TOKEN], env=env)),
    ]
    results = {label: [] for label, _ in servers}
    try:
        for _ in range(rounds):
            for label, params in servers:
                results[label].append(await measure(label, params, prism.pid))
    finally:
        prism.kill()
    print(f"{document.name}, {rounds} rounds interleaved, medians:")
    for label, runs in results.items():
        middle = {key: statistics.median(run[key] for run in runs)
                  for key in ("tools", "list_bytes", "sent", "accepted", "p50_ms", "first_list_s", "rss_mb")}
        print(
            f"  {label:22} tools {middle['tools']:.0f}, tools/list {middle['list_bytes'] / 1024:.0f} KB, "
            f"sent {middle['sent'] * 100:.1f} %, Prism accepted {middle['accepted'] * 100:.1f} %, p50 {middle['p50_ms']:.1f} ms, "
            f"first list {middle['first_list_s']:.2f} s, peak RSS {middle['rss_mb']:.0f} MB"
        )


if __name__ == "__main__":
    asyncio.run(main())
