#include "exec/agents/agent_run.h"

#include <algorithm>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <cstdio>

#include "base/json_util.h"
#include "base/log.h"
#include "exec/agents/delegation.h"
#include "exec/agents/prompt.h"
#include "exec/response_waiter.h"
#include "exec/execution_record.h"
#include "exec/retry.h"
#include "model/json_schema.h"
#include "model/tool_definition.h"

namespace cairn::exec {
namespace json = boost::json;
namespace {

constexpr int64_t kRepeatLimit = 3;
constexpr size_t kMaxToolCallsPerStep = 16;  // more in one reply are answered with an error
constexpr size_t kMaxModelJsonDepth = 64;     // tool-call arguments and structured answers
// The call_counts entry counting delegate calls that handed out a task (no tool is named "").
constexpr std::string_view kDelegationsKey = "\ndelegations";
// ... the tokens its sub-agents spent (counted in usage too), and whether its model was given
// the one call past the tree's budget to read their results.
constexpr std::string_view kDelegatedTokensKey = "\ndelegated_tokens";
constexpr std::string_view kBudgetGraceKey = "\nbudget_grace";

int64_t CountOf(const AgentState& state, std::string_view key) {
  auto it = state.call_counts.find(std::string(key));
  return it == state.call_counts.end() ? 0 : it->second;
}

std::string ErrorText(const std::string& code, const std::string& message) {
  return json::serialize(json::object{{"error", json::object{{"code", code}, {"message", message}}}});
}

// The tool message for a tool.response.v1 context: the output (a string as it is, other JSON
// compactly), or {"error": {code, message}}.
std::string ToolResultText(const json::object& response) {
  const json::value* status = response.if_contains("status");
  if (status && *status == "success") {
    const json::value* output = response.if_contains("output");
    if (!output) return "null";
    return output->is_string() ? std::string(output->as_string()) : json::serialize(*output);
  }
  const json::value* error = response.if_contains("error");
  return json::serialize(json::object{{"error", error ? *error : json::value("the tool failed")}});
}

// The model's JSON answer: the whole text, or the inside of a ```json fence around it.
Result<json::value> ParseJsonAnswer(std::string text) {
  auto first = text.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && text.compare(first, 3, "```") == 0) {
    auto body = text.find('\n', first);
    auto fence = text.rfind("```");
    if (body != std::string::npos && fence != std::string::npos && fence > body) text = text.substr(body + 1, fence - body - 1);
  }
  auto parsed = ParseJson(text, kMaxModelJsonDepth);
  if (!parsed.ok()) return Status::InvalidArgument("the answer is not JSON (" + parsed.status().message() + ")");
  return parsed;
}

}  // namespace

AgentRun::AgentRun(const model::AgentDefinition& definition, const AgentDeps& deps, const RunRequest& request,
                   AgentRunOptions options)
    : def_(definition),
      deps_(deps),
      request_(request),
      options_(std::move(options)),
      execution_id_(request.execution_id),
      actor_("agent:" + definition.agent_id) {
  if (options_.agent_name.empty()) options_.agent_name = def_.agent_id;
}

AgentOutcome AgentRun::Error(std::string code, std::string message) {
  AgentOutcome outcome;
  outcome.kind = AgentOutcome::Kind::kError;
  outcome.code = std::move(code);
  outcome.message = std::move(message);
  outcome.model = reported_model_.empty() ? def_.model : reported_model_;
  outcome.state = std::move(state_);
  return outcome;
}

AgentOutcome AgentRun::Stopped(std::string reason, std::string message) {
  AgentOutcome outcome = Error("", std::move(message));
  outcome.kind = AgentOutcome::Kind::kStopped;
  outcome.stop_reason = std::move(reason);
  return outcome;
}

namespace {

// Reads only snapshots the run itself wrote (its actor, its path): a record anyone could write
// must not be able to put words in the agent's mouth.
class StoreSnapshotReader final : public SnapshotReader {
 public:
  StoreSnapshotReader(store::Store& store, std::string owner, std::string actor, std::string path_prefix)
      : store_(store), owner_(std::move(owner)), actor_(std::move(actor)), prefix_(std::move(path_prefix)) {}
  Result<json::object> Context(const std::string& id) override {
    CAIRN_ASSIGN_OR_RETURN(auto crumb, store_.GetShared(owner_, id));
    if (!Trusted(*crumb) || !crumb->context.is_object()) {
      return Status::Internal("snapshot " + id + " was not written by this run");
    }
    return crumb->context.as_object();
  }
  bool Trusted(const model::Breadcrumb& crumb) const {
    return crumb.schema_name == model::kAgentSnapshotSchema && crumb.created_by == actor_ && crumb.path &&
           crumb.path->rfind(prefix_, 0) == 0;
  }

 private:
  store::Store& store_;
  std::string owner_, actor_, prefix_;
};

}  // namespace

boost::json::object AgentRun::WithTriggerHints(const std::string& owner) const {
  // Events do not carry llm_hints: the trigger's own record says how to render it.
  // Only a trigger without text is rendered as a record (prompt.h): a message needs no read.
  const json::value* trigger = request_.context.if_contains("trigger");
  if (!trigger || !trigger->is_object() || trigger->as_object().contains("llm_hints") ||
      !UserTextOf(*trigger).empty() || request_.trigger_event.breadcrumb_id.empty()) {
    return request_.context;
  }
  auto record = deps_.store.GetShared(owner, request_.trigger_event.breadcrumb_id);
  if (!record.ok() || (*record)->llm_hints.is_null()) return request_.context;
  json::object context = request_.context;
  context["trigger"].as_object()["llm_hints"] = (*record)->llm_hints;
  return context;
}

