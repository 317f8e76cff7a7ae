// The agent.execution.v1 records the executor host writes: one per (executor, trigger id,
// trigger version[, deletion]), at a path unique per tenant, written in the transaction that
// writes the run's response. Context:
//   {executor, kind, name, consumer, definition_id, definition_version, trigger_id,
//    trigger_version, trigger_schema, trigger_seq, status: completed|failed, attempt,
//    started_at, completed_at, duration_ms, error}
// Tags: "execution", "executor:<actor>", "trigger:<trigger id>", "status:<status>".
// A run in progress is a claim (store/claim_store.h), not yet a record.
#pragma once

#include <boost/json/value.hpp>
#include <cstdint>
#include <string>

#include "exec/executor.h"
#include "model/breadcrumb.h"
#include "model/event.h"

namespace cairn::exec {

// What one run answers: "<trigger id>/<version>", or "<trigger id>/<version>/deleted" for a
// deletion (which carries the last version, already answered when it was written).
std::string TriggerKey(const model::Event& trigger);

// The record's path "executions/<consumer>/<trigger key>": unique per owner, so one trigger
// cannot be recorded (and answered) twice by one executor.
std::string ExecutionPath(const ExecutorSpec& spec, const model::Event& trigger);

// The trace of a write caused by `trigger`: same trace id, caused_by the trigger, depth + 1.
model::Trace ChildTrace(const model::Event& trigger);

struct RunTimes {
  int64_t started_micros = 0;
  int64_t completed_micros = 0;
  int64_t attempt = 1;
};

// The finished record of a run of `spec` for `trigger`.
model::BreadcrumbDraft ExecutionDraft(const ExecutorSpec& spec, const model::Event& trigger, const RunTimes& times,
                                      bool failed, const std::string& error);

// The record's status ("completed", "failed"; "" when absent).
std::string ExecutionStatus(const boost::json::value& record_context);

}  // namespace cairn::exec
