// JobGroup: the jobs one part of the runtime (the executor host, the session worker, the
// workflow engine) hands to the shared worker pools, so that part can stop on its own while the
// pools serve the others.
//
// Stop() refuses new jobs, sets the cancel flag of every run a running job watches, and returns
// when no job of the group runs. A job still queued in a pool when the group stops (or after it
// is destroyed) does nothing when its turn comes: it only touches the group's shared state.
// Thread-safe.
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <set>

#include "exec/worker_pool.h"

namespace cairn::exec {

class JobGroup {
 public:
  JobGroup();
  ~JobGroup();  // Stop()s
  JobGroup(const JobGroup&) = delete;
  JobGroup& operator=(const JobGroup&) = delete;

  // Queues `job` on `pool`. Returns false (and `job` never runs) when the group or the pool is
  // stopping. `job` runs unless the group stops before its turn.
  bool Submit(WorkerPool& pool, std::function<void()> job);

  // Sets `*flag` when the group stops, until the Watch is destroyed (`flag` must outlive it).
  // A flag watched after Stop() is set at once.
  class Watch {
   public:
    Watch() = default;
    Watch(Watch&& other) noexcept;
    Watch& operator=(Watch&& other) noexcept;
    ~Watch();

   private:
    friend class JobGroup;
    struct State;
    Watch(std::shared_ptr<State> state, std::atomic<bool>* flag) : state_(std::move(state)), flag_(flag) {}
    std::shared_ptr<State> state_;
    std::atomic<bool>* flag_ = nullptr;
  };
  Watch WatchCancel(std::atomic<bool>* flag);

  // True once Stop() began: a run that ends now was cancelled by the shutdown, and records
  // nothing (it runs again after the next start).
  bool stopping() const;

  // See above. Idempotent; must not be called from one of the group's jobs.
  void Stop();

 private:
  std::shared_ptr<Watch::State> state_;
};

}  // namespace cairn::exec
