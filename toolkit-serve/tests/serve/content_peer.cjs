// An upstream of the TypeScript MCP SDK (@modelcontextprotocol/sdk on npm, its low-level Server,
// so that every result and schema is written as raw JSON): Streamable HTTP with sessions, answers
// as SSE. Its tools are those the official conformance suite's server scenarios call (named and
// answering as the suite's reference everything-server does), and so are its resources, resource
// template, prompts and completion, so that a gateway in front of it
// can be run against the suite; the runtime's tests use them to check what a served call passes
// on. Run with NODE_PATH at the installed node_modules.
// Usage: node content_peer.cjs PORT
const http = require("node:http");
const { randomUUID } = require("node:crypto");
const { Server } = require("@modelcontextprotocol/sdk/server/index.js");
const { StreamableHTTPServerTransport } = require("@modelcontextprotocol/sdk/server/streamableHttp.js");
const { InMemoryEventStore } = require("@modelcontextprotocol/sdk/examples/shared/inMemoryEventStore.js");
const {
  isInitializeRequest,
  ListToolsRequestSchema,
  CallToolRequestSchema,
  SetLevelRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ReadResourceRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
  ListPromptsRequestSchema,
  GetPromptRequestSchema,
  CompleteRequestSchema,
  ElicitResultSchema,
  CreateMessageResultSchema,
} = require("@modelcontextprotocol/sdk/types.js");

// A 1x1 PNG and a minimal WAV, as the reference server's.
const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";
const WAV = "UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQAAAAA=";
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const empty = { type: "object", properties: {} };

// The forms of the suite's elicitation scenarios (SEP-1034 defaults, SEP-1330 enums).
const DEFAULTS_FORM = {
  type: "object",
  properties: {
    name: { type: "string", description: "User name", default: "John Doe" },
    age: { type: "integer", description: "User age", default: 30 },
    score: { type: "number", description: "User score", default: 95.5 },
    status: { type: "string", description: "User status", enum: ["active", "inactive", "pending"], default: "active" },
    verified: { type: "boolean", description: "Verification status", default: true },
  },
  required: [],
};
const ENUMS_FORM = {
  type: "object",
  properties: {
    untitledSingle: { type: "string", description: "Select one option", enum: ["option1", "option2", "option3"] },
    titledSingle: {
      type: "string",
      description: "Select one option with titles",
      oneOf: [
        { const: "value1", title: "First Option" },
        { const: "value2", title: "Second Option" },
        { const: "value3", title: "Third Option" },
      ],
    },
    legacyEnum: {
      type: "string",
      description: "Select one option (legacy)",
      enum: ["opt1", "opt2", "opt3"],
      enumNames: ["Option One", "Option Two", "Option Three"],
    },
    untitledMulti: {
      type: "array",
      description: "Select multiple options",
      minItems: 1,
      maxItems: 3,
      items: { type: "string", enum: ["option1", "option2", "option3"] },
    },
    titledMulti: {
      type: "array",
      description: "Select multiple options with titles",
      minItems: 1,
      maxItems: 3,
      items: {
        anyOf: [
          { const: "value1", title: "First Choice" },
          { const: "value2", title: "Second Choice" },
          { const: "value3", title: "Third Choice" },
        ],
      },
    },
  },
  required: [],
};

// Asks the client on the call's own stream (`related`) or on the session's standalone stream.
async function ask(server, extra, method, params, related) {
  const schema = method === "sampling/createMessage" ? CreateMessageResultSchema : ElicitResultSchema;
  const options = related ? { relatedRequestId: extra.requestId } : {};
  return server.request({ method, params }, schema, options);
}

