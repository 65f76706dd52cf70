// A client of the TypeScript MCP SDK (@modelcontextprotocol/sdk on npm) that subscribes to a
// resource of the server COMMAND starts (stdio) and waits (at most 20 s) for the server to say it
// changed: subscribes to URI, calls the tool TOGGLE (server-everything's
// `toggle-subscriber-updates`, behind the gateway), and prints {updated: [uri, ...]} once the
// first update came. With AFTER_RELOAD=1 it prints a line `subscribed` once subscribed, and waits
// (at most 20 s) for notifications/tools/list_changed (the gateway reloaded) before it calls
// TOGGLE; it prints {updated, capabilities, reloaded} then. Run with NODE_PATH at the installed
// node_modules.
// Usage: node subscriber.cjs URI TOGGLE COMMAND [ARG...]
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = require("@modelcontextprotocol/sdk/client/stdio.js");
const {
  ResourceUpdatedNotificationSchema,
  ToolListChangedNotificationSchema,
} = require("@modelcontextprotocol/sdk/types.js");

(async () => {
  const [uri, toggle, command, ...args] = process.argv.slice(2);
  const transport = new StdioClientTransport({ command, args, env: process.env, stderr: "inherit" });
  const client = new Client({ name: "subscriber", version: "1.0.0" }, { capabilities: {} });
  const updated = [];
  let told;
  const first = new Promise((resolve) => (told = resolve));
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (notification) => {
    updated.push(notification.params.uri);
    told();
  });
  let changed;
  const reload = new Promise((resolve) => (changed = resolve));
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => changed(true));
  await client.connect(transport);
  const capabilities = client.getServerCapabilities();
  await client.subscribeResource({ uri });
  let reloaded;
  if (process.env.AFTER_RELOAD === "1") {
    console.log("subscribed");
    let wait;
    const late = new Promise((resolve) => (wait = setTimeout(() => resolve(false), 20000)));
    reloaded = await Promise.race([reload, late]);
    clearTimeout(wait);
  }
  await client.callTool({ name: toggle, arguments: {} });
  let timer;
  const timeout = new Promise((resolve) => (timer = setTimeout(resolve, 20000)));
  await Promise.race([first, timeout]);
  clearTimeout(timer);
  await client.unsubscribeResource({ uri });
  process.stdout.write(JSON.stringify({ updated, capabilities, reloaded }));
  await client.close();
})().catch((error) => {
  process.stdout.write(JSON.stringify({ error: String(error) }));
  process.exit(1);
});
