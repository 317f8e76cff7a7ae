// ExecutionIndex: reading executions of every kind (GET /executions, /executions/{id},
// /executions/{id}/tree) and cancelling runs that are not session runs. It reads the stored
// agent.execution.v1 records (execution_record.h) and the runs in flight (run_registry.h): a
// bus-triggered run is recorded when it ends, so while it runs only the registry knows it.
//
// Errors: kNotFound (no such execution of the owner), kConflict (cancelling a run that has
// ended, or that is not in flight in this process).
#pragma once

#include <boost/json/object.hpp>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "exec/run_registry.h"
#include "store/store.h"

namespace cairn::exec {

struct ExecutionListFilter {
  std::optional<std::string> kind, executor, status, session_id, parent, root, user_id;
  std::optional<std::string> created_by = std::nullopt;  // only executions this actor's writes created (runs in flight excluded)
  size_t limit = 50;
  std::optional<std::string> cursor;
};

struct ExecutionPage {
  std::vector<boost::json::object> items;  // newest first
  std::optional<std::string> next_cursor;
};

class ExecutionIndex {
 public:
  // Descendants a tree shows at most (a `truncated` flag says when there were more).
  static constexpr size_t kMaxTreeNodes = 1000;

  ExecutionIndex(store::Store& store, RunRegistry& runs) : store_(store), runs_(runs) {}

  // Stored records matching `filter`, newest first. Runs in flight that have no record yet
  // (bus-triggered ones) come first on the first page when they match.
  Result<ExecutionPage> List(const std::string& owner_id, const ExecutionListFilter& filter);

  // The record (the API view: its context and updated_at), or the run in flight.
  Result<boost::json::object> Get(const std::string& owner_id, const std::string& id);

  // The execution with its descendants: {..., children: [{id, kind, executor, status, depth,
  // parent_execution_id, started_at, completed_at, duration_ms, token_usage, error, children}]},
  // oldest child first. Each agent node (and the top) also lists `tasks`: the agent.task.v1
  // records it handed out ({name, assignee, status, instruction, result, execution_id}).
  Result<boost::json::object> Tree(const std::string& owner_id, const std::string& id);

  // An agent execution's conversation from its snapshots (agents/conversation.h); kNotFound when
  // there is no such execution.
  Result<boost::json::object> Messages(const std::string& owner_id, const std::string& id);

  // Cancels a run in flight that is not a session run, and its descendants in flight.
  Result<boost::json::object> Cancel(const std::string& owner_id, const std::string& id);

 private:
  store::Store& store_;
  RunRegistry& runs_;
};

// The API view of a stored execution record: its context with updated_at.
boost::json::object ExecutionRecordView(const model::Breadcrumb& crumb);

}  // namespace cairn::exec
