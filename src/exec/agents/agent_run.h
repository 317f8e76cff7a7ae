// AgentRun: one execution of an agent's loop (the behaviour is described in agent_executor.h).
// Used by the AgentExecutor (agents triggered by events) and by the session worker
// (src/sessions), which adds an observer, the user_input tool and its own execution ids.
#pragma once

#include <atomic>
#include <boost/json/object.hpp>
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "exec/agents/agent_executor.h"
#include "exec/agents/agent_state.h"
#include "exec/response_waiter.h"

namespace cairn::exec {

inline constexpr std::string_view kUserInputTool = "user_input";

// What happens during a run, for an observer that records it (the session worker writes info
// messages). The write ops it returns are committed in the same transaction as the run's own
// write for that moment (none for kStepStarted: they are written on their own).
struct AgentEvent {
  enum class Type { kStepStarted, kStepCompleted, kToolCalled, kToolCompleted };
  Type type;
  int64_t step = 0;
  const PendingCall* call = nullptr;  // kToolCalled, kToolCompleted
  llm::Usage usage;                   // kStepCompleted: this step's
};

class AgentRunObserver {
 public:
  virtual ~AgentRunObserver() = default;
  virtual std::vector<store::WriteOp> OnEvent(const AgentEvent& event) = 0;
};

struct AgentRunOptions {
  AgentRunObserver* observer = nullptr;  // may be null
  // Offer and honour the user_input tool {question}: the run pauses (kPaused) until a
  // tool.response.v1 answers the call's request id.
  bool user_input = false;
  bool debug_snapshots = false;          // step snapshots marked debug_mode
  // The caller already recorded the first step's start (with its own write): no kStepStarted
  // event for step 1.
  bool first_step_announced = false;
  std::string agent_name;                // for snapshots; default the agent id
};

// How a run ended, for the response the executor writes.
struct AgentOutcome {
  enum class Kind { kAnswer, kStopped, kError, kPaused };
  Kind kind = Kind::kAnswer;
  std::string message;           // the answer, why it stopped, or the error message
  std::string code;              // kError: "llm_error", "provider_not_configured", "invalid_output", ...
  std::string stop_reason;       // kStopped: "max_iterations", "token_budget", "repeated_tool_call"
  boost::json::value output;     // with definition.output: the validated JSON answer
  std::string question;          // kPaused: what the agent (or a sub-agent of its tree) asked the user
  std::string input_request_id;  // kPaused: the request id the answer must carry
  // kPaused: {request_id, question, agent_id, execution_id} — the question and the agent that asked
  // it (this one, or a sub-agent whose task waits for the user); and the request ids (the question's,
  // the open delegations') whose answers resume the run.
  boost::json::object awaiting_input;
  std::vector<std::string> awaiting;
  bool final_snapshot = false;   // kAnswer: state.last_snapshot_id is a whole, is_final snapshot
  std::string model;             // as the endpoint reported it (else as configured)
  AgentState state;
};

class AgentRun {
 public:
  AgentRun(const model::AgentDefinition& definition, const AgentDeps& deps, const RunRequest& request,
           AgentRunOptions options = {});
  AgentOutcome Execute();

  const std::string& execution_id() const { return execution_id_; }

 private:
  Status LoadOrStart();
  Status Start();  // the first state: the prompt from the assembled context
  // The assembled context with the trigger's llm_hints (read from its record) for the prompt.
  boost::json::object WithTriggerHints(const std::string& owner) const;
  Result<llm::ChatResponse> CallModel(const ModelTarget& target, const std::vector<llm::ToolSpec>& tools);
  // Records the reply; writes its tool requests with the snapshot. nullopt: go on.
  std::optional<AgentOutcome> TakeReply(llm::ChatResponse reply);
  // The final answer (checked against the output schema; one repair round). nullopt: go on.
  std::optional<AgentOutcome> FinishAnswer(const std::string& content);
  // Waits for the answers of the pending calls, then turns them into tool messages. false: a
  // user_input question is not answered yet (the run pauses).
  Result<bool> CollectToolResults();
  AgentOutcome Loop();  // Execute's loop
  // A delegated sub-agent's start: its pending task record becomes running (delegation.h).
  void MarkTaskRunning();
  // This run's token budget: its own, or what was left of its tree's when its task was handed out.
  int64_t TokenBudget() const;
  AgentOutcome Paused();
  // A sub-agent's answer that did not come: `{status: error, error: {code, message}}`.
  static boost::json::object ErrorResponse(const std::string& code, const std::string& message);
  // Cancels the sub-agent of delegation `call` and its subtree (when deps_.runs is set). Returns
  // its execution id ("" when unknown).
  std::string CancelChild(const PendingCall& call);
  // Whether this run watches its tasks for sub-agents that wait for the user (an orchestrator of a
  // session's tree), and which of the `unanswered` delegations do (into blocked_).
  bool WatchesTasks() const;
  Status FindBlocked(const std::set<std::string>& unanswered);
  // Whether the last reply handed out tasks whose results are the last messages.
  bool ReadsDelegationResults() const;
  // The delegations still open when the run ends with `outcome` (an error or a stop): their
  // sub-agents are cancelled and their task records end cancelled (the run was) or failed.
  void CloseOpenTasks(const AgentOutcome& outcome);
  // Delegation (delegation.h): whether `call` is one, the waiter for tool and sub-agent answers,
  // and the task record's end (plus the child's tokens).
  bool IsDelegation(const llm::ToolCallRequest& call) const;
  std::unique_ptr<ResponseWaiter> NewWaiter() const;
  Result<std::vector<store::WriteOp>> TaskEnd(const PendingCall& call, const boost::json::object& response);
  // Writes a snapshot (a delta of the messages, or the full state every kFullSnapshotEvery), the
  // tool requests of the step and the observer's `extra` writes in one transaction.
  Status WriteSnapshot(std::vector<model::BreadcrumbDraft> requests, std::vector<store::WriteOp> extra = {},
                       bool is_final = false);
  std::vector<store::WriteOp> Observe(AgentEvent::Type type, const PendingCall* call = nullptr, llm::Usage usage = {});
  std::vector<llm::ToolSpec> LoadTools();
  // The session tags of the trigger, or of the tree's session (a sub-agent's).
  std::vector<std::string> SessionTags() const;
  boost::json::value ParentOrNull() const;  // the parent execution id, or null
  AgentOutcome Error(std::string code, std::string message);
  AgentOutcome Stopped(std::string reason, std::string message);

  const model::AgentDefinition& def_;
  const AgentDeps& deps_;
  const RunRequest& request_;
  AgentRunOptions options_;
  std::string execution_id_;
  std::string actor_;
  AgentState state_;
  std::unique_ptr<ResponseWaiter> waiter_;  // set before a step's requests are written
  std::string reported_model_;
  llm::Usage step_usage_;  // of the last model reply
  bool final_snapshot_ = false;  // the last snapshot written is the final one
  // The next snapshot records a model reply (its `records_reply`); those after it in the step
  // record tool answers: a client shows the step once.
  bool records_reply_ = false;
  // The open delegations whose sub-agent waits for the user: request id -> its awaiting_input.
  std::map<std::string, boost::json::object> blocked_;
};

}  // namespace cairn::exec
