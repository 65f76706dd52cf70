// One person's client of a gateway shared by a team, for isolation.rs: the TypeScript
// MCP SDK's client (@modelcontextprotocol/sdk on npm) over Streamable HTTP with its own bearer
// token, declaring `roots`, `sampling` and `elicitation`, and answering each with its person's
// name, so that whose client was asked shows in the answer and in what each client records.
// Run with NODE_PATH at the installed node_modules.
//
// Environment: MCP_URL, TOKEN, NAME; SKIP_INITIALIZED=1 to never send
// `notifications/initialized` (a client that skips it).
// Prints one JSON line once connected: {"session": ID}. Then reads lines from stdin: a JSON
// `{"tool", "arguments"}` is called and its result printed as one line ({"result"} or
// {"error"}); `end` prints {"asked": [{method, params}...]} (every request the gateway made of
// this client) and exits.
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const {
  StreamableHTTPClientTransport,
} = require("@modelcontextprotocol/sdk/client/streamableHttp.js");
const {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
} = require("@modelcontextprotocol/sdk/types.js");
const readline = require("readline");

const name = process.env.NAME;
const asked = [];

async function main() {
  const transport = new StreamableHTTPClientTransport(new URL(process.env.MCP_URL), {
    requestInit: { headers: { Authorization: `Bearer ${process.env.TOKEN}` } },
  });
  if (process.env.SKIP_INITIALIZED === "1") {
    const send = transport.send.bind(transport);
    transport.send = (message, options) =>
      message.method === "notifications/initialized" ? Promise.resolve() : send(message, options);
  }
  const client = new Client(
    { name: `team-${name}`, version: "1.0.0" },
    { capabilities: { roots: { listChanged: true }, sampling: {}, elicitation: { form: {} } } },
  );
  client.setRequestHandler(CreateMessageRequestSchema, async (request) => {
    asked.push({ method: request.method, params: request.params });
    return {
      role: "assistant",
      content: { type: "text", text: `sampled by ${name}` },
      model: "team-test",
    };
  });
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    asked.push({ method: request.method, params: request.params });
    return { action: "decline" };
  });
  client.setRequestHandler(ListRootsRequestSchema, async (request) => {
    asked.push({ method: request.method, params: request.params });
    return { roots: [{ uri: `file:///home/${name}`, name: `${name}'s home` }] };
  });
  await client.connect(transport);
  console.log(JSON.stringify({ session: transport.sessionId ?? null }));
  const lines = readline.createInterface({ input: process.stdin });
  for await (const line of lines) {
    if (line.trim() === "end") {
      console.log(JSON.stringify({ asked }));
      break;
    }
    const call = JSON.parse(line);
    try {
      const result = await client.callTool(
        { name: call.tool, arguments: call.arguments },
        undefined,
        { timeout: 20000 },
      );
      console.log(JSON.stringify({ result }));
    } catch (error) {
      console.log(JSON.stringify({ error: String(error && error.message ? error.message : error) }));
    }
  }
  await client.close().catch(() => {});
  process.exit(0);
}

main().catch((error) => {
  console.log(JSON.stringify({ error: String(error && error.stack ? error.stack : error) }));
  process.exit(1);
});
