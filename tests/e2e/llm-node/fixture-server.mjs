#!/usr/bin/env node
// A scripted OpenAI-compatible chat-completions server for cairn's end-to-end tests and the agent
// benchmark. Plain Node (node:http), no dependencies, no per-request logging.
//
//   node fixture-server.mjs --script FILE [--port 0] [--host 127.0.0.1] [--port-file F] [--no-record]
//
// Prints the bound port on stdout ("<port>\n") and, with --port-file, writes it to F (F.tmp, then
// rename). The script is JSON: {"rules": [rule, ...]}. For each POST .../chat/completions the first
// rule whose `match` holds and whose `times` (optional) is not used up is applied:
//
//   {"match": {"last_role": "user"|"tool"|"assistant"|"system", "last_content_contains": "s",
//              "any_content_contains": "s", "model": "m", "has_tools": bool, "stream": bool,
//              "tool_results": n},                       // all optional, all must hold
//    "times": n,                                         // optional: uses left
//    "reply": {"content": "text", "tool_calls": [{"id"?, "name", "arguments": {...} | "raw"}],
//              "usage": {...}, "delay_ms": n, "chunk_delay_ms": n, "finish_reason": "...",
//              "chunk_size": n}
//          or {"status": 500, "body": {...} | "text", "headers": {...}, "delay_ms": n}}
//
// `{{last_content}}` and `{{last_tool_content}}` in `content` and in string argument values are
// replaced by the content of the last message and of the last tool message.
//
// Control routes: GET /_health, GET /_requests ([{"n","at_ms","body","authorization"}]; headers X-Fixture-Total
// and X-Fixture-Dropped), DELETE /_requests, POST /_script (replace the rules; 400 if invalid).
import http from 'node:http';
import fs from 'node:fs';

const MAX_BODY = 8 * 1024 * 1024;
const MAX_RECORDS = 10000;

// ---- command line -------------------------------------------------------------------------------
function usage(msg) {
  process.stderr.write(`fixture-server: ${msg}\nusage: node fixture-server.mjs --script FILE [--port 0] ` +
                       `[--host 127.0.0.1] [--port-file F] [--no-record]\n`);
  process.exit(2);
}

const opts = { script: null, port: 0, host: '127.0.0.1', portFile: null, record: true };
{
  const argv = process.argv.slice(2);
  for (let i = 0; i < argv.length; ++i) {
    const a = argv[i];
    const value = () => {
      if (i + 1 >= argv.length) usage(`${a} needs a value`);
      return argv[++i];
    };
    if (a === '--script') opts.script = value();
    else if (a === '--port') opts.port = Number(value());
    else if (a === '--host') opts.host = value();
    else if (a === '--port-file') opts.portFile = value();
    else if (a === '--no-record') opts.record = false;
    else usage(`unknown argument ${a}`);
  }
  if (!opts.script) usage('--script FILE is required');
  if (!Number.isInteger(opts.port) || opts.port < 0 || opts.port > 65535) usage('bad --port');
}

// ---- script -------------------------------------------------------------------------------------
const MATCH_KEYS = new Set(['last_role', 'last_content_contains', 'any_content_contains', 'model', 'has_tools',
                            'stream', 'tool_results']);
const RULE_KEYS = new Set(['match', 'times', 'reply', 'comment', 'name']);
const REPLY_KEYS = new Set(['content', 'tool_calls', 'usage', 'delay_ms', 'chunk_delay_ms', 'finish_reason',
                            'chunk_size', 'status', 'body', 'headers']);

