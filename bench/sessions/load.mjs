#!/usr/bin/env node
// The load generator of the sessions benchmark (bench/sessions/run.sh). Node 20 built-ins only
// (node:http with a hand-written SSE reader). Prints one JSON line on stdout; progress and problems
// go to stderr.
//
//   node load.mjs --mode session --port P [--agent bench] [--concurrency C] [--seconds S]
//                 [--warmup-seconds W] [--timeout-ms T] [--server-pid PID] [--clk-tck N]
//   node load.mjs --mode agent   (same options)
//   node load.mjs --mode idle --port P --sessions N [--agent bench] [--open-concurrency K]
//                 [--timeout-ms T] --server-pid PID
//
// session: C sessions (POST /sessions {agent_id}), each followed by its own stream
//   GET /sessions/{id}/events (opened, ": stream open" seen, before the first message). Each session
//   runs a closed loop: POST /sessions/{id}/messages {"content": "hello bench <w>-<n>"} (202) and
//   waits for the end of that execution on the session's stream. Latencies from the POST being sent:
//     first  the first frame of the run on the stream: message.created of the user message
//     done   execution.completed of the execution the 202 named
//   A run fails on a non-202, execution.failed/.cancelled, or no end within --timeout-ms.
// agent: the bare agent path, for comparison: C workers, each with its own tag session:bench-w<w>
//   and its own GET /events/stream?any_tags=session:bench-w<w>. A run is POST /breadcrumbs of a
//   user.message.v1 {content, agent_id} tagged with it (201) and ends with the agent.response.v1
//   answering it (context.request_id = the message id). first = the message's own breadcrumb.created
//   frame, done = the answer's frame; an answer with status != success is a failure.
// Both: warm-up runs are not counted; runs starting within the measured window are; runs/s =
//   counted runs / (window start -> the last counted run ended). --server-pid: the server's CPU
//   time over the window (from /proc/<pid>/stat).
// idle: N sessions are created (64 requests in flight), the server's RSS is read, then N streams
//   GET /sessions/{id}/events are opened (at most K connecting at once; each counts once ": stream
//   open" arrived), RSS is read again; 10 of the sessions get a message and must see its
//   execution.completed on their stream (the streams are live, not just open); then every stream
//   is closed and RSS read a last time.
import fs from 'node:fs';
import http from 'node:http';
import { performance } from 'node:perf_hooks';

import { ClosedLoop, checkLoopOptions, loopOptions, parseOptions, quantile, round } from '../lib/closed-loop.mjs';

function usage(msg) {
  process.stderr.write(`sessions-load: ${msg}\n` +
    'usage: node load.mjs --mode session|agent|idle --port P [--host H] [--agent ID] [--concurrency C] ' +
    '[--seconds S] [--warmup-seconds W] [--timeout-ms T] [--sessions N] [--open-concurrency K] ' +
    '[--server-pid PID] [--clk-tck N]\n');
  process.exit(2);
}

const opts = parseOptions(process.argv.slice(2),
                          { mode: '', host: '127.0.0.1', port: 0, agent: 'bench', concurrency: 1, seconds: 10, warmup: 2,
                            timeoutMs: 30000, sessions: 10000, openConcurrency: 256, serverPid: 0, clkTck: 100 },
                          { '--mode': ['mode', String], '--port': ['port', Number], '--host': ['host', String],
                            '--agent': ['agent', String], ...loopOptions, '--sessions': ['sessions', Number],
                            '--open-concurrency': ['openConcurrency', Number], '--server-pid': ['serverPid', Number],
                            '--clk-tck': ['clkTck', Number] }, usage);
if (!['session', 'agent', 'idle'].includes(opts.mode)) usage('--mode is session, agent or idle');
if (!(Number.isInteger(opts.port) && opts.port > 0 && opts.port < 65536)) usage('--port is required');
checkLoopOptions(opts, usage);
if (!(Number.isInteger(opts.sessions) && opts.sessions >= 1)) usage('bad --sessions');
if (!(Number.isInteger(opts.openConcurrency) && opts.openConcurrency >= 1)) usage('bad --open-concurrency');

