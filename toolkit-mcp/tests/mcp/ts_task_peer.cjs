// A stdio server of the TypeScript MCP SDK (@modelcontextprotocol/sdk on npm) whose tools run as
// tasks (MCP 2025-11-25), for the tests. Run with NODE_PATH at the installed node_modules.
// Usage: node ts_task_peer.cjs (stdio), or with PORT set, Streamable HTTP on 127.0.0.1:PORT/mcp
// (one session); with STUBBORN_CANCEL=1, `tasks/cancel` is never answered, and `record` tells
// the ids it was asked to cancel (cancelAsked) and those whose request the client gave up
// (cancelGivenUp: its `notifications/cancelled` came).
//   slow      taskSupport "required": four steps of 500 ms, each reported as progress
//   optional  taskSupport "optional": answers after 300 ms
//   never     taskSupport "required": never ends
//   doomed    taskSupport "required": fails after 300 ms, saying "the disk is full"
//   record    a plain tool: the tasks created ({tool, asTask}) and the ids of those cancelled
const { McpServer } = require("@modelcontextprotocol/sdk/server/mcp.js");
const { StdioServerTransport } = require("@modelcontextprotocol/sdk/server/stdio.js");
const { InMemoryTaskStore, InMemoryTaskMessageQueue } = require("@modelcontextprotocol/sdk/experimental/tasks");
const { z } = require("zod");

const created = [];
const cancelled = [];
const cancelAsked = [];
const cancelGivenUp = [];

// The SDK's store, recording what the client asked of it.
class RecordingStore extends InMemoryTaskStore {
  async createTask(params, requestId, request, sessionId) {
    const task = await super.createTask(params, requestId, request, sessionId);
    created.push({ tool: request.params.name, asTask: !!request.params.task, taskId: task.taskId });
    return task;
  }
  async updateTaskStatus(taskId, status, message, sessionId) {
    if (status === "cancelled") cancelled.push(taskId);
    return super.updateTaskStatus(taskId, status, message, sessionId);
  }
}

const server = new McpServer(
  { name: "ts-task-peer", version: "1.32.2" },
  {
    capabilities: { tools: {}, tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } },
    taskStore: new RecordingStore(),
    taskMessageQueue: new InMemoryTaskMessageQueue(),
  },
);

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function taskTool(name, support, pollInterval, run) {
  server.experimental.tasks.registerToolTask(
    name,
    { description: `The ${name} task tool.`, inputSchema: { topic: z.string().optional() }, execution: { taskSupport: support } },
    {
      createTask: async (args, extra) => {
        const task = await extra.taskStore.createTask({ ttl: 60000, pollInterval });
        const token = extra._meta?.progressToken;
        run(args, task.taskId, extra.taskStore, token).catch(() => {});
        return { task };
      },
      getTask: async (args, extra) => extra.taskStore.getTask(extra.taskId),
      getTaskResult: async (args, extra) => extra.taskStore.getTaskResult(extra.taskId),
    },
  );
}

taskTool("slow", "required", 200, async ({ topic }, taskId, store, token) => {
  for (let step = 1; step <= 4; step++) {
    await sleep(500);
    if (token !== undefined) {
      await server.server.notification({
        method: "notifications/progress",
        params: { progressToken: token, progress: step, total: 4, message: `step ${step}` },
      });
    }
  }
  await store.storeTaskResult(taskId, "completed", {
    content: [{ type: "text", text: `researched ${topic ?? "nothing"}` }],
  });
});

taskTool("optional", "optional", 100, async (_args, taskId, store) => {
  await sleep(300);
  await store.storeTaskResult(taskId, "completed", { content: [{ type: "text", text: "optional done" }] });
});

taskTool("never", "required", 100, async () => {});

taskTool("doomed", "required", 100, async (_args, taskId, store) => {
  await sleep(300);
  await store.updateTaskStatus(taskId, "failed", "the disk is full");
});

server.registerTool("record", { description: "What the client asked of the task store." }, async () => ({
  content: [{ type: "text", text: JSON.stringify({ created, cancelled, cancelAsked, cancelGivenUp }) }],
}));

if (process.env.STUBBORN_CANCEL === "1") {
  const { CancelTaskRequestSchema } = require("@modelcontextprotocol/sdk/types.js");
  server.server.setRequestHandler(CancelTaskRequestSchema, (request, extra) => new Promise(() => {
    cancelAsked.push(request.params.taskId);
    extra.signal.addEventListener("abort", () => cancelGivenUp.push(request.params.taskId));
  }));
}

if (process.env.PORT) {
  const http = require("node:http");
  const { randomUUID } = require("node:crypto");
  const { StreamableHTTPServerTransport } = require("@modelcontextprotocol/sdk/server/streamableHttp.js");
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: () => randomUUID() });
  server.connect(transport).then(() => {
    http
      .createServer((request, response) => transport.handleRequest(request, response))
      .listen(Number(process.env.PORT), "127.0.0.1");
  });
} else {
  server.connect(new StdioServerTransport());
}
