#!/usr/bin/env node
// The cairn side of the agent benchmark (bench/agents/run.sh; see bench/agents/README.md) and of the
// workflow benchmark (bench/workflows/run.sh, with --workflow). Node 20 built-ins only (node:http
// with a hand-written SSE reader).
//
//   node cairn-load.mjs --port P [--host 127.0.0.1] [--agent bench | --workflow NAME] [--concurrency 1]
//                       [--seconds 10] [--warmup-seconds 2] [--timeout-ms 30000] [--server-pid PID]
//                       [--clk-tck 100]
//
// Opens ONE event stream, GET /events/stream?schema_name=agent.response.v1&tag=agent:<agent>, waits
// for `: stream open` (so no answer can be missed: without `since` the stream starts at the next
// event), then keeps `concurrency` runs in flight: each run is a POST /breadcrumbs of a
// user.message.v1 {"content": "hello bench <n>", "agent_id": <agent>} on a keep-alive connection,
// completed when the agent.response.v1 for it (context.request_id = the message's id, also its
// `request:<id>` tag) arrives on the stream. An answer can arrive before the 201 that tells the
// message's id: it is kept until the 201 claims it.
//
// With --workflow NAME the same loop runs workflows instead: the stream is
// GET /events/stream?schema_name=workflow.result.v1&tag=workflow:<NAME>, a run is
// POST /workflows/<NAME>/runs {"input": {"n": <n>}} (answered 202 {execution_id, request_id}) and
// ends when the workflow.result.v1 whose context.request_id is that request_id arrives. Every
// counted run must be answered with status "success" and output {"v": n} (the workflow of
// bench/workflows passes n through its steps).
//
// Agents: every counted run must be answered with status "success", steps == 2 and a message that contains
// the user's text (the fixture's final answer quotes the echo tool's output), else it is an error.
// A run with no answer after --timeout-ms counts as a timeout (and its answer, if it comes, as late).
//
// Closed loop, like langgraph/bench.mjs: warm-up runs, not counted, then runs that start within the
// measured window count; runs/s = counted runs / (window start -> the last counted run ended).
// Latency = POST sent -> the answer's frame parsed. With --server-pid, the server's CPU time over
// the window is read from /proc/<pid>/stat.
//
// Prints one JSON line on stdout: {runs, seconds, runs_per_s, p50_ms, p90_ms, p99_ms, max_ms,
// mean_ms, errors, timeouts, ...}. Progress and problems go to stderr.
import http from 'node:http';
import { performance } from 'node:perf_hooks';

import { ClosedLoop, checkLoopOptions, loopOptions, parseOptions } from '../lib/closed-loop.mjs';

function usage(msg) {
  process.stderr.write(`cairn-load: ${msg}\nusage: node cairn-load.mjs --port P [--host H] [--agent ID | --workflow NAME] ` +
                       `[--concurrency N] [--seconds S] [--warmup-seconds W] [--timeout-ms MS] [--server-pid PID] ` +
                       `[--clk-tck N]\n`);
  process.exit(2);
}

const opts = parseOptions(process.argv.slice(2),
                          { host: '127.0.0.1', port: 0, agent: 'bench', workflow: null, concurrency: 1, seconds: 10,
                            warmup: 2, timeoutMs: 30000, serverPid: 0, clkTck: 100 },
                          { '--port': ['port', Number], '--host': ['host', String], '--agent': ['agent', String],
                            '--workflow': ['workflow', String], ...loopOptions, '--server-pid': ['serverPid', Number],
                            '--clk-tck': ['clkTck', Number] }, usage);
if (!(Number.isInteger(opts.port) && opts.port > 0 && opts.port < 65536)) usage('--port is required');
checkLoopOptions(opts, usage);
if (opts.workflow !== null && !/^[A-Za-z0-9_-]{1,64}$/.test(opts.workflow)) usage('bad --workflow');

// What is run and what answers it.
const answerSchema = opts.workflow ? 'workflow.result.v1' : 'agent.response.v1';
const streamTag = opts.workflow ? `workflow:${opts.workflow}` : `agent:${opts.agent}`;

