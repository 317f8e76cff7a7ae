// StepCall: one attempt of one step of a workflow run (docs/workflows.md "Steps"): the request
// that makes the step's tool, agent or workflow run as a child execution of the workflow's, and
// the wait for its answer.
//
//   tool      tool.request.v1      {tool, input, request_id, requested_by}  -> tool.response.v1
//   workflow  workflow.request.v1  {workflow, input, request_id, ...}       -> workflow.result.v1
//   agent     user.message.v1      {agent_id, content, request_id}          -> agent.response.v1
//
// Each request carries the workflow run's lineage, so the run it causes is its child: cancelling
// the workflow cancels it. Request ids are derived from (execution, step, item, attempt), so a
// resumed run finds the answer to a request written before a crash instead of asking again.
#pragma once

#include <atomic>
#include <boost/json/value.hpp>
#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "bus/event_bus.h"
#include "exec/executor.h"
#include "exec/runtime.h"
#include "model/workflow_definition.h"
#include "store/store.h"

namespace cairn::exec {

struct WorkflowDeps {
  store::Store& store;
  bus::EventBus& bus;
  Runtime& runtime;
};

// How one attempt ended.
struct StepAnswer {
  enum class Kind { kSucceeded, kFailed, kCancelled } kind = Kind::kFailed;
  boost::json::value output;         // kSucceeded
  std::string code, message;         // kFailed: the child's error, "timeout", or "internal"
};

// The request id of an attempt: "<execution id>-<step id>[-<item index>]-<attempt>".
std::string StepRequestId(const std::string& execution_id, const std::string& step_id, int64_t index, int64_t attempt);

class StepCall {
 public:
  // `workflow` is the workflow's name (the requests' writer is "workflow:<name>"); `run` the
  // workflow's own run request (its execution id, lineage and trigger).
  StepCall(WorkflowDeps deps, const std::string& workflow, const RunRequest& run, const model::WorkflowStep& step);

  // Writes the request of `request_id` for `input` — together with `also` (the step's record
  // saying it runs), in one transaction — unless `written_before` (a resumed run whose record
  // says this attempt's request exists), then waits for the answer until the step's timeout or
  // `abort`. On timeout the child run is cancelled. `written_ids` (if given) gets the ids of
  // what was written, `also` first, the request last (nothing when `written_before`).
  StepAnswer Run(const std::string& request_id, const boost::json::value& input, bool written_before,
                 std::vector<store::WriteOp> also, const std::atomic<bool>& abort,
                 std::vector<std::string>* written_ids = nullptr);

 private:
  model::BreadcrumbDraft Request(const std::string& request_id, const boost::json::value& input) const;
  // The breadcrumb id of the request written for `request_id`, "" if none is found.
  std::string FindRequest(const std::string& request_id) const;

  WorkflowDeps deps_;
  std::string workflow_;
  std::string actor_;
  const RunRequest& run_;
  const model::WorkflowStep& step_;
};

}  // namespace cairn::exec
