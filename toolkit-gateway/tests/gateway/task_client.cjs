// A client of the TypeScript MCP SDK (@modelcontextprotocol/sdk on npm) that drives tasks itself
// (MCP 2025-11-25, the SDK's experimental task API), against the server COMMAND starts (stdio):
// the gateway in front of ts_task_peer.cjs (source `tasks`) and server-everything (source
// `everything`), or over Streamable HTTP at MCP_URL (retried until the gateway listens), where a
// second session then tries the first one's tasks. With TASKS=1 it declares
// `capabilities.tasks`; without, it is a plain client. Prints one JSON object of what it saw.
// Run with NODE_PATH at the installed node_modules.
// Usage: node task_client.cjs COMMAND [ARG...]   or   MCP_URL=http://... node task_client.cjs
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = require("@modelcontextprotocol/sdk/client/stdio.js");
const { StreamableHTTPClientTransport } = require("@modelcontextprotocol/sdk/client/streamableHttp.js");
const {
  CreateTaskResultSchema,
  CallToolResultSchema,
  TaskStatusNotificationSchema,
} = require("@modelcontextprotocol/sdk/types.js");

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

// Waits (up to 5 s) until `told` holds a status `status` of the task `taskId`.
async function told(client, taskId, status) {
  for (let waited = 0; waited < 5000; waited += 50) {
    if (client.statuses.some((told) => told.taskId === taskId && told.status === status)) return true;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return false;
}

async function refused(promise) {
  try {
    await promise;
    return null;
  } catch (error) {
    return { code: error.code, message: String(error.message) };
  }
}

// A client connected over stdio (the command of the arguments) or to MCP_URL.
async function connected(capabilities) {
  const url = process.env.MCP_URL;
  for (let attempt = 0; ; attempt++) {
    const client = new Client({ name: "task-client", version: "1.0.0" }, { capabilities });
    // The statuses told (`notifications/tasks/status`), in order.
    client.statuses = [];
    client.setNotificationHandler(TaskStatusNotificationSchema, (note) => {
      client.statuses.push({ taskId: note.params.taskId, status: note.params.status });
    });
    const [command, ...args] = process.argv.slice(2);
    const transport = url
      ? new StreamableHTTPClientTransport(new URL(url))
      : new StdioClientTransport({ command, args, env: process.env, stderr: "inherit" });
    try {
      await client.connect(transport);
      return client;
    } catch (error) {
      if (!url || attempt >= 150) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

(async () => {
  const tasks = process.env.TASKS === "1";
  const capabilities = tasks ? { tasks: { list: {}, cancel: {} } } : {};
  const client = await connected(capabilities);
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
  // Served as `tasks/<nonce>/<upstream id>`.
  const upstreamId = created.task.taskId.split("/").pop();
  out.upstreamId = upstreamId;
  out.bare = await refused(client.experimental.tasks.getTask(upstreamId));
  out.withoutNonce = await refused(client.experimental.tasks.getTask(`tasks/${upstreamId}`));
  out.elsewhere = await refused(client.experimental.tasks.getTask(`everything/${upstreamId}`));
  if (process.env.MCP_URL) {
    // A second session: the first one's tasks are unknown to it, its own are listed.
    const kept = await client.request(
      { method: "tools/call", params: { name: "tasks__never", arguments: {}, task: { ttl: 60000 } } },
      CreateTaskResultSchema,
    );
    const other = await connected(capabilities);
    const own = await other.request(
      { method: "tools/call", params: { name: "tasks__never", arguments: {}, task: { ttl: 60000 } } },
      CreateTaskResultSchema,
    );
    out.other = {
      own: own.task.taskId,
      kept: kept.task.taskId,
      got: await refused(other.experimental.tasks.getTask(kept.task.taskId)),
      result: await refused(other.experimental.tasks.getTaskResult(out.research.taskId, CallToolResultSchema)),
      cancelled: await refused(other.experimental.tasks.cancelTask(kept.task.taskId)),
      listed: (await other.experimental.tasks.listTasks()).tasks.map((task) => task.taskId),
    };
    // Its own task's statuses are told to it, and not to the first session (the SDK calls a tool
    // as a task once it listed it so).
    await other.listTools();
    out.other.slow = await streamed(other, "tasks__slow", { topic: "waves" });
    out.other.told = await told(other, out.other.slow.taskId, "completed");
    out.other.keptAfter = (await client.experimental.tasks.getTask(kept.task.taskId)).status;
    out.other.firstListed = (await client.experimental.tasks.listTasks()).tasks.map((task) => task.taskId);
    await other.experimental.tasks.cancelTask(own.task.taskId);
    await client.experimental.tasks.cancelTask(kept.task.taskId);
    out.other.statuses = other.statuses;
    await other.close();
  }
  out.statuses = client.statuses;
  out.record = JSON.parse(
    (await client.callTool({ name: "tasks__record", arguments: {} }, CallToolResultSchema)).content[0].text,
  );
  process.stdout.write(JSON.stringify(out));
  await client.close();
})().catch((error) => {
  process.stdout.write(JSON.stringify({ error: String(error && error.stack || error) }));
  process.exit(1);
});
