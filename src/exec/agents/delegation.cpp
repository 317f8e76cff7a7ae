#include "exec/agents/delegation.h"

#include <algorithm>
#include <boost/json/serialize.hpp>

#include "base/json_util.h"
#include "exec/definition_supervisor.h"
#include "exec/execution_record.h"

namespace cairn::exec {
namespace json = boost::json;
namespace {

constexpr size_t kMaxTaskBytes = 64 * 1024;
constexpr size_t kMaxArgumentsDepth = 64;

std::string StringAt(const json::object& o, std::string_view key) {
  const json::value* v = o.if_contains(key);
  return v && v->is_string() ? std::string(v->as_string()) : "";
}

// The description of agent `id` from its definition, "" when there is none.
std::string DescriptionOf(store::Store& store, const std::string& owner_id, const std::string& id) {
  model::BreadcrumbQuery query;
  query.schema_name = std::string(model::kAgentSchema);
  query.path = model::AgentPath(id);
  query.include_context = true;
  query.limit = 1;
  auto found = store.List(owner_id, query);
  if (!found.ok() || found->items.empty() || !found->items.front().context.is_object()) return "";
  return StringAt(found->items.front().context.as_object(), "description");
}

}  // namespace

llm::ToolSpec DelegateToolSpec(store::Store& store, const std::string& owner_id, const model::AgentDefinition& def) {
  json::array ids;
  std::string listed;
  for (const auto& id : def.agents) {
    ids.emplace_back(id);
    std::string description = DescriptionOf(store, owner_id, id);
    listed += "\n- " + id + (description.empty() ? "" : ": " + description);
  }
  json::object schema{
      {"type", "object"},
      {"properties",
       json::object{{"agent", json::object{{"type", "string"}, {"enum", ids}, {"description", "the sub-agent to hand the task to"}}},
                    {"task", json::object{{"type", "string"}, {"description", "the instruction for the sub-agent"}}},
                    {"input", json::object{{"description", "optional JSON data the sub-agent needs"}}}}},
      {"required", json::array{"agent", "task"}}};
  return llm::ToolSpec{std::string(kDelegateTool),
                       "Hand a task to a sub-agent and get its answer. Several delegate calls in one reply run in "
                       "parallel. The agents:" + listed,
                       std::move(schema)};
}

Result<DelegateCall> CheckDelegateCall(const json::value& arguments, const model::AgentDefinition& def, int64_t depth,
                                       int64_t delegated_before, std::string* code) {
  auto refuse = [&](const char* c, std::string message) {
    *code = c;
    return Status::InvalidArgument(std::move(message));
  };
  if (!arguments.is_object()) return refuse("invalid_arguments", "delegate takes an object {agent, task, input}");
  const json::object& args = arguments.as_object();
  DelegateCall call;
  call.agent = StringAt(args, "agent");
  if (std::find(def.agents.begin(), def.agents.end(), call.agent) == def.agents.end()) {
    std::string allowed;
    for (const auto& id : def.agents) allowed += (allowed.empty() ? "" : ", ") + id;
    return refuse("unknown_agent", "'agent' must be one of: " + allowed);
  }
  call.task = StringAt(args, "task");
  if (call.task.empty() || call.task.size() > kMaxTaskBytes) {
    return refuse("invalid_arguments", "'task' must be a non-empty string of at most 65536 bytes");
  }
  if (const json::value* input = args.if_contains("input")) call.input = *input;
  if (depth + 1 > def.max_delegation_depth) {
    return refuse("depth_exceeded", "delegation is limited to depth " + std::to_string(def.max_delegation_depth) +
                                        " (max_delegation_depth) and this agent runs at depth " + std::to_string(depth) +
                                        ": do the task yourself or answer without it");
  }
  if (delegated_before >= def.max_children) {
    return refuse("too_many_children", "this execution already handed out " + std::to_string(delegated_before) +
                                           " tasks, its limit (max_children)");
  }
  return call;
}

std::string DelegatedAgent(const std::string& arguments) {
  auto parsed = ParseJson(arguments, kMaxArgumentsDepth);
  return parsed.ok() && parsed->is_object() ? StringAt(parsed->as_object(), "agent") : "";
}

std::string TaskId(int64_t step, size_t index) { return std::to_string(step) + "-" + std::to_string(index); }

std::string TaskPath(const std::string& parent_execution_id, const std::string& task_id) {
  return ExecutionRecordPath(parent_execution_id) + "/tasks/" + task_id;
}

std::vector<model::BreadcrumbDraft> DelegationDrafts(const DelegateCall& call, const std::string& task_id,
                                                     const std::string& request_id, const std::string& delegator,
                                                     const std::string& parent_execution_id, const Lineage& lineage,
                                                     const model::Trace& trace, int64_t token_budget) {
  model::BreadcrumbDraft task;
  task.schema_name = std::string(model::kAgentTaskSchema);
  task.title = "task for " + call.agent;
  task.path = TaskPath(parent_execution_id, task_id);
  task.tags = {"task", "assignee:" + call.agent, "agent:" + delegator, "parent:" + parent_execution_id,
               "root:" + (lineage.root_execution_id.empty() ? parent_execution_id : lineage.root_execution_id)};
  // The tree works for a session: its channel shows the task's states.
  if (!lineage.session_id.empty()) task.tags.push_back("session-activity:" + lineage.session_id);
  task.context = json::object{{"name", task_id},
                              {"instruction", call.task},
                              {"assignee", call.agent},
                              {"status", "pending"},
                              {"result", nullptr},
                              {"parent_execution_id", parent_execution_id},
                              {"execution_id", nullptr},
                              {"request_id", request_id},
                              {"input", call.input}};
  task.trace = trace;

  model::BreadcrumbDraft message;
  message.schema_name = std::string(model::kUserMessageSchema);
  message.title = "task " + task_id + " for " + call.agent;
  message.tags = {"request:" + request_id, "delegated", "agent:" + delegator, "execution:" + parent_execution_id};
  std::string content = call.task;
  if (!call.input.is_null()) content += "\n\nInput (JSON): " + json::serialize(call.input);
  json::object context{{"agent_id", call.agent},
                       {"content", std::move(content)},
                       {"request_id", request_id},
                       {"token_budget", std::max<int64_t>(token_budget, 0)}};
  AddRequesterLineage(context, parent_execution_id, lineage);
  message.context = std::move(context);
  message.trace = trace;
  return {std::move(task), std::move(message)};
}

int64_t TreeTokenBudget(const model::AgentDefinition& def, const model::Event& trigger, const Lineage& lineage) {
  if (lineage.parent_execution_id.empty() || !trigger.context.is_object()) return def.max_tokens_per_execution;
  const json::value* budget = trigger.context.as_object().if_contains("token_budget");
  if (!budget || !budget->is_int64() || budget->as_int64() < 0) return def.max_tokens_per_execution;
  return std::min(def.max_tokens_per_execution, budget->as_int64());
}

bool DelegationSucceeded(const json::object& response) {
  return StringAt(response, "status") == "success" && StringAt(response, "stop_reason") != "token_budget";
}

std::string DelegateResultText(const json::object& response) {
  if (DelegationSucceeded(response)) return StringAt(response, "message");
  if (StringAt(response, "status") == "success") {
    return json::serialize(json::object{
        {"error", json::object{{"code", "token_budget"}, {"message", StringAt(response, "message")}}}});
  }
  const json::value* error = response.if_contains("error");
  return json::serialize(json::object{{"error", error ? *error : json::value("the sub-agent failed")}});
}

namespace {

// The task record `task_id` of `parent_execution_id`, if there is one.
Result<std::optional<model::Breadcrumb>> FindTask(store::Store& store, const std::string& owner_id,
                                                  const std::string& parent_execution_id, const std::string& task_id) {
  model::BreadcrumbQuery query;
  query.schema_name = std::string(model::kAgentTaskSchema);
  query.path = TaskPath(parent_execution_id, task_id);
  query.include_context = true;
  query.limit = 1;
  CAIRN_ASSIGN_OR_RETURN(store::Page found, store.List(owner_id, query));
  if (found.items.empty() || !found.items.front().context.is_object()) return std::optional<model::Breadcrumb>();
  return std::optional<model::Breadcrumb>(std::move(found.items.front()));
}

store::WriteOp TaskUpdate(const model::Breadcrumb& task, json::object context, std::optional<int64_t> version) {
  model::BreadcrumbPatch patch;
  patch.context.Set(std::move(context));
  return store::WriteOp::Update(task.id, std::move(patch), version);
}

}  // namespace

namespace {

// The task record a delegated run's trigger (`request_id`, from its parent) stands for.
Result<std::optional<model::Breadcrumb>> OwnTask(store::Store& store, const std::string& owner_id,
                                                 const Lineage& lineage, const std::string& request_id) {
  const std::string& parent = lineage.parent_execution_id;
  if (parent.empty() || request_id.size() <= parent.size() + 1 || request_id.compare(0, parent.size() + 1, parent + "-") != 0) {
    return std::optional<model::Breadcrumb>();
  }
  CAIRN_ASSIGN_OR_RETURN(auto task, FindTask(store, owner_id, parent, request_id.substr(parent.size() + 1)));
  if (!task || StringAt(task->context.as_object(), "request_id") != request_id) return std::optional<model::Breadcrumb>();
  return task;
}

}  // namespace

Result<std::optional<store::WriteOp>> TaskStartUpdate(store::Store& store, const std::string& owner_id,
                                                      const Lineage& lineage, const std::string& request_id,
                                                      const std::string& execution_id) {
  CAIRN_ASSIGN_OR_RETURN(auto task, OwnTask(store, owner_id, lineage, request_id));
  if (!task) return std::optional<store::WriteOp>();
  json::object context = task->context.as_object();
  std::string status = StringAt(context, "status");
  if (status != "pending" && status != "waiting") return std::optional<store::WriteOp>();
  context["status"] = "running";
  context["execution_id"] = execution_id;
  context.erase("awaiting_input");
  // Only over the pending (or waiting) record: a task ended meanwhile keeps its end.
  return std::optional<store::WriteOp>(TaskUpdate(*task, std::move(context), task->version));
}

Result<std::optional<store::WriteOp>> TaskWaitingUpdate(store::Store& store, const std::string& owner_id,
                                                        const Lineage& lineage, const std::string& request_id,
                                                        const std::string& execution_id,
                                                        const json::object& awaiting_input) {
  CAIRN_ASSIGN_OR_RETURN(auto task, OwnTask(store, owner_id, lineage, request_id));
  if (!task) return std::optional<store::WriteOp>();
  json::object context = task->context.as_object();
  std::string status = StringAt(context, "status");
  if (status != "pending" && status != "running" && status != "waiting") return std::optional<store::WriteOp>();
  context["status"] = "waiting";
  context["execution_id"] = execution_id;
  context["awaiting_input"] = awaiting_input;
  return std::optional<store::WriteOp>(TaskUpdate(*task, std::move(context), std::nullopt));
}

Result<std::optional<json::object>> TaskAwaitingUser(store::Store& store, const std::string& owner_id,
                                                     const std::string& parent_execution_id, const std::string& task_id) {
  CAIRN_ASSIGN_OR_RETURN(auto task, FindTask(store, owner_id, parent_execution_id, task_id));
  if (!task) return std::optional<json::object>();
  const json::object& context = task->context.as_object();
  const json::value* awaiting = context.if_contains("awaiting_input");
  if (StringAt(context, "status") != "waiting" || !awaiting || !awaiting->is_object()) return std::optional<json::object>();
  return std::optional<json::object>(awaiting->as_object());
}

int64_t TaskBudgetShare(int64_t remaining, size_t parallel) {
  if (remaining <= 0 || parallel == 0) return 0;
  return remaining / static_cast<int64_t>(parallel);
}

Result<std::string> DelegatedExecutionId(store::Store& store, const std::string& owner_id, const std::string& agent,
                                         const std::string& message_id) {
  model::BreadcrumbQuery query;
  query.schema_name = std::string(model::kAgentSchema);
  query.path = model::AgentPath(agent);
  query.limit = 1;
  CAIRN_ASSIGN_OR_RETURN(store::Page found, store.List(owner_id, query));
  if (found.items.empty()) return Status::NotFound("the agent " + agent + " is not defined");
  // A delegated message is written once and never changed: its trigger key is version 1.
  return StableExecutionId(owner_id, DefinitionConsumerId(found.items.front().id), message_id + "/1");
}

Result<std::optional<store::WriteOp>> TaskEndUpdate(store::Store& store, const std::string& owner_id,
                                                    const std::string& parent_execution_id, const std::string& task_id,
                                                    const json::object& response, const std::string& result_text) {
  CAIRN_ASSIGN_OR_RETURN(auto task, FindTask(store, owner_id, parent_execution_id, task_id));
  if (!task) return std::optional<store::WriteOp>();
  json::object context = task->context.as_object();
  std::string status = "completed";
  if (!DelegationSucceeded(response)) {
    const json::value* error = response.if_contains("error");
    std::string code = error && error->is_object() ? StringAt(error->as_object(), "code") : "";
    // A task given up on (timeout) was cancelled too: its sub-agent was stopped.
    status = code == "cancelled" || code == "timeout" ? "cancelled" : "failed";
  }
  context["status"] = status;
  context["result"] = result_text;
  std::string child = StringAt(response, "execution_id");
  if (!child.empty()) context["execution_id"] = child;
  // Unconditional: the end wins over a sub-agent's start written at the same moment.
  return std::optional<store::WriteOp>(TaskUpdate(*task, std::move(context), std::nullopt));
}

Result<std::vector<store::WriteOp>> CancelOpenTasks(store::Store& store, const std::string& owner_id,
                                                    const std::string& parent_execution_id) {
  model::BreadcrumbQuery query;
  query.schema_name = std::string(model::kAgentTaskSchema);
  query.path_prefix = ExecutionRecordPath(parent_execution_id) + "/tasks";
  query.include_context = true;
  query.limit = 256;  // max_children's bound
  CAIRN_ASSIGN_OR_RETURN(store::Page page, store.List(owner_id, query));
  std::vector<store::WriteOp> ops;
  std::string result = json::serialize(json::object{
      {"error", json::object{{"code", "cancelled"}, {"message", "the delegating execution was cancelled"}}}});
  for (const auto& task : page.items) {
    if (!task.context.is_object()) continue;
    json::object context = task.context.as_object();
    std::string status = StringAt(context, "status");
    if (status != "pending" && status != "running" && status != "waiting") continue;
    context["status"] = "cancelled";
    context["result"] = result;
    context.erase("awaiting_input");
    ops.push_back(TaskUpdate(task, std::move(context), std::nullopt));
  }
  return ops;
}

}  // namespace cairn::exec
