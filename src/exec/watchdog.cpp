#include "exec/watchdog.h"

namespace cairn::exec {

Watchdog::Watchdog() : thread_([this] { Loop(); }) {}

Watchdog::~Watchdog() { Stop(); }

uint64_t Watchdog::Arm(Clock::time_point deadline, std::atomic<bool>* flag) {
  std::lock_guard lock(mu_);
  uint64_t token = next_token_++;
  if (stopping_) {
    flag->store(true);
    return token;
  }
  armed_.emplace(token, Entry{deadline, flag});
  wake_.notify_all();
  return token;
}

bool Watchdog::Disarm(uint64_t token) {
  std::lock_guard lock(mu_);
  auto it = armed_.find(token);
  if (it == armed_.end()) return true;  // fired (or stopped) already
  armed_.erase(it);
  return false;
}

void Watchdog::Stop() {
  {
    std::lock_guard lock(mu_);
    if (stopping_) return;
    stopping_ = true;
    for (auto& [token, entry] : armed_) entry.flag->store(true);
    armed_.clear();
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void Watchdog::Loop() {
  std::unique_lock lock(mu_);
  while (!stopping_) {
    auto now = Clock::now();
    auto next = Clock::time_point::max();
    for (auto it = armed_.begin(); it != armed_.end();) {
      if (it->second.deadline <= now) {
        it->second.flag->store(true);
        it = armed_.erase(it);
      } else {
        next = std::min(next, it->second.deadline);
        ++it;
      }
    }
    if (next == Clock::time_point::max()) {
      wake_.wait(lock);
    } else {
      wake_.wait_until(lock, next);
    }
  }
}

}  // namespace cairn::exec