Status AgentRun::LoadOrStart() {
  if (request_.first_attempt) return Start();
  model::BreadcrumbQuery query;
  query.schema_name = std::string(model::kAgentSnapshotSchema);
  query.all_tags = {"execution:" + execution_id_};
  query.path_prefix = "snapshots/" + execution_id_;
  query.limit = 8;
  const std::string& owner = request_.trigger_event.owner_id;
  CAIRN_ASSIGN_OR_RETURN(store::Page page, deps_.store.List(owner, query));
  StoreSnapshotReader reader(deps_.store, owner, actor_, "snapshots/" + execution_id_ + "/");
  std::vector<model::Breadcrumb> trusted;
  for (auto& crumb : page.items) {
    if (reader.Trusted(crumb)) trusted.push_back(std::move(crumb));
  }
  if (trusted.empty()) return Start();
  CAIRN_ASSIGN_OR_RETURN(state_, LoadFullState(reader, trusted.front().id));
  CAIRN_LOG_INFO("agent {}: execution {} resumes at step {}", def_.agent_id, execution_id_, state_.step);
  return Status::Ok();
}

Status AgentRun::Start() {
  state_.messages = BuildPrompt(def_.system_prompt, WithTriggerHints(request_.trigger_event.owner_id));
  if (def_.output) {
    // Also what OpenAI requires before it accepts response_format json_object.
    state_.messages.insert(state_.messages.end() - 1,
                           llm::ChatMessage{"system",
                                            "Give your final answer as one JSON object (no other text) that satisfies "
                                            "this JSON Schema: " + json::serialize(def_.output->schema),
                                            true, {}, ""});
  }
  return Status::Ok();
}

std::vector<store::WriteOp> AgentRun::Observe(AgentEvent::Type type, const PendingCall* call, llm::Usage usage) {
  if (!options_.observer) return {};
  int64_t step = type == AgentEvent::Type::kStepStarted ? state_.step + 1 : state_.step;
  return options_.observer->OnEvent(AgentEvent{type, step, call, usage});
}

std::vector<std::string> AgentRun::SessionTags() const {
  std::vector<std::string> tags;
  for (const auto& tag : request_.trigger_event.tags) {
    if (tag.rfind("session:", 0) == 0) tags.push_back(tag);
  }
  // A sub-agent's trigger is not the session's, but its tree works for the session.
  if (tags.empty() && !request_.lineage.session_id.empty()) tags.push_back("session:" + request_.lineage.session_id);
  return tags;
}

std::vector<llm::ToolSpec> AgentRun::LoadTools() {
  std::vector<llm::ToolSpec> specs;
  for (const auto& name : def_.tools) {
    model::BreadcrumbQuery query;
    query.schema_name = std::string(model::kToolSchema);
    query.path = model::ToolPath(name);
    query.include_context = true;
    query.limit = 1;
    auto found = deps_.store.List(request_.trigger_event.owner_id, query);
    if (!found.ok() || found->items.empty()) continue;  // offered no more; a call still gets an answer
    auto tool = model::ParseToolDefinition(found->items.front().context, model::Limits{});
    if (!tool.ok()) continue;
    specs.push_back(llm::ToolSpec{tool->name, tool->description, tool->input_schema});
  }
  if (!def_.agents.empty()) specs.push_back(DelegateToolSpec(deps_.store, request_.trigger_event.owner_id, def_));
  if (options_.user_input) {
    specs.push_back(llm::ToolSpec{
        std::string(kUserInputTool), "Ask the user a question and wait for the answer.",
        json::parse(R"({"type":"object","properties":{"question":{"type":"string"}},"required":["question"]})")});
  }
  return specs;
}

