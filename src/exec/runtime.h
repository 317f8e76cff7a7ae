// Runtime: what every run of the process shares, whoever started it — a bus trigger (the
// executor host), a session message (the session worker) or, later, a workflow step: the worker
// pools, the watchdog that enforces timeouts, and the registry of runs in flight through which any
// run is cancelled with its descendants (docs/executions.md "One runtime").
//
// Two pools, so that a run waiting for others never takes the thread they need: `pool` runs what
// never waits on another run (tools), `waiting_pool` what does (agents, session runs, workflows);
// the waiting pool grows while every thread in it waits (worker_pool.h), since the runs it waits
// for (a workflow's agent steps, nested workflows) run on it too. Each part
// submits through its own JobGroup, so it can stop alone; Stop() ends everything.
#pragma once

#include <chrono>

#include "exec/run_registry.h"
#include "exec/watchdog.h"
#include "exec/worker_pool.h"

namespace cairn::exec {

struct RuntimeOptions {
  int workers = 16;         // most threads of `pool` (started as runs need them)
  int waiting_workers = 2;  // threads `waiting_pool` keeps ready when idle
  // What `waiting_pool` may grow to when every thread waits (a workflow's steps, nested
  // workflows and agents run on it too, and a waiting run must not wait for a thread).
  int waiting_workers_max = 1024;
  // A thread started for a burst of runs ends after this long idle, so an idle server holds only
  // the threads it keeps ready (0: never).
  std::chrono::milliseconds idle_exit{10'000};
};

class Runtime {
 public:
  explicit Runtime(RuntimeOptions options = {});
  ~Runtime();  // Stop()s
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  // Runs that never wait for another run.
  WorkerPool& pool() { return pool_; }
  // Runs that wait for other runs (an agent for its tools).
  WorkerPool& waiting_pool() { return waiting_pool_; }
  Watchdog& watchdog() { return watchdog_; }
  RunRegistry& runs() { return runs_; }

  // Sets every armed deadline's flag (the runs still in flight are cancelled), runs what the pools
  // hold (jobs of stopped JobGroups do nothing) and joins their threads. Idempotent. The parts
  // using the runtime stop first (their JobGroups), so that their runs record nothing.
  void Stop();

 private:
  RunRegistry runs_;
  Watchdog watchdog_;
  WorkerPool pool_;
  WorkerPool waiting_pool_;
};

}  // namespace cairn::exec