// Validates a script and returns its rules (each with a `left` counter); throws Error on a bad one.
function compileScript(script) {
  if (script === null || typeof script !== 'object' || !Array.isArray(script.rules)) {
    throw new Error('the script must be an object {"rules": [...]}');
  }
  return script.rules.map((rule, i) => {
    const where = `rules[${i}]`;
    if (rule === null || typeof rule !== 'object') throw new Error(`${where} is not an object`);
    for (const k of Object.keys(rule)) if (!RULE_KEYS.has(k)) throw new Error(`${where}: unknown key "${k}"`);
    const match = rule.match ?? {};
    if (typeof match !== 'object' || Array.isArray(match)) throw new Error(`${where}.match is not an object`);
    for (const k of Object.keys(match)) if (!MATCH_KEYS.has(k)) throw new Error(`${where}.match: unknown key "${k}"`);
    for (const k of ['has_tools', 'stream']) {
      if (k in match && typeof match[k] !== 'boolean') throw new Error(`${where}.match.${k} must be a boolean`);
    }
    for (const k of ['last_role', 'last_content_contains', 'any_content_contains', 'model']) {
      if (k in match && typeof match[k] !== 'string') throw new Error(`${where}.match.${k} must be a string`);
    }
    if ('tool_results' in match && !Number.isInteger(match.tool_results)) {
      throw new Error(`${where}.match.tool_results must be an integer`);
    }
    if ('times' in rule && !(Number.isInteger(rule.times) && rule.times >= 0)) {
      throw new Error(`${where}.times must be a non-negative integer`);
    }
    const reply = rule.reply;
    if (reply === null || typeof reply !== 'object' || Array.isArray(reply)) throw new Error(`${where}.reply is missing`);
    for (const k of Object.keys(reply)) if (!REPLY_KEYS.has(k)) throw new Error(`${where}.reply: unknown key "${k}"`);
    if ('status' in reply && !(Number.isInteger(reply.status) && reply.status >= 100 && reply.status <= 599)) {
      throw new Error(`${where}.reply.status must be an HTTP status`);
    }
    if ('content' in reply && reply.content !== null && typeof reply.content !== 'string') {
      throw new Error(`${where}.reply.content must be a string or null`);
    }
    if ('tool_calls' in reply) {
      if (!Array.isArray(reply.tool_calls)) throw new Error(`${where}.reply.tool_calls must be an array`);
      reply.tool_calls.forEach((tc, j) => {
        if (tc === null || typeof tc !== 'object' || typeof tc.name !== 'string') {
          throw new Error(`${where}.reply.tool_calls[${j}] needs a string "name"`);
        }
        if ('id' in tc && typeof tc.id !== 'string') throw new Error(`${where}.reply.tool_calls[${j}].id must be a string`);
      });
    }
    for (const k of ['delay_ms', 'chunk_delay_ms', 'chunk_size']) {
      if (k in reply && !(Number.isFinite(reply[k]) && reply[k] >= 0)) throw new Error(`${where}.reply.${k} must be >= 0`);
    }
    return { match, left: 'times' in rule ? rule.times : Infinity, reply };
  });
}

let rules;
try {
  rules = compileScript(JSON.parse(fs.readFileSync(opts.script, 'utf8')));
} catch (e) {
  usage(`cannot load script ${opts.script}: ${e.message}`);
}

// ---- recorded requests --------------------------------------------------------------------------
// A ring of at most MAX_RECORDS; `total` counts every request since the last clear.
let ring = new Array(MAX_RECORDS);
let total = 0;
function record(body, authorization) {
  if (!opts.record) return;
  ring[total % MAX_RECORDS] = { n: total + 1, at_ms: Date.now(), body, authorization: authorization ?? null };
  total += 1;
}
function recorded() {
  const kept = Math.min(total, MAX_RECORDS);
  const out = new Array(kept);
  for (let i = 0; i < kept; ++i) out[i] = ring[(total - kept + i) % MAX_RECORDS];
  return out;
}
function clearRecords() {
  ring = new Array(MAX_RECORDS);
  total = 0;
}

// ---- matching -----------------------------------------------------------------------------------
// A message's content as text: strings as is, arrays of parts joined (text parts), null as "".
function textOf(content) {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    let s = '';
    for (const part of content) {
      if (typeof part === 'string') s += part;
      else if (part && typeof part.text === 'string') s += part.text;
    }
    return s;
  }
  return content == null ? '' : JSON.stringify(content);
}

