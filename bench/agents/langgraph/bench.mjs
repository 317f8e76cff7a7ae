#!/usr/bin/env node
// The LangGraph JS side of cairn's agent benchmark (bench/agents/run.sh; see bench/agents/README.md).
//
//   node bench.mjs --base-url http://127.0.0.1:PORT/v1 [--concurrency 1] [--seconds 10]
//                  [--warmup-seconds 2] [--timeout-ms 30000] [--db FILE] [--stream] [--model bench]
//                  [--synchronous full|normal]
//
// The same workload as cairn's: a prebuilt ReAct agent (createReactAgent) whose model is ChatOpenAI
// pointed at the fixture server (tests/e2e/llm-node/fixture-server.mjs), with one tool, `echo`
// (returns its input text; tool() with a zod schema), and the SQLite checkpointer (SqliteSaver on a
// file, not :memory:, so that its state is durable like cairn's store). Each run is one
// agent.invoke() of a user message on a thread of its own (a unique thread_id); the fixture answers
// the first model call with an echo tool call and the second with a final answer, so a run is
// 2 model calls and 1 tool call.
//
// Closed loop: `concurrency` runs in flight, each worker starting its next run when its last one
// ends. First `warmup-seconds` of runs that are not counted, then the measured window: runs that
// start within `seconds` are counted; runs/s = counted runs / (window start -> the last counted run
// ended). Every counted run must end with 4 messages (user, assistant tool call, tool, assistant)
// and the expected final text, else it counts as an error.
//
// Durability: SqliteSaver sets journal_mode=WAL and leaves `synchronous` at the build's default
// (better-sqlite3's SQLite: 1 = NORMAL, no fsync per commit in WAL mode); --synchronous sets it
// (full: an fsync per commit, like `cairn serve --sync full`). The output reports the value used.
//
// Streaming: off by default (ChatOpenAI `streaming: false`, one JSON reply per model call); --stream
// turns it on (SSE replies, assembled by LangChain). A streamed reply makes ChatOpenAI estimate token
// counts with js-tiktoken, whose encoding LangChain downloads once per process from
// https://tiktoken.pages.dev/js/<encoding>.json (`gpt2` for a model name it does not know). Without
// network access that download hangs every run, so with --stream those URLs are answered from the
// same data shipped in the js-tiktoken package (js-tiktoken/ranks/<encoding>): what a machine with
// network access does after its first download.
//
// Prints one JSON line on stdout: {runs, seconds, runs_per_s, p50_ms, p90_ms, p99_ms, max_ms,
// mean_ms, errors, ...} (latency = invoke() called -> it resolved). Progress goes to stderr.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';

import { tool } from '@langchain/core/tools';
import { SqliteSaver } from '@langchain/langgraph-checkpoint-sqlite';
import { createReactAgent } from '@langchain/langgraph/prebuilt';
import { ChatOpenAI } from '@langchain/openai';
import { z } from 'zod';

function usage(msg) {
  process.stderr.write(`langgraph bench: ${msg}\nusage: node bench.mjs --base-url URL [--concurrency N] ` +
                       `[--seconds S] [--warmup-seconds W] [--timeout-ms MS] [--db FILE] [--stream] [--model M] ` +
                       `[--synchronous full|normal]\n`);
  process.exit(2);
}

