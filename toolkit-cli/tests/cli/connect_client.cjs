// One person's client of a gateway whose source each person connects their own account to, for
// connections.rs: the TypeScript MCP SDK's client (@modelcontextprotocol/sdk on npm) over
// Streamable HTTP with its own bearer token, declaring URL-mode elicitation (MCP 2025-11-25)
// unless URL_ELICITATION=0. Run with NODE_PATH at the installed node_modules.
//
// Environment: MCP_URL, TOKEN; URL_ELICITATION=0 to declare no elicitation capability.
// Prints one JSON line once connected: {"session": ID}. Then reads lines from stdin, each a JSON
// `{"tool", "arguments"}`: the tool is called. An `elicitation/create` in URL mode made during the
// call is printed at once as {"open": URL, "params": PARAMS} (the user is to open URL) and
// accepted. Once the call ends, prints {"result"} or {"error"}, with "completed": the
// `notifications/elicitation/complete` heard meanwhile.
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const {
  StreamableHTTPClientTransport,
} = require("@modelcontextprotocol/sdk/client/streamableHttp.js");
const {
  ElicitRequestSchema,
  ElicitationCompleteNotificationSchema,
} = require("@modelcontextprotocol/sdk/types.js");
const readline = require("readline");

let completed = [];

async function main() {
  const transport = new StreamableHTTPClientTransport(new URL(process.env.MCP_URL), {
    requestInit: { headers: { Authorization: `Bearer ${process.env.TOKEN}` } },
  });
  const url = process.env.URL_ELICITATION !== "0";
  const client = new Client(
    { name: "connect-test", version: "1.0.0" },
    { capabilities: url ? { elicitation: { url: {} } } : {} },
  );
  if (url) {
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      console.log(JSON.stringify({ open: request.params.url, params: request.params }));
      return { action: "accept" };
    });
    client.setNotificationHandler(ElicitationCompleteNotificationSchema, (notification) => {
      completed.push(notification.params);
    });
  }
  await client.connect(transport);
  console.log(JSON.stringify({ session: transport.sessionId ?? null }));
  const lines = readline.createInterface({ input: process.stdin });
  for await (const line of lines) {
    const call = JSON.parse(line);
    completed = [];
    try {
      const result = await client.callTool(
        { name: call.tool, arguments: call.arguments },
        undefined,
        { timeout: 120000 },
      );
      console.log(JSON.stringify({ result, completed }));
    } catch (error) {
      console.log(
        JSON.stringify({ error: String(error && error.message ? error.message : error), completed }),
      );
    }
  }
  await client.close().catch(() => {});
  process.exit(0);
}

main().catch((error) => {
  console.log(JSON.stringify({ error: String(error && error.stack ? error.stack : error) }));
  process.exit(1);
});