// Facts about a request that rules match on, computed once per request.
function facts(body) {
  const messages = Array.isArray(body.messages) ? body.messages : [];
  const last = messages.length > 0 ? messages[messages.length - 1] : null;
  let toolResults = 0;
  let lastTool = null;
  for (const m of messages) {
    if (m && m.role === 'tool') {
      toolResults += 1;
      lastTool = m;
    }
  }
  return {
    messages,
    last,
    lastRole: last && typeof last.role === 'string' ? last.role : '',
    lastContent: last ? textOf(last.content) : '',
    lastToolContent: lastTool ? textOf(lastTool.content) : '',
    toolResults,
    stream: body.stream === true,
    hasTools: Array.isArray(body.tools) && body.tools.length > 0,
    model: typeof body.model === 'string' ? body.model : '',
  };
}

function matches(m, f) {
  if (m.last_role !== undefined && m.last_role !== f.lastRole) return false;
  if (m.last_content_contains !== undefined && !f.lastContent.includes(m.last_content_contains)) return false;
  if (m.any_content_contains !== undefined &&
      !f.messages.some((msg) => msg && textOf(msg.content).includes(m.any_content_contains))) {
    return false;
  }
  if (m.model !== undefined && m.model !== f.model) return false;
  if (m.has_tools !== undefined && m.has_tools !== f.hasTools) return false;
  if (m.stream !== undefined && m.stream !== f.stream) return false;
  if (m.tool_results !== undefined && m.tool_results !== f.toolResults) return false;
  return true;
}

function pickRule(f) {
  for (const rule of rules) {
    if (rule.left > 0 && matches(rule.match, f)) {
      rule.left -= 1;
      return rule;
    }
  }
  return null;
}

// ---- replies ------------------------------------------------------------------------------------
function fill(text, f) {
  if (text.indexOf('{{') < 0) return text;
  return text.split('{{last_content}}').join(f.lastContent).split('{{last_tool_content}}').join(f.lastToolContent);
}
function fillDeep(value, f) {
  if (typeof value === 'string') return fill(value, f);
  if (Array.isArray(value)) return value.map((v) => fillDeep(v, f));
  if (value !== null && typeof value === 'object') {
    const out = {};
    for (const [k, v] of Object.entries(value)) out[k] = fillDeep(v, f);
    return out;
  }
  return value;
}

let nextCallId = 1;
let nextCompletionId = 1;
const tokens = (chars) => Math.ceil(chars / 4);

// The reply of `rule` to a request: {id, model, content (string|null), toolCalls: [{id,name,arguments}],
// finishReason, usage}.
function buildReply(reply, f) {
  const toolCalls = (reply.tool_calls ?? []).map((tc) => ({
    id: tc.id ?? `call_${nextCallId++}`,
    name: tc.name,
    arguments: typeof tc.arguments === 'string' ? tc.arguments : JSON.stringify(fillDeep(tc.arguments ?? {}, f)),
  }));
  let content = reply.content === undefined ? (toolCalls.length > 0 ? null : '') : reply.content;
  if (typeof content === 'string') content = fill(content, f);
  let usage = reply.usage;
  if (usage === undefined) {
    let promptChars = 0;
    for (const m of f.messages) promptChars += m ? textOf(m.content).length : 0;
    let completionChars = content ? content.length : 0;
    for (const tc of toolCalls) completionChars += tc.name.length + tc.arguments.length;
    const p = tokens(promptChars);
    const c = tokens(completionChars);
    usage = { prompt_tokens: p, completion_tokens: c, total_tokens: p + c };
  }
  return {
    id: `chatcmpl-fixture-${nextCompletionId++}`,
    created: Math.floor(Date.now() / 1000),
    model: f.model || 'fixture-model',
    content,
    toolCalls,
    finishReason: reply.finish_reason ?? (toolCalls.length > 0 ? 'tool_calls' : 'stop'),
    usage,
  };
}

function completionJson(r) {
  const message = { role: 'assistant', content: r.content };
  if (r.toolCalls.length > 0) {
    message.tool_calls = r.toolCalls.map((tc) => ({
      id: tc.id, type: 'function', function: { name: tc.name, arguments: tc.arguments },
    }));
  }
  return JSON.stringify({
    id: r.id, object: 'chat.completion', created: r.created, model: r.model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: r.finishReason }],
    usage: r.usage,
  });
}

