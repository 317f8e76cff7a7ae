// AgentRun: one execution of an agent's loop (internal to agent_executor.cpp; the behaviour is
// described in agent_executor.h).
#pragma once

#include <atomic>
#include <boost/json/object.hpp>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "exec/agents/agent_executor.h"
#include "exec/agents/agent_state.h"
#include "exec/agents/tool_response_waiter.h"

namespace cairn::exec {

// How a run ended, for the response the executor writes.
struct AgentOutcome {
  enum class Kind { kAnswer, kStopped, kError };
  Kind kind = Kind::kAnswer;
  std::string message;           // the answer, why it stopped, or the error message
  std::string code;              // kError: "llm_error", "provider_not_configured", "invalid_output", ...
  std::string stop_reason;       // kStopped: "max_iterations", "token_budget", "repeated_tool_call"
  boost::json::value output;     // with definition.output: the validated JSON answer
  std::string model;             // as the endpoint reported it (else as configured)
  AgentState state;
};

class AgentRun {
 public:
  AgentRun(const model::AgentDefinition& definition, const AgentDeps& deps, const RunRequest& request);
  AgentOutcome Execute();

  const std::string& execution_id() const { return execution_id_; }

 private:
  Status LoadOrStart();
  Result<llm::ChatResponse> CallModel(const ModelTarget& target, const std::vector<llm::ToolSpec>& tools);
  // Records the reply; writes its tool requests with the snapshot. nullopt: go on.
  std::optional<AgentOutcome> TakeReply(llm::ChatResponse reply);
  // The final answer (checked against the output schema; one repair round). nullopt: go on.
  std::optional<AgentOutcome> FinishAnswer(const std::string& content);
  // Waits for the answers of the pending calls, then turns them into tool messages.
  Status CollectToolResults();
  Status WriteSnapshot(std::vector<model::BreadcrumbDraft> requests);
  std::vector<llm::ToolSpec> LoadTools();
  std::vector<std::string> SessionTags() const;
  AgentOutcome Error(std::string code, std::string message);
  AgentOutcome Stopped(std::string reason, std::string message);

  const model::AgentDefinition& def_;
  const AgentDeps& deps_;
  const RunRequest& request_;
  std::string execution_id_;
  std::string actor_;
  AgentState state_;
  std::unique_ptr<ToolResponseWaiter> waiter_;  // set before a step's requests are written
  std::string reported_model_;
};

}  // namespace cairn::exec
