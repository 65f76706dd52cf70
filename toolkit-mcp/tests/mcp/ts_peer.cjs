// A server of the TypeScript MCP SDK (@modelcontextprotocol/sdk on npm) for the tests: stateless,
// answering JSON, one transport per request. Run with NODE_PATH at the installed node_modules.
// Usage: node ts_peer.cjs PORT
const http = require("node:http");
const { McpServer } = require("@modelcontextprotocol/sdk/server/mcp.js");
const { StreamableHTTPServerTransport } = require("@modelcontextprotocol/sdk/server/streamableHttp.js");
const { z } = require("zod");

function makeServer() {
  const server = new McpServer({ name: "ts-peer", version: "1.32.2" });
  server.registerTool(
    "echo",
    { description: "Answers with the text it is given.", inputSchema: { text: z.string() }, annotations: { readOnlyHint: true } },
    async ({ text }) => ({ content: [{ type: "text", text }] }),
  );
  server.registerTool("failing", { description: "Reports that it failed." }, async () => ({
    isError: true,
    content: [{ type: "text", text: "the tool failed on purpose" }],
  }));
  return server;
}

http
  .createServer(async (req, res) => {
    let body = "";
    for await (const chunk of req) body += chunk;
    const server = makeServer();
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on("close", () => {
      transport.close();
      server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, body ? JSON.parse(body) : undefined);
  })
  .listen(Number(process.argv[2]), "127.0.0.1");
