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
import { tool } from '@langchain/core/tools';
import { SqliteSaver } from '@langchain/langgraph-checkpoint-sqlite';
import { createReactAgent } from '@langchain/langgraph/prebuilt';
import { ChatOpenAI } from '@langchain/openai';
import { z } from 'zod';

import { openCheckpointer, runThenExit, sqliteFields } from '../../lib/checkpointer.mjs';
import { ClosedLoop, catching, checkLoopOptions, loopOptions, parseOptions } from '../../lib/closed-loop.mjs';

function usage(msg) {
  process.stderr.write(`langgraph bench: ${msg}\nusage: node bench.mjs --base-url URL [--concurrency N] ` +
                       `[--seconds S] [--warmup-seconds W] [--timeout-ms MS] [--db FILE] [--stream] [--model M] ` +
                       `[--synchronous full|normal]\n`);
  process.exit(2);
}

const opts = parseOptions(process.argv.slice(2),
                          { baseUrl: null, concurrency: 1, seconds: 10, warmup: 2, timeoutMs: 30000, db: null,
                            stream: false, model: 'bench', synchronous: null },
                          { '--base-url': ['baseUrl', String], ...loopOptions, '--db': ['db', String],
                            '--stream': ['stream', null], '--model': ['model', String],
                            '--synchronous': ['synchronous', String] }, usage);
if (!opts.baseUrl) usage('--base-url is required');
if (opts.synchronous !== null && !['full', 'normal'].includes(opts.synchronous)) usage('--synchronous is full or normal');
checkLoopOptions(opts, usage);

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

const { checkpointer, dbPath, close } = openCheckpointer(SqliteSaver, { db: opts.db, synchronous: opts.synchronous,
                                                                     tmpPrefix: 'langgraph-bench-' });
const agent = createReactAgent({ llm: model, tools: [echo], checkpointSaver: checkpointer });

// ---- one run ------------------------------------------------------------------------------------
const runTag = `${process.pid}-${Date.now().toString(36)}`;

// Resolves to null when run n is as expected, else to an error string.
async function oneRun(n) {
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
async function main() {
  const c = opts.concurrency;
  process.stderr.write(`langgraph bench: concurrency ${c}, ${opts.warmup}s warm-up + ${opts.seconds}s, ` +
                       `streaming ${opts.stream ? 'on' : 'off'}, checkpoints in ${dbPath}\n`);
  // Warm-up: the same loop, not counted (JIT, connection pool, SQLite pages).
  const loop = new ClosedLoop({ log: (m) => process.stderr.write(`langgraph bench: ${m}\n`) });
  const run = catching(oneRun);
  await loop.run(Array.from({ length: c }, () => ({ run })), opts.warmup, opts.seconds);
  const out = {
    impl: 'langgraph',
    concurrency: c,
    streaming: opts.stream,
    ...loop.summary(),
    sqlite: sqliteFields(checkpointer.db),
    versions: {
      node: process.versions.node,
    },
  };
  process.stdout.write(JSON.stringify(out) + '\n');
}

await runThenExit('langgraph bench', main, close);
