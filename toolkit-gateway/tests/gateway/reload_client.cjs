// A client of the TypeScript MCP SDK (@modelcontextprotocol/sdk on npm) that holds one session of
// the gateway COMMAND starts (stdio) across a reload: lists the tools, prints a line `ready`, waits
// (at most 20 s) for notifications/tools/list_changed, lists the tools again and calls TOOL on
// the same session, then prints {before, after, heard, called}. Run with NODE_PATH at the
// installed node_modules.
// Usage: node reload_client.cjs TOOL COMMAND [ARG...]
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = require("@modelcontextprotocol/sdk/client/stdio.js");
const { ToolListChangedNotificationSchema } = require("@modelcontextprotocol/sdk/types.js");

(async () => {
  const [tool, command, ...args] = process.argv.slice(2);
  const transport = new StdioClientTransport({ command, args, env: process.env, stderr: "inherit" });
  const client = new Client({ name: "reload-client", version: "1.0.0" }, { capabilities: {} });
  let told;
  const heard = new Promise((resolve) => (told = resolve));
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => told(true));
  await client.connect(transport);
  const before = (await client.listTools()).tools.map((t) => t.name);
  console.log("ready");
  let timer;
  const timeout = new Promise((resolve) => (timer = setTimeout(() => resolve(false), 20000)));
  const wasTold = await Promise.race([heard, timeout]);
  clearTimeout(timer);
  const after = (await client.listTools()).tools.map((t) => t.name);
  const result = await client.callTool({ name: tool, arguments: {} });
  console.log(JSON.stringify({ before, after, heard: wasTold, called: !result.isError }));
  await client.close();
})().catch((error) => {
  console.log(JSON.stringify({ error: String(error) }));
  process.exit(1);
});
