#include "exec/job_group.h"

namespace cairn::exec {

struct JobGroup::Watch::State {
  std::mutex mu;
  std::condition_variable idle;
  std::atomic<bool> stopping{false};
  int running = 0;                      // jobs of the group running now
  std::set<std::atomic<bool>*> flags;  // cancel flags of the runs those jobs watch
};

JobGroup::JobGroup() : state_(std::make_shared<Watch::State>()) {}

JobGroup::~JobGroup() { Stop(); }

bool JobGroup::Submit(WorkerPool& pool, std::function<void()> job) {
  if (state_->stopping) return false;
  return pool.Submit([state = state_, job = std::move(job)] {
    {
      std::lock_guard lock(state->mu);
      if (state->stopping) return;
      ++state->running;
    }
    job();
    {
      std::lock_guard lock(state->mu);
      --state->running;
    }
    state->idle.notify_all();
  });
}

JobGroup::Watch JobGroup::WatchCancel(std::atomic<bool>* flag) {
  std::lock_guard lock(state_->mu);
  if (state_->stopping) {
    *flag = true;
    return Watch();
  }
  state_->flags.insert(flag);
  return Watch(state_, flag);
}

JobGroup::Watch::Watch(Watch&& other) noexcept : state_(std::move(other.state_)), flag_(other.flag_) {
  other.flag_ = nullptr;
}

JobGroup::Watch& JobGroup::Watch::operator=(Watch&& other) noexcept {
  if (this != &other) {
    Watch dropped(std::move(*this));
    state_ = std::move(other.state_);
    flag_ = other.flag_;
    other.flag_ = nullptr;
  }
  return *this;
}

JobGroup::Watch::~Watch() {
  if (!state_ || !flag_) return;
  std::lock_guard lock(state_->mu);
  state_->flags.erase(flag_);
}

bool JobGroup::stopping() const { return state_->stopping; }

void JobGroup::Stop() {
  std::unique_lock lock(state_->mu);
  state_->stopping = true;
  for (std::atomic<bool>* flag : state_->flags) *flag = true;
  state_->idle.wait(lock, [this] { return state_->running == 0; });
}

}  // namespace cairn::exec
