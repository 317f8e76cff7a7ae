// WorkerPool: a set of threads running submitted jobs in order of submission. It starts with
// `threads` and, when a job is queued while no thread is idle, adds one, up to `max_threads`:
// runs that wait for other runs (a workflow for its steps, which may be workflows and agents on
// the same pool) then never wait for a thread that only they could free. A thread beyond the
// first `threads` that stays idle for `idle_exit` ends (0: never), so an idle server holds only
// the threads it keeps ready, whatever its last burst of load needed. The executor host bounds
// what it submits (per-executor concurrency), so the queue needs no bound of its own.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace cairn::exec {

class WorkerPool {
 public:
  // `max_threads` below `threads` means `threads` (a fixed pool). `name` (at most 15 characters)
  // names the threads for ps, top and perf; empty keeps the name of the thread that started them.
  explicit WorkerPool(int threads, int max_threads = 0,
                      std::chrono::milliseconds idle_exit = std::chrono::milliseconds(0), std::string name = "");
  ~WorkerPool();  // Stop()s
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // Queues `job`. After Stop() the job is dropped (returns false).
  bool Submit(std::function<void()> job);

  // Runs the jobs already queued, then joins the threads. Idempotent.
  void Stop();

  // Threads running now (started, not ended).
  size_t threads() const;

 private:
  void Loop();

  mutable std::mutex mu_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> jobs_;
  bool stopping_ = false;
  size_t idle_ = 0;  // threads waiting for a job
  const size_t min_threads_;
  const size_t max_threads_;
  const std::chrono::milliseconds idle_exit_;
  const std::string name_;
  std::vector<std::thread> threads_;
  std::vector<std::thread> ended_;  // idle threads that ended, joined by the next Submit or Stop
};

}  // namespace cairn::exec
