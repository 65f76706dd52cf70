// A tiny MCP App server (the MCP Apps extension's wire form, written with the TypeScript MCP SDK,
// @modelcontextprotocol/sdk on npm, over stdio): a tool whose `_meta.ui.resourceUri` names a
// `ui://` resource, and that resource, `text/html;profile=mcp-app` with its `_meta.ui` (CSP), for
// apps.rs. Run with NODE_PATH at the installed node_modules.
// Usage: node app_server.cjs
const { Server } = require("@modelcontextprotocol/sdk/server/index.js");
const { StdioServerTransport } = require("@modelcontextprotocol/sdk/server/stdio.js");
const {
  ListToolsRequestSchema,
  CallToolRequestSchema,
  ListResourcesRequestSchema,
  ReadResourceRequestSchema,
} = require("@modelcontextprotocol/sdk/types.js");

const URI = "ui://clock/app.html";
const MIME = "text/html;profile=mcp-app";
const HTML = '<!doctype html>\n<html><head><meta charset="utf-8"><title>Clock</title></head>\n<body><p id="t">…</p><script type="module">document.getElementById("t").textContent = new Date().toISOString();</script></body></html>\n';
const UI_META = { ui: { csp: { connectDomains: [], resourceDomains: [] }, prefersBorder: true } };

const server = new Server({ name: "clock-app", version: "1.0.0" }, { capabilities: { tools: {}, resources: {} } });
server.setRequestHandler(ListToolsRequestSchema, async () => ({
  tools: [
    {
      name: "show-clock",
      description: "Shows the time in an interactive view.",
      inputSchema: { type: "object", properties: {} },
      _meta: { ui: { resourceUri: URI, visibility: ["model", "app"] }, "ui/resourceUri": URI },
    },
  ],
}));
server.setRequestHandler(CallToolRequestSchema, async () => ({
  content: [{ type: "text", text: new Date().toISOString() }],
}));
server.setRequestHandler(ListResourcesRequestSchema, async () => ({
  resources: [{ uri: URI, name: "clock", mimeType: MIME, _meta: UI_META }],
}));
server.setRequestHandler(ReadResourceRequestSchema, async (request) => {
  if (request.params.uri !== URI) {
    const error = new Error(`Resource not found: ${request.params.uri}`);
    error.code = -32002;
    throw error;
  }
  return { contents: [{ uri: URI, mimeType: MIME, text: HTML, _meta: UI_META }] };
});
server.connect(new StdioServerTransport());