const SURROGATE = /[\ud800-\udfff]/;
// `text` in pieces of `size` characters (never splitting a surrogate pair).
function split(text, size) {
  const chars = SURROGATE.test(text) ? Array.from(text) : null;
  const length = chars ? chars.length : text.length;
  const out = [];
  for (let i = 0; i < length; i += size) {
    out.push(chars ? chars.slice(i, i + size).join('') : text.slice(i, i + size));
  }
  return out;
}

// The SSE frames of a streamed reply (each "data: ...\n\n"), ending with "data: [DONE]".
function streamFrames(r, includeUsage, chunkSize) {
  const frames = [];
  const head = `{"id":${JSON.stringify(r.id)},"object":"chat.completion.chunk","created":${r.created},` +
               `"model":${JSON.stringify(r.model)},"choices":`;
  const tail = includeUsage ? ',"usage":null}' : '}';
  const chunk = (delta, finish = null) =>
    `data: ${head}[{"index":0,"delta":${JSON.stringify(delta)},"logprobs":null,"finish_reason":` +
    `${JSON.stringify(finish)}}]${tail}\n\n`;

  frames.push(chunk({ role: 'assistant', content: typeof r.content === 'string' ? '' : null }));
  if (r.content) {
    const size = chunkSize > 0 ? chunkSize : Math.min(32, Math.max(1, Math.ceil(r.content.length / 4)));
    for (const piece of split(r.content, size)) frames.push(chunk({ content: piece }));
  }
  r.toolCalls.forEach((tc, index) => {
    frames.push(chunk({ tool_calls: [{ index, id: tc.id, type: 'function', function: { name: tc.name, arguments: '' } }] }));
    const args = tc.arguments;
    if (args.length > 0) {
      const size = chunkSize > 0 ? chunkSize : Math.min(32, Math.max(1, Math.ceil(args.length / 3)));
      let pieces = split(args, size);
      if (pieces.length === 1 && args.length >= 2) pieces = split(args, Math.ceil(args.length / 2));
      for (const piece of pieces) frames.push(chunk({ tool_calls: [{ index, function: { arguments: piece } }] }));
    }
  });
  frames.push(chunk({}, r.finishReason));
  if (includeUsage) frames.push(`data: ${head}[],"usage":${JSON.stringify(r.usage)}}\n\n`);
  frames.push('data: [DONE]\n\n');
  return frames;
}

// ---- HTTP ---------------------------------------------------------------------------------------
function sendJson(res, status, value, extraHeaders) {
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text), ...extraHeaders });
  res.end(text);
}
function openAiError(res, status, message, type) {
  sendJson(res, status, { error: { message, type, param: null, code: null } });
}

function readBody(req, res, done) {
  const declared = Number(req.headers['content-length']);
  // Over the limit: answer 413 at once and discard the rest of the body (the connection stays
  // usable; closing it while the client still sends would turn the 413 into a reset).
  if (declared > MAX_BODY) {
    req.resume();
    openAiError(res, 413, `request body over ${MAX_BODY} bytes`, 'fixture_too_large');
    return;
  }
  const parts = [];
  let size = 0;
  let tooBig = false;
  req.on('data', (d) => {
    if (tooBig) return;
    size += d.length;
    if (size > MAX_BODY) {
      tooBig = true;
      parts.length = 0;
      openAiError(res, 413, `request body over ${MAX_BODY} bytes`, 'fixture_too_large');
      return;
    }
    parts.push(d);
  });
  req.on('end', () => {
    if (!tooBig) done(parts.length === 1 ? parts[0].toString('utf8') : Buffer.concat(parts).toString('utf8'));
  });
}

function later(ms, fn) {
  if (ms > 0) setTimeout(fn, ms);
  else fn();
}