// ---- the event stream ---------------------------------------------------------------------------
const waiting = new Map();  // message id -> {t0, finish(event, at)}
const early = new Map();    // message id -> {event, at}: answers that came before their 201
const gaveUp = new Set();   // message ids whose run timed out (a later answer is `late`)
const stream = { frames: 0, answers: 0, foreign: 0, late: 0, dropped: 0, closed: false, error: null };

function onEvent(event, at) {
  if (event.type === 'stream.dropped') {
    stream.dropped += 1;
    process.stderr.write(`cairn-load: the server dropped the stream: ${JSON.stringify(event)}\n`);
    return;
  }
  if (event.type !== 'breadcrumb.created' || event.schema_name !== answerSchema) return;
  stream.answers += 1;
  const id = event.context?.request_id;
  if (typeof id !== 'string') {
    stream.foreign += 1;
    return;
  }
  const w = waiting.get(id);
  if (w) {
    waiting.delete(id);
    w.finish(event, at);
  } else if (gaveUp.has(id)) {
    gaveUp.delete(id);
    stream.late += 1;
  } else {
    early.set(id, { event, at });  // its 201 has not been read yet
  }
}

function openStream() {
  return new Promise((resolve, reject) => {
    const path = `/events/stream?schema_name=${answerSchema}&tag=${encodeURIComponent(streamTag)}`;
    const req = http.get({ host: opts.host, port: opts.port, path, headers: { Accept: 'text/event-stream' } }, (res) => {
      if (res.statusCode !== 200) {
        reject(new Error(`GET ${path} answered ${res.statusCode}`));
        res.resume();
        return;
      }
      res.setEncoding('utf8');
      let buffer = '';
      let open = false;
      res.on('data', (chunk) => {
        const at = performance.now();
        buffer += chunk;
        let end;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const frame = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          let data = null;
          for (const line of frame.split('\n')) {
            if (line.startsWith('data:')) data = (data === null ? '' : data + '\n') + line.slice(line[5] === ' ' ? 6 : 5);
            else if (!open && line.startsWith(': stream open')) {
              open = true;
              resolve(req);
            }
          }
          if (data === null) continue;
          stream.frames += 1;
          try {
            onEvent(JSON.parse(data), at);
          } catch (e) {
            process.stderr.write(`cairn-load: a frame is not JSON (${e.message}): ${data.slice(0, 200)}\n`);
          }
        }
      });
      res.on('end', () => {
        stream.closed = true;
      });
      res.on('error', (e) => {
        stream.closed = true;
        stream.error = e.message;
      });
    });
    req.on('error', (e) => {
      stream.closed = true;
      stream.error = e.message;
      reject(e);
    });
    req.setTimeout(10000, () => {
      if (!stream.frames) req.destroy(new Error('no `: stream open` within 10 s'));
      req.setTimeout(0);
    });
  });
}

// ---- one run ------------------------------------------------------------------------------------
const agent = new http.Agent({ keepAlive: true, maxSockets: opts.concurrency });

function post(path, body) {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: opts.host, port: opts.port, path, method: 'POST', agent,
                               headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) } },
                             (res) => {
                               const parts = [];
                               res.on('data', (d) => parts.push(d));
                               res.on('end', () => resolve({ status: res.statusCode, text: Buffer.concat(parts).toString('utf8') }));
                               res.on('error', reject);
                             });
    req.on('error', reject);
    req.end(body);
  });
}

// Run n; resolves to {problem: null | string, t1}: the answer's arrival time, or the time of the failure.
async function oneRun(n) {
  return opts.workflow ? oneWorkflowRun(n) : oneAgentRun(n);
}

// Waits for the answer to request `id` (or takes it from `early`); resolves to check(event, at).
function awaitAnswer(id, check) {
  const got = early.get(id);
  if (got) {
    early.delete(id);
    return check(got.event, got.at);
  }
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      waiting.delete(id);
      gaveUp.add(id);
      resolve({ problem: 'timeout', t1: performance.now() });
    }, opts.timeoutMs);
    waiting.set(id, {
      finish: (event, at) => {
        clearTimeout(timer);
        resolve(check(event, at));
      },
    });
  });
}

