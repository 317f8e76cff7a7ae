#!/usr/bin/env node
// The LangGraph JS side of cairn's nested-agents benchmark (bench/nested/run.sh; see
// bench/nested/README.md).
//
//   node bench.mjs --base-url URL [--concurrency 1] [--seconds 10] [--warmup-seconds 2]
//                  [--timeout-ms 30000] [--db FILE] [--model M] [--synchronous full|normal] [--fanout 8]
//
// The same workload as cairn's orchestrator: a supervisor graph whose `supervisor` node calls the
// model with a `delegate` tool bound; its reply (the fixture answers with 8 delegate calls) fans
// out with `Send` to 8 `subagent` nodes, each invoking a compiled sub-agent subgraph (one model
// call) with the task; their answers come back as tool messages and the supervisor is called
// again for the final answer. Compiled with the SQLite checkpointer (SqliteSaver on a file; the
// subgraphs checkpoint through the parent's), one thread_id per run. A run must end with the
// final answer "done: sub: hello bench <n> part <i>" naming its own text, else it is an error.
//
// Closed loop like the other LangGraph benches (bench/lib/closed-loop.mjs). Prints one JSON line.
import { setMaxListeners } from 'node:events';

import { AIMessage, HumanMessage, ToolMessage } from '@langchain/core/messages';
import { END, MessagesAnnotation, Send, START, StateGraph } from '@langchain/langgraph';
import { SqliteSaver } from '@langchain/langgraph-checkpoint-sqlite';
import { ChatOpenAI } from '@langchain/openai';

import { openCheckpointer, runGraphLoop, runThenExit } from '../../lib/checkpointer.mjs';
import { checkLoopOptions, loopOptions, parseOptions } from '../../lib/closed-loop.mjs';

function usage(msg) {
  process.stderr.write(`langgraph nested bench: ${msg}\nusage: node bench.mjs --base-url URL [--concurrency N] ` +
                       `[--seconds S] [--warmup-seconds W] [--timeout-ms MS] [--db FILE] [--model M] ` +
                       `[--synchronous full|normal] [--fanout N]\n`);
  process.exit(2);
}

const opts = parseOptions(process.argv.slice(2),
                          { baseUrl: null, concurrency: 1, seconds: 10, warmup: 2, timeoutMs: 30000, db: null,
                            model: 'bench', synchronous: null, fanout: 8 },
                          { '--base-url': ['baseUrl', String], ...loopOptions, '--db': ['db', String],
                            '--model': ['model', String], '--synchronous': ['synchronous', String],
                            '--fanout': ['fanout', Number] }, usage);
if (!opts.baseUrl) usage('--base-url is required');
if (opts.synchronous !== null && !['full', 'normal'].includes(opts.synchronous)) usage('--synchronous is full or normal');
if (!(Number.isInteger(opts.fanout) && opts.fanout >= 1 && opts.fanout <= 16)) usage('--fanout is 1..16');
checkLoopOptions(opts, usage);

// Every node of the fan-out (and the OpenAI client under it) listens to the run's abort signal.
setMaxListeners(8 * opts.fanout + 16);
const model = new ChatOpenAI({ model: opts.model, apiKey: 'dummy', configuration: { baseURL: opts.baseUrl },
                               streaming: false, temperature: 0 });
// The tool as cairn offers it: the model sees a `delegate` function (the fixture matches on tools).
const supervisorModel = model.bindTools([{
  type: 'function',
  function: {
    name: 'delegate',
    description: 'Hand a task to a sub-agent and get its answer.',
    parameters: { type: 'object', properties: { agent: { type: 'string', enum: ['worker'] }, task: { type: 'string' } },
                  required: ['agent', 'task'] },
  },
}]);

// ---- the sub-agent: a subgraph of one model call ------------------------------------------------
const subagent = new StateGraph(MessagesAnnotation)
  .addNode('model', async (s) => ({ messages: [await model.invoke(s.messages)] }))
  .addEdge(START, 'model')
  .addEdge('model', END)
  .compile();

// ---- the supervisor -----------------------------------------------------------------------------
async function supervisor(s) {
  return { messages: [await supervisorModel.invoke(s.messages)] };
}
// Every delegate call of the supervisor's reply becomes a Send to `delegate` (they run in parallel).
function route(s) {
  const last = s.messages[s.messages.length - 1];
  const calls = last instanceof AIMessage ? (last.tool_calls ?? []) : [];
  if (calls.length === 0) return END;
  return calls.map((call) => new Send('delegate', { task: call.args.task, call_id: call.id }));
}
async function delegate(input, config) {
  const out = await subagent.invoke({ messages: [new HumanMessage(input.task)] }, config);
  const answer = out.messages[out.messages.length - 1];
  return { messages: [new ToolMessage({ content: String(answer.content), tool_call_id: input.call_id })] };
}

const { checkpointer, dbPath, close } = openCheckpointer(SqliteSaver, { db: opts.db, synchronous: opts.synchronous,
                                                                     tmpPrefix: 'langgraph-nestedbench-' });
const graph = new StateGraph(MessagesAnnotation)
  .addNode('supervisor', supervisor)
  .addNode('delegate', delegate)
  .addEdge(START, 'supervisor')
  .addConditionalEdges('supervisor', route, ['delegate', END])
  .addEdge('delegate', 'supervisor')
  .compile({ checkpointer });

// ---- one run ------------------------------------------------------------------------------------
const runTag = `${process.pid}-${Date.now().toString(36)}`;

async function oneRun(n) {
  const text = `hello bench ${n}`;
  const signal = AbortSignal.timeout(opts.timeoutMs);
  const result = await graph.invoke({ messages: [{ role: 'user', content: text }] },
                                    { configurable: { thread_id: `${runTag}-${n}` }, signal });
  const messages = result.messages ?? [];
  const tools = messages.filter((m) => m instanceof ToolMessage);
  if (tools.length !== opts.fanout) return `expected ${opts.fanout} sub-agent results, got ${tools.length}`;
  const final = messages[messages.length - 1]?.content;
  if (typeof final !== 'string' || !final.startsWith(`done: sub: ${text} part `)) {
    return `unexpected final answer ${JSON.stringify(final).slice(0, 200)}`;
  }
  return null;
}

// ---- the closed loop ----------------------------------------------------------------------------
async function main() {
  const c = opts.concurrency;
  process.stderr.write(`langgraph nested bench: concurrency ${c}, fan-out ${opts.fanout}, ${opts.warmup}s warm-up + ` +
                       `${opts.seconds}s, checkpoints in ${dbPath}\n`);
  await runGraphLoop('langgraph nested bench', opts, oneRun, checkpointer.db, { fanout: opts.fanout });
}

await runThenExit('langgraph nested bench', main, close);
