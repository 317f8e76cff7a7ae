// Moves agent.execution.v1 records written before executions had one shape (execution_record.h)
// to it, once, at start (before executors and the session worker start):
//   - bus-triggered runs at executions/<consumer>/<trigger key> ({executor, kind, name, consumer,
//     definition_id, trigger_id, usage {prompt, completion}, error "code: message", ...}) move
//     to executions/<id>, the id derived as for new runs (so re-delivered triggers still find them);
//   - session runs at session-executions/<id> ({agent_type, error_message, ...}) move to
//     executions/<id>, keeping user_id, snapshot_policy and awaiting_input.
// Each record is one update (its event says so); lineage is root for all (earlier versions did
// not record it). Once done, a mark in `cursors` says so: later starts do not scan the records
// again (the scan reads every execution record's context).
#pragma once

#include <cstdint>
#include <string>

#include "base/status.h"
#include "store/cursor_store.h"
#include "store/store.h"

namespace cairn::exec {

// Returns how many records it moved; logs each it could not read.
Result<int64_t> MigrateExecutionRecords(store::Store& store, store::CursorStore& cursors, const std::string& owner_id);

}  // namespace cairn::exec
