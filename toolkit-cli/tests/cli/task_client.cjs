// A client of the TypeScript MCP SDK (@modelcontextprotocol/sdk on npm) that drives tasks itself
// (MCP 2025-11-25, the SDK's experimental task API), against the server COMMAND starts (stdio):
// the gateway in front of ts_task_peer.cjs (source `tasks`) and server-everything (source
// `everything`). With TASKS=1 it declares `capabilities.tasks`; without, it is a plain client.
// Prints one JSON object of what it saw. Run with NODE_PATH at the installed node_modules.
// Usage: node task_client.cjs COMMAND [ARG...]
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = require("@modelcontextprotocol/sdk/client/stdio.js");
const { CreateTaskResultSchema, CallToolResultSchema } = require("@modelcontextprotocol/sdk/types.js");

async function streamed(client, name, args) {
  const seen = { types: [], statuses: [] };
  for await (const message of client.experimental.tasks.callToolStream({ name, arguments: args })) {
    seen.types.push(message.type);
    if (message.type === "taskCreated") seen.taskId = message.task.taskId;
    if (message.type === "taskStatus") seen.statuses.push(message.task.status);
    if (message.type === "result") seen.result = message.result;
    if (message.type === "error") seen.error = String(message.error);
  }
  return seen;
}

async function refused(promise) {
  try {
    await promise;
    return null;
  } catch (error) {
    return { code: error.code, message: String(error.message) };
  }
}

(async () => {
  const [command, ...args] = process.argv.slice(2);
  const transport = new StdioClientTransport({ command, args, env: process.env, stderr: "inherit" });
  const tasks = process.env.TASKS === "1";
  const capabilities = tasks ? { tasks: { list: {}, cancel: {} } } : {};
  const client = new Client({ name: "task-client", version: "1.0.0" }, { capabilities });
  await client.connect(transport);
  const out = { capabilities: client.getServerCapabilities() };
  const { tools } = await client.listTools();
  out.tools = Object.fromEntries(tools.map((tool) => [tool.name, tool.execution ?? null]));
  if (!tasks) {
    out.plain = await client.callTool({ name: "tasks__slow", arguments: { topic: "tides" } });
    process.stdout.write(JSON.stringify(out));
    await client.close();
    return;
  }
  out.slow = await streamed(client, "tasks__slow", { topic: "tides" });
  out.research = await streamed(client, "everything__simulate-research-query", { topic: "python", ambiguous: false });
  // A task that never ends: made, looked at, listed, cancelled.
  const created = await client.request(
    { method: "tools/call", params: { name: "tasks__never", arguments: {}, task: { ttl: 60000 } } },
    CreateTaskResultSchema,
  );
  out.never = { created: created.task };
  out.never.got = await client.experimental.tasks.getTask(created.task.taskId);
  out.never.listed = (await client.experimental.tasks.listTasks()).tasks.map((task) => task.taskId);
  out.never.cancelled = await client.experimental.tasks.cancelTask(created.task.taskId);
  out.never.after = await client.experimental.tasks.getTask(created.task.taskId);
  out.unknown = await refused(client.experimental.tasks.getTask("tasks/no-such-task"));
  const upstreamId = created.task.taskId.slice("tasks/".length);
  out.upstreamId = upstreamId;
  out.bare = await refused(client.experimental.tasks.getTask(upstreamId));
  out.elsewhere = await refused(client.experimental.tasks.getTask(`everything/${upstreamId}`));
  out.record = JSON.parse(
    (await client.callTool({ name: "tasks__record", arguments: {} }, CallToolResultSchema)).content[0].text,
  );
  process.stdout.write(JSON.stringify(out));
  await client.close();
})().catch((error) => {
  process.stdout.write(JSON.stringify({ error: String(error && error.stack || error) }));
  process.exit(1);
});
