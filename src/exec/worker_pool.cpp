#include "exec/worker_pool.h"

#include <algorithm>

namespace cairn::exec {

WorkerPool::WorkerPool(int threads, int max_threads)
    : max_threads_(static_cast<size_t>(std::max({threads, max_threads, 1}))) {
  std::lock_guard lock(mu_);
  for (int i = 0; i < threads; ++i) threads_.emplace_back([this] { Loop(); });
}

WorkerPool::~WorkerPool() { Stop(); }

bool WorkerPool::Submit(std::function<void()> job) {
  {
    std::lock_guard lock(mu_);
    if (stopping_) return false;
    jobs_.push_back(std::move(job));
    // Every thread busy (waiting, perhaps, for what this job would do): one more.
    if (idle_ < jobs_.size() && threads_.size() < max_threads_) threads_.emplace_back([this] { Loop(); });
  }
  wake_.notify_one();
  return true;
}

size_t WorkerPool::threads() const {
  std::lock_guard lock(mu_);
  return threads_.size();
}

void WorkerPool::Stop() {
  std::vector<std::thread> threads;
  {
    std::lock_guard lock(mu_);
    if (stopping_ && threads_.empty()) return;
    stopping_ = true;
    threads.swap(threads_);
  }
  wake_.notify_all();
  for (auto& thread : threads) thread.join();
}

void WorkerPool::Loop() {
  while (true) {
    std::function<void()> job;
    {
      std::unique_lock lock(mu_);
      ++idle_;
      wake_.wait(lock, [this] { return stopping_ || !jobs_.empty(); });
      --idle_;
      if (jobs_.empty()) return;
      job = std::move(jobs_.front());
      jobs_.pop_front();
    }
    job();
  }
}

}  // namespace cairn::exec
