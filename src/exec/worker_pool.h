// WorkerPool: a fixed set of threads running submitted jobs in order of submission. The executor
// host bounds what it submits (per-executor concurrency), so the queue needs no bound of its own.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace cairn::exec {

class WorkerPool {
 public:
  explicit WorkerPool(int threads);
  ~WorkerPool();  // Stop()s
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // Queues `job`. After Stop() the job is dropped (returns false).
  bool Submit(std::function<void()> job);

  // Runs the jobs already queued, then joins the threads. Idempotent.
  void Stop();

 private:
  void Loop();

  std::mutex mu_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> jobs_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace cairn::exec