const opts = { baseUrl: null, concurrency: 1, seconds: 10, warmup: 2, timeoutMs: 30000, db: null, stream: false,
               model: 'bench', synchronous: null };
{
  const argv = process.argv.slice(2);
  for (let i = 0; i < argv.length; ++i) {
    const a = argv[i];
    const value = () => {
      if (i + 1 >= argv.length) usage(`${a} needs a value`);
      return argv[++i];
    };
    if (a === '--base-url') opts.baseUrl = value();
    else if (a === '--concurrency') opts.concurrency = Number(value());
    else if (a === '--seconds') opts.seconds = Number(value());
    else if (a === '--warmup-seconds') opts.warmup = Number(value());
    else if (a === '--timeout-ms') opts.timeoutMs = Number(value());
    else if (a === '--db') opts.db = value();
    else if (a === '--stream') opts.stream = true;
    else if (a === '--model') opts.model = value();
    else if (a === '--synchronous') opts.synchronous = value();
    else usage(`unknown argument ${a}`);
  }
  if (!opts.baseUrl) usage('--base-url is required');
  if (opts.synchronous !== null && !['full', 'normal'].includes(opts.synchronous)) usage('--synchronous is full or normal');
  if (!(Number.isInteger(opts.concurrency) && opts.concurrency >= 1)) usage('bad --concurrency');
  if (!(opts.seconds > 0) || !(opts.warmup >= 0) || !(opts.timeoutMs > 0)) usage('bad --seconds/--warmup-seconds/--timeout-ms');
}

// ---- the agent ----------------------------------------------------------------------------------
if (opts.stream) {
  const realFetch = globalThis.fetch;
  globalThis.fetch = async (input, init) => {
    const url = String(input?.url ?? input);
    const m = /^https:\/\/tiktoken\.pages\.dev\/js\/([a-z0-9_]+)\.json$/.exec(url);
    if (m) {
      const ranks = (await import(`js-tiktoken/ranks/${m[1]}`)).default;
      return new Response(JSON.stringify(ranks), { headers: { 'Content-Type': 'application/json' } });
    }
    return realFetch(input, init);
  };
}

const echo = tool(async ({ text }) => text, {
  name: 'echo',
  description: 'Returns its input text unchanged.',
  schema: z.object({ text: z.string().describe('the text to return') }),
});

const model = new ChatOpenAI({
  model: opts.model,
  apiKey: 'dummy',
  configuration: { baseURL: opts.baseUrl },
  streaming: opts.stream,
  temperature: 0,
});

let tmpDir = null;
let dbPath = opts.db;
if (!dbPath) {
  tmpDir = fs.mkdtempSync(path.join(os.tmpdir(), 'langgraph-bench-'));
  dbPath = path.join(tmpDir, 'checkpoints.sqlite');
}
const checkpointer = SqliteSaver.fromConnString(dbPath);
checkpointer.setup();  // journal_mode=WAL and the tables; `synchronous` stays the build's default
if (opts.synchronous) checkpointer.db.pragma(`synchronous=${opts.synchronous.toUpperCase()}`);
const agent = createReactAgent({ llm: model, tools: [echo], checkpointSaver: checkpointer });

// ---- one run ------------------------------------------------------------------------------------
const runTag = `${process.pid}-${Date.now().toString(36)}`;
let nextRun = 0;

// Resolves to null when the run is as expected, else to an error string.
async function oneRun() {
  const n = nextRun++;
  const text = `hello bench ${n}`;
  const signal = AbortSignal.timeout(opts.timeoutMs);
  const result = await agent.invoke({ messages: [{ role: 'user', content: text }] },
                                    { configurable: { thread_id: `${runTag}-${n}` }, signal });
  const messages = result.messages ?? [];
  if (messages.length !== 4) return `expected 4 messages, got ${messages.length}`;
  const toolCalls = messages[1].tool_calls ?? [];
  if (toolCalls.length !== 1 || toolCalls[0].name !== 'echo') return 'the second message is not one echo call';
  const final = messages[3].content;
  if (final !== `The tool said: ${text}`) return `unexpected final answer ${JSON.stringify(final).slice(0, 200)}`;
  return null;
}

// ---- the closed loop ----------------------------------------------------------------------------
const latencies = [];
const errorSamples = new Map();
let errors = 0;
let timeouts = 0;
let windowStart = 0;
let windowEnd = 0;
let lastEnd = 0;
let phase = 'warmup';

function countError(message) {
  errors += 1;
  errorSamples.set(message, (errorSamples.get(message) ?? 0) + 1);
}

