// The official TypeScript SDK's MCP client against cairn as an MCP server, for the end-to-end
// tests. Usage:
//   node sdk-client.mjs stdio <cairn binary> <server url>   (spawns `cairn mcp serve --server URL`)
//   node sdk-client.mjs http <url of /mcp>
// Lists cairn's tools, creates a breadcrumb, reads it back, queries it, calls the echo tool, and
// prints one JSON line with what it saw (or {"error": ...} and exit 1).
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [mode, a, b] = process.argv.slice(2);
const transport = mode === "stdio"
  ? new StdioClientTransport({ command: a, args: ["mcp", "serve", "--server", b], stderr: "inherit" })
  : new StreamableHTTPClientTransport(new URL(a));
const client = new Client({ name: "cairn-e2e", version: "1.0.0" });
try {
  await client.connect(transport);
  const tools = (await client.listTools()).tools.map((t) => t.name).sort();
  const created = await client.callTool({
    name: "create_breadcrumb",
    arguments: { title: "from mcp", schema_name: "note.v1", tags: ["mcp-e2e"], context: { text: "hello" } },
  });
  const id = created.structuredContent?.id;
  const got = await client.callTool({ name: "get_breadcrumb", arguments: { id } });
  const listed = await client.callTool({ name: "query_breadcrumbs", arguments: { tag: "mcp-e2e" } });
  const echoed = await client.callTool({ name: "call_tool", arguments: { tool: "echo", input: { said: "hi" } } });
  const missing = await client.callTool({ name: "get_breadcrumb", arguments: {} });
  let unknown = null;
  try {
    await client.callTool({ name: "no_such_tool", arguments: {} });
  } catch (e) {
    unknown = String(e.message ?? e);
  }
  console.log(JSON.stringify({
    protocol: client.getServerVersion()?.name,
    tools,
    created_id: id,
    got_context: got.structuredContent?.context,
    listed_count: listed.structuredContent?.items?.length,
    echoed: echoed.structuredContent,
    echo_error: echoed.isError ?? false,
    missing_is_error: missing.isError ?? false,
    missing_text: missing.content?.[0]?.text,
    unknown,
  }));
  await client.close();
  process.exit(0);
} catch (e) {
  console.log(JSON.stringify({ error: String(e?.stack ?? e) }));
  process.exit(1);
}
