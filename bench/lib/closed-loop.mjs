// bench/lib/closed-loop.mjs — the closed loop of runs, its error tally and its summary, shared by the
// load generators of the benchmarks (bench/agents/cairn-load.mjs, bench/agents/langgraph/bench.mjs,
// bench/workflows/langgraph/bench.mjs, bench/sessions/load.mjs). Node built-ins only: each
// benchmark has its own node_modules, so this module imports no npm package; scripts import it by
// relative path.
//
// Closed loop: N workers, each starting its next run when its last one ends. First a warm-up whose
// runs are not counted, then the measured window: runs that start within it are counted; runs/s =
// counted runs / (window start -> the last counted run ended). A run resolves to
// {problem: null | string, t1} (t1: when it ended or failed); latency = the run started -> t1.
import fs from 'node:fs';
import { performance } from 'node:perf_hooks';

export const round = (x, d = 3) => (x === null || x === undefined ? null : Number(x.toFixed(d)));

// The element of `sorted` (ascending) at quantile q, or null when it is empty.
export function quantile(sorted, q) {
  if (sorted.length === 0) return null;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
}

// utime + stime of a process in ms (from /proc/<pid>/stat, CLK_TCK ticks a second), or null.
export function cpuMsOf(pid, clkTck) {
  if (!pid) return null;
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / clkTck;
  } catch {
    return null;
  }
}

// Wraps a run that resolves to null or a problem string and throws on failure (an abort or a
// timeout signal's error counts as 'timeout') into one that resolves to {problem, t1}.
export function catching(run) {
  return async (n) => {
    let problem = null;
    try {
      problem = await run(n);
    } catch (e) {
      const name = e?.name ?? '';
      if (name === 'TimeoutError' || name === 'AbortError' || /abort/i.test(String(e?.message))) problem = 'timeout';
      else problem = String(e?.message ?? e).slice(0, 200);
    }
    return { problem, t1: performance.now() };
  };
}

// The failed runs: how many, how many of them timed out, and up to 5 samples of their problems.
export class ErrorTally {
  count = 0;
  timeouts = 0;
  samples = new Map();

  add(problem) {
    this.count += 1;
    if (problem === 'timeout') this.timeouts += 1;
    this.samples.set(problem, (this.samples.get(problem) ?? 0) + 1);
  }

  // {errors, timeouts, error_samples} for a result line.
  fields() {
    return { errors: this.count, timeouts: this.timeouts,
             error_samples: Object.fromEntries([...this.samples.entries()].slice(0, 5)) };
  }
}

export class ClosedLoop {
  // log(message): where warm-up failures go. serverPid/clkTck: the server whose CPU time over the
  // window is read (none: serverMs stays null). onSuccess(result, t0): called for each counted run
  // that succeeded, after its latency is recorded.
  constructor({ log, serverPid = 0, clkTck = 100, onSuccess = () => {} }) {
    this.log = log;
    this.serverPid = serverPid;
    this.clkTck = clkTck;
    this.onSuccess = onSuccess;
    this.latencies = [];
    this.errors = new ErrorTally();
    this.phase = 'warmup';
    this.started = 0;
    this.warmRuns = 0;
    this.windowStart = 0;
    this.lastEnd = 0;
    this.cpu = null;
    this.serverMs = null;
  }