async function worker(stopAt) {
  while (performance.now() < stopAt()) {
    const t0 = performance.now();
    const counted = phase === 'measure' && t0 >= windowStart;
    let problem = null;
    try {
      problem = await oneRun();
    } catch (e) {
      const name = e?.name ?? '';
      if (name === 'TimeoutError' || name === 'AbortError' || /abort/i.test(String(e?.message))) {
        timeouts += counted ? 1 : 0;
        problem = 'timeout';
      } else {
        problem = String(e?.message ?? e).slice(0, 200);
      }
    }
    const t1 = performance.now();
    if (!counted) {
      if (problem && phase === 'warmup') process.stderr.write(`langgraph bench: warm-up run failed: ${problem}\n`);
      continue;
    }
    lastEnd = Math.max(lastEnd, t1);
    if (problem) countError(problem);
    else latencies.push(t1 - t0);
  }
}

function quantile(sorted, q) {
  if (sorted.length === 0) return null;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[i];
}
const round = (x, d = 3) => (x === null || x === undefined ? null : Number(x.toFixed(d)));

async function main() {
  const c = opts.concurrency;
  process.stderr.write(`langgraph bench: concurrency ${c}, ${opts.warmup}s warm-up + ${opts.seconds}s, ` +
                       `streaming ${opts.stream ? 'on' : 'off'}, checkpoints in ${dbPath}\n`);
  // Warm-up: the same loop, not counted (JIT, connection pool, SQLite pages).
  const warmStart = performance.now();
  if (opts.warmup > 0) {
    const until = warmStart + opts.warmup * 1000;
    await Promise.all(Array.from({ length: c }, () => worker(() => until)));
  }
  const warmRuns = nextRun;
  phase = 'measure';
  windowStart = performance.now();
  windowEnd = windowStart + opts.seconds * 1000;
  const cpu0 = process.cpuUsage();
  await Promise.all(Array.from({ length: c }, () => worker(() => windowEnd)));
  const cpu = process.cpuUsage(cpu0);
  const sorted = latencies.slice().sort((a, b) => a - b);
  const runs = sorted.length;
  const seconds = (Math.max(lastEnd, windowStart) - windowStart) / 1000;
  const mean = runs > 0 ? sorted.reduce((s, x) => s + x, 0) / runs : null;
  const db = checkpointer.db;
  const rows = (table) => db.prepare(`SELECT count(*) AS n FROM ${table}`).get().n;
  const out = {
    impl: 'langgraph',
    concurrency: c,
    streaming: opts.stream,
    runs,
    seconds: round(seconds),
    runs_per_s: seconds > 0 ? round(runs / seconds, 1) : 0,
    p50_ms: round(quantile(sorted, 0.5)),
    p90_ms: round(quantile(sorted, 0.9)),
    p99_ms: round(quantile(sorted, 0.99)),
    max_ms: round(sorted.length ? sorted[sorted.length - 1] : null),
    mean_ms: round(mean),
    errors,
    timeouts,
    error_samples: Object.fromEntries([...errorSamples.entries()].slice(0, 5)),
    warmup_runs: warmRuns,
    client_cpu_ms: round((cpu.user + cpu.system) / 1000, 1),
    client_cpu_us_per_run: runs + errors > 0 ? round((cpu.user + cpu.system) / (runs + errors), 1) : null,
    sqlite: {
      journal_mode: db.pragma('journal_mode', { simple: true }),
      synchronous: db.pragma('synchronous', { simple: true }),  // 2 = FULL, 1 = NORMAL
      version: db.prepare('SELECT sqlite_version() AS v').get().v,
      checkpoints: rows('checkpoints'),
      writes: rows('writes'),
    },
    versions: {
      node: process.versions.node,
    },
  };
  process.stdout.write(JSON.stringify(out) + '\n');
}

let exitCode = 0;
try {
  await main();
} catch (e) {
  process.stderr.write(`langgraph bench: ${e?.stack ?? e}\n`);
  exitCode = 1;
} finally {
  try {
    checkpointer.db.close();
  } catch {}
  if (tmpDir) fs.rmSync(tmpDir, { recursive: true, force: true });
}
process.exit(exitCode);
