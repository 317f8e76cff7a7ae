// bench/mcp/roundtrip.mjs — one MCP tool call after another, two ways, in the same run:
//   direct  the official SDK client calls server-everything's `echo` over stdio itself
//   cairn   a tool.request.v1 for everything__echo is POSTed to cairn, which calls the same
//           server (its own stdio child) through its MCP client; the call ends when the
//           tool.response.v1 arrives on GET /events/stream
// Prints one JSON line per mode {mode, calls, errors, seconds, rps, mean_ms, p50_ms, p90_ms,
// p99_ms, max_ms} and a last {ratio_p50, ratio_rps}.
// Usage: node roundtrip.mjs --port PORT --node-dir tests/e2e/mcp-node [--calls N] [--warmup N]
import http from "node:http";
import path from "node:path";
import { randomUUID } from "node:crypto";

const args = Object.fromEntries(process.argv.slice(2).reduce((pairs, arg, i, all) => {
  if (arg.startsWith("--")) pairs.push([arg.slice(2), all[i + 1]]);
  return pairs;
}, []));
const port = Number(args.port);
const nodeDir = path.resolve(args["node-dir"]);
const calls = Number(args.calls ?? 500);
const warmup = Number(args.warmup ?? 50);
const modules = path.join(nodeDir, "node_modules");
const { Client } = await import(path.join(modules, "@modelcontextprotocol/sdk/dist/esm/client/index.js"));
const { StdioClientTransport } = await import(path.join(modules, "@modelcontextprotocol/sdk/dist/esm/client/stdio.js"));
const everything = path.join(modules, "@modelcontextprotocol/server-everything/dist/index.js");

function stats(mode, latencies, errors, seconds) {
  const sorted = [...latencies].sort((a, b) => a - b);
  const q = (p) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? 0;
  const mean = sorted.reduce((a, b) => a + b, 0) / (sorted.length || 1);
  const r = (x) => Math.round(x * 1000) / 1000;
  return { mode, calls: latencies.length, errors, seconds: r(seconds), rps: r(latencies.length / seconds),
           mean_ms: r(mean), p50_ms: r(q(0.5)), p90_ms: r(q(0.9)), p99_ms: r(q(0.99)), max_ms: r(sorted.at(-1) ?? 0) };
}

async function direct() {
  const client = new Client({ name: "bench", version: "1" });
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [everything, "stdio"], stderr: "ignore" }));
  const latencies = [];
  let errors = 0;
  for (let i = 0; i < warmup + calls; i++) {
    const t0 = performance.now();
    const result = await client.callTool({ name: "echo", arguments: { message: `m${i}` } });
    const ms = performance.now() - t0;
    if (result.content?.[0]?.text !== `Echo: m${i}`) errors++;
    if (i >= warmup) latencies.push(ms);
  }
  await client.close();
  return latencies;
}

function request(method, target, body) {
  return new Promise((resolve, reject) => {
    const data = body === undefined ? undefined : JSON.stringify(body);
    const req = http.request({ host: "127.0.0.1", port, method, path: target, agent: keepAlive,
                               headers: data ? { "content-type": "application/json", "content-length": Buffer.byteLength(data) } : {} },
      (res) => {
        let text = "";
        res.on("data", (c) => (text += c));
        res.on("end", () => resolve({ status: res.statusCode, body: text ? JSON.parse(text) : null }));
      });
    req.on("error", reject);
    if (data) req.write(data);
    req.end();
  });
}
const keepAlive = new http.Agent({ keepAlive: true, maxSockets: 1 });

// The tool.response.v1 events, by request_id, from one SSE stream opened before the first call.
function openResponses() {
  const waiters = new Map();
  const arrived = new Map();
  return new Promise((resolve, reject) => {
    const req = http.get({ host: "127.0.0.1", port, path: "/events/stream?schema_name=tool.response.v1" }, (res) => {
      let buffer = "";
      res.setEncoding("utf8");
      res.on("data", (chunk) => {
        buffer += chunk;
        let end;
        while ((end = buffer.indexOf("\n\n")) >= 0) {
          const frame = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const data = frame.split("\n").filter((l) => l.startsWith("data:")).map((l) => l.slice(5).trim()).join("\n");
          if (!data) continue;
          const event = JSON.parse(data);
          const id = event.context?.request_id;
          if (!id) continue;
          const waiter = waiters.get(id);
          if (waiter) { waiters.delete(id); waiter(event); } else arrived.set(id, event);
        }
      });
      resolve({
        wait: (id) => new Promise((done) => {
          if (arrived.has(id)) { done(arrived.get(id)); arrived.delete(id); } else waiters.set(id, done);
        }),
        close: () => req.destroy(),
      });
    });
    req.on("error", reject);
  });
}

async function throughCairn() {
  const created = await request("POST", "/breadcrumbs", {
    title: "bench server", schema_name: "mcp.server.v1",
    context: { name: "everything", transport: "stdio", command: [process.execPath, everything, "stdio"] },
  });
  if (created.status !== 201) throw new Error(`registering the server: ${created.status} ${JSON.stringify(created.body)}`);
  const deadline = Date.now() + 60000;
  while (true) {  // the tool appears once cairn has connected and listed (a bench may poll)
    const found = await request("GET", "/breadcrumbs?path=tools/everything__echo");
    if (found.body?.items?.length) break;
    if (Date.now() > deadline) throw new Error("everything__echo did not appear within 60 s");
    await new Promise((r) => setTimeout(r, 100));
  }
  const responses = await openResponses();
  const latencies = [];
  let errors = 0;
  for (let i = 0; i < warmup + calls; i++) {
    const id = randomUUID();
    const t0 = performance.now();
    const posted = await request("POST", "/breadcrumbs", {
      title: "call", schema_name: "tool.request.v1",
      context: { tool: "everything__echo", input: { message: `m${i}` }, request_id: id },
    });
    if (posted.status !== 201) { errors++; continue; }
    const event = await responses.wait(id);
    const ms = performance.now() - t0;
    if (event.context?.output?.text !== `Echo: m${i}`) errors++;
    if (i >= warmup) latencies.push(ms);
  }
  responses.close();
  return { latencies, errors };
}

let t = performance.now();
const directLatencies = await direct();
const directResult = stats("direct", directLatencies, 0, (performance.now() - t) / 1000);
console.log(JSON.stringify(directResult));
t = performance.now();
const cairn = await throughCairn();
const cairnResult = stats("cairn", cairn.latencies, cairn.errors, (performance.now() - t) / 1000);
console.log(JSON.stringify(cairnResult));
console.log(JSON.stringify({
  ratio_p50: Math.round((cairnResult.p50_ms / directResult.p50_ms) * 100) / 100,
  added_p50_ms: Math.round((cairnResult.p50_ms - directResult.p50_ms) * 1000) / 1000,
}));
keepAlive.destroy();
process.exit(0);
