// server-everything's MCP server (its own createServer) over Streamable HTTP on 127.0.0.1 and a
// free port, for cairn's end-to-end tests: the package's own streamableHttp launcher listens on
// every interface at a fixed port. Prints {"port": N} on stdout once it listens.
//   node everything-http.mjs [HEADER VALUE]
// With HEADER and VALUE, a request whose HEADER is not exactly VALUE is answered 401 (a server
// behind an API key, for secret headers).
import http from "node:http";
import { randomUUID } from "node:crypto";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { createServer } from "@modelcontextprotocol/server-everything/dist/server/index.js";

const [requiredHeader, requiredValue] = process.argv.slice(2);
const transports = new Map();
const server = http.createServer(async (req, res) => {
  if (!req.url.startsWith("/mcp")) {
    res.writeHead(404).end();
    return;
  }
  if (requiredHeader && req.headers[requiredHeader.toLowerCase()] !== requiredValue) {
    res.writeHead(401, { "content-type": "application/json" }).end(JSON.stringify({ error: `${requiredHeader} is wrong` }));
    return;
  }
  const sessionId = req.headers["mcp-session-id"];
  let transport = sessionId ? transports.get(sessionId) : undefined;
  if (sessionId && !transport) {
    res.writeHead(404, { "content-type": "application/json" }).end(
      JSON.stringify({ jsonrpc: "2.0", error: { code: -32001, message: "Session not found" }, id: null }));
    return;
  }
  if (!transport) {
    const { server: mcp } = createServer();
    transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => transports.set(id, transport),
    });
    transport.onclose = () => transport.sessionId && transports.delete(transport.sessionId);
    await mcp.connect(transport);
  }
  await transport.handleRequest(req, res);
});
server.listen(0, "127.0.0.1", () => console.log(JSON.stringify({ port: server.address().port })));
