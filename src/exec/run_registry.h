// RunRegistry: the runs in flight in this process, by execution id — bus-triggered runs of the
// ExecutorHost and session runs alike. It is the one place that cancels a run and its
// descendants, and that says what runs now (a bus-triggered run's record is written when it
// ends, so while it runs it is known only here).
//
// Cancelling a tree: the run and every run in flight whose parent chain leads to it get their
// cancel flag set. Runs that start later with a cancelled ancestor (a tool request written just
// before, whose run had not started) start cancelled: the latest 1,024 cancelled ids are
// remembered. Thread-safe.
#pragma once

#include <atomic>
#include <boost/json/object.hpp>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include "exec/executor.h"

namespace cairn::exec {

class RunRegistry {
 public:
  struct Run;

  // Keeps a run registered while it lives.
  class Registration {
   public:
    Registration() = default;
    Registration(RunRegistry* registry, std::shared_ptr<Run> run) : registry_(registry), run_(std::move(run)) {}
    Registration(Registration&& other) noexcept;
    Registration& operator=(Registration&& other) noexcept;
    ~Registration();
    // Whether someone asked the run to stop (Cancel*), as opposed to a timeout or shutdown.
    bool cancel_requested() const;

   private:
    RunRegistry* registry_ = nullptr;
    std::shared_ptr<Run> run_;
  };

  // Registers a run in flight. `record` is its agent.execution.v1 context while it runs (status
  // running); `trigger_id` the breadcrumb that triggered it ("" for none); `cancel` its flag, set
  // at once when the trigger, the run or one of its ancestors was cancelled already.
  Registration Add(const std::string& owner_id, boost::json::object record, const std::string& trigger_id,
                   std::atomic<bool>* cancel);

  // Cancels the runs in flight triggered by breadcrumb `trigger_id` and their descendants in
  // flight (as CancelTree); one not started yet starts cancelled. Returns how many runs were told.
  size_t CancelTrigger(const std::string& trigger_id);

  // Cancels run `execution_id` of `owner_id` and its descendants in flight (those whose parent is
  // in the tree, and those whose root it is: their parent may run in another process); descendants
  // that start later start cancelled. Returns how many runs were told.
  size_t CancelTree(const std::string& owner_id, const std::string& execution_id);

  // Paused runs (RunResult::paused) are not in flight. `wake` (the host's) makes the paused runs
  // of a cancelled tree — `execution_id` their own id, parent or root — or of a cancelled trigger
  // run again at once: they start cancelled (as remembered here) and answer. It returns how many
  // it woke. Null: none is woken. Calls in progress finish before a new waker is set.
  using PausedWaker = std::function<size_t(const std::string& owner_id, const std::string& execution_id,
                                           const std::string& trigger_id)>;
  void SetPausedWaker(PausedWaker wake);

  // The record of a run in flight, or nullopt.
  std::optional<boost::json::object> Find(const std::string& owner_id, const std::string& execution_id) const;
  // The records of the owner's runs in flight whose root is `root_execution_id` (all when empty).
  std::vector<boost::json::object> InFlight(const std::string& owner_id, const std::string& root_execution_id = "") const;

 private:
  void Remove(const std::shared_ptr<Run>& run);
  size_t CancelTreeLocked(const std::string& owner_id, const std::string& execution_id);  // mu_ held
  // The latest 1,024 ids, looked up on every Add (a hash set; the deque says which is oldest).
  struct RecentIds {
    std::deque<std::string> order;
    std::unordered_set<std::string> set;
    void Remember(const std::string& id);
    bool Contains(const std::string& id) const { return set.count(id) != 0; }
  };

  size_t WakePaused(const std::string& owner_id, const std::string& execution_id, const std::string& trigger_id);

  std::mutex waker_mu_;  // held while the waker runs; never while mu_ is
  PausedWaker waker_;
  mutable std::mutex mu_;
  std::multimap<std::string, std::shared_ptr<Run>> by_id_;  // "<owner>\n<execution id>" -> runs
  RecentIds cancelled_triggers_;                            // trigger ids
  RecentIds cancelled_executions_;                          // "<owner>\n<id>"
};

}  // namespace cairn::exec