// POSTs body to path to start a run; resolves to {id} (the answer's field idField), or to
// {problem, t1} when the POST fails, is answered with another status than `status` or not with JSON.
async function startRun(path, body, status, idField) {
  let res;
  try {
    res = await post(path, body);
  } catch (e) {
    return { problem: `POST failed: ${e.message}`, t1: performance.now() };
  }
  if (res.status !== status) return { problem: `POST answered ${res.status}: ${res.text.slice(0, 200)}`, t1: performance.now() };
  try {
    return { id: JSON.parse(res.text)[idField] };
  } catch {
    return { problem: `the ${status} body is not JSON`, t1: performance.now() };
  }
}

// An answer's check for awaitAnswer: a problem when its status is not success, else what
// more(context) finds (null: none).
function answerCheck(more) {
  return (event, at) => {
    const c = event.context ?? {};
    const problem = c.status !== 'success' ? `status ${c.status}: ${JSON.stringify(c.error ?? null).slice(0, 200)}` : more(c);
    return { problem, t1: at };
  };
}

async function oneWorkflowRun(n) {
  const started = await startRun(`/workflows/${opts.workflow}/runs`, JSON.stringify({ input: { n } }), 202, 'request_id');
  if (started.problem) return started;
  if (typeof started.id !== 'string') return { problem: 'the 202 body has no request_id', t1: performance.now() };
  return awaitAnswer(started.id, answerCheck((c) =>
    c.output?.v !== n ? `unexpected output ${JSON.stringify(c.output ?? null).slice(0, 200)}` : null));
}

async function oneAgentRun(n) {
  const text = `hello bench ${n}`;
  const body = JSON.stringify({ title: 'bench message', schema_name: 'user.message.v1',
                                context: { content: text, agent_id: opts.agent } });
  const started = await startRun('/breadcrumbs', body, 201, 'id');
  if (started.problem) return started;
  return awaitAnswer(started.id, answerCheck((c) => {
    if (c.steps !== 2) return `steps ${c.steps} (expected 2)`;
    if (typeof c.message !== 'string' || !c.message.includes(text)) return `unexpected message ${JSON.stringify(c.message).slice(0, 200)}`;
    return null;
  }));
}

// ---- the closed loop ----------------------------------------------------------------------------
async function main() {
  const c = opts.concurrency;
  const sse = await openStream();
  process.stderr.write(`cairn-load: stream open; concurrency ${c}, ${opts.warmup}s warm-up + ${opts.seconds}s\n`);
  const loop = new ClosedLoop({ log: (m) => process.stderr.write(`cairn-load: ${m}\n`), serverPid: opts.serverPid,
                                clkTck: opts.clkTck });
  const worker = { run: oneRun, stopped: () => stream.closed };
  await loop.run(Array.from({ length: c }, () => worker), opts.warmup, opts.seconds);
  // Answers still due (to runs that timed out) get a moment to show up as late.
  if (gaveUp.size > 0) await new Promise((r) => setTimeout(r, 1000));
  const closedEarly = stream.closed;
  sse.destroy();
  agent.destroy();

  const out = {
    impl: 'cairn',
    workload: opts.workflow ? `workflow:${opts.workflow}` : `agent:${opts.agent}`,
    concurrency: c,
    ...loop.summary(),
    ...loop.serverFields(),
    stream: { frames: stream.frames, answers: stream.answers, late: stream.late, foreign: stream.foreign,
              unclaimed_early: early.size, dropped: stream.dropped, closed_early: closedEarly, error: stream.error },
  };
  process.stdout.write(JSON.stringify(out) + '\n');
  return closedEarly || stream.dropped > 0 ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (e) => {
    process.stderr.write(`cairn-load: ${e?.stack ?? e}\n`);
    process.exit(1);
  },
);