function handleCompletion(req, res, text) {
  let body;
  try {
    body = JSON.parse(text);
  } catch (e) {
    record(text, req.headers.authorization);
    openAiError(res, 400, `request body is not JSON: ${e.message}`, 'invalid_request_error');
    return;
  }
  record(body, req.headers.authorization);
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    openAiError(res, 400, 'request body is not a JSON object', 'invalid_request_error');
    return;
  }
  const f = facts(body);
  const rule = pickRule(f);
  if (rule === null) {
    let last = f.last === null ? 'none (no messages)' : JSON.stringify({ role: f.lastRole, content: f.lastContent });
    if (last.length > 500) last = last.slice(0, 500) + '...';
    openAiError(res, 500, `fixture-server: no rule matches the request (stream=${f.stream}, ` +
                `tool_results=${f.toolResults}); last message: ${last}`, 'fixture_no_rule');
    return;
  }
  const reply = rule.reply;
  later(reply.delay_ms ?? 0, () => {
    if (res.destroyed) return;
    if (reply.status !== undefined) {
      const b = reply.body ?? { error: { message: `scripted status ${reply.status}`, type: 'fixture_error' } };
      const isText = typeof b === 'string';
      const out = isText ? b : JSON.stringify(b);
      res.writeHead(reply.status, {
        'Content-Type': isText ? 'text/plain; charset=utf-8' : 'application/json',
        'Content-Length': Buffer.byteLength(out),
        ...(reply.headers ?? {}),
      });
      res.end(out);
      return;
    }
    const r = buildReply(reply, f);
    if (!f.stream) {
      sendJson(res, 200, completionJson(r));
      return;
    }
    const includeUsage = body.stream_options != null && body.stream_options.include_usage === true;
    const frames = streamFrames(r, includeUsage, reply.chunk_size ?? 0);
    res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache' });
    const gap = reply.chunk_delay_ms ?? 0;
    if (gap <= 0) {
      res.end(frames.join(''));
      return;
    }
    let i = 0;
    const next = () => {
      if (res.destroyed) return;
      res.write(frames[i++]);
      if (i < frames.length) setTimeout(next, gap);
      else res.end();
    };
    next();
  });
}

function handle(req, res) {
  const q = req.url.indexOf('?');
  const path = q < 0 ? req.url : req.url.slice(0, q);
  if (req.method === 'POST' && path.endsWith('/chat/completions')) {
    readBody(req, res, (text) => handleCompletion(req, res, text));
  } else if (path === '/_health' && req.method === 'GET') {
    sendJson(res, 200, { status: 'ok' });
  } else if (path === '/_requests' && req.method === 'GET') {
    const body = JSON.stringify(recorded());
    sendJson(res, 200, body, { 'X-Fixture-Total': String(total),
                              'X-Fixture-Dropped': String(Math.max(0, total - MAX_RECORDS)) });
  } else if (path === '/_requests' && req.method === 'DELETE') {
    clearRecords();
    sendJson(res, 200, { cleared: true });
  } else if (path === '/_script' && req.method === 'POST') {
    readBody(req, res, (text) => {
      try {
        rules = compileScript(JSON.parse(text));
        sendJson(res, 200, { rules: rules.length });
      } catch (e) {
        openAiError(res, 400, `bad script: ${e.message}`, 'fixture_bad_script');
      }
    });
  } else {
    req.resume();
    openAiError(res, 404, `fixture-server: no route ${req.method} ${path}`, 'not_found');
  }
}

const server = http.createServer({ keepAliveTimeout: 65000 }, (req, res) => {
  try {
    handle(req, res);
  } catch (e) {
    if (!res.headersSent) openAiError(res, 500, `fixture-server: ${e.stack ?? e}`, 'fixture_internal');
    else res.destroy();
  }
});
server.keepAliveTimeout = 65000;
server.headersTimeout = 66000;
server.on('clientError', (err, socket) => {
  if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
  else socket.destroy();
});
server.on('error', (e) => {
  process.stderr.write(`fixture-server: ${e.message}\n`);
  process.exit(1);
});
server.listen(opts.port, opts.host, () => {
  const port = server.address().port;
  if (opts.portFile) {
    fs.writeFileSync(`${opts.portFile}.tmp`, `${port}\n`);
    fs.renameSync(`${opts.portFile}.tmp`, opts.portFile);
  }
  process.stdout.write(`${port}\n`);
});
for (const sig of ['SIGTERM', 'SIGINT']) process.on(sig, () => process.exit(0));
