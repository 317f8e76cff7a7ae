// Delegation: the built-in `delegate` tool of an agent whose definition lists `agents`
// (docs/agents.md "Sub-agents").
//
// A call {"agent": <one of the listed ids>, "task": <instruction>, "input": <optional JSON>}
// becomes, in the transaction of the snapshot that records the model's reply:
//   - an agent.task.v1 record at executions/<parent execution id>/tasks/<task id>
//     {name, instruction, assignee, status, result, parent_execution_id, execution_id, request_id, input},
//     status `pending` until the sub-agent starts (TaskStartUpdate: `running`)
//   - a user.message.v1 {agent_id, content, request_id} to the sub-agent, with the parent run's
//     lineage (AddRequesterLineage): the sub-agent runs as a child execution, so cancelling the
//     parent cancels it and the tree endpoints see it.
// The sub-agent's agent.response.v1 answers the call (kAgentResponses): its message is the tool
// result, an error answer an error result — the orchestrator goes on either way. When the answer
// is taken the task record moves to completed | failed | cancelled with the result and the child's
// execution id, in the transaction of the snapshot that records the tool message. A task whose
// answer does not come within tool_timeout_ms, or whose delegating run ends first, is given up:
// its sub-agent and subtree are cancelled and it ends cancelled (failed when the run failed).
//
// Guards (each answered with an error result the model can read, writing nothing): an agent not
// in the list, a task that is not a non-empty string of at most 64 KiB, a child past
// max_delegation_depth (execution depth), more than max_children delegations in one execution.
#pragma once

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "exec/executor.h"
#include "exec/llm/llm_provider.h"
#include "model/agent_definition.h"
#include "model/breadcrumb.h"
#include "store/store.h"

namespace cairn::exec {

inline constexpr std::string_view kDelegateTool = "delegate";

// The `delegate` tool as the model sees it: the allowed agents and their descriptions (read from
// their definitions in `owner_id`'s store; an agent not defined yet is listed without one).
llm::ToolSpec DelegateToolSpec(store::Store& store, const std::string& owner_id, const model::AgentDefinition& def);

struct DelegateCall {
  std::string agent;
  std::string task;
  boost::json::value input;  // null when none
};

// The call's arguments checked against the definition and the guards. `depth` is the delegating
// run's execution depth; `delegated_before` how many delegate calls its earlier replies made.
// An error's message is what the model reads (its code in `code`).
Result<DelegateCall> CheckDelegateCall(const boost::json::value& arguments, const model::AgentDefinition& def,
                                       int64_t depth, int64_t delegated_before, std::string* code);

// The agent a delegate call's arguments name ("" when they name none): whose answer counts.
std::string DelegatedAgent(const std::string& arguments);

// The task id of call `index` of model reply `step`, and the task record's path.
std::string TaskId(int64_t step, size_t index);
std::string TaskPath(const std::string& parent_execution_id, const std::string& task_id);

// The two records a checked call writes (the task first, then the message that runs the child).
// `token_budget` is what is left of the tree's token budget: the message carries it and the
// sub-agent may spend no more (TreeTokenBudget).
std::vector<model::BreadcrumbDraft> DelegationDrafts(const DelegateCall& call, const std::string& task_id,
                                                     const std::string& request_id, const std::string& delegator,
                                                     const std::string& parent_execution_id, const Lineage& lineage,
                                                     const model::Trace& trace, int64_t token_budget);

// The token budget of a run: its definition's max_tokens_per_execution, or less when its
// trigger is a delegated task whose message carries a smaller `token_budget` (what was left of
// its tree's when it was handed out).
int64_t TreeTokenBudget(const model::AgentDefinition& def, const model::Event& trigger, const Lineage& lineage);

// Whether a sub-agent's answer is a success: status success and not stopped by the token budget
// (a sub-agent out of the tree's budget answers its task with an error).
bool DelegationSucceeded(const boost::json::object& response);

// The tool message for a sub-agent's agent.response.v1 context: its message, or {"error": ...}.
std::string DelegateResultText(const boost::json::object& response);

// The update a sub-agent makes when it starts (or resumes): its task record (found from its
// trigger's `request_id` and its parent) moves from pending (or waiting) to running with the
// child's execution id. None when the trigger is not a delegated task's or the task is neither.
Result<std::optional<store::WriteOp>> TaskStartUpdate(store::Store& store, const std::string& owner_id,
                                                      const Lineage& lineage, const std::string& request_id,
                                                      const std::string& execution_id);

// The update a delegated sub-agent makes when it pauses for its user (or for a sub-agent of its
// own that does): its task record becomes `waiting` with `awaiting_input` {request_id, question,
// agent_id, execution_id} — the question and who asked it. None when the task is not found or ended.
Result<std::optional<store::WriteOp>> TaskWaitingUpdate(store::Store& store, const std::string& owner_id,
                                                        const Lineage& lineage, const std::string& request_id,
                                                        const std::string& execution_id,
                                                        const boost::json::object& awaiting_input);

// The awaiting_input of task `task_id` of `parent_execution_id` when it is waiting, else none.
Result<std::optional<boost::json::object>> TaskAwaitingUser(store::Store& store, const std::string& owner_id,
                                                            const std::string& parent_execution_id,
                                                            const std::string& task_id);

// Each of `parallel` tasks handed out together gets this share of the `remaining` tree budget
// (remaining / parallel, rounded down; 0 when nothing is left).
int64_t TaskBudgetShare(int64_t remaining, size_t parallel);

// The execution id the sub-agent `agent` runs (or would run) its delegated message `message_id`
// under (execution_record.h ExecutionIdFor); kNotFound when the agent is not defined.
Result<std::string> DelegatedExecutionId(store::Store& store, const std::string& owner_id, const std::string& agent,
                                         const std::string& message_id);

// The updates ending the open (pending, running, waiting) tasks of `parent_execution_id` as
// cancelled: for a run cancelled while it was paused (its sub-agents are cancelled with it).
Result<std::vector<store::WriteOp>> CancelOpenTasks(store::Store& store, const std::string& owner_id,
                                                    const std::string& parent_execution_id);

// The update moving task `task_id` of `parent_execution_id` to its end after `response` (none
// when the task record is not found). `result_text` is what the model was given.
Result<std::optional<store::WriteOp>> TaskEndUpdate(store::Store& store, const std::string& owner_id,
                                                    const std::string& parent_execution_id, const std::string& task_id,
                                                    const boost::json::object& response, const std::string& result_text);

}  // namespace cairn::exec