Result<llm::ChatResponse> AgentRun::CallModel(const ModelTarget& target, const std::vector<llm::ToolSpec>& tools) {
  llm::ChatRequest chat;
  chat.model = target.model;
  chat.messages = state_.messages;
  chat.tools = tools;
  chat.temperature = def_.temperature;
  chat.max_tokens = def_.max_tokens;
  chat.stream = def_.stream;
  if (def_.output && tools.empty()) chat.response_format = json::object{{"type", "json_object"}};
  llm::CallOptions options;
  options.cancelled = &request_.cancelled;
  // A key kept as a secret is read now, for this call: a rotation applies to the next call.
  const std::string& key_secret = !def_.api_key_secret.empty() ? def_.api_key_secret : target.api_key_secret;
  if (!key_secret.empty()) {
    const std::string& tenant = request_.trigger_event.owner_id;
    CAIRN_ASSIGN_OR_RETURN(options.api_key,
                           model::ResolveSecretOrValue(model::SecretOrValue{"", key_secret}, tenant, deps_.resolve_secret,
                                                       "the API key of provider " + target.provider_name, nullptr));
    options.api_key_source = "secret " + key_secret + " of tenant " + tenant;
  }
  if (deps_.tokens && def_.stream) {
    std::vector<std::string> tags = SessionTags();
    tags.push_back("execution:" + execution_id_);
    tags.push_back("agent:" + def_.agent_id);
    const json::value* asked = request_.trigger_event.context.is_object()
                                   ? request_.trigger_event.context.as_object().if_contains("request_id")
                                   : nullptr;
    std::string request_id = asked && asked->is_string() ? std::string(asked->as_string()) : request_.trigger_event.breadcrumb_id;
    // Tokens follow the stored events written so far (the step's start) on every stream.
    auto bounds = deps_.bus.Bounds();
    int64_t after_seq = bounds.ok() ? bounds->last_seq : 0;
    options.on_delta = [this, tags, request_id, after_seq, step = state_.step + 1](std::string_view delta) {
      auto event = std::make_shared<bus::EphemeralEvent>();
      event->type = "agent.token";
      event->owner_id = request_.trigger_event.owner_id;
      event->tags = tags;
      event->at = std::chrono::duration_cast<std::chrono::microseconds>(
                      std::chrono::system_clock::now().time_since_epoch()).count();
      event->data = json::object{{"execution_id", execution_id_},
                                 {"parent_execution_id", ParentOrNull()},
                                 {"agent_id", def_.agent_id},
                                 {"step", step},
                                 {"request_id", request_id},
                                 {"delta", delta}};
      event->after_seq = after_seq;
      deps_.tokens->Publish(std::move(event));
    };
  }
  return target.provider->Complete(chat, options);
}

Status AgentRun::WriteSnapshot(std::vector<model::BreadcrumbDraft> requests, std::vector<store::WriteOp> extra,
                               bool is_final) {
  AgentState next = state_;
  ++next.snapshots;
  // A final snapshot is whole: it may outlive the step snapshots before it (snapshot policies).
  bool full = is_final || state_.last_snapshot_id.empty() || (next.snapshots - 1) % kFullSnapshotEvery == 0;
  size_t from = full ? 0 : std::min(state_.snapshot_messages, state_.messages.size());
  char sequence[32];
  std::snprintf(sequence, sizeof sequence, "%06lld", static_cast<long long>(next.snapshots));
  model::BreadcrumbDraft snapshot;
  snapshot.schema_name = std::string(model::kAgentSnapshotSchema);
  snapshot.title = "agent " + def_.agent_id + " step " + std::to_string(next.step);
  snapshot.path = "snapshots/" + execution_id_ + "/" + sequence;
  snapshot.tags = {"snapshot", "execution:" + execution_id_, "agent:" + def_.agent_id};
  // A sub-agent's steps are shown on its session's channel (server/session_handlers.h).
  if (!request_.lineage.parent_execution_id.empty()) {
    for (const auto& tag : SessionTags()) snapshot.tags.push_back("session-activity:" + tag.substr(8));
  }
  snapshot.trace = ChildTrace(request_.trigger_event);
  snapshot.context = json::object{
      {"agent_execution_id", execution_id_},
      {"parent_execution_id", ParentOrNull()},
      {"execution_path", ExecutionRecordPath(execution_id_)},
      {"parent_snapshot_id", state_.last_snapshot_id.empty() ? json::value(nullptr) : json::value(state_.last_snapshot_id)},
      {"agent_id", def_.agent_id},
      {"agent_name", options_.agent_name},
      {"step_number", next.step},
      {"is_final", is_final},
      {"records_reply", records_reply_},
      {"debug_mode", options_.debug_snapshots},
      {"state", StateToJson(next, from)}};
  std::vector<store::WriteOp> ops;
  ops.push_back(store::WriteOp::Create(std::move(snapshot)));
  for (auto& draft : requests) {
    draft.trace = ChildTrace(request_.trigger_event);
    ops.push_back(store::WriteOp::Create(std::move(draft)));
  }
  for (auto& op : extra) ops.push_back(std::move(op));
  model::WriteContext ctx{request_.trigger_event.owner_id, actor_, true};
  CAIRN_ASSIGN_OR_RETURN(auto written, RetryWhenBusy(request_.cancelled, [&] { return deps_.store.Apply(ctx, ops); }));
  state_.snapshots = next.snapshots;
  state_.last_snapshot_id = written.front().breadcrumb.id;
  state_.snapshot_messages = state_.messages.size();
  final_snapshot_ = is_final;
  records_reply_ = false;
  return Status::Ok();
}

