#include "exec/lane_scheduler.h"

#include <algorithm>

namespace cairn::exec {

LaneScheduler::LaneScheduler(WorkerPool& pool, JobGroup& group, int max_active, Work work)
    : pool_(pool), group_(group), max_active_(std::max(1, max_active)), work_(std::move(work)) {}

void LaneScheduler::Schedule(Lane lane) {
  std::lock_guard lock(mu_);
  if (stopped_ || !queued_.insert(lane).second) return;
  queue_.push_back(std::move(lane));
  DispatchLocked();
}

void LaneScheduler::Stop() {
  std::lock_guard lock(mu_);
  stopped_ = true;
  queue_.clear();
  queued_.clear();
}

void LaneScheduler::DispatchLocked() {
  while (!stopped_ && static_cast<int>(busy_.size()) < max_active_) {
    auto next = std::find_if(queue_.begin(), queue_.end(), [&](const Lane& lane) { return !busy_.count(lane); });
    if (next == queue_.end()) return;
    Lane lane = std::move(*next);
    queue_.erase(next);
    queued_.erase(lane);
    busy_.insert(lane);
    bool submitted = group_.Submit(pool_, [this, lane] {
      work_(lane);
      Finished(lane);
    });
    if (!submitted) {  // stopping: the lane's work stays in the store for the next start
      busy_.erase(lane);
      return;
    }
  }
}

void LaneScheduler::Finished(const Lane& lane) {
  std::lock_guard lock(mu_);
  busy_.erase(lane);
  DispatchLocked();
}

}  // namespace cairn::exec
