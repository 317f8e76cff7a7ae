// ExecutionRecorder: the lifecycle writes of one session execution (internal to the worker).
// Every move of the execution's status is one transaction with the messages that tell it (info,
// notification, assistant) and, at an end, the session's last_* fields and token totals. A
// concurrent change of either record (a PATCH, a cancel) makes it read them again.
#pragma once

#include <atomic>
#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/uuid.h"
#include "exec/agents/agent_run.h"
#include "exec/context_assembler.h"
#include "model/breadcrumb.h"
#include "store/store.h"

namespace cairn::sessions {

boost::json::object UsageJson(const exec::llm::Usage& usage);

class ExecutionRecorder {
 public:
  // All references must outlive the recorder; `stopping` ends write retries at shutdown.
  ExecutionRecorder(store::Store& store, UuidV7Generator& ids, const Clock& clock, const std::atomic<bool>& stopping,
                    std::string owner_id, std::string session_id, std::string execution_id);

  // An info message of the execution; `event_type` names its session event.
  store::WriteOp Info(const std::string& text, const std::string& event_type, boost::json::object metadata = {});

  // Moves the execution to `to` (kConflict when the lifecycle forbids it from where it is now)
  // with `changes` and the writes `also`; `totals` adds the session's update (skipped when the
  // session is gone).
  Status Move(const std::string& to, boost::json::object changes, std::vector<store::WriteOp> also,
              bool totals = false);

  // Ends the execution `failed` with error {code, message: why} (logged when even that cannot be
  // written).
  void Fail(const std::string& code, const std::string& why, const exec::llm::Usage& usage = {});

  // Ends it `completed` with the outcome's answer: the assistant message, the output, the final
  // snapshot (written here when the run's last one is not whole and final), and under the `final`
  // snapshot policy without the step snapshots.
  Status Complete(const exec::AgentOutcome& outcome, const boost::json::object& execution_fields,
                  const std::string& agent_id, const model::Event& trigger_event);

  const std::string& execution_id() const { return execution_id_; }

 private:
  Result<store::WriteOp> SessionTotals(const boost::json::object& ended);

  store::Store& store_;
  UuidV7Generator& ids_;
  const Clock& clock_;
  const std::atomic<bool>& stopping_;
  std::string owner_id_, session_id_, execution_id_;
  model::WriteContext ctx_;
};

// What a run of an execution needs, read from the store: the agent's definition, the message
// as the trigger, the session's history. An error message says why it cannot run.
struct RunInput {
  model::AgentDefinition definition;
  std::string definition_id;  // the agent.def.v1 record
  int64_t definition_version = 0;
  boost::json::object trigger;
  model::Event trigger_event;
  // The assembled context (the agent's subscriptions), then initial_context (the session's
  // initial_context_url), message_context (the message's context_url, related_type,
  // related_id) and history (the session's last 20 turns) when there are any, bounded by the
  // agent's context_budget_tokens (exec/context_budget.h): the session's own sections count
  // toward the budget but only subscription sections are trimmed.
  boost::json::object context;
  boost::json::array context_dropped;  // what the budget left out (ApplyContextBudget); recorded on the execution
};
// `searcher` (may be null) serves the definition's fetch: search|vector subscriptions. The
// context holds what the principal that posted the message may read (`reader_for`; null:
// everything), and `secret` records only when the agent's definition sets allow_secret_context.
Result<RunInput> LoadRunInput(store::Store& store, const std::string& owner_id, const boost::json::object& execution,
                              const model::Limits& limits, const search::Searcher* searcher = nullptr,
                              const exec::ReaderFor& reader_for = {});

}  // namespace cairn::sessions
