// An MCP App server written with npm `@modelcontextprotocol/ext-apps` 2.0.4's server helpers
// (`registerAppTool`, `registerAppResource`, the package's own weather example) over the v2
// TypeScript SDK (`@modelcontextprotocol/server`), on stdio, for apps.rs. ESM ignores
// NODE_PATH: EXT_APPS_MODULES names the node_modules folder the packages are loaded from
// (target/peers/ext-apps-npm/node_modules). Usage: node ext_apps_server.mjs
import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";

const modules = process.env.EXT_APPS_MODULES;
const load = (name) => {
  const require = createRequire(pathToFileURL(`${modules}/`));
  return import(pathToFileURL(require.resolve(name)).href);
};
const { McpServer } = await load("@modelcontextprotocol/server");
const { StdioServerTransport } = await load("@modelcontextprotocol/server/stdio");
const { registerAppTool, registerAppResource, RESOURCE_MIME_TYPE } = await load("@modelcontextprotocol/ext-apps/server");
const { z } = await load("zod");

const URI = "ui://weather/view.html";
const HTML = '<!doctype html>\n<html><body><p id="w">…</p><script type="module">document.getElementById("w").textContent = "sunny";</script></body></html>\n';

const server = new McpServer({ name: "weather-app", version: "1.0.0" });
registerAppTool(
  server,
  "get-weather",
  {
    title: "Get Weather",
    description: "Get current weather for a location",
    inputSchema: z.object({ location: z.string() }),
    _meta: { ui: { resourceUri: URI } },
  },
  async (args) => ({ content: [{ type: "text", text: JSON.stringify({ location: args.location, sky: "sunny" }) }] }),
);
registerAppResource(server, "Weather View", URI, { description: "Interactive weather display" }, async () => ({
  contents: [{ uri: URI, mimeType: RESOURCE_MIME_TYPE, text: HTML }],
}));
await server.connect(new StdioServerTransport());
