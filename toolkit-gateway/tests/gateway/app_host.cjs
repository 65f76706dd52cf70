// What an MCP App host does, with the TypeScript MCP SDK's client (@modelcontextprotocol/sdk on
// npm): lists the tools of the server COMMAND starts (stdio), and reads the `ui://` resource each
// tool's `_meta.ui.resourceUri` names, as a host reads the view it renders. Prints one JSON
// object: {tools, reads: {uri: result}, resources, capabilities}. Run with NODE_PATH at the installed node_modules.
// Usage: node app_host.cjs COMMAND [ARG...]
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = require("@modelcontextprotocol/sdk/client/stdio.js");

(async () => {
  const [command, ...args] = process.argv.slice(2);
  const transport = new StdioClientTransport({ command, args, env: process.env, stderr: "ignore" });
  const client = new Client({ name: "app-host", version: "1.0.0" }, { capabilities: {} });
  await client.connect(transport);
  const { tools } = await client.listTools();
  const reads = {};
  for (const tool of tools) {
    const uri = tool._meta?.ui?.resourceUri;
    if (uri) reads[uri] = await client.readResource({ uri });
  }
  const resources = (await client.listResources()).resources;
  const capabilities = client.getServerCapabilities();
  process.stdout.write(JSON.stringify({ tools, reads, resources, capabilities }));
  await client.close();
})().catch((error) => {
  process.stdout.write(JSON.stringify({ error: String(error) }));
  process.exit(1);
});