std::optional<AgentOutcome> AgentRun::TakeReply(llm::ChatResponse reply) {
  ++state_.step;
  records_reply_ = true;  // the next snapshot records this reply
  state_.usage.prompt += reply.usage.prompt;
  state_.usage.completion += reply.usage.completion;
  state_.usage.total += reply.usage.total;
  step_usage_ = reply.usage;
  if (!reply.model.empty()) reported_model_ = reply.model;
  llm::ChatMessage& message = reply.message;
  message.role = "assistant";
  if (message.tool_calls.empty()) {
    message.has_content = true;
    std::string content = message.content;
    if (reply.finish_reason == "length" || reply.finish_reason == "content_filter") {
      state_.messages.push_back(std::move(message));
      bool length = reply.finish_reason == "length";
      return Stopped(reply.finish_reason, content + (content.empty() ? "" : "\n\n") +
                                              (length ? "[the reply was cut off: the model reached its token limit]"
                                                      : "[the reply was stopped by the provider's content filter]"));
    }
    state_.messages.push_back(std::move(message));
    // Without an output schema this reply is the answer: its snapshot is the final one.
    bool is_final = !def_.output;
    if (Status saved = WriteSnapshot({}, Observe(AgentEvent::Type::kStepCompleted, nullptr, step_usage_), is_final);
        !saved.ok()) {
      return Error("internal", "saving a snapshot failed: " + saved.message());
    }
    return FinishAnswer(content);
  }
  message.has_content = !message.content.empty();
  std::vector<model::BreadcrumbDraft> requests;
  std::string repeated;
  // Delegations so far: kept with the call counts, so a resumed run counts the same.
  int64_t delegated = CountOf(state_, kDelegationsKey);
  // What is left of the tree's budget is shared by the tasks of this reply (handed out below).
  int64_t remaining = TokenBudget() - state_.usage.total;
  struct Handout {
    DelegateCall call;
    std::string task_id, request_id;
  };
  std::vector<Handout> handouts;
  for (size_t i = 0; i < message.tool_calls.size(); ++i) {
    llm::ToolCallRequest& call = message.tool_calls[i];
    if (call.id.empty()) call.id = "call_" + std::to_string(state_.step) + "_" + std::to_string(i);
    if (i >= kMaxToolCallsPerStep) {
      state_.pending.push_back(PendingCall{call, "", ErrorText("too_many_tool_calls",
                                                               "at most " + std::to_string(kMaxToolCallsPerStep) +
                                                                   " tool calls are run per reply; this one was not")});
      continue;
    }
    if (++state_.call_counts[call.name + "\n" + call.arguments] >= kRepeatLimit) repeated = call.name;
    PendingCall pending{call, "", std::nullopt};
    // The model's arguments go through the one JSON entry point: a number it overflows is refused
    // here like any malformed argument, never stored in a request.
    Result<json::value> input = call.arguments.empty() ? Result<json::value>(json::value(json::object{}))
                                                       : ParseJson(call.arguments, kMaxModelJsonDepth);
    bool user_input = options_.user_input && call.name == kUserInputTool;
    if (IsDelegation(call)) {
      std::string code;
      Result<DelegateCall> checked = input.ok() ? CheckDelegateCall(*input, def_, request_.lineage.depth, delegated, &code)
                                                : Result<DelegateCall>(input.status());
      if (checked.ok() && remaining <= 0) {
        code = "token_budget";
        checked = Status::InvalidArgument("no tokens are left of this execution's budget (" +
                                          std::to_string(TokenBudget()) + ") to hand out with a task");
      }
      if (!checked.ok()) {
        pending.result = ErrorText(code.empty() ? "invalid_arguments" : code, checked.status().message());
      } else {
        ++delegated;
        pending.request_id = execution_id_ + "-" + std::to_string(state_.step) + "-" + std::to_string(i);
        handouts.push_back(Handout{std::move(checked).value(), TaskId(state_.step, i), pending.request_id});
      }
    } else if (!user_input && std::find(def_.tools.begin(), def_.tools.end(), call.name) == def_.tools.end()) {
      std::string offered;
      for (const auto& name : def_.tools) offered += (offered.empty() ? "" : ", ") + name;
      pending.result = ErrorText("unknown_tool", "there is no tool named '" + call.name + "' for this agent" +
                                                     (offered.empty() ? " (it has no tools)" : "; its tools: " + offered));
    } else if (!input.ok()) {
      pending.result = ErrorText("invalid_arguments", "the arguments are not valid JSON (" + input.status().message() + ")");
    } else {
      pending.request_id = execution_id_ + "-" + std::to_string(state_.step) + "-" + std::to_string(i);
      // user_input is answered by the user (a tool.response.v1 the session writes), not by a tool.
      if (!user_input) {
        model::BreadcrumbDraft draft;
        draft.schema_name = std::string(model::kToolRequestSchema);
        draft.title = call.name + " request";
        draft.tags = {"tool:request", "request:" + pending.request_id, "agent:" + def_.agent_id};
        for (const auto& tag : SessionTags()) draft.tags.push_back("session-activity:" + tag.substr(8));
        json::object context{{"tool", call.name}, {"input", std::move(input).value()},
                             {"request_id", pending.request_id}, {"requested_by", actor_}};
        AddRequesterLineage(context, execution_id_, request_.lineage);
        draft.context = std::move(context);
        requests.push_back(std::move(draft));
      }
    }
    state_.pending.push_back(std::move(pending));
  }
  if (delegated > 0) state_.call_counts[std::string(kDelegationsKey)] = delegated;
  int64_t share = TaskBudgetShare(remaining, handouts.size());
  for (const auto& h : handouts) {
    for (auto& draft : DelegationDrafts(h.call, h.task_id, h.request_id, def_.agent_id, execution_id_, request_.lineage,
                                        ChildTrace(request_.trigger_event), share)) {
      requests.push_back(std::move(draft));
    }
  }
  state_.messages.push_back(std::move(message));
  if (!repeated.empty()) {
    return Stopped("repeated_tool_call", "I stopped: the model asked for " + repeated + " with the same arguments " +
                                             std::to_string(kRepeatLimit) + " times without reaching an answer.");
  }
  std::vector<store::WriteOp> events;
  bool all_answered = true;
  for (const auto& p : state_.pending) {
    for (auto& op : Observe(AgentEvent::Type::kToolCalled, &p)) events.push_back(std::move(op));
    if (p.result) {
      for (auto& op : Observe(AgentEvent::Type::kToolCompleted, &p)) events.push_back(std::move(op));
    }
    all_answered = all_answered && p.result.has_value();
  }
  if (all_answered) {
    for (auto& op : Observe(AgentEvent::Type::kStepCompleted, nullptr, step_usage_)) events.push_back(std::move(op));
  }
  // The waiter notes the bus position before the requests exist, so no answer can slip past it.
  waiter_ = NewWaiter();
  if (Status saved = WriteSnapshot(std::move(requests), std::move(events)); !saved.ok()) {
    return Error("internal", "saving a snapshot failed: " + saved.message());
  }
  return std::nullopt;
}

