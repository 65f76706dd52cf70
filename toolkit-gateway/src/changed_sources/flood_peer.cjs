// A stdio MCP server for the gateway's tests, with no SDK (newline-delimited JSON-RPC): it counts
// the listings it answers (tool `counts`), and its tool `flood` says its lists changed `times`
// times (tools, resources and prompts in turn), then adds tool `after` and says once more that
// its tools changed, so that a listing that sees `after` saw the last change.
"use strict";
const readline = require("node:readline");

const counts = { "tools/list": 0, "resources/list": 0, "resources/templates/list": 0, "prompts/list": 0 };
const object = { type: "object" };
const tools = [
  {
    name: "flood",
    description: "Says its lists changed `times` times, then adds a tool",
    inputSchema: { type: "object", properties: { times: { type: "integer" } } },
  },
  { name: "counts", description: "How many listings of each kind were answered", inputSchema: object },
];
const changed = [
  "notifications/tools/list_changed",
  "notifications/resources/list_changed",
  "notifications/prompts/list_changed",
];

const send = (message) => process.stdout.write(JSON.stringify({ jsonrpc: "2.0", ...message }) + "\n");
const text = (value) => ({ content: [{ type: "text", text: JSON.stringify(value) }] });

function call(id, params) {
  switch (params?.name) {
    case "counts":
      return send({ id, result: text(counts) });
    case "flood": {
      const times = params.arguments?.times ?? 100;
      for (let i = 0; i < times; i++) send({ method: changed[i % changed.length] });
      if (!tools.some((tool) => tool.name === "after")) {
        tools.push({ name: "after", description: "Added after the flood", inputSchema: object });
      }
      send({ method: changed[0] });
      return send({ id, result: text("flooded") });
    }
    default:
      return send({ id, error: { code: -32602, message: "Unknown tool" } });
  }
}

readline.createInterface({ input: process.stdin }).on("line", (line) => {
  let message;
  try {
    message = JSON.parse(line);
  } catch {
    return;
  }
  const { id, method, params } = message;
  if (id === undefined || typeof method !== "string") return; // a notification or an answer
  if (method in counts) counts[method] += 1;
  switch (method) {
    case "initialize":
      return send({
        id,
        result: {
          protocolVersion: params?.protocolVersion ?? "2025-06-18",
          capabilities: {
            tools: { listChanged: true },
            resources: { listChanged: true },
            prompts: { listChanged: true },
          },
          serverInfo: { name: "flood", version: "1.0.0" },
        },
      });
    case "ping":
      return send({ id, result: {} });
    case "tools/list":
      return send({ id, result: { tools } });
    case "resources/list":
      return send({ id, result: { resources: [{ uri: "flood://note", name: "note" }] } });
    case "resources/templates/list":
      return send({ id, result: { resourceTemplates: [] } });
    case "prompts/list":
      return send({ id, result: { prompts: [{ name: "greet" }] } });
    case "tools/call":
      return call(id, params);
    default:
      return send({ id, error: { code: -32601, message: "Method not found" } });
  }
});
