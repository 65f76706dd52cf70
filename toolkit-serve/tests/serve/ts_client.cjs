// The TypeScript MCP SDK's client (@modelcontextprotocol/sdk on npm) driving a served toolkit,
// for the tests. Run with NODE_PATH at the installed node_modules.
// Usage: node ts_client.cjs stdio COMMAND | node ts_client.cjs http URL
// Prints one JSON object: what it read.
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = require("@modelcontextprotocol/sdk/client/stdio.js");
const { StreamableHTTPClientTransport } = require("@modelcontextprotocol/sdk/client/streamableHttp.js");

async function main() {
  const [mode, target] = process.argv.slice(2);
  const transport =
    mode === "stdio"
      ? new StdioClientTransport({ command: target, args: [], stderr: "ignore" })
      : new StreamableHTTPClientTransport(new URL(target));
  const client = new Client({ name: "ts-client", version: "1.32.2" });
  await client.connect(transport);
  const listed = await client.listTools();
  const echo = await client.callTool({ name: "echo", arguments: { text: "hi" } });
  const add = await client.callTool({ name: "add", arguments: { a: 1, b: 2 } });
  const bad = await client.callTool({ name: "add", arguments: { a: 1 } });
  const failed = await client.callTool({ name: "find_thing", arguments: { id: "x" } });
  let unknown;
  try {
    unknown = await client.callTool({ name: "nope", arguments: {} });
  } catch (error) {
    unknown = { code: error.code, message: error.message };
  }
  const out = { server: client.getServerVersion(), tools: listed.tools, echo, add, bad, failed, unknown };
  process.stdout.write(JSON.stringify(out) + "\n");
  await client.close();
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
