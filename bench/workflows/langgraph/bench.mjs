#!/usr/bin/env node
// The LangGraph JS side of cairn's workflow benchmark (bench/workflows/run.sh; see
// bench/workflows/README.md).
//
//   node bench.mjs [--concurrency 1] [--seconds 10] [--warmup-seconds 2] [--timeout-ms 30000]
//                  [--db FILE] [--synchronous full|normal]
//
// The same workload as cairn's 3-step chain of `echo` tools: a StateGraph with three no-op nodes
// a -> b -> c (each returns the value it was given under its own key va/vb/vc, as echo does), compiled with
// the SQLite checkpointer (SqliteSaver on a file, not :memory:, so its state is durable like
// cairn's store). Each run is one graph.invoke({n}) on a thread of its own (a unique thread_id).
// It must end with va == vb == vc == n, else it counts as an error.
//
// Closed loop, like bench/agents/langgraph/bench.mjs: `concurrency` runs in flight, warm-up runs
// not counted, then runs that start within `seconds` count; runs/s = counted runs / (window start
// -> the last counted run ended); latency = invoke() called -> it resolved.
//
// Durability: SqliteSaver sets journal_mode=WAL and leaves `synchronous` at better-sqlite3's
// default (1 = NORMAL: no fsync per commit in WAL mode); --synchronous sets it (full: an fsync per
// commit, like `cairn serve --sync full`). The output reports the value used.
//
// Prints one JSON line on stdout: {runs, seconds, runs_per_s, p50_ms, p90_ms, p99_ms, max_ms,
// mean_ms, errors, ...}. Progress goes to stderr.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';

import { Annotation, END, START, StateGraph } from '@langchain/langgraph';
import { SqliteSaver } from '@langchain/langgraph-checkpoint-sqlite';

function usage(msg) {
  process.stderr.write(`langgraph workflow bench: ${msg}\nusage: node bench.mjs [--concurrency N] [--seconds S] ` +
                       `[--warmup-seconds W] [--timeout-ms MS] [--db FILE] [--synchronous full|normal]\n`);
  process.exit(2);
}

const opts = { concurrency: 1, seconds: 10, warmup: 2, timeoutMs: 30000, db: null, synchronous: null };
{
  const argv = process.argv.slice(2);
  for (let i = 0; i < argv.length; ++i) {
    const a = argv[i];
    const value = () => {
      if (i + 1 >= argv.length) usage(`${a} needs a value`);
      return argv[++i];
    };
    if (a === '--concurrency') opts.concurrency = Number(value());
    else if (a === '--seconds') opts.seconds = Number(value());
    else if (a === '--warmup-seconds') opts.warmup = Number(value());
    else if (a === '--timeout-ms') opts.timeoutMs = Number(value());
    else if (a === '--db') opts.db = value();
    else if (a === '--synchronous') opts.synchronous = value();
    else usage(`unknown argument ${a}`);
  }
  if (opts.synchronous !== null && !['full', 'normal'].includes(opts.synchronous)) usage('--synchronous is full or normal');
  if (!(Number.isInteger(opts.concurrency) && opts.concurrency >= 1)) usage('bad --concurrency');
  if (!(opts.seconds > 0) || !(opts.warmup >= 0) || !(opts.timeoutMs > 0)) usage('bad --seconds/--warmup-seconds/--timeout-ms');
}

// ---- the graph ----------------------------------------------------------------------------------
const State = Annotation.Root({
  n: Annotation(),
  va: Annotation(),
  vb: Annotation(),
  vc: Annotation(),
});
const graph0 = new StateGraph(State)
  .addNode('a', (s) => ({ va: s.n }))   // echo {v: input.n}
  .addNode('b', (s) => ({ vb: s.va }))  // echo {v: steps.a.output.v}
  .addNode('c', (s) => ({ vc: s.vb }))  // echo {v: steps.b.output.v}
  .addEdge(START, 'a')
  .addEdge('a', 'b')
  .addEdge('b', 'c')
  .addEdge('c', END);

let tmpDir = null;
let dbPath = opts.db;
if (!dbPath) {
  tmpDir = fs.mkdtempSync(path.join(os.tmpdir(), 'langgraph-wfbench-'));
  dbPath = path.join(tmpDir, 'checkpoints.sqlite');
}
const checkpointer = SqliteSaver.fromConnString(dbPath);
checkpointer.setup();  // journal_mode=WAL and the tables; `synchronous` stays the build's default
if (opts.synchronous) checkpointer.db.pragma(`synchronous=${opts.synchronous.toUpperCase()}`);
const graph = graph0.compile({ checkpointer });

// ---- one run ------------------------------------------------------------------------------------
const runTag = `${process.pid}-${Date.now().toString(36)}`;
let nextRun = 0;

// Resolves to null when the run is as expected, else to an error string.
async function oneRun() {
  const n = nextRun++;
  const signal = AbortSignal.timeout(opts.timeoutMs);
  const result = await graph.invoke({ n }, { configurable: { thread_id: `${runTag}-${n}` }, signal });
  if (result.va !== n || result.vb !== n || result.vc !== n) return `unexpected state ${JSON.stringify(result).slice(0, 200)}`;
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
      if (problem && phase === 'warmup') process.stderr.write(`langgraph workflow bench: warm-up run failed: ${problem}\n`);
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
  process.stderr.write(`langgraph workflow bench: concurrency ${c}, ${opts.warmup}s warm-up + ${opts.seconds}s, ` +
                       `checkpoints in ${dbPath}\n`);
  if (opts.warmup > 0) {
    const until = performance.now() + opts.warmup * 1000;
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
  const all = runs + errors + warmRuns;
  const out = {
    impl: 'langgraph',
    concurrency: c,
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
      checkpoints_per_run: all > 0 ? round(rows('checkpoints') / all, 2) : null,
    },
    versions: { node: process.versions.node },
  };
  process.stdout.write(JSON.stringify(out) + '\n');
}

let exitCode = 0;
try {
  await main();
} catch (e) {
  process.stderr.write(`langgraph workflow bench: ${e?.stack ?? e}\n`);
  exitCode = 1;
} finally {
  try {
    checkpointer.db.close();
  } catch {}
  if (tmpDir) fs.rmSync(tmpDir, { recursive: true, force: true });
}
process.exit(exitCode);