Result<bool> AgentRun::CollectToolResults() {
  std::map<std::string, std::string> waiting;  // request id -> the tool asked
  bool awaits_user = false;
  for (const auto& p : state_.pending) {
    if (p.result || p.request_id.empty()) continue;
    if (options_.user_input && p.call.name == kUserInputTool) {
      awaits_user = true;
    } else {
      // A sub-agent answers as itself (agent.response.v1's agent_id).
      waiting.emplace(p.request_id, IsDelegation(p.call) ? DelegatedAgent(p.call.arguments) : p.call.name);
    }
  }
  auto answered = [&](std::vector<store::WriteOp> events, const PendingCall& call) {
    for (auto& op : Observe(AgentEvent::Type::kToolCompleted, &call)) events.push_back(std::move(op));
    bool step_done = std::all_of(state_.pending.begin(), state_.pending.end(), [](const PendingCall& p) { return p.result.has_value(); });
    if (step_done) {
      for (auto& op : Observe(AgentEvent::Type::kStepCompleted, nullptr, step_usage_)) events.push_back(std::move(op));
    }
    return events;
  };
  // The answer to a question is stored by the session before the run resumes.
  if (awaits_user) {
    for (auto& p : state_.pending) {
      if (p.result || p.call.name != kUserInputTool) continue;
      CAIRN_ASSIGN_OR_RETURN(auto answer, ResponseWaiter::FindStored(deps_.store, request_.trigger_event.owner_id,
                                                                          p.request_id, std::string(kUserInputTool)));
      if (!answer) continue;
      p.result = ToolResultText(*answer);
      CAIRN_RETURN_IF_ERROR(WriteSnapshot({}, answered({}, p)));
    }
  }
  blocked_.clear();
  if (!waiting.empty()) {
    // A resumed run may wait for requests written before the crash: their answers may be stored.
    bool look_in_store = !waiter_;
    if (!waiter_) waiter_ = NewWaiter();
    // A sub-agent of a session's tree may stop to ask the user: its task record says so (waiting).
    bool watch_tasks = WatchesTasks();
    if (watch_tasks) {
      waiter_->InterruptOn([tag = "parent:" + execution_id_](const model::Event& event) {
        return event.type == "breadcrumb.updated" && event.schema_name == model::kAgentTaskSchema &&
               std::find(event.tags.begin(), event.tags.end(), tag) != event.tags.end();
      });
    }
    Status saving = Status::Ok();
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(def_.tool_timeout_ms);
    std::set<std::string> unanswered;
    for (bool first = true;; first = false) {
      // An orchestrator looks at its tasks before it waits: one may wait for the user already.
      auto until = first && watch_tasks ? std::chrono::steady_clock::now() : deadline;
      CAIRN_ASSIGN_OR_RETURN(
        unanswered,
        waiter_->Wait(waiting, first && look_in_store, until, request_.cancelled,
                      [&](const std::string& id, const json::object& response) {
                        for (auto& p : state_.pending) {
                          if (p.request_id != id) continue;
                          if (!IsDelegation(p.call)) {
                            p.result = ToolResultText(response);
                            if (saving.ok()) saving = WriteSnapshot({}, answered({}, p));
                            continue;
                          }
                          p.result = DelegateResultText(response);
                          auto task_end = TaskEnd(p, response);
                          if (!task_end.ok()) {
                            if (saving.ok()) saving = task_end.status();
                            continue;
                          }
                          if (saving.ok()) saving = WriteSnapshot({}, answered(std::move(task_end).value(), p));
                        }
                      }));
      CAIRN_RETURN_IF_ERROR(saving);
      if (request_.cancelled) return Status::Unavailable("cancelled");
      if (unanswered.empty() || !watch_tasks) break;
      // Every open task waits for the user (or the time is up): this run waits for them too.
      CAIRN_RETURN_IF_ERROR(FindBlocked(unanswered));
      bool others = std::any_of(unanswered.begin(), unanswered.end(), [&](const std::string& id) { return !blocked_.count(id); });
      if (!others || std::chrono::steady_clock::now() >= deadline) break;
      for (auto it = waiting.begin(); it != waiting.end();) it = unanswered.count(it->first) ? std::next(it) : waiting.erase(it);
    }
    for (auto& p : state_.pending) {
      if (!p.result && unanswered.count(p.request_id) && !blocked_.count(p.request_id)) {
        std::vector<store::WriteOp> task_end;
        if (IsDelegation(p.call)) {
          // The task is given up: its sub-agent (and its subtree) stops, its record says so.
          std::string message = "the sub-agent " + DelegatedAgent(p.call.arguments) + " did not answer within " +
                                std::to_string(def_.tool_timeout_ms) + " ms (tool_timeout_ms); it was cancelled";
          p.result = ErrorText("timeout", message);
          json::object given_up = ErrorResponse("timeout", message);
          if (std::string child = CancelChild(p); !child.empty()) given_up["execution_id"] = child;
          CAIRN_ASSIGN_OR_RETURN(task_end, TaskEnd(p, given_up));
        } else {
          p.result = ErrorText("timeout", "no response from " + p.call.name + " within " +
                                              std::to_string(def_.tool_timeout_ms) + " ms");
        }
        CAIRN_RETURN_IF_ERROR(WriteSnapshot({}, answered(std::move(task_end), p)));
      }
    }
  }
  waiter_.reset();
  for (const auto& p : state_.pending) {
    if (!p.result) return false;  // a question for the user (its own or a sub-agent's) is open: pause
  }
  for (auto& p : state_.pending) {
    state_.messages.push_back(llm::ChatMessage{"tool", *p.result, true, {}, p.call.id});
  }
  state_.pending.clear();
  return true;
}

