// A client of the Vercel AI SDK (npm @ai-sdk/mcp 2.0.99, its `experimental_events`) that
// subscribes by webhook to the event type NAME with ARGUMENTS (JSON) at the MCP server URL, with
// the bearer token TOKEN, and receives the events at a callback of its own on 127.0.0.1, verified
// by the SDK's `experimental_createMCPEventWebhook` (signature, timestamp, subscription id, the
// verification challenge). It prints one JSON line per step:
//   {"listed": [names with webhook delivery]}, {"subscribed": result}, {"event": event} (EVENTS
//   of them), {"refreshed": result}, {"unsubscribed": true}
// and {"error": message} with exit 1 when a step fails.
// Usage: node events_subscriber.mjs URL TOKEN NAME ARGUMENTS EVENTS (SDK_MODULES: the
// node_modules that holds the SDK)
import http from "node:http";
import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";
import path from "node:path";

const modules = process.env.SDK_MODULES;
const load = (name) =>
  import(pathToFileURL(createRequire(path.join(modules, "noop.js")).resolve(name)).href);
const say = (line) => process.stdout.write(JSON.stringify(line) + "\n");

const [url, token, name, args, wanted] = process.argv.slice(2);
try {
  const { createMCPClient, experimental_createMCPEventWebhook } = await load("@ai-sdk/mcp");
  // The store the SDK keeps its subscriptions (and their secrets) in: a map, for one run.
  const kept = new Map();
  const store = {
    get: async (key) => kept.get(key),
    getById: async (id) => [...kept.values()].find((sub) => sub.id === id),
    set: async (sub) => void kept.set(sub.key, structuredClone(sub)),
    update: async (key, patch) => void kept.set(key, { ...kept.get(key), ...patch }),
    delete: async (key) => void kept.delete(key),
  };
  let heard = 0;
  let enough;
  const done = new Promise((resolve) => (enough = resolve));
  const handle = experimental_createMCPEventWebhook({
    store,
    onEvent: async ({ event }) => {
      say({ event });
      heard += 1;
      if (heard >= Number(wanted)) enough();
    },
    onError: (error) => say({ receiverError: String(error?.message ?? error) }),
  });
  const receiver = http.createServer(async (request, response) => {
    const chunks = [];
    for await (const chunk of request) chunks.push(chunk);
    const answer = await handle(
      new Request(`http://127.0.0.1:${receiver.address().port}${request.url}`, {
        method: request.method,
        headers: request.headers,
        body: Buffer.concat(chunks),
      }),
    );
    response.writeHead(answer.status, Object.fromEntries(answer.headers));
    response.end(Buffer.from(await answer.arrayBuffer()));
  });
  await new Promise((resolve) => receiver.listen(0, "127.0.0.1", resolve));

  const client = await createMCPClient({
    transport: { type: "http", url, headers: { Authorization: `Bearer ${token}` } },
    experimental_events: { store },
  });
  const listed = await client.experimental_events.list();
  say({
    listed: listed.events
      .filter((event) => event.delivery.includes("webhook"))
      .map((event) => event.name),
  });
  const subscribed = await client.experimental_events.subscribe({
    name,
    arguments: JSON.parse(args),
    delivery: {
      mode: "webhook",
      url: `http://127.0.0.1:${receiver.address().port}/hook`,
      allowInsecureLocalhost: true,
    },
    ttlMs: 600000,
  });
  say({ subscribed });
  await done;
  say({ refreshed: await client.experimental_events.refresh({ id: subscribed.id }) });
  await client.experimental_events.unsubscribe({ id: subscribed.id });
  say({ unsubscribed: true });
  await client.close();
  receiver.close();
} catch (error) {
  say({ error: String(error?.stack ?? error) });
  process.exit(1);
}
