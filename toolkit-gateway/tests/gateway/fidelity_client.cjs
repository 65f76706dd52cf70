// The TypeScript MCP SDK's client (@modelcontextprotocol/sdk on npm), declaring `roots`,
// `sampling` and `elicitation` (sampling answered "sampled", elicitation declined), reading
// real MCP servers directly and through the gateway, for fidelity.rs. Run with NODE_PATH
// at the installed node_modules.
// Usage: node fidelity_client.cjs PLAN.json
// The plan: {"roots": [...], "targets": [{"key", "command", "args", "calls": [{"tool", "arguments"}]}]}
// A call may be {"rootsChanged": [...]} instead: the client's roots become these, and it says so
// (`notifications/roots/list_changed`); and a call with `until` is made again (every 100 ms, 100
// times at most) until its result's JSON contains that text.
// A target may be {"key", "url", "calls"} instead: a server over Streamable HTTP at `url`.
// Prints one JSON object: for each target's key, its tools and each call's result (or the error
// it threw) with the progress it was told; for an HTTP target also `wire`, the body of each
// answer to a POST as it came over the socket (JSON or an event stream), since a JavaScript
// number no longer tells `1` from `1.0`.
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = require("@modelcontextprotocol/sdk/client/stdio.js");
const {
  StreamableHTTPClientTransport,
} = require("@modelcontextprotocol/sdk/client/streamableHttp.js");
const {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
} = require("@modelcontextprotocol/sdk/types.js");
const fs = require("fs");

// A transport to `target`: over HTTP with a `fetch` that copies each POST answer's body as it
// passes to the SDK (into `bodies`, one `{ text }` each), or over stdio. The copy is made of what
// the SDK reads, not read off a clone: a clone whose connection the client's close cuts may
// never settle.
function transportOf(target, bodies) {
  if (target.url !== undefined) {
    const recording = async (url, init) => {
      const response = await fetch(url, init);
      if (init?.method !== "POST" || response.body === null) {
        return response;
      }
      const body = { text: "" };
      bodies.push(body);
      const decoder = new TextDecoder();
      const copy = new TransformStream({
        transform(chunk, controller) {
          body.text += decoder.decode(chunk, { stream: true });
          controller.enqueue(chunk);
        },
      });
      return new Response(response.body.pipeThrough(copy), {
        status: response.status,
        statusText: response.statusText,
        headers: response.headers,
      });
    };
    return new StreamableHTTPClientTransport(new URL(target.url), { fetch: recording });
  }
  return new StdioClientTransport({
    command: target.command,
    args: target.args,
    env: { ...process.env, ...(target.env || {}) },
    stderr: "ignore",
  });
}

async function read(target, roots) {
  let current = roots;
  const bodies = [];
  const transport = transportOf(target, bodies);
  // The capabilities the gateway declares to its servers, so that a server lists the same tools
  // to both (server-everything registers some only for a client that declares them).
  const capabilities = { roots: { listChanged: true }, sampling: {}, elicitation: { form: {} } };
  const client = new Client({ name: "fidelity-client", version: "1.32.2" }, { capabilities });
  client.setRequestHandler(ListRootsRequestSchema, async () => ({ roots: current }));
  client.setRequestHandler(CreateMessageRequestSchema, async () => ({
    role: "assistant",
    content: { type: "text", text: "sampled" },
    model: "fidelity",
  }));
  client.setRequestHandler(ElicitRequestSchema, async () => ({ action: "decline" }));
  await client.connect(transport);
  // The progress each call is told, read off the transport in the order it arrives. The SDK
  // (1.32.2) hands a notification to its handler a microtask later than it settles a response read
  // in the same chunk, so a call's last report written just before its answer (as a gateway
  // writes them, with no turn of an event loop between) can reach `onprogress` after the call has
  // ended and be dropped; the transport's order is the order the server wrote.
  let told = null;
  const handle = transport.onmessage;
  transport.onmessage = (message, extra) => {
    if (told !== null && message.method === "notifications/progress") {
      const { progressToken, ...params } = message.params;
      told.push(params);
    }
    handle?.(message, extra);
  };
  const tools = [];
  let cursor;
  do {
    const page = await client.listTools(cursor === undefined ? {} : { cursor });
    tools.push(...page.tools);
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  const calls = [];
  for (const call of target.calls) {
    if (call.rootsChanged !== undefined) {
      current = call.rootsChanged;
      await client.sendRootsListChanged();
      calls.push({ rootsChanged: true });
      continue;
    }
    const progress = [];
    told = progress;
    try {
      let result;
      for (let attempt = 0; attempt < 100; attempt += 1) {
        result = await client.callTool(
          { name: call.tool, arguments: call.arguments },
          undefined,
          // `onprogress` makes the SDK send a progress token; `told` keeps what comes.
          { onprogress: () => {}, timeout: 30000 },
        );
        if (call.until === undefined || JSON.stringify(result).includes(call.until)) {
          break;
        }
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      calls.push({ result, progress });
    } catch (error) {
      calls.push({ error: { code: error.code, message: error.message }, progress });
    }
    told = null;
  }
  await client.close();
  if (target.url !== undefined) {
    return { tools, calls, wire: bodies.map((body) => body.text) };
  }
  return { tools, calls };
}

async function main() {
  const plan = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
  const out = {};
  for (const target of plan.targets) {
    out[target.key] = await read(target, plan.roots);
  }
  process.stdout.write(JSON.stringify(out) + "\n");
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
