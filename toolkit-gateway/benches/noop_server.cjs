// The upstream of the peer-gateway benchmark (peer_gateways.rs): a stdio MCP server of the
// TypeScript SDK (@modelcontextprotocol/sdk, its low-level Server) with one tool, `noop`, that
// answers "ok" at once, so that what is measured is the hop in front of it.
// Usage: node noop_server.cjs NODE_MODULES (target/peers/mcp-npm/node_modules: the SDK is found
// there, whatever environment a gateway gives its server).
module.paths.unshift(process.argv[2]);
const { Server } = require("@modelcontextprotocol/sdk/server/index.js");
const { StdioServerTransport } = require("@modelcontextprotocol/sdk/server/stdio.js");
const { ListToolsRequestSchema, CallToolRequestSchema } = require("@modelcontextprotocol/sdk/types.js");

const server = new Server({ name: "noop", version: "1.0.0" }, { capabilities: { tools: {} } });
server.setRequestHandler(ListToolsRequestSchema, async () => ({
  tools: [
    {
      name: "noop",
      description: "Answers ok at once.",
      inputSchema: { type: "object", properties: {} },
      annotations: { readOnlyHint: true },
    },
  ],
}));
server.setRequestHandler(CallToolRequestSchema, async () => ({
  content: [{ type: "text", text: "ok" }],
}));
server.connect(new StdioServerTransport());
