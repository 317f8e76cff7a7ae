#include "bus/consumer_pool.h"

#include <algorithm>
#include <exception>

#include "base/log.h"
#include "base/thread_name.h"

namespace cairn::bus {

ConsumerPool::ConsumerPool(int threads, std::chrono::milliseconds tick, std::string name)
    : tick_(std::max(tick, std::chrono::milliseconds(1))), next_tick_(std::chrono::steady_clock::now() + tick_) {
  for (int i = 0; i < std::max(threads, 1); ++i) {
    threads_.emplace_back([this, name] {
      NameThisThread(name);
      Loop();
    });
  }
}

ConsumerPool::~ConsumerPool() { Stop(); }

void ConsumerPool::Stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
    queue_.clear();
  }
  work_.notify_all();
  for (auto& thread : threads_) {
    if (thread.joinable()) thread.join();
  }
  ended_.notify_all();
}

std::unique_ptr<ConsumerPool::Member> ConsumerPool::Add(std::function<void()> step) {
  auto entry = std::make_shared<Entry>();
  entry->step = std::move(step);
  {
    std::lock_guard lock(mu_);
    entries_.insert(entry);
  }
  return std::unique_ptr<Member>(new Member(this, std::move(entry)));
}

size_t ConsumerPool::members() const {
  std::lock_guard lock(mu_);
  return entries_.size();
}

void ConsumerPool::WakeLocked(const std::shared_ptr<Entry>& entry) {
  if (stopping_ || entry->removed) return;
  entry->woken_once = true;
  switch (entry->state) {
    case State::kIdle:
      entry->state = State::kQueued;
      queue_.push_back(entry);
      work_.notify_one();
      return;
    case State::kRunning:
      entry->state = State::kRunningWoken;
      return;
    case State::kQueued:
    case State::kRunningWoken:
      return;
  }
}

void ConsumerPool::Remove(const std::shared_ptr<Entry>& entry) {
  std::unique_lock lock(mu_);
  if (entry->removed) return;
  entry->removed = true;  // a queued step is skipped when its turn comes
  entries_.erase(entry);
  std::erase_if(timers_, [&](const auto& timer) { return timer.second == entry; });
  if (entry->running_on == std::this_thread::get_id()) return;  // removed by its own step: the last
  ended_.wait(lock, [&] { return entry->state != State::kRunning && entry->state != State::kRunningWoken; });
}

void ConsumerPool::Loop() {
  std::unique_lock lock(mu_);
  while (!stopping_) {
    auto now = std::chrono::steady_clock::now();
    if (now >= next_tick_) {
      // Every member's step runs once per tick, even when nothing woke it.
      next_tick_ = now + tick_;
      for (const auto& entry : entries_) {
        if (entry->woken_once) WakeLocked(entry);
      }
      work_.notify_all();
    }
    while (!timers_.empty() && timers_.begin()->first <= now) {
      WakeLocked(timers_.begin()->second);
      timers_.erase(timers_.begin());
    }
    if (queue_.empty()) {
      auto until = timers_.empty() ? next_tick_ : std::min(next_tick_, timers_.begin()->first);
      work_.wait_until(lock, until);
      continue;
    }
    std::shared_ptr<Entry> entry = std::move(queue_.front());
    queue_.pop_front();
    if (entry->removed) continue;
    entry->state = State::kRunning;
    entry->running_on = std::this_thread::get_id();
    lock.unlock();
    try {
      entry->step();
    } catch (const std::exception& e) {
      // A module edge: a consumer's bug must not end the thread every other consumer shares.
      CAIRN_LOG_ERROR("consumer step threw: {}", e.what());
    }
    lock.lock();
    entry->running_on = {};
    bool again = entry->state == State::kRunningWoken && !entry->removed && !stopping_;
    entry->state = State::kIdle;
    if (again) WakeLocked(entry);
    ended_.notify_all();
  }
}

void ConsumerPool::Member::Wake() {
  std::lock_guard lock(pool_->mu_);
  pool_->WakeLocked(entry_);
}

void ConsumerPool::Member::WakeAfter(std::chrono::milliseconds delay) {
  {
    std::lock_guard lock(pool_->mu_);
    if (pool_->stopping_ || entry_->removed) return;
    pool_->timers_.emplace(std::chrono::steady_clock::now() + delay, entry_);
  }
  pool_->work_.notify_all();  // a waiting thread may need to wake earlier than it planned
}

void ConsumerPool::Member::Remove() { pool_->Remove(entry_); }

}  // namespace cairn::bus