json::value AgentRun::ParentOrNull() const {
  const std::string& parent = request_.lineage.parent_execution_id;
  return parent.empty() ? json::value(nullptr) : json::value(parent);
}

bool AgentRun::IsDelegation(const llm::ToolCallRequest& call) const {
  return !def_.agents.empty() && call.name == kDelegateTool;
}

std::unique_ptr<ResponseWaiter> AgentRun::NewWaiter() const {
  if (def_.agents.empty()) return std::make_unique<ResponseWaiter>(deps_.store, deps_.bus, request_.trigger_event.owner_id);
  return std::make_unique<ResponseWaiter>(deps_.store, deps_.bus, request_.trigger_event.owner_id,
                                          std::vector<ResponseKind>{kToolResponses, kAgentResponses});
}

Result<std::vector<store::WriteOp>> AgentRun::TaskEnd(const PendingCall& call, const json::object& response) {
  // The sub-agent's tokens count against this run's budget: the tree shares it.
  const json::value* usage = response.if_contains("usage");
  if (usage && usage->is_object()) {
    auto at = [&](std::string_view key) {
      const json::value* v = usage->as_object().if_contains(key);
      return v && v->is_int64() ? v->as_int64() : 0;
    };
    state_.usage.prompt += at("prompt");
    state_.usage.completion += at("completion");
    state_.usage.total += at("total");
    if (at("total") > 0) state_.call_counts[std::string(kDelegatedTokensKey)] += at("total");
  }
  std::string task_id = call.request_id.substr(std::min(call.request_id.size(), execution_id_.size() + 1));
  CAIRN_ASSIGN_OR_RETURN(auto update, TaskEndUpdate(deps_.store, request_.trigger_event.owner_id, execution_id_,
                                                    task_id, response, *call.result));
  std::vector<store::WriteOp> ops;
  if (update) ops.push_back(std::move(*update));
  return ops;
}

int64_t AgentRun::TokenBudget() const { return TreeTokenBudget(def_, request_.trigger_event, request_.lineage); }

void AgentRun::MarkTaskRunning() {
  const json::value* request_id = request_.trigger_event.context.is_object()
                                      ? request_.trigger_event.context.as_object().if_contains("request_id")
                                      : nullptr;
  if (!request_id || !request_id->is_string() || request_.lineage.parent_execution_id.empty()) return;
  const std::string& owner = request_.trigger_event.owner_id;
  auto update = TaskStartUpdate(deps_.store, owner, request_.lineage, std::string(request_id->as_string()), execution_id_);
  if (!update.ok() || !*update) return;
  model::WriteContext ctx{owner, actor_, true};
  std::vector<store::WriteOp> ops{std::move(**update)};
  // Best effort: a task the delegating run ends at the same moment keeps its end.
  auto written = RetryWhenBusy(request_.cancelled, [&] { return deps_.store.Apply(ctx, ops); });
  if (!written.ok()) CAIRN_LOG_INFO("agent {}: marking its task running: {}", def_.agent_id, written.status().message());
}

json::object AgentRun::ErrorResponse(const std::string& code, const std::string& message) {
  return json::object{{"status", "error"}, {"error", json::object{{"code", code}, {"message", message}}}};
}

std::string AgentRun::CancelChild(const PendingCall& call) {
  // The delegation's message triggered the sub-agent: the one this run wrote for the request.
  model::BreadcrumbQuery query;
  query.schema_name = std::string(model::kUserMessageSchema);
  query.all_tags = {"request:" + call.request_id, "delegated"};
  query.limit = 8;
  const std::string& owner = request_.trigger_event.owner_id;
  auto found = deps_.store.List(owner, query);
  if (!found.ok()) return "";
  std::string child;
  for (const auto& message : found->items) {
    if (message.created_by != actor_) continue;
    if (deps_.runs) deps_.runs->CancelTrigger(message.id);
    auto id = DelegatedExecutionId(deps_.store, owner, DelegatedAgent(call.call.arguments), message.id);
    if (id.ok()) child = *id;
  }
  return child;
}

