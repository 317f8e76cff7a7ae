// The agent.execution.v1 records the executor host writes: one per (executor, trigger id,
// trigger version), created `running` as the claim and finished in the transaction that writes
// the response. Context:
//   {executor, kind, name, consumer, definition_id, definition_version, trigger_id,
//    trigger_version, trigger_schema, trigger_seq, status: running|completed|failed, attempt,
//    started_at, completed_at, duration_ms, error}
// Tags: "execution", "executor:<actor>", "trigger:<trigger id>", "status:<status>".
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

// The claim path "executions/<consumer>/<trigger key>": unique per owner, so two claims of one
// trigger cannot both be created.
std::string ExecutionPath(const ExecutorSpec& spec, const model::Event& trigger);

// The trace of a write caused by `trigger`: same trace id, caused_by the trigger, depth + 1.
model::Trace ChildTrace(const model::Event& trigger);

// The `running` record that claims `trigger` for `spec`.
model::BreadcrumbDraft ClaimDraft(const ExecutorSpec& spec, const model::Event& trigger, int64_t now_micros);

// Takes over a `running` record left by a run that did not finish: attempt + 1, new start time.
model::BreadcrumbPatch TakeoverPatch(const boost::json::value& record_context, int64_t now_micros);

// Finishes the record: completed or failed, with times, duration and error.
model::BreadcrumbPatch FinishPatch(const boost::json::value& record_context, const std::string& actor, bool failed,
                                   const std::string& error, int64_t now_micros);

// The record's status ("running", "completed", "failed"; "" when absent).
std::string ExecutionStatus(const boost::json::value& record_context);

}  // namespace cairn::exec