const tools = [
  {
    name: "test_sampling",
    description: "Tests server-initiated sampling (LLM completion request)",
    inputSchema: { type: "object", properties: { prompt: { type: "string", description: "The prompt to send to the LLM" }, includeContext: { type: "string", description: "The context to ask the client for" } }, required: ["prompt"] },
  },
  {
    name: "test_elicitation",
    description: "Tests server-initiated elicitation (user input request)",
    inputSchema: { type: "object", properties: { message: { type: "string", description: "The message to show the user" } }, required: ["message"] },
  },
  { name: "test_elicitation_sep1034_defaults", description: "Tests elicitation with default values per SEP-1034", inputSchema: empty },
  { name: "test_elicitation_sep1330_enums", description: "Tests elicitation with enum schema improvements per SEP-1330", inputSchema: empty },
  { name: "test_tools_changed", description: "Says on the session's standalone stream that its tools changed", inputSchema: empty },
  {
    name: "test_client_elicitation_defaults",
    description: "Asks the client on the session's standalone stream, unrelated to the call, to accept a form with defaults",
    inputSchema: empty,
  },
  { name: "test_simple_text", description: "Tests simple text content response", inputSchema: empty },
  { name: "test_image_content", description: "Tests image content response", inputSchema: empty },
  { name: "test_audio_content", description: "Tests audio content response", inputSchema: empty },
  { name: "test_embedded_resource", description: "Tests embedded resource content response", inputSchema: empty },
  { name: "test_resource_link", description: "Tests a resource link content response", inputSchema: empty },
  { name: "test_multiple_content_types", description: "Tests response with multiple content types (text, image, resource)", inputSchema: empty },
  { name: "test_tool_with_logging", description: "Tests tool that emits log messages during execution", inputSchema: empty },
  { name: "test_tool_with_progress", description: "Tests tool that reports progress notifications", inputSchema: empty },
  { name: "test_error_handling", description: "Tests error response handling", inputSchema: empty },
  { name: "test_reconnection", description: "Tests SSE stream disconnection and client reconnection (SEP-1699)", inputSchema: empty },
  {
    name: "test_structured_content",
    title: "Structured weather",
    description: "Tests structured content with an output schema",
    inputSchema: empty,
    outputSchema: {
      type: "object",
      properties: { temperature: { type: "number" }, conditions: { type: "string" } },
      required: ["temperature", "conditions"],
    },
    annotations: { readOnlyHint: true },
  },
  {
    name: "json_schema_2020_12_tool",
    description: "Tool with JSON Schema 2020-12 features for conformance testing (SEP-1613)",
    inputSchema: {
      $schema: "https://json-schema.org/draft/2020-12/schema",
      type: "object",
      $defs: { address: { type: "object", properties: { street: { type: "string" }, city: { type: "string" } } } },
      properties: { name: { type: "string" }, address: { $ref: "#/$defs/address" } },
      additionalProperties: false,
    },
  },
];

