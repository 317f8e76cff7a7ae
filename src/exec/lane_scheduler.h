// LaneScheduler: work that must run in order per key — the executions of one session, one after
// another — on the shared pools. A lane is (tenant, id); Schedule(lane) says it may have work.
// At most one job per lane runs at a time, at most `max_active` lanes run at once, lanes start
// in the order they were scheduled, and a lane scheduled while its job runs runs again after it
// (the job reads what to do from the store, so a second call finds the newer work).
//
// Jobs are the group's: Stop() the scheduler, then the JobGroup, before destroying it.
// Thread-safe.
#pragma once

#include <compare>
#include <deque>
#include <functional>
#include <mutex>
#include <set>
#include <string>

#include "exec/job_group.h"
#include "exec/worker_pool.h"

namespace cairn::exec {

class LaneScheduler {
 public:
  struct Lane {
    std::string owner_id;
    std::string id;
    auto operator<=>(const Lane&) const = default;
  };
  using Work = std::function<void(const Lane&)>;

  // `pool` and `group` must outlive the scheduler.
  LaneScheduler(WorkerPool& pool, JobGroup& group, int max_active, Work work);

  void Schedule(Lane lane);
  // No lane starts after this; the jobs running go on until the group stops them.
  void Stop();

 private:
  void DispatchLocked();
  void Finished(const Lane& lane);

  WorkerPool& pool_;
  JobGroup& group_;
  const int max_active_;
  const Work work_;
  std::mutex mu_;
  bool stopped_ = false;
  std::deque<Lane> queue_;         // lanes with work, in the order scheduled
  std::set<Lane> queued_, busy_;   // in queue_; running now
};

}  // namespace cairn::exec
