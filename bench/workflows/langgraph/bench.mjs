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
import { Annotation, END, START, StateGraph } from '@langchain/langgraph';
import { SqliteSaver } from '@langchain/langgraph-checkpoint-sqlite';

import { openCheckpointer, runGraphLoop, runThenExit } from '../../lib/checkpointer.mjs';
import { checkLoopOptions, loopOptions, parseOptions } from '../../lib/closed-loop.mjs';

function usage(msg) {
  process.stderr.write(`langgraph workflow bench: ${msg}\nusage: node bench.mjs [--concurrency N] [--seconds S] ` +
                       `[--warmup-seconds W] [--timeout-ms MS] [--db FILE] [--synchronous full|normal]\n`);
  process.exit(2);
}

const opts = parseOptions(process.argv.slice(2),
                          { concurrency: 1, seconds: 10, warmup: 2, timeoutMs: 30000, db: null, synchronous: null },
                          { ...loopOptions, '--db': ['db', String], '--synchronous': ['synchronous', String] }, usage);
if (opts.synchronous !== null && !['full', 'normal'].includes(opts.synchronous)) usage('--synchronous is full or normal');
checkLoopOptions(opts, usage);

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

const { checkpointer, dbPath, close } = openCheckpointer(SqliteSaver, { db: opts.db, synchronous: opts.synchronous,
                                                                     tmpPrefix: 'langgraph-wfbench-' });
const graph = graph0.compile({ checkpointer });

// ---- one run ------------------------------------------------------------------------------------
const runTag = `${process.pid}-${Date.now().toString(36)}`;

// Resolves to null when run n is as expected, else to an error string.
async function oneRun(n) {
  const signal = AbortSignal.timeout(opts.timeoutMs);
  const result = await graph.invoke({ n }, { configurable: { thread_id: `${runTag}-${n}` }, signal });
  if (result.va !== n || result.vb !== n || result.vc !== n) return `unexpected state ${JSON.stringify(result).slice(0, 200)}`;
  return null;
}

// ---- the closed loop ----------------------------------------------------------------------------
async function main() {
  const c = opts.concurrency;
  process.stderr.write(`langgraph workflow bench: concurrency ${c}, ${opts.warmup}s warm-up + ${opts.seconds}s, ` +
                       `checkpoints in ${dbPath}\n`);
  await runGraphLoop('langgraph workflow bench', opts, oneRun, checkpointer.db);
}

await runThenExit('langgraph workflow bench', main, close);