  // workers: one {run(n), stopped()} per worker (stopped optional: true ends the worker early).
  async #loop(worker, stopAt) {
    while (performance.now() < stopAt && !worker.stopped?.()) {
      const counted = this.phase === 'measure';
      const t0 = performance.now();
      const r = await worker.run(this.started++);
      if (!counted) {
        this.warmRuns += 1;
        if (r.problem) this.log(`warm-up run failed: ${r.problem}`);
        continue;
      }
      this.lastEnd = Math.max(this.lastEnd, r.t1);
      if (r.problem) {
        this.errors.add(r.problem);
      } else {
        this.latencies.push(r.t1 - t0);
        this.onSuccess(r, t0);
      }
    }
  }

  // The warm-up (none when seconds is 0), then the measured window, with the CPU time of this
  // process (and of the server) over the window.
  async run(workers, warmupSeconds, seconds) {
    if (warmupSeconds > 0) {
      const until = performance.now() + warmupSeconds * 1000;
      await Promise.all(workers.map((w) => this.#loop(w, until)));
    }
    this.phase = 'measure';
    this.windowStart = performance.now();
    const windowEnd = this.windowStart + seconds * 1000;
    const server0 = cpuMsOf(this.serverPid, this.clkTck);
    const cpu0 = process.cpuUsage();
    await Promise.all(workers.map((w) => this.#loop(w, windowEnd)));
    this.cpu = process.cpuUsage(cpu0);
    const server1 = cpuMsOf(this.serverPid, this.clkTck);
    this.serverMs = server0 !== null && server1 !== null ? server1 - server0 : null;
  }

  get runs() { return this.latencies.length; }
  // The measured window: its start -> the last counted run ended, in seconds.
  get seconds() { return (Math.max(this.lastEnd, this.windowStart) - this.windowStart) / 1000; }

  // The result line's fields from runs to client_cpu_us_per_run.
  summary() {
    const sorted = this.latencies.slice().sort((a, b) => a - b);
    const runs = sorted.length;
    const seconds = this.seconds;
    const tried = runs + this.errors.count;
    const cpuUs = this.cpu.user + this.cpu.system;
    return {
      runs,
      seconds: round(seconds),
      runs_per_s: seconds > 0 ? round(runs / seconds, 1) : 0,
      p50_ms: round(quantile(sorted, 0.5)),
      p90_ms: round(quantile(sorted, 0.9)),
      p99_ms: round(quantile(sorted, 0.99)),
      max_ms: round(sorted.length ? sorted[sorted.length - 1] : null),
      mean_ms: round(runs > 0 ? sorted.reduce((s, x) => s + x, 0) / runs : null),
      ...this.errors.fields(),
      warmup_runs: this.warmRuns,
      client_cpu_ms: round(cpuUs / 1000, 1),
      client_cpu_us_per_run: tried > 0 ? round(cpuUs / tried, 1) : null,
    };
  }

  // {server_cpu_ms, server_cpu_us_per_run} for a result line.
  serverFields() {
    const tried = this.runs + this.errors.count;
    return { server_cpu_ms: this.serverMs,
             server_cpu_us_per_run: this.serverMs !== null && tried > 0 ? round((this.serverMs * 1000) / tried, 1) : null };
  }
}

// Reads the command line `argv` into `opts` (which holds the defaults): spec maps each option to
// [key, parse] (parse: Number or String for an option with a value, null for a flag that sets key
// to true). An unknown option or a missing value calls usage(message), which does not return.
export function parseOptions(argv, opts, spec, usage) {
  for (let i = 0; i < argv.length; ++i) {
    const a = argv[i];
    if (!Object.hasOwn(spec, a)) usage(`unknown argument ${a}`);
    const [key, parse] = spec[a];
    if (parse === null) {
      opts[key] = true;
      continue;
    }
    if (i + 1 >= argv.length) usage(`${a} needs a value`);
    opts[key] = parse(argv[++i]);
  }
  return opts;
}

// The closed loop's options, as every load generator checks them: concurrency, seconds, warmup,
// timeoutMs.
export function checkLoopOptions(opts, usage) {
  if (!(Number.isInteger(opts.concurrency) && opts.concurrency >= 1)) usage('bad --concurrency');
  if (!(opts.seconds > 0) || !(opts.warmup >= 0) || !(opts.timeoutMs > 0)) usage('bad --seconds/--warmup-seconds/--timeout-ms');
}

// The options of the closed loop, for parseOptions.
export const loopOptions = {
  '--concurrency': ['concurrency', Number],
  '--seconds': ['seconds', Number],
  '--warmup-seconds': ['warmup', Number],
  '--timeout-ms': ['timeoutMs', Number],
};
