// The system of the conformance suites over the TypeScript MCP SDK (@modelcontextprotocol/sdk):
// echo, failing and blocking, behind its own check of a bearer token, in the state asked for.
// Run with NODE_PATH at the installed node_modules.
// Usage: node ts_conformance_peer.cjs PORT (sessions | sse) (working | unauthorized | unavailable) TOKEN ENDED_FILE
//   sessions  Streamable HTTP with sessions (one transport per session id)
//   sse       the old HTTP+SSE transport of 2024-11-05 (GET /sse, POST /messages)
// ENDED_FILE is written when a blocking call's work ends (its request cancelled).
const fs = require("node:fs");
const http = require("node:http");
const { randomUUID } = require("node:crypto");
const { McpServer } = require("@modelcontextprotocol/sdk/server/mcp.js");
const { StreamableHTTPServerTransport } = require("@modelcontextprotocol/sdk/server/streamableHttp.js");
const { SSEServerTransport } = require("@modelcontextprotocol/sdk/server/sse.js");
const { z } = require("zod");

const [port, transportKind, state, token, endedFile] = process.argv.slice(2);

function makeServer() {
  const server = new McpServer({ name: "ts-conformance", version: "1.32.2" });
  server.registerTool(
    "echo",
    { description: "Answers with the text it is given.", inputSchema: { text: z.string() } },
    async ({ text }) => ({ content: [{ type: "text", text }] }),
  );
  server.registerTool(
    "failing",
    { description: "Reports that it failed.", inputSchema: { text: z.string().optional() } },
    async () => ({ isError: true, content: [{ type: "text", text: "the tool failed on purpose" }] }),
  );
  server.registerTool(
    "blocking",
    { description: "Never answers.", inputSchema: { text: z.string().optional() } },
    (_args, extra) =>
      new Promise((resolve) => {
        extra.signal.addEventListener("abort", () => {
          fs.writeFileSync(endedFile, "ended");
          resolve({ content: [] });
        });
      }),
  );
  return server;
}

const transports = new Map();

async function body(req) {
  let text = "";
  for await (const chunk of req) text += chunk;
  return text ? JSON.parse(text) : undefined;
}

http
  .createServer(async (req, res) => {
    if (state === "unavailable") {
      res.writeHead(503).end("down for maintenance");
      return;
    }
    if (state === "unauthorized" || req.headers.authorization !== `Bearer ${token}`) {
      res.writeHead(401).end("no");
      return;
    }
    const url = new URL(req.url, "http://127.0.0.1");
    if (transportKind === "sse") {
      if (req.method === "GET" && url.pathname === "/sse") {
        const transport = new SSEServerTransport("/messages", res);
        transports.set(transport.sessionId, transport);
        res.on("close", () => transports.delete(transport.sessionId));
        await makeServer().connect(transport);
        return;
      }
      const transport = transports.get(url.searchParams.get("sessionId"));
      if (req.method === "POST" && url.pathname === "/messages" && transport) {
        await transport.handlePostMessage(req, res, await body(req));
        return;
      }
      res.writeHead(404).end();
      return;
    }
    const parsed = req.method === "POST" ? await body(req) : undefined;
    const id = req.headers["mcp-session-id"];
    let transport = id && transports.get(id);
    if (!transport) {
      if (id) {
        res.writeHead(404).end();
        return;
      }
      transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (sessionId) => transports.set(sessionId, transport),
      });
      await makeServer().connect(transport);
    }
    await transport.handleRequest(req, res, parsed);
  })
  .listen(Number(port), "127.0.0.1");
