#!/usr/bin/env python3
"""GraphQL operations served to an agent over stdio, two ways, in one interleaved run:
`toolkit-gen serve` (a `graphql =` source with `operations =`) and crates.io `apollo-mcp-server`
2.1 (operations from local files, the same schema), both in front of the same graphql-yoga mock of
GitHub's public schema (scripts/graphql-mock.mjs), both driven by the MCP Python SDK's client.

The same eight curated operations (`.graphql` files, queries and mutations) are the tools of
both. For each server and round: the tools served, the bytes of `tools/list`, whether each tool's
input schema names the same properties and required ones as the other server's, the share of
calls answered with data (a call per tool, its input the required properties, each the first
value its schema allows), the p50 of those calls, the time from spawn to the first `tools/list`,
and the server's peak RSS (VmHWM).

Usage (after scripts/install-test-peers, `cargo build --release -p toolkit-cli`, and
`cargo install apollo-mcp-server --version 2.1.0 --locked --root DIR`):
  APOLLO_MCP=DIR/bin/apollo-mcp-server target/peers/fastmcp-python/bin/python \
    scripts/bench-graphql-serving.py [ROUNDS]
"""

import asyncio
import json
import os
import re
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
GRAPHQL_NPM = PEERS / "graphql-npm"
OURS = ROOT / "target" / "release" / "toolkit-gen"
APOLLO = Path(os.environ.get("APOLLO_MCP", "apollo-mcp-server"))

OPERATIONS = {
    "Viewer": "query Viewer { viewer { login name } }",
    "Repository": (
        "query Repository($owner: String!, $name: String!) {\n"
        "  repository(owner: $owner, name: $name) { name stargazerCount description }\n}"
    ),
    "Issues": (
        "query Issues($owner: String!, $name: String!, $first: Int = 10, $states: [IssueState!]) {\n"
        "  repository(owner: $owner, name: $name) {\n"
        "    issues(first: $first, states: $states) { totalCount nodes { number title } }\n  }\n}"
    ),
    "Search": (
        "query Search($query: String!, $type: SearchType!, $first: Int = 5) {\n"
        "  search(query: $query, type: $type, first: $first) { issueCount }\n}"
    ),
    "User": (
        "query User($login: String!) {\n"
        "  user(login: $login) { login bio followers { totalCount } }\n}"
    ),
    "CreateIssue": (
        "mutation CreateIssue($input: CreateIssueInput!) {\n"
        "  createIssue(input: $input) { issue { number title } }\n}"
    ),
    "AddComment": (
        "mutation AddComment($input: AddCommentInput!) {\n"
        "  addComment(input: $input) { clientMutationId }\n}"
    ),
    "AddStar": (
        "mutation AddStar($input: AddStarInput!) {\n"
        "  addStar(input: $input) { clientMutationId }\n}"
    ),
}


def start_yoga():
    port = free_port()
    child = subprocess.Popen(
        ["node", str(ROOT / "scripts/graphql-mock.mjs"), str(port)],
        env=dict(os.environ, GRAPHQL_NPM=str(GRAPHQL_NPM)),
        stdout=subprocess.PIPE,
        text=True,
    )
    if child.stdout.readline().strip() != "listening":
        raise SystemExit("the GraphQL mock did not start")
    return child, f"http://127.0.0.1:{port}/graphql"


def write_sdl(target):
    """GitHub's schema as SDL (Apollo's local schema source reads SDL), printed by graphql-js,
    without its `@deprecated` directives: Apollo MCP Server 2.1's compiler refuses the schema as
    published (fields deprecated where the interface field they implement is not: 8 of them),
    where ours reads it. Both servers read the same stripped text."""
    script = (
        "const {buildClientSchema, printSchema} = require(require.resolve('graphql', {paths: [process.argv[1]]}));"
        "const json = require(process.argv[2]);"
        "require('fs').writeFileSync(process.argv[3], printSchema(buildClientSchema(json.data ?? json)));"
    )
    subprocess.run(
        ["node", "-e", script, str(GRAPHQL_NPM),
         str(GRAPHQL_NPM / "node_modules/@octokit/graphql-schema/schema.json"), str(target)],
        check=True,
    )
    sdl = Path(target).read_text()
    Path(target).write_text(re.sub(r'\s@deprecated(\(reason: "(?:[^"\\]|\\.)*"\))?', "", sdl))