async function call(server, name, args, extra) {
  const token = extra._meta?.progressToken;
  switch (name) {
    case "test_sampling": {
      const result = await ask(server, extra, "sampling/createMessage", {
        messages: [{ role: "user", content: { type: "text", text: args.prompt } }],
        maxTokens: 100,
        ...(args.includeContext === undefined ? {} : { includeContext: args.includeContext }),
      }, true);
      const text = result.content?.type === "text" ? result.content.text : "No text response";
      return { content: [{ type: "text", text: `LLM response: ${text}` }] };
    }
    case "test_elicitation": {
      const result = await ask(server, extra, "elicitation/create", {
        message: args.message,
        requestedSchema: {
          type: "object",
          properties: { response: { type: "string", description: "User's response" } },
          required: ["response"],
        },
      }, true);
      return { content: [{ type: "text", text: `User response: action=${result.action}, content=${JSON.stringify(result.content ?? {})}` }] };
    }
    case "test_elicitation_sep1034_defaults": {
      const result = await ask(server, extra, "elicitation/create", {
        message: "Please review and update the form fields with defaults",
        requestedSchema: DEFAULTS_FORM,
      }, true);
      return { content: [{ type: "text", text: `Elicitation completed: action=${result.action}, content=${JSON.stringify(result.content ?? {})}` }] };
    }
    case "test_elicitation_sep1330_enums": {
      const result = await ask(server, extra, "elicitation/create", {
        message: "Please select options from the enum fields",
        requestedSchema: ENUMS_FORM,
      }, true);
      return { content: [{ type: "text", text: `Elicitation completed: action=${result.action}, content=${JSON.stringify(result.content ?? {})}` }] };
    }
    case "test_tools_changed":
      await server.sendToolListChanged();
      return { content: [{ type: "text", text: "said" }] };
    case "test_client_elicitation_defaults": {
      const result = await ask(server, extra, "elicitation/create", {
        message: "Test client default value handling - please accept with defaults",
        requestedSchema: DEFAULTS_FORM,
      }, false);
      return { content: [{ type: "text", text: `Elicitation completed: action=${result.action}, content=${JSON.stringify(result.content ?? {})}` }] };
    }
    case "test_simple_text":
      return { content: [{ type: "text", text: "This is a simple text response for testing." }] };
    case "test_image_content":
      return { content: [{ type: "image", data: PNG, mimeType: "image/png" }] };
    case "test_audio_content":
      return { content: [{ type: "audio", data: WAV, mimeType: "audio/wav" }] };
    case "test_embedded_resource":
      return {
        content: [
          {
            type: "resource",
            resource: { uri: "test://embedded-resource", mimeType: "text/plain", text: "This is an embedded resource content." },
            annotations: { audience: ["user"], priority: 0.5 },
          },
        ],
      };
    case "test_resource_link":
      return {
        content: [{ type: "resource_link", uri: "test://linked", name: "Linked", mimeType: "text/plain", _meta: { "example.com/kept": 1 } }],
      };
    case "test_multiple_content_types":
      return {
        content: [
          { type: "text", text: "Multiple content types test:" },
          { type: "image", data: PNG, mimeType: "image/png" },
          { type: "resource", resource: { uri: "test://mixed-content-resource", mimeType: "application/json", text: '{"test":"data","value":123}' } },
        ],
      };
    case "test_tool_with_logging":
      for (const data of ["Tool execution started", "Tool processing data", "Tool execution completed"]) {
        await extra.sendNotification({ method: "notifications/message", params: { level: "info", data } });
        await sleep(50);
      }
      await extra.sendNotification({ method: "notifications/message", params: { level: "debug", logger: "peer", data: "A debug line" } });
      return { content: [{ type: "text", text: "Tool with logging executed successfully" }] };
    case "test_tool_with_progress":
      for (const progress of [0, 50, 100]) {
        if (token !== undefined) {
          await extra.sendNotification({
            method: "notifications/progress",
            params: { progressToken: token, progress, total: 100, message: `Completed step ${progress} of 100` },
          });
        }
        await sleep(50);
      }
      return { content: [{ type: "text", text: String(token) }] };
    case "test_error_handling":
      return { isError: true, content: [{ type: "text", text: "This tool intentionally returns an error for testing" }] };
    case "test_structured_content":
      return {
        content: [{ type: "text", text: '{"temperature":22.5,"conditions":"Sunny"}' }],
        structuredContent: { temperature: 22.5, conditions: "Sunny" },
        _meta: { "example.com/source": "content_peer" },
      };
    case "test_reconnection":
      // The call's stream is closed before the answer, which the client gets by resuming it.
      await sleep(100);
      if (extra.closeSSEStream) extra.closeSSEStream();
      await sleep(100);
      return { content: [{ type: "text", text: "Reconnection test completed successfully. If you received this, the client properly reconnected after stream closure." }] };
    case "json_schema_2020_12_tool":
      return { content: [{ type: "text", text: "ok" }] };
    default:
      throw new Error(`Unknown tool: ${name}`);
  }
}

