// A small MCP server (the SDK's low-level Server) with tools that do what the end-to-end tests
// need and server-everything lacks. Over stdio:   node scripted-server.mjs [LOG]
// over Streamable HTTP on 127.0.0.1 and a free port (printing {"port": N} once it listens):
//                                                 node scripted-server.mjs --http
// Tools:
//   wait     sends a progress notification every 50 ms until cancelled; on notifications/cancelled
//            it appends "cancelled <requestId>" to the file named by argv[2]
//   crash    answers, then exits with status 3 (cairn must restart it)
//   fail     answers with isError: true
//   grow     adds a tool "extra" and sends notifications/tools/list_changed
//   image    answers with structured content and an image item
//   count    reports `steps` (default 3) progress notifications with a total, then answers
import { appendFileSync } from "node:fs";
import http from "node:http";
import { randomUUID } from "node:crypto";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const overHttp = process.argv[2] === "--http";
const log = overHttp ? undefined : process.argv[2];
const object = { type: "object", properties: {} };
const tools = [
  { name: "wait", description: "waits until cancelled", inputSchema: object },
  { name: "crash", description: "exits after answering", inputSchema: object },
  { name: "fail", description: "answers with an error", inputSchema: object },
  { name: "grow", description: "adds a tool", inputSchema: object },
  { name: "image", description: "structured and image content", inputSchema: object },
  { name: "count", description: "reports progress steps, then answers",
    inputSchema: { type: "object", properties: { steps: { type: "integer" } } } },
];
// One Server a connection (an HTTP session has its own); the tools are shared.
function createServer() {
  const server = new Server({ name: "scripted", version: "1.0.0" }, { capabilities: { tools: { listChanged: true } } });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const name = request.params.name;
    if (name === "wait") {
      const token = request.params._meta?.progressToken;
      let step = 0;
      return await new Promise((resolve) => {
        const timer = setInterval(() => {
          step += 1;
          if (token !== undefined) {
            server.notification({ method: "notifications/progress", params: { progressToken: token, progress: step, message: `step ${step}` } });
          }
        }, 50);
        extra.signal.addEventListener("abort", () => {
          clearInterval(timer);
          if (log) appendFileSync(log, `cancelled ${extra.requestId}\n`);
          resolve({ content: [{ type: "text", text: "cancelled" }] });
        });
      });
    }
    if (name === "crash") {
      setTimeout(() => process.exit(3), 20);
      return { content: [{ type: "text", text: "bye" }] };
    }
    if (name === "fail") return { content: [{ type: "text", text: "it went wrong" }], isError: true };
    if (name === "grow") {
      if (!tools.some((t) => t.name === "extra")) tools.push({ name: "extra", description: "added", inputSchema: object });
      await server.sendToolListChanged();
      return { content: [{ type: "text", text: "grown" }] };
    }
    if (name === "image") {
      return {
        content: [{ type: "text", text: "a dot" }, { type: "image", data: "iVBORw0KGgo=", mimeType: "image/png" }],
        structuredContent: { width: 1, height: 1 },
      };
    }
    if (name === "count") {
      const token = request.params._meta?.progressToken;
      const steps = request.params.arguments?.steps ?? 3;
      for (let step = 1; step <= steps; step += 1) {
        if (token !== undefined) {
          await server.notification({ method: "notifications/progress",
                                      params: { progressToken: token, progress: step, total: steps, message: `counted ${step}` } });
        }
      }
      return { content: [{ type: "text", text: `counted to ${steps}` }] };
    }
    if (name === "extra") return { content: [{ type: "text", text: "extra" }] };
    return { content: [{ type: "text", text: `unknown tool ${name}` }], isError: true };
  });
  return server;
}

if (!overHttp) {
  await createServer().connect(new StdioServerTransport());
} else {
  // As everything-http.mjs: a transport per session. A notification outside a request (grow's
  // tools/list_changed) goes to the session's GET stream, if the client opened one.
  const transports = new Map();
  const listener = http.createServer(async (req, res) => {
    const sessionId = req.headers["mcp-session-id"];
    let transport = sessionId ? transports.get(sessionId) : undefined;
    if (sessionId && !transport) {
      res.writeHead(404, { "content-type": "application/json" }).end(
        JSON.stringify({ jsonrpc: "2.0", error: { code: -32001, message: "Session not found" }, id: null }));
      return;
    }
    if (!transport) {
      transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => transports.set(id, transport),
      });
      transport.onclose = () => transport.sessionId && transports.delete(transport.sessionId);
      await createServer().connect(transport);
    }
    // Told on stdout, so a test knows the client listens before it makes the server speak.
    if (req.method === "GET") console.log(JSON.stringify({ get_stream: transport.sessionId }));
    await transport.handleRequest(req, res);
  });
  listener.listen(0, "127.0.0.1", () => console.log(JSON.stringify({ port: listener.address().port })));
}
