// The agent.execution.v1 record: one shape for every run — a tool run, a bus-triggered agent
// run, a session run (docs/executions.md). Written by the ExecutorHost (in the transaction that
// writes the run's response) and by the session worker (each lifecycle move).
//
// Context:
//   {id, kind: tool|agent|workflow, executor, definition: {id, version}, status,
//    trigger: {breadcrumb_id, seq, schema_name} | null, session_id, parent_execution_id,
//    root_execution_id, depth, attempt, input, output, error: {code, message} | null,
//    step_count, token_usage: {input, output, total}, last_snapshot_id, metadata,
//    created_at, started_at, completed_at, duration_ms}
// Path: executions/<id>. Tags (ExecutionTags): execution, kind:<k>, executor:<name>,
// status:<s>, root:<id>, and parent:<id> / trigger:<breadcrumb id> / session:<id> when set.
//
// Lifecycle: pending -> running -> (paused <-> running) -> completed | failed | cancelled.
#pragma once

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "exec/executor.h"
#include "model/breadcrumb.h"
#include "model/event.h"

namespace cairn::exec {

inline constexpr std::string_view kExecutionSchema = model::kExecutionSchema;

// What one run answers: "<trigger id>/<version>", or "<trigger id>/<version>/deleted" for a
// deletion (which carries the last version, already answered when it was written).
std::string TriggerKey(const model::Event& trigger);

// The id of the run of `spec` for `trigger`: a stable 32-hex-digit id of (owner, executor,
// trigger key), the same for every attempt, so a trigger cannot be recorded (and answered) twice
// by one executor.
std::string ExecutionIdFor(const ExecutorSpec& spec, const model::Event& trigger);
// The id from its parts (kept stable across versions: snapshots of runs in flight are found by it).
std::string StableExecutionId(const std::string& owner_id, const std::string& consumer_id,
                              const std::string& trigger_key);

// Where every execution record lives: "executions/<id>".
std::string ExecutionRecordPath(const std::string& execution_id);

// The trace of a write caused by `trigger`: same trace id, caused_by the trigger, depth + 1.
model::Trace ChildTrace(const model::Event& trigger);

// The fields a run adds to the requests it writes (tool.request.v1, workflow.request.v1, a
// user.message.v1 to an agent), so the run they cause becomes its child: {execution_id, root_execution_id, execution_depth, session_id?}.
void AddRequesterLineage(boost::json::object& request_context, const std::string& execution_id, const Lineage& own);

// The lineage of the run `execution_id` triggered by `trigger`: a child of the run that wrote
// the trigger when it is a tool or workflow request, or a user message to an agent, carrying
// AddRequesterLineage fields (well-formed ones:
// ids of at most 128 bytes, 0 <= depth < 1,000), else a root.
Lineage LineageOf(const model::Event& trigger, const std::string& execution_id);

boost::json::object TokenUsageJson(const TokenUsage& usage);

struct ExecutionRecord {
  std::string id;
  std::string kind;      // tool, agent, workflow
  std::string executor;  // tool name, agent id, workflow name
  std::string definition_id;
  int64_t definition_version = 0;
  std::string status = "pending";
  std::optional<model::Event> trigger;  // breadcrumb_id, seq, schema_name are recorded
  Lineage lineage;
  int64_t attempt = 1;
  boost::json::value input;   // null when none
  boost::json::value output;  // null until it ends
  std::string error_code, error_message;  // both empty: no error
  int64_t step_count = 0;
  TokenUsage token_usage;
  std::string last_snapshot_id;
  boost::json::object metadata;
  boost::json::value awaiting_input;  // a paused run's question; recorded only when not null
  int64_t created_micros = 0;
  int64_t started_micros = 0;    // 0: not started
  int64_t completed_micros = 0;  // 0: not ended
};

boost::json::object ExecutionContext(const ExecutionRecord& record);
// The tags of an execution record with `context` (ExecutionContext's shape).
std::vector<std::string> ExecutionTags(const boost::json::object& context);
// The record as a breadcrumb at ExecutionRecordPath(id), traced as caused by its trigger.
model::BreadcrumbDraft ExecutionDraft(const ExecutionRecord& record);

// The record's status ("" when absent).
std::string ExecutionStatus(const boost::json::value& record_context);
bool IsActiveStatus(std::string_view status);  // pending, running or paused
// Whether the lifecycle allows `from` -> `to` (running -> running is a resume).
bool CanMoveExecution(std::string_view from, std::string_view to);

// A value kept in a record only when it is small (tool inputs and outputs live in their request
// and response records): else {"omitted_bytes": n}.
boost::json::value BoundedCopy(const boost::json::value& value, size_t max_bytes = 16 * 1024);

}  // namespace cairn::exec
