// WorkflowRun: one execution of a workflow (docs/workflows.md "Runs"), on the worker thread of
// its executor run.
//
// Steps whose needs have ended start, in parallel: their `when` is judged (false: skipped), a
// for_each step becomes one unit per item (at most `concurrency` at once), and each unit runs
// its attempts (StepCall) until one succeeds or `retry.max_attempts` are spent, waiting
// `backoff_ms` (doubling, at most `max_backoff_ms`) in between. A unit's end is recorded — a
// workflow.step.v1 record at executions/<execution id>/steps/<step id>[/<item index>] — before
// the steps that need it start. A failed unit fails its step; a failed step fails the run
// (its running units are stopped) unless its on_error is `continue`, when the steps after it run
// and see `steps.<id>.status == 'failed'`.
//
// Units run on the run's own thread and on helper jobs in the runtime's waiting pool: when the
// pool has no free thread the run's thread runs every unit itself, so a run always progresses.
//
// Resuming (the same execution id after a crash): units recorded as ended are not run again;
// a unit recorded as running waits for the answer to its recorded attempt's request (written in
// the same transaction as that record) instead of asking again.
#pragma once

#include <atomic>
#include <boost/json/value.hpp>
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "exec/executor.h"
#include "exec/job_group.h"
#include "exec/workflows/compiled_workflow.h"
#include "exec/workflows/step_call.h"
#include "model/workflow_definition.h"

namespace cairn::exec {

struct WorkflowOutcome {
  enum class Kind { kCompleted, kFailed, kCancelled } kind = Kind::kCompleted;
  std::string code, message;  // kFailed
  boost::json::value output;
  int64_t units_ended = 0;    // step units that ended (in this attempt or before)
};

class WorkflowRun {
 public:
  // Everything passed in must outlive the run. `input` has been checked against the
  // definition's input_schema.
  WorkflowRun(const model::WorkflowDefinition& def, const CompiledWorkflow& compiled, WorkflowDeps deps,
              const RunRequest& request, boost::json::value input);
  ~WorkflowRun();

  WorkflowOutcome Execute();

 private:
  struct Unit;
  struct StepState;

  Status LoadRecords();
  // Under mu_: starts the steps whose needs have ended; false when the run must end (a failure).
  bool StartReadySteps(std::unique_lock<std::mutex>& lock);
  void RunUnit(Unit& unit);
  // Under mu_: the unit that may run next (its step under its concurrency), or null.
  Unit* TakeUnit();
  void Finish(Unit& unit, StepAnswer answer);
  // Under mu_: ends step `index` when all its units have ended (a failure fails the run unless
  // the step continues on error).
  void EndStepIfDone(size_t index);
  Status WriteStepRecord(Unit& unit, const std::string& status, const StepAnswer* answer);
  store::WriteOp StepRecordOp(Unit& unit, const std::string& status, const StepAnswer* answer);
  boost::json::value StepsView() const;  // under mu_
  void HelpWithUnits();                  // a helper job
  bool AllEnded() const;                 // under mu_

  const model::WorkflowDefinition& def_;
  const CompiledWorkflow& compiled_;
  WorkflowDeps deps_;
  const RunRequest& request_;
  boost::json::value input_;
  std::string actor_;
  std::atomic<bool> abort_{false};  // the run stops: cancelled, failed or timed out

  std::mutex mu_;
  std::condition_variable changed_;
  std::vector<StepState> steps_;                   // by index in def_.steps
  std::map<std::string, std::unique_ptr<Unit>> units_;  // by record key
  std::deque<Unit*> ready_;
  int running_units_ = 0;
  size_t helpers_queued_ = 0;  // helper jobs submitted that have not started
  std::optional<WorkflowOutcome> failure_;
  JobGroup helpers_;
};

}  // namespace cairn::exec