bool AgentRun::WatchesTasks() const { return !def_.agents.empty() && !request_.lineage.session_id.empty(); }

Status AgentRun::FindBlocked(const std::set<std::string>& unanswered) {
  blocked_.clear();
  const std::string& owner = request_.trigger_event.owner_id;
  for (const auto& p : state_.pending) {
    if (p.result || !unanswered.count(p.request_id) || !IsDelegation(p.call)) continue;
    std::string task_id = p.request_id.substr(std::min(p.request_id.size(), execution_id_.size() + 1));
    CAIRN_ASSIGN_OR_RETURN(auto awaiting, TaskAwaitingUser(deps_.store, owner, execution_id_, task_id));
    if (!awaiting) continue;
    // Answered already (the sub-agent goes on when it is run again): not waiting any more.
    std::string question = StringMember(*awaiting, "request_id");
    CAIRN_ASSIGN_OR_RETURN(auto answer, ResponseWaiter::FindStored(deps_.store, owner, question, std::string(kUserInputTool)));
    if (!answer) blocked_[p.request_id] = std::move(*awaiting);
  }
  return Status::Ok();
}

bool AgentRun::ReadsDelegationResults() const {
  if (state_.messages.empty() || state_.messages.back().role != "tool") return false;
  for (auto it = state_.messages.rbegin(); it != state_.messages.rend(); ++it) {
    if (it->role != "assistant") continue;
    return std::any_of(it->tool_calls.begin(), it->tool_calls.end(), [&](const auto& call) { return IsDelegation(call); });
  }
  return false;
}

void AgentRun::CloseOpenTasks(const AgentOutcome& outcome) {
  bool cancelled = outcome.code == "cancelled";
  std::string code = cancelled ? "cancelled" : "parent_failed";
  std::string message = cancelled ? "the delegating execution was cancelled"
                                  : "the delegating execution ended without taking the answer: " + outcome.message;
  std::vector<store::WriteOp> ops;
  for (const auto& p : outcome.state.pending) {
    if (p.result || p.request_id.empty() || !IsDelegation(p.call)) continue;
    json::object given_up = ErrorResponse(code, message);
    if (std::string child = CancelChild(p); !child.empty()) given_up["execution_id"] = child;
    std::string task_id = p.request_id.substr(std::min(p.request_id.size(), execution_id_.size() + 1));
    auto update = TaskEndUpdate(deps_.store, request_.trigger_event.owner_id, execution_id_, task_id, given_up,
                                ErrorText(code, message));
    if (update.ok() && *update) ops.push_back(std::move(**update));
  }
  if (ops.empty()) return;
  // The run's own cancel flag is set: these last writes are retried on their own.
  std::atomic<bool> never{false};
  model::WriteContext ctx{request_.trigger_event.owner_id, actor_, true};
  auto written = RetryWhenBusy(never, [&] { return deps_.store.Apply(ctx, ops); });
  if (!written.ok()) CAIRN_LOG_WARN("agent {}: closing the open tasks of {} failed: {}", def_.agent_id, execution_id_,
                                    written.status().message());
}

AgentOutcome AgentRun::Paused() {
  json::object awaiting_input;
  std::vector<std::string> awaiting;
  for (const auto& p : state_.pending) {
    if (p.result || p.request_id.empty()) continue;
    awaiting.push_back(p.request_id);
    if (!awaiting_input.empty() || !options_.user_input || p.call.name != kUserInputTool) continue;
    auto args = ParseJson(p.call.arguments, kMaxModelJsonDepth);
    const json::value* asked = args.ok() && args->is_object() ? args->as_object().if_contains("question") : nullptr;
    awaiting_input = json::object{{"request_id", p.request_id},
                                  {"question", asked && asked->is_string() ? asked->as_string() : json::string(p.call.arguments)},
                                  {"agent_id", def_.agent_id},
                                  {"execution_id", execution_id_}};
  }
  // Else a sub-agent's question: the first open task that waits for the user.
  for (const auto& p : state_.pending) {
    if (!awaiting_input.empty()) break;
    if (auto it = blocked_.find(p.request_id); !p.result && it != blocked_.end()) awaiting_input = it->second;
  }
  std::string question = StringMember(awaiting_input, "question");
  AgentOutcome outcome = Error("", question);  // takes the state: read it first
  outcome.kind = AgentOutcome::Kind::kPaused;
  outcome.question = std::move(question);
  outcome.input_request_id = StringMember(awaiting_input, "request_id");
  outcome.awaiting_input = std::move(awaiting_input);
  outcome.awaiting = std::move(awaiting);
  return outcome;
}