const log = (msg) => process.stderr.write(`sessions-load[${opts.mode}]: ${msg}\n`);
// {rss_kb, hwm_kb, threads, fds} of a process, or nulls.
function procOf(pid) {
  const out = { rss_kb: null, hwm_kb: null, threads: null, fds: null };
  if (!pid) return out;
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const num = (k) => { const m = status.match(new RegExp(`^${k}:\\s+(\\d+)`, 'm')); return m ? Number(m[1]) : null; };
    out.rss_kb = num('VmRSS');
    out.hwm_kb = num('VmHWM');
    out.threads = num('Threads');
    out.fds = fs.readdirSync(`/proc/${pid}/fd`).length;
  } catch { /* gone */ }
  return out;
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// ---- HTTP ---------------------------------------------------------------------------------------
const agent = new http.Agent({ keepAlive: true, maxSockets: Math.max(opts.concurrency, 64) });

function request(method, path, body) {
  return new Promise((resolve, reject) => {
    const headers = { 'Content-Type': 'application/json' };
    if (body !== undefined) headers['Content-Length'] = Buffer.byteLength(body);
    const req = http.request({ host: opts.host, port: opts.port, path, method, agent, headers }, (res) => {
      const parts = [];
      res.on('data', (d) => parts.push(d));
      res.on('end', () => resolve({ status: res.statusCode, text: Buffer.concat(parts).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

// An event stream: calls onFrame({id, data}) for each frame with data, resolves when ": stream open"
// arrived. Its own connection (no agent).
function openStream(path, onFrame, state = {}) {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: opts.host, port: opts.port, path, agent: false,
                           headers: { Accept: 'text/event-stream' } }, (res) => {
      if (res.statusCode !== 200) {
        res.resume();
        reject(new Error(`GET ${path} answered ${res.statusCode}`));
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
          let id = null;
          for (const line of frame.split('\n')) {
            if (line.startsWith('data:')) data = (data === null ? '' : data + '\n') + line.slice(line[5] === ' ' ? 6 : 5);
            else if (line.startsWith('id:')) id = line.slice(line[3] === ' ' ? 4 : 3);
            else if (!open && line.startsWith(': stream open')) {
              open = true;
              resolve(req);
            }
          }
          if (data === null) continue;
          let parsed;
          try {
            parsed = JSON.parse(data);
          } catch (e) {
            log(`a frame is not JSON (${e.message}): ${data.slice(0, 200)}`);
            continue;
          }
          onFrame({ id, data: parsed }, at);
        }
      });
      res.on('end', () => { state.closed = true; });
      res.on('error', (e) => { state.closed = true; state.error = e.message; });
    });
    req.on('error', (e) => {
      state.closed = true;
      state.error = e.message;
      reject(e);
    });
    req.setTimeout(20000, () => {
      req.destroy(new Error('no `: stream open` within 20 s'));
    });
    req.on('socket', (s) => s.setNoDelay(true));
    // Once open, the stream may stay quiet for long: no timeout.
    req.once('response', () => req.setTimeout(0));
  });
}

// ---- one worker of the closed loop --------------------------------------------------------------
const streamStats = { frames: 0, dropped: 0, closed: 0, unexpected: 0 };

// A run in flight on one worker: resolved when both its POST answered and its end frame arrived.
class Inflight {
  constructor(text, t0) {
    this.text = text;
    this.t0 = t0;
    this.tFirst = null;
    this.end = null;   // {frame, at}
    this.posted = null;
    this.waiters = [];
  }
  settle() { for (const w of this.waiters.splice(0)) w(); }
}

function sessionWorker(index) {
  const w = { index, n: 0, sid: null, current: null, state: {} };
  w.onFrame = (frame, at) => {
    streamStats.frames += 1;
    const d = frame.data;
    if (d.type === 'stream.dropped') { streamStats.dropped += 1; log(`stream dropped: ${JSON.stringify(d)}`); return; }
    if (frame.id === null) return;  // tokens, pings
    const run = w.current;
    if (!run) { streamStats.unexpected += 1; return; }
    if (run.tFirst === null && d.event_type === 'message.created' && d.role === 'user' && d.content === run.text) {
      run.tFirst = at;
    }
    if (run.end === null && ['execution.completed', 'execution.failed', 'execution.cancelled'].includes(d.event_type)) {
      run.end = { data: d, at };
      run.settle();
    }
  };
  w.setup = async () => {
    const r = await request('POST', '/sessions', JSON.stringify({ agent_id: opts.agent, title: `bench session ${index}` }));
    if (r.status !== 201) throw new Error(`POST /sessions answered ${r.status}: ${r.text.slice(0, 200)}`);
    w.sid = JSON.parse(r.text).id;
    w.req = await openStream(`/sessions/${w.sid}/events`, w.onFrame, w.state);
  };
  w.run = async () => {
    const text = `hello bench ${index}-${w.n++}`;
    const t0 = performance.now();
    const run = new Inflight(text, t0);
    w.current = run;
    let res;
    try {
      res = await request('POST', `/sessions/${w.sid}/messages`, JSON.stringify({ content: text }));
    } catch (e) {
      w.current = null;
      return { problem: `POST failed: ${e.message}`, t1: performance.now() };
    }
    if (res.status !== 202) {
      w.current = null;
      return { problem: `POST answered ${res.status}: ${res.text.slice(0, 160)}`, t1: performance.now() };
    }
    let executionId;
    try {
      executionId = JSON.parse(res.text).execution_id;
    } catch {
      w.current = null;
      return { problem: 'the 202 body is not JSON', t1: performance.now() };
    }
    if (run.end === null) {
      const ended = await new Promise((resolve) => {
        const timer = setTimeout(() => resolve(false), opts.timeoutMs);
        run.waiters.push(() => { clearTimeout(timer); resolve(true); });
      });
      if (!ended) {
        w.current = null;
        return { problem: 'timeout', t1: performance.now() };
      }
    }
    w.current = null;
    const d = run.end.data;
    if (d.execution_id !== executionId) return { problem: 'the end frame names another execution', t1: run.end.at };
    if (d.event_type !== 'execution.completed') return { problem: `${d.event_type}: ${String(d.content).slice(0, 160)}`, t1: run.end.at };
    if (run.tFirst === null) return { problem: 'no message.created frame for the user message', t1: run.end.at };
    return { problem: null, first: run.tFirst - t0, t1: run.end.at };
  };
  w.close = () => { if (w.req) w.req.destroy(); };
  return w;
}

function agentWorker(index) {
  const tag = `session:bench-w${index}`;
  const w = { index, n: 0, current: null, state: {} };
  w.onFrame = (frame, at) => {
    streamStats.frames += 1;
    const d = frame.data;
    if (d.type === 'stream.dropped') { streamStats.dropped += 1; log(`stream dropped: ${JSON.stringify(d)}`); return; }
    if (frame.id === null || d.type !== 'breadcrumb.created') return;
    const run = w.current;
    if (!run) { streamStats.unexpected += 1; return; }
    if (run.tFirst === null && d.schema_name === 'user.message.v1' && d.context?.content === run.text) run.tFirst = at;
    if (run.end === null && d.schema_name === 'agent.response.v1') {
      run.end = { data: d, at };
      run.settle();
    }
  };
  w.setup = async () => {
    // No schema condition: the worker's tag selects its message and the answer (filtered here).
    w.req = await openStream(`/events/stream?any_tags=${encodeURIComponent(tag)}`, w.onFrame, w.state);
  };
  w.run = async () => {
    const text = `hello bench ${index}-${w.n++}`;
    const t0 = performance.now();
    const run = new Inflight(text, t0);
    w.current = run;
    const body = JSON.stringify({ schema_name: 'user.message.v1', title: 'bench message', tags: [tag],
                                  context: { content: text, agent_id: opts.agent } });
    let res;
    try {
      res = await request('POST', '/breadcrumbs', body);
    } catch (e) {
      w.current = null;
      return { problem: `POST failed: ${e.message}`, t1: performance.now() };
    }
    if (res.status !== 201) {
      w.current = null;
      return { problem: `POST answered ${res.status}: ${res.text.slice(0, 160)}`, t1: performance.now() };
    }
    const id = JSON.parse(res.text).id;
    if (run.end === null) {
      const ended = await new Promise((resolve) => {
        const timer = setTimeout(() => resolve(false), opts.timeoutMs);
        run.waiters.push(() => { clearTimeout(timer); resolve(true); });
      });
      if (!ended) {
        w.current = null;
        return { problem: 'timeout', t1: performance.now() };
      }
    }
    w.current = null;
    const c = run.end.data.context ?? {};
    if (c.request_id !== id) return { problem: 'the answer names another request', t1: run.end.at };
    if (c.status !== 'success') return { problem: `status ${c.status}: ${JSON.stringify(c.error ?? null).slice(0, 160)}`, t1: run.end.at };
    if (run.tFirst === null) return { problem: 'no created frame for the message', t1: run.end.at };
    return { problem: null, first: run.tFirst - t0, t1: run.end.at };
  };
  w.close = () => { if (w.req) w.req.destroy(); };
  return w;
}

async function closedLoop() {
  const c = opts.concurrency;
  const workers = Array.from({ length: c }, (_, i) => (opts.mode === 'session' ? sessionWorker(i) : agentWorker(i)));
  const tSetup = performance.now();
  for (let i = 0; i < workers.length; i += 64) await Promise.all(workers.slice(i, i + 64).map((w) => w.setup()));
  log(`${c} ${opts.mode === 'session' ? 'sessions and streams' : 'streams'} ready in ${Math.round(performance.now() - tSetup)} ms; ` +
      `${opts.warmup}s warm-up + ${opts.seconds}s`);

  const first = [];
  const doneInOrder = [];  // counted runs' latencies in the order they started (growth over the window)
  const loop = new ClosedLoop({
    log, serverPid: opts.serverPid, clkTck: opts.clkTck,
    onSuccess: (r, t0) => {
      first.push(r.first);
      doneInOrder.push({ t0, ms: r.t1 - t0 });
    },
  });
  await loop.run(workers.map((w) => ({ run: () => w.run(), stopped: () => w.state.closed })), opts.warmup, opts.seconds);
  const closedEarly = workers.filter((w) => w.state.closed).length;
  for (const w of workers) w.close();
  agent.destroy();

  const done = loop.latencies;
  first.sort((a, b) => a - b);
  done.sort((a, b) => a - b);
  doneInOrder.sort((a, b) => a.t0 - b.t0);
  const tenth = Math.max(1, Math.floor(doneInOrder.length / 10));
  const p50Of = (list) => quantile(list.map((x) => x.ms).sort((a, b) => a - b), 0.5);
  const runs = loop.runs;
  const seconds = loop.seconds;
  const { errors, ...errorFields } = loop.errors.fields();
  const out = {
    mode: opts.mode,
    concurrency: c,
    runs,
    seconds: round(seconds),
    runs_per_s: seconds > 0 ? round(runs / seconds, 1) : 0,
    first_p50_ms: round(quantile(first, 0.5)),
    first_p99_ms: round(quantile(first, 0.99)),
    done_p50_ms: round(quantile(done, 0.5)),
    done_p90_ms: round(quantile(done, 0.9)),
    done_p99_ms: round(quantile(done, 0.99)),
    done_max_ms: round(done.length ? done[done.length - 1] : null),
    // p50 of the first and the last tenth of the window's runs: growth as sessions get longer.
    done_p50_first_tenth_ms: round(p50Of(doneInOrder.slice(0, tenth))),
    done_p50_last_tenth_ms: round(p50Of(doneInOrder.slice(-tenth))),
    runs_per_worker: round((runs + errors + loop.warmRuns) / c, 1),
    errors,
    ...errorFields,
    warmup_runs: loop.warmRuns,
    client_cpu_ms: round((loop.cpu.user + loop.cpu.system) / 1000, 1),
    ...loop.serverFields(),
    streams: { frames: streamStats.frames, dropped: streamStats.dropped, unexpected: streamStats.unexpected,
               closed_early: closedEarly },
    server: procOf(opts.serverPid),
  };
  process.stdout.write(JSON.stringify(out) + '\n');
  return closedEarly > 0 || streamStats.dropped > 0 ? 1 : 0;
}

// ---- idle streams -------------------------------------------------------------------------------
async function idle() {
  const n = opts.sessions;
  const ids = new Array(n);
  const t0 = performance.now();
  let next = 0;
  const creator = async () => {
    while (next < n) {
      const i = next++;
      const r = await request('POST', '/sessions', JSON.stringify({ agent_id: opts.agent, title: `idle ${i}` }));
      if (r.status !== 201) throw new Error(`POST /sessions answered ${r.status}: ${r.text.slice(0, 200)}`);
      ids[i] = JSON.parse(r.text).id;
    }
  };
  await Promise.all(Array.from({ length: 64 }, creator));
  const createS = (performance.now() - t0) / 1000;
  log(`${n} sessions created in ${createS.toFixed(1)} s`);
  await sleep(2000);  // settle before reading memory
  const before = procOf(opts.serverPid);

  const streams = new Array(n);
  const live = new Map();  // session index -> {resolve, execution}
  let opened = 0;
  let failed = 0;
  let frames = 0;
  const failures = new Map();
  const t1 = performance.now();
  let cursor = 0;
  const opener = async () => {
    while (cursor < n) {
      const i = cursor++;
      const state = {};
      try {
        streams[i] = await openStream(`/sessions/${ids[i]}/events`, (frame) => {
          frames += 1;
          const l = live.get(i);
          if (l && frame.id !== null && frame.data.event_type === 'execution.completed') l.resolve(frame.data);
        }, state);
        opened += 1;
      } catch (e) {
        failed += 1;
        failures.set(e.message, (failures.get(e.message) ?? 0) + 1);
      }
      if ((opened + failed) % 2000 === 0) log(`${opened} streams open, ${failed} failed`);
    }
  };
  await Promise.all(Array.from({ length: opts.openConcurrency }, opener));
  const openS = (performance.now() - t1) / 1000;
  log(`${opened} streams open in ${openS.toFixed(1)} s (${failed} failed)`);
  await sleep(2000);
  const withStreams = procOf(opts.serverPid);

  // The streams are live: a message in 10 of the sessions reaches their own stream.
  const probes = [];
  for (let k = 0; k < 10 && opened > 0; ++k) {
    const i = Math.floor((k * n) / 10);
    if (!streams[i]) continue;
    probes.push(new Promise((resolve) => {
      const timer = setTimeout(() => resolve(false), opts.timeoutMs);
      live.set(i, { resolve: () => { clearTimeout(timer); resolve(true); } });
      request('POST', `/sessions/${ids[i]}/messages`, JSON.stringify({ content: `probe ${i}` })).then(
        (r) => { if (r.status !== 202) { clearTimeout(timer); resolve(false); } },
        () => { clearTimeout(timer); resolve(false); });
    }));
  }
  const tp = performance.now();
  const probeOk = (await Promise.all(probes)).filter(Boolean).length;
  const probeMs = performance.now() - tp;
  const afterProbes = procOf(opts.serverPid);

  for (const s of streams) if (s) s.destroy();
  agent.destroy();
  await sleep(3000);
  const closed = procOf(opts.serverPid);
  const out = {
    mode: 'idle',
    sessions: n,
    create_s: round(createS, 2),
    sessions_per_s: round(n / createS, 1),
    streams_open: opened,
    streams_failed: failed,
    failure_samples: Object.fromEntries([...failures.entries()].slice(0, 5)),
    open_s: round(openS, 2),
    frames,
    probes: probes.length,
    probes_ok: probeOk,
    probe_ms: round(probeMs, 1),
    rss_before_kb: before.rss_kb,
    rss_streams_kb: withStreams.rss_kb,
    rss_per_stream_kb: opened > 0 && before.rss_kb !== null ? round((withStreams.rss_kb - before.rss_kb) / opened, 2) : null,
    rss_after_probes_kb: afterProbes.rss_kb,
    rss_closed_kb: closed.rss_kb,
    hwm_kb: closed.hwm_kb,
    threads_streams: withStreams.threads,
    fds_before: before.fds,
    fds_streams: withStreams.fds,
    fds_closed: closed.fds,
  };
  process.stdout.write(JSON.stringify(out) + '\n');
  return failed > 0 || probeOk !== probes.length ? 1 : 0;
}

(opts.mode === 'idle' ? idle() : closedLoop()).then(
  (code) => process.exit(code),
  (e) => {
    log(e?.stack ?? String(e));
    process.exit(1);
  },
);
