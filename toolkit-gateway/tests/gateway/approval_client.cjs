// A client of a gateway whose policy marks a tool `approve`, for approval.rs: the
// TypeScript MCP SDK's client (@modelcontextprotocol/sdk on npm) over Streamable HTTP, declaring
// `elicitation` (form mode) unless ELICITATION=none, and answering each `elicitation/create` with
// the answer its test gave for the call. Run with NODE_PATH at the installed node_modules.
//
// Environment: MCP_URL; ELICITATION=none to declare no elicitation capability.
// Prints one JSON line once connected: {"session": ID}. Then reads lines from stdin, each a JSON
// `{"tool", "arguments", "answer"}`: `tool` is called with `arguments`, and an
// `elicitation/create` made during the call is answered with `answer` (a decline when there is
// none). Prints one line for each: {"result"} or {"error"}, with "asked": the requests the gateway
// made of this client during the call ({method, params}).
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const {
  StreamableHTTPClientTransport,
} = require("@modelcontextprotocol/sdk/client/streamableHttp.js");
const { ElicitRequestSchema } = require("@modelcontextprotocol/sdk/types.js");
const readline = require("readline");

let asked = [];
let answer = null;

async function main() {
  const transport = new StreamableHTTPClientTransport(new URL(process.env.MCP_URL));
  const elicits = process.env.ELICITATION !== "none";
  const client = new Client(
    { name: "approval-test", version: "1.0.0" },
    { capabilities: elicits ? { elicitation: { form: {} } } : {} },
  );
  if (elicits) {
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push({ method: request.method, params: request.params });
      return answer ?? { action: "decline" };
    });
  }
  await client.connect(transport);
  console.log(JSON.stringify({ session: transport.sessionId ?? null }));
  const lines = readline.createInterface({ input: process.stdin });
  for await (const line of lines) {
    const call = JSON.parse(line);
    asked = [];
    answer = call.answer ?? null;
    try {
      const result = await client.callTool(
        { name: call.tool, arguments: call.arguments },
        undefined,
        { timeout: 30000 },
      );
      console.log(JSON.stringify({ result, asked }));
    } catch (error) {
      console.log(
        JSON.stringify({ error: String(error && error.message ? error.message : error), asked }),
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