std::optional<AgentOutcome> AgentRun::FinishAnswer(const std::string& content) {
  AgentOutcome outcome;
  outcome.message = content;
  outcome.model = reported_model_.empty() ? def_.model : reported_model_;
  if (def_.output) {
    auto parsed = ParseJsonAnswer(content);
    Status valid = parsed.ok() ? model::ValidateAgainstSchema(def_.output->schema, *parsed, "answer") : parsed.status();
    if (valid.ok() && !parsed->is_object()) valid = Status::InvalidArgument("the answer must be a JSON object");
    if (!valid.ok()) {
      if (state_.repair_asked) {
        return Error("invalid_output", "the model's answer does not satisfy the output schema of " + def_.agent_id +
                                           " after a repair round: " + valid.message());
      }
      state_.repair_asked = true;
      state_.messages.push_back(llm::ChatMessage{
          "user",
          "Your answer does not satisfy the required output: " + valid.message() +
              ". Reply with only one JSON object that satisfies this JSON Schema: " +
              json::serialize(def_.output->schema),
          true, {}, ""});
      if (Status saved = WriteSnapshot({}); !saved.ok()) return Error("internal", "saving a snapshot failed: " + saved.message());
      return std::nullopt;
    }
    outcome.output = std::move(parsed).value();
  }
  outcome.final_snapshot = final_snapshot_;
  outcome.state = std::move(state_);
  return outcome;
}

AgentOutcome AgentRun::Execute() {
  AgentOutcome outcome = Loop();
  // A run that stops with tasks handed out cancels them: nobody takes their answers any more.
  if (outcome.kind == AgentOutcome::Kind::kError || outcome.kind == AgentOutcome::Kind::kStopped) CloseOpenTasks(outcome);
  return outcome;
}

AgentOutcome AgentRun::Loop() {
  if (!deps_.resolve_model) return Error("provider_not_configured", "no LLM provider is configured");
  Result<ModelTarget> target = deps_.resolve_model(def_.model, !def_.api_key_secret.empty());
  if (!target.ok()) {
    bool unconfigured = target.status().code() == StatusCode::kFailedPrecondition;
    return Error(unconfigured ? "provider_not_configured" : "invalid_model", target.status().message());
  }
  if (Status loaded = LoadOrStart(); !loaded.ok()) return Error("internal", "loading the snapshot failed: " + loaded.message());
  MarkTaskRunning();
  std::vector<llm::ToolSpec> tools = LoadTools();
  while (true) {
    if (request_.cancelled) return Error("cancelled", "the execution was cancelled");
    if (!state_.pending.empty()) {
      auto collected = CollectToolResults();
      if (!collected.ok()) {
        return request_.cancelled ? Error("cancelled", "the execution was cancelled")
                                  : Error("internal", "waiting for tool responses failed: " + collected.status().message());
      }
      if (!*collected) return Paused();
    } else if (!state_.messages.empty() && state_.messages.back().role == "assistant") {
      // Resumed after the final reply was recorded: answer with it, without asking again.
      if (auto done = FinishAnswer(state_.messages.back().content)) return std::move(*done);
      continue;
    }
    if (state_.step >= def_.max_iterations) {
      return Stopped("max_iterations", "I stopped after " + std::to_string(state_.step) +
                                           " model calls without a final answer (max_iterations is " +
                                           std::to_string(def_.max_iterations) + ").");
    }
    if (int64_t budget = TokenBudget(); state_.usage.total >= budget) {
      bool tree = budget < def_.max_tokens_per_execution;
      // The sub-agents spent what was left: this run's model still reads their results (once).
      bool own_left = state_.usage.total - CountOf(state_, kDelegatedTokensKey) < budget;
      if (own_left && CountOf(state_, kBudgetGraceKey) == 0 && ReadsDelegationResults()) {
        state_.call_counts[std::string(kBudgetGraceKey)] = 1;
        CAIRN_LOG_INFO("agent {}: execution {} reads its sub-agents' results past its budget", def_.agent_id, execution_id_);
      } else {
        return Stopped("token_budget", "I stopped: this execution used " + std::to_string(state_.usage.total) +
                                           " tokens, its budget is " + std::to_string(budget) +
                                           (tree ? " (what was left of its tree's budget)." : "."));
      }
    }
    const std::string& tenant = request_.trigger_event.owner_id;
    if (deps_.quota) {
      // The tenant's daily token quota: a budget guard before every model call (and its step).
      if (Status allowed = deps_.quota->Check(tenant); !allowed.ok()) return Error("quota_exceeded", allowed.message());
    }
    bool announced = state_.step == 0 && options_.first_step_announced;
    if (auto started = announced ? std::vector<store::WriteOp>{} : Observe(AgentEvent::Type::kStepStarted);
        !started.empty()) {
      model::WriteContext ctx{request_.trigger_event.owner_id, actor_, true};
      auto written = RetryWhenBusy(request_.cancelled, [&] { return deps_.store.Apply(ctx, started); });
      if (!written.ok()) return Error("internal", "recording the step failed: " + written.status().message());
    }
    auto reply = CallModel(*target, tools);
    if (!reply.ok()) {
      if (request_.cancelled) return Error("cancelled", "the execution was cancelled");
      const std::string& reason = reply.status().reason();
      return Error(reason.empty() ? "llm_error" : reason, reply.status().message());
    }
    if (deps_.quota) {
      // Counted when the reply arrives: those tokens are spent, whatever happens to the run next.
      if (Status counted = deps_.quota->Record(tenant, reply->usage.total); !counted.ok()) {
        CAIRN_LOG_WARN("agent {}: counting {} tokens for tenant {} failed: {}", def_.agent_id, reply->usage.total, tenant,
                       counted.message());
      }
    }
    if (auto done = TakeReply(std::move(reply).value())) return std::move(*done);
  }
}

}  // namespace cairn::exec
