// bench/lib/checkpointer.mjs — the SQLite checkpointer of the LangGraph JS benchmarks
// (bench/agents, workflows and nested langgraph/bench.mjs): where it lives, its durability, what it
// reports, the closed loop of a graph with it, and the scripts' exit. Node built-ins only: the caller
// passes its own SqliteSaver class (from its own node_modules).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { ClosedLoop, catching, round } from './closed-loop.mjs';

// SqliteSaver on the file `db`, or (db null) on checkpoints.sqlite in a fresh temporary directory
// named after tmpPrefix, removed by close(). setup() sets journal_mode=WAL and makes the tables;
// `synchronous` stays the build's default unless synchronous ('full' | 'normal') sets it.
// Returns {checkpointer, dbPath, close}.
export function openCheckpointer(SqliteSaver, { db, synchronous, tmpPrefix }) {
  let tmpDir = null;
  let dbPath = db;
  if (!dbPath) {
    tmpDir = fs.mkdtempSync(path.join(os.tmpdir(), tmpPrefix));
    dbPath = path.join(tmpDir, 'checkpoints.sqlite');
  }
  const checkpointer = SqliteSaver.fromConnString(dbPath);
  checkpointer.setup();  // journal_mode=WAL and the tables; `synchronous` stays the build's default
  if (synchronous) checkpointer.db.pragma(`synchronous=${synchronous.toUpperCase()}`);
  const close = () => {
    try {
      checkpointer.db.close();
    } catch {}
    if (tmpDir) fs.rmSync(tmpDir, { recursive: true, force: true });
  };
  return { checkpointer, dbPath, close };
}

// The checkpointer database's settings and row counts, for the result line's `sqlite` object.
export function sqliteFields(db) {
  const rows = (table) => db.prepare(`SELECT count(*) AS n FROM ${table}`).get().n;
  return {
    journal_mode: db.pragma('journal_mode', { simple: true }),
    synchronous: db.pragma('synchronous', { simple: true }),  // 2 = FULL, 1 = NORMAL
    version: db.prepare('SELECT sqlite_version() AS v').get().v,
    checkpoints: rows('checkpoints'),
    writes: rows('writes'),
  };
}

// The closed loop of one graph: `opts.concurrency` callers of oneRun(n) (null when run n is as
// expected, else an error string) for opts.warmup + opts.seconds, then the result line on stdout: the
// loop's summary, the checkpointer's figures with checkpoints and writes per run, and `fields`.
// `label` prefixes the progress lines on stderr.
export async function runGraphLoop(label, opts, oneRun, db, fields = {}) {
  const loop = new ClosedLoop({ log: (m) => process.stderr.write(`${label}: ${m}\n`) });
  const run = catching(oneRun);
  await loop.run(Array.from({ length: opts.concurrency }, () => ({ run })), opts.warmup, opts.seconds);
  const summary = loop.summary();
  const sqlite = sqliteFields(db);
  const all = summary.runs + summary.errors + summary.warmup_runs;
  const perRun = (n) => (all > 0 ? round(n / all, 2) : null);
  const out = {
    impl: 'langgraph',
    concurrency: opts.concurrency,
    ...fields,
    ...summary,
    sqlite: { ...sqlite, checkpoints_per_run: perRun(sqlite.checkpoints), writes_per_run: perRun(sqlite.writes) },
    versions: { node: process.versions.node },
  };
  process.stdout.write(JSON.stringify(out) + '\n');
}

// Runs main(), then close(), and exits: status 0, or 1 when main threw (its stack on stderr after
// `label: `).
export async function runThenExit(label, main, close) {
  let exitCode = 0;
  try {
    await main();
  } catch (e) {
    process.stderr.write(`${label}: ${e?.stack ?? e}\n`);
    exitCode = 1;
  } finally {
    close();
  }
  process.exit(exitCode);
}