def shape(schema):
    """What a model must know of an input schema: its properties and the required ones."""
    schema = schema or {}
    return sorted(schema.get("properties", {})), sorted(schema.get("required", []))


async def measure(label, params, yoga_pid):
    started = time.perf_counter()
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            listed = await session.list_tools()
            first_list = time.perf_counter() - started
            tools = [tool for tool in listed.tools if tool.name in OPERATIONS]
            raw = json.dumps([t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in listed.tools])
            latencies, answered = [], 0
            for tool in tools:
                schema = tool.input_schema or {}
                arguments = instance(schema, schema.get("$defs") or schema.get("definitions") or {})
                begun = time.perf_counter()
                try:
                    result = await asyncio.wait_for(session.call_tool(tool.name, arguments), 30)
                    text = " ".join(getattr(c, "text", "") for c in result.content)
                    if not result.is_error and '"errors"' not in text:
                        answered += 1
                    elif os.environ.get("BENCH_SHOW"):
                        print(f"{label}: {tool.name} {json.dumps(arguments)[:200]}: {text[:300]}")
                except Exception as error:  # noqa: BLE001
                    if os.environ.get("BENCH_SHOW"):
                        print(f"{label}: {tool.name}: {error}")
                latencies.append(time.perf_counter() - begun)
            rss = peak_rss_kb(os.getpid(), yoga_pid)
    return {
        "tools": len(listed.tools),
        "shapes": {tool.name: shape(tool.input_schema) for tool in tools},
        "list_bytes": len(raw.encode()),
        "answered": answered / max(1, len(tools)),
        "p50_ms": statistics.median(latencies) * 1000 if latencies else 0.0,
        "first_list_s": first_list,
        "rss_mb": rss / 1024,
    }


async def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    yoga, endpoint = start_yoga()
    work = Path(tempfile.mkdtemp())
    write_sdl(work / "schema.graphql")
    (work / "ops").mkdir()
    for name, text in OPERATIONS.items():
        (work / "ops" / f"{name}.graphql").write_text(text + "\n")
    files = ", ".join(f'"ops/{name}.graphql"' for name in OPERATIONS)
    (work / "toolkit.toml").write_text(
        f"""[policy]
default = "allow"

[[sources]]
name = "github"
prefix = false
graphql = "{endpoint}"
schema = "schema.graphql"
operations = [{files}]
"""
    )
    paths = "\n".join(f"    - {work}/ops/{name}.graphql" for name in OPERATIONS)
    (work / "apollo.yaml").write_text(
        f"""endpoint: {endpoint}
transport:
  type: stdio
schema:
  source: local
  path: {work}/schema.graphql
operations:
  source: local
  paths:
{paths}
overrides:
  mutation_mode: all
"""
    )
    env = dict(os.environ, RUST_LOG="error")
    servers = [
        ("toolkit-gen serve", StdioServerParameters(
            command=str(OURS), args=["serve", "--config", str(work / "toolkit.toml")], env=env)),
        ("apollo-mcp-server 2.1", StdioServerParameters(
            command=str(APOLLO), args=[str(work / "apollo.yaml")], env=env)),
    ]
    results = {label: [] for label, _ in servers}
    try:
        for _ in range(rounds):
            for label, params in servers:
                results[label].append(await measure(label, params, yoga.pid))
    finally:
        yoga.kill()
    ours, theirs = (results[label][0]["shapes"] for label, _ in servers)
    same = [name for name in OPERATIONS if name in ours and ours.get(name) == theirs.get(name)]
    print(f"GitHub's schema, {len(OPERATIONS)} operations, {rounds} rounds interleaved, medians:")
    print(f"  input schemas with the same properties and required ones: {len(same)} of {len(OPERATIONS)}")
    for name in OPERATIONS:
        if name not in same:
            print(f"    {name}: ours {ours.get(name)}, Apollo's {theirs.get(name)}")
    for label, runs in results.items():
        middle = {key: statistics.median(run[key] for run in runs)
                  for key in ("tools", "list_bytes", "answered", "p50_ms", "first_list_s", "rss_mb")}
        print(
            f"  {label:22} tools {middle['tools']:.0f}, tools/list {middle['list_bytes'] / 1024:.1f} KB, "
            f"answered {middle['answered'] * 100:.0f} %, p50 {middle['p50_ms']:.2f} ms, "
            f"first list {middle['first_list_s']:.2f} s, peak RSS {middle['rss_mb']:.0f} MB"
        )


if __name__ == "__main__":
    asyncio.run(main())
