// ConsumerPool: the bus's long-lived consumers (executor consumers, webhook deliverers) run on a
// fixed set of threads instead of a thread each, so a thousand tool definitions or webhooks add no
// threads.
//
// A consumer is a step function. It runs when woken: by Member::Wake() (the bus's wake-up, a run
// finishing), by Member::WakeAfter() once its delay passed, and, once it was first woken, every
// `tick` (to read the events it was not woken for and save its cursor). At most one step of a
// member runs at a time; a wake during its step runs it once more after, so no
// wake-up is lost. A step must not wait on anything but short store calls: a consumer that cannot
// go on (all its run slots taken, a retry's backoff) returns and is woken when it can.
//
// Thread-safe. Wake() only takes the pool's mutex (a leaf lock), so it may be called from the
// bus's wake-up, with the bus's locks held.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace cairn::bus {

class ConsumerPool {
  struct Entry;

 public:
  // `threads` at least 1. `name` names the threads (e.g. "consumers"), for ps and debuggers.
  ConsumerPool(int threads, std::chrono::milliseconds tick, std::string name);
  ~ConsumerPool();  // Stop()s
  ConsumerPool(const ConsumerPool&) = delete;
  ConsumerPool& operator=(const ConsumerPool&) = delete;

  // A consumer in the pool. Destroying it (or Remove()) takes it out: it waits for a step in
  // progress to end (unless called from that step, which then is the last), and no step starts
  // afterwards.
  class Member {
   public:
    ~Member() { Remove(); }
    Member(const Member&) = delete;
    Member& operator=(const Member&) = delete;
    // Runs the step soon (again after the one in progress, if any).
    void Wake();
    // Wake()s it once `delay` has passed (a retry's backoff), without holding a thread meanwhile.
    void WakeAfter(std::chrono::milliseconds delay);
    void Remove();

   private:
    friend class ConsumerPool;
    Member(ConsumerPool* pool, std::shared_ptr<Entry> entry) : pool_(pool), entry_(std::move(entry)) {}
    ConsumerPool* pool_;
    std::shared_ptr<Entry> entry_;
  };

  // Adds a consumer; its first step runs once it is woken (so the caller can keep the Member where
  // the step finds it first). After Stop() the step never runs.
  std::unique_ptr<Member> Add(std::function<void()> step);

  // No step starts after this; waits for the steps in progress and joins the threads. Idempotent.
  void Stop();

  size_t members() const;
  size_t threads() const { return threads_.size(); }

 private:
  enum class State { kIdle, kQueued, kRunning, kRunningWoken };
  struct Entry {
    std::function<void()> step;
    State state = State::kIdle;
    bool removed = false;
    bool woken_once = false;  // ticks wake only members woken before (their owner is ready)
    std::thread::id running_on;
  };

  void Loop();
  void WakeLocked(const std::shared_ptr<Entry>& entry);
  void Remove(const std::shared_ptr<Entry>& entry);

  const std::chrono::milliseconds tick_;
  mutable std::mutex mu_;
  std::condition_variable work_;   // a queued entry, a tick, or stop
  std::condition_variable ended_;  // a step ended (Remove waits on it)
  bool stopping_ = false;
  std::deque<std::shared_ptr<Entry>> queue_;
  std::set<std::shared_ptr<Entry>> entries_;
  std::multimap<std::chrono::steady_clock::time_point, std::shared_ptr<Entry>> timers_;  // WakeAfter
  std::chrono::steady_clock::time_point next_tick_;
  std::vector<std::thread> threads_;
};

}  // namespace cairn::bus
