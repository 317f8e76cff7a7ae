#include "exec/worker_pool.h"

#include <algorithm>
#include <utility>

#include "base/thread_name.h"

namespace cairn::exec {

WorkerPool::WorkerPool(int threads, int max_threads, std::chrono::milliseconds idle_exit, std::string name)
    : min_threads_(static_cast<size_t>(std::max(threads, 0))),
      max_threads_(static_cast<size_t>(std::max({threads, max_threads, 1}))),
      idle_exit_(idle_exit),
      name_(std::move(name)) {
  std::lock_guard lock(mu_);
  for (size_t i = 0; i < min_threads_; ++i) threads_.emplace_back([this] { Loop(); });
}

WorkerPool::~WorkerPool() { Stop(); }

bool WorkerPool::Submit(std::function<void()> job) {
  std::vector<std::thread> ended;
  {
    std::lock_guard lock(mu_);
    if (stopping_) return false;
    jobs_.push_back(std::move(job));
    // Every thread busy (waiting, perhaps, for what this job would do): one more.
    if (idle_ < jobs_.size() && threads_.size() < max_threads_) threads_.emplace_back([this] { Loop(); });
    ended.swap(ended_);
  }
  wake_.notify_one();
  for (auto& thread : ended) thread.join();  // they have left Loop: this does not wait
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
    if (stopping_ && threads_.empty() && ended_.empty()) return;
    stopping_ = true;
    threads.swap(threads_);
    for (auto& thread : ended_) threads.push_back(std::move(thread));
    ended_.clear();
  }
  wake_.notify_all();
  for (auto& thread : threads) thread.join();
}

void WorkerPool::Loop() {
  if (!name_.empty()) NameThisThread(name_);
  while (true) {
    std::function<void()> job;
    {
      std::unique_lock lock(mu_);
      ++idle_;
      auto ready = [this] { return stopping_ || !jobs_.empty(); };
      bool woken = true;
      if (idle_exit_.count() > 0 && threads_.size() > min_threads_) {
        woken = wake_.wait_for(lock, idle_exit_, ready);
      } else {
        wake_.wait(lock, ready);
      }
      --idle_;
      if (!woken) {
        if (threads_.size() <= min_threads_) continue;  // another thread ended first
        // Idle for idle_exit beyond the threads kept ready: this one ends (Stop or Submit joins it).
        auto self = std::find_if(threads_.begin(), threads_.end(),
                                 [](const std::thread& t) { return t.get_id() == std::this_thread::get_id(); });
        if (self == threads_.end()) continue;  // Stop took it: it is joined there
        ended_.push_back(std::move(*self));
        threads_.erase(self);
        return;
      }
      if (jobs_.empty()) return;
      job = std::move(jobs_.front());
      jobs_.pop_front();
    }
    job();
  }
}

}  // namespace cairn::exec