// The resources, template and prompts of the suite's resources-* and prompts-* scenarios, as its
// reference everything-server has them.
const resources = [
  { uri: "test://static-text", name: "static-text", mimeType: "text/plain" },
  { uri: "test://static-binary", name: "static-binary", mimeType: "image/png" },
  { uri: "test://watched-resource", name: "watched-resource", mimeType: "text/plain" },
];
const resourceTemplates = [{ uriTemplate: "test://template/{id}/data", name: "template", mimeType: "application/json" }];
function read(uri) {
  if (uri === "test://static-text") {
    return { contents: [{ uri, mimeType: "text/plain", text: "This is the content of the static text resource." }] };
  }
  if (uri === "test://static-binary") return { contents: [{ uri, mimeType: "image/png", blob: PNG }] };
  if (uri === "test://watched-resource") return { contents: [{ uri, mimeType: "text/plain", text: "Watched resource content" }] };
  const templated = /^test:\/\/template\/([^/]+)\/data$/.exec(uri);
  if (templated) {
    return { contents: [{ uri, mimeType: "application/json", text: JSON.stringify({ id: templated[1], templateTest: true, data: `Data for ID: ${templated[1]}` }) }] };
  }
  const error = new Error(`Resource not found: ${uri}`);
  error.code = -32002;
  throw error;
}
const prompts = [
  { name: "test_simple_prompt", description: "A simple prompt without arguments" },
  {
    name: "test_prompt_with_arguments",
    description: "A prompt with required arguments",
    arguments: [
      { name: "arg1", description: "First test argument", required: true },
      { name: "arg2", description: "Second test argument", required: true },
    ],
  },
  {
    name: "test_prompt_with_embedded_resource",
    description: "A prompt that includes an embedded resource",
    arguments: [{ name: "resourceUri", description: "URI of the resource to embed", required: true }],
  },
  { name: "test_prompt_with_image", description: "A prompt that includes image content" },
];
function prompt(name, args) {
  const user = (content) => ({ role: "user", content });
  switch (name) {
    case "test_simple_prompt":
      return { messages: [user({ type: "text", text: "This is a simple prompt for testing." })] };
    case "test_prompt_with_arguments":
      return { messages: [user({ type: "text", text: `Prompt with arguments: arg1='${args.arg1}', arg2='${args.arg2}'` })] };
    case "test_prompt_with_embedded_resource":
      return {
        messages: [
          user({ type: "resource", resource: { uri: args.resourceUri, mimeType: "text/plain", text: "Embedded resource content for testing." } }),
          user({ type: "text", text: "Please process the embedded resource above." }),
        ],
      };
    case "test_prompt_with_image":
      return { messages: [user({ type: "image", data: PNG, mimeType: "image/png" }), user({ type: "text", text: "Please analyze the image above." })] };
    default: {
      const error = new Error(`Unknown prompt: ${name}`);
      error.code = -32602;
      throw error;
    }
  }
}

function makeServer() {
  const server = new Server(
    { name: "content-peer", version: "1.32.2" },
    {
      capabilities: {
        tools: { listChanged: true },
        logging: {},
        resources: { subscribe: true },
        prompts: {},
        completions: {},
      },
    },
  );
  server.setRequestHandler(ListResourcesRequestSchema, async () => ({ resources }));
  server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => ({ resourceTemplates }));
  server.setRequestHandler(ReadResourceRequestSchema, async (request) => read(request.params.uri));
  server.setRequestHandler(SubscribeRequestSchema, async () => ({}));
  server.setRequestHandler(UnsubscribeRequestSchema, async () => ({}));
  server.setRequestHandler(ListPromptsRequestSchema, async () => ({ prompts }));
  server.setRequestHandler(GetPromptRequestSchema, async (request) => prompt(request.params.name, request.params.arguments ?? {}));
  server.setRequestHandler(CompleteRequestSchema, async (request) => {
    const value = request.params.argument.value;
    const values = ["testValue1", "testValue2"].filter((candidate) => candidate.startsWith(value));
    return { completion: { values, total: values.length, hasMore: false } };
  });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) =>
    call(server, request.params.name, request.params.arguments ?? {}, extra),
  );
  server.setRequestHandler(SetLevelRequestSchema, async () => ({}));
  return server;
}

const transports = {};

http
  .createServer(async (req, res) => {
    let body = "";
    for await (const chunk of req) body += chunk;
    const parsed = body ? JSON.parse(body) : undefined;
    const id = req.headers["mcp-session-id"];
    let transport = id ? transports[id] : undefined;
    if (!transport) {
      if (req.method !== "POST" || !isInitializeRequest(parsed)) {
        res.writeHead(id ? 404 : 400, { "content-type": "application/json" });
        res.end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32000, message: "No valid session" }, id: null }));
        return;
      }
      transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        eventStore: new InMemoryEventStore(),
        onsessioninitialized: (sid) => {
          transports[sid] = transport;
        },
      });
      transport.onclose = () => {
        if (transport.sessionId) delete transports[transport.sessionId];
      };
      await makeServer().connect(transport);
    }
    await transport.handleRequest(req, res, parsed);
  })
  .listen(Number(process.argv[2]), "127.0.0.1");
