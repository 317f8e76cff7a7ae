// The client command of the official MCP conformance scenarios (@modelcontextprotocol/conformance
// `client --command ...`), run against cairn's MCP client: the scenario's test server URL is the
// last argument, the scenario's name is in MCP_CONFORMANCE_SCENARIO. This script is only the
// operator: it registers the URL as an mcp.server.v1 record on the cairn server at CAIRN_SERVER,
// waits for cairn to connect (initialize, tools/list), calls the scenario's tool through cairn's
// tool pipeline (a tool.request.v1, answered by a tool.response.v1) and removes the record. Every
// MCP message the scenario server sees comes from cairn.
//
// Exit 0 when cairn did what the scenario asks and the answer is the expected one; 1 otherwise.

const url = process.argv[process.argv.length - 1];
const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? '';
const cairn = (process.env.CAIRN_SERVER ?? '').replace(/\/$/, '');
const deadline = Date.now() + 25000;  // within the conformance runner's 30 s

// What each scenario asks of a client: which tool to call, with what, and the expected answer.
const calls = {
  initialize: null,  // connect and list the tools; nothing to call
  tools_call: { tool: 'add_numbers', input: { a: 5, b: 3 }, text: 'The sum of 5 and 3 is 8' },
  'sse-retry': { tool: 'test_reconnection', input: {}, text: 'Reconnection test completed successfully' },
};

function fail(message) {
  console.error(`conformance-client (${scenario}): ${message}`);
  process.exit(1);
}

async function api(method, path, body) {
  const response = await fetch(cairn + path, {
    method,
    headers: body === undefined ? {} : { 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  if (!response.ok) fail(`${method} ${path} answered ${response.status}: ${text}`);
  return text ? JSON.parse(text) : null;
}

// Polls `probe` until it returns something (a condition with a deadline).
async function waitFor(what, probe) {
  while (Date.now() < deadline) {
    const found = await probe();
    if (found) return found;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return fail(`gave up waiting for ${what}`);
}

if (!cairn) fail('CAIRN_SERVER is not set');
if (!(scenario in calls)) fail(`no client behaviour for scenario '${scenario}'`);
const name = 'conf-' + scenario.replace(/[^A-Za-z0-9]/g, '-').slice(0, 20);
const record = await api('POST', '/breadcrumbs', {
  schema_name: 'mcp.server.v1',
  title: `conformance ${scenario}`,
  context: { name, transport: 'http', url, timeout_ms: 20000, connect_timeout_ms: 10000 },
});
let status = 0;
try {
  const state = await waitFor(`cairn to connect to ${url}`, async () => {
    const { servers } = await api('GET', '/mcp/servers');
    const server = servers.find((s) => s.name === name);
    return server && server.state === 'ready' ? server : null;
  });
  console.log(`connected: protocol ${state.protocol_version}, tools ${JSON.stringify(state.tools)}`);
  const call = calls[scenario];
  if (call) {
    const tool = `${name}__${call.tool}`;
    await waitFor(`the tool record ${tool}`, async () =>
      (await api('GET', `/breadcrumbs?path=${encodeURIComponent('tools/' + tool)}`)).items.length > 0);
    const requestId = `conformance-${scenario}-${Date.now()}`;
    await api('POST', '/breadcrumbs', {
      schema_name: 'tool.request.v1',
      title: `call ${tool}`,
      context: { tool, input: call.input, request_id: requestId },
    });
    const response = await waitFor(`the answer of ${tool}`, async () => {
      const query = `schema_name=tool.response.v1&tag=${encodeURIComponent('request:' + requestId)}&include_context=true`;
      return (await api('GET', `/breadcrumbs?${query}`)).items[0];
    });
    const context = response.context ?? {};
    console.log(`answer: ${JSON.stringify(context)}`);
    if (context.status !== 'success') status = 1;
    else if (context.output?.text !== call.text) status = 1;
  }
} finally {
  await api('DELETE', `/breadcrumbs/${record.id}`);
}
if (status !== 0) fail('the tool call did not answer as the scenario expects');
