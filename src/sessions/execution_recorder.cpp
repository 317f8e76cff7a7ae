#include "sessions/execution_recorder.h"

#include <boost/json/serialize.hpp>

#include "base/log.h"
#include "base/time_format.h"
#include "exec/agents/agent_state.h"
#include "exec/context_assembler.h"
#include "exec/context_budget.h"
#include "exec/execution_record.h"
#include "exec/retry.h"
#include "model/agent_definition.h"
#include "sessions/records.h"
#include "sessions/session_service.h"

namespace cairn::sessions {
namespace json = boost::json;
namespace {

constexpr const char* kActor = "system:sessions";
constexpr size_t kHistoryMessages = 20;

// A conversation record as the prompt renders it (exec/agents/prompt.h).
json::object TurnRecord(const json::object& message) {
  bool user = Str(message, "role") == "user";
  return json::object{
      {"id", Str(message, "id")},
      {"schema_name", user ? model::kUserMessageSchema : model::kAgentResponseSchema},
      {"context", json::object{{user ? "content" : "message", Str(message, "content")}}}};
}

json::value OrNull(const std::string& text) { return text.empty() ? json::value(nullptr) : json::value(text); }

}  // namespace

json::object UsageJson(const exec::llm::Usage& usage) {
  return exec::TokenUsageJson(exec::TokenUsage{usage.prompt, usage.completion, usage.total});
}

ExecutionRecorder::ExecutionRecorder(store::Store& store, UuidV7Generator& ids, const Clock& clock,
                                     const std::atomic<bool>& stopping, std::string owner_id, std::string session_id,
                                     std::string execution_id)
    : store_(store),
      ids_(ids),
      clock_(clock),
      stopping_(stopping),
      owner_id_(std::move(owner_id)),
      session_id_(std::move(session_id)),
      execution_id_(std::move(execution_id)),
      ctx_{owner_id_, kActor, true} {}

store::WriteOp ExecutionRecorder::Info(const std::string& text, const std::string& event_type, json::object metadata) {
  return store::WriteOp::Create(
      MessageDraft(session_id_, ids_.Next(), "info", text, execution_id_, event_type, std::move(metadata)));
}

Status ExecutionRecorder::Move(const std::string& to, json::object changes, std::vector<store::WriteOp> also,
                               bool totals) {
  changes["status"] = to;
  for (int attempt = 0;; ++attempt) {
    CAIRN_ASSIGN_OR_RETURN(model::Breadcrumb current,
                           FindAt(store_, owner_id_, kExecutionSchema, exec::ExecutionRecordPath(execution_id_), "execution"));
    std::string from = Str(current.context.as_object(), "status");
    if (!exec::CanMoveExecution(from, to)) return Status::Conflict("execution " + execution_id_ + " is " + from);
    std::vector<store::WriteOp> ops;
    ops.push_back(store::WriteOp::Update(current.id, ExecutionPatch(current, changes), current.version));
    for (const auto& op : also) ops.push_back(op);
    if (totals) {
      json::object ended = current.context.as_object();
      for (const auto& [key, value] : changes) ended[key] = value;
      auto session_op = SessionTotals(ended);
      if (session_op.ok()) {
        ops.push_back(std::move(session_op).value());
      } else if (session_op.status().code() != StatusCode::kNotFound) {  // a deleted session has no totals
        return session_op.status();
      }
    }
    auto written = exec::RetryWhenBusy(stopping_, [&] { return store_.Apply(ctx_, ops); });
    if (written.ok()) return Status::Ok();
    if (written.status().code() != StatusCode::kFailedPrecondition || attempt == 4) return written.status();
  }
}

void ExecutionRecorder::Fail(const std::string& code, const std::string& why, const exec::llm::Usage& usage) {
  std::vector<store::WriteOp> also;
  also.push_back(Info("Execution failed: " + why, "execution.failed", json::object{{"code", code}}));
  Status moved = Move("failed",
                      json::object{{"error", json::object{{"code", code}, {"message", why}}},
                                   {"completed_at", FormatRfc3339Micros(clock_.NowMicros())},
                                   {"token_usage", UsageJson(usage)}},
                      std::move(also), /*totals=*/true);
  if (!moved.ok()) CAIRN_LOG_WARN("session execution {}: recording the failure failed: {}", execution_id_, moved.message());
}

Status ExecutionRecorder::Complete(const exec::AgentOutcome& outcome, const json::object& fields,
                                   const std::string& agent_id, const model::Event& trigger_event) {
  const exec::AgentState& state = outcome.state;
  std::string policy = Str(fields, "snapshot_policy");
  std::string final_id = state.last_snapshot_id;
  if (!outcome.final_snapshot) {  // the run's last snapshot is not the whole final state: write it
    model::BreadcrumbDraft snapshot;
    snapshot.schema_name = std::string(kSnapshotSchema);
    snapshot.title = "agent " + agent_id + " final";
    snapshot.path = "snapshots/" + execution_id_ + "/final";
    snapshot.tags = {"snapshot", "execution:" + execution_id_, "agent:" + agent_id, "final"};
    snapshot.trace = exec::ChildTrace(trigger_event);
    snapshot.context = json::object{{"agent_execution_id", execution_id_},
                                    {"execution_path", exec::ExecutionRecordPath(execution_id_)},
                                    {"parent_snapshot_id", OrNull(state.last_snapshot_id)},
                                    {"agent_id", agent_id},
                                    {"agent_name", agent_id},
                                    {"step_number", state.step},
                                    {"is_final", true},
                                    {"debug_mode", policy == "debug"},
                                    {"state", exec::StateToJson(state)}};
    auto created = store_.Create(ctx_, snapshot, "");
    Result<model::Breadcrumb> written =
        created.ok() ? Result<model::Breadcrumb>(created->breadcrumb)
                     : FindAt(store_, owner_id_, kSnapshotSchema, *snapshot.path, "final snapshot");  // before a crash
    CAIRN_RETURN_IF_ERROR(written.status());
    final_id = written->id;
  }
  std::string answer = outcome.output.is_object() ? json::serialize(outcome.output) : outcome.message;
  json::object output{{"content", answer}};
  if (outcome.output.is_object()) output["structured"] = outcome.output;
  if (!outcome.stop_reason.empty()) output["stop_reason"] = outcome.stop_reason;
  json::object end{{"step_count", state.step},
                   {"token_usage", UsageJson(state.usage)},
                   {"last_snapshot_id", OrNull(final_id)},
                   {"completed_at", FormatRfc3339Micros(clock_.NowMicros())},
                   {"output", std::move(output)}};
  std::vector<store::WriteOp> also;
  also.push_back(store::WriteOp::Create(MessageDraft(session_id_, ids_.Next(), "assistant", answer, execution_id_, "")));
  also.push_back(Info("Execution completed", "execution.completed",
                      json::object{{"step_count", state.step}, {"token_usage", UsageJson(state.usage)}}));
  if (policy == "final") {
    // Step snapshots served the run's durability; the final one is what this policy keeps.
    model::BreadcrumbQuery steps;
    steps.schema_name = std::string(kSnapshotSchema);
    steps.all_tags = {"execution:" + execution_id_};
    steps.limit = 1000;
    auto found = store_.List(owner_id_, steps);
    if (found.ok()) {
      for (const auto& crumb : found->items) {
        if (crumb.id != final_id) also.push_back(store::WriteOp::Delete(crumb.id));
      }
    }
  }
  return Move("completed", std::move(end), std::move(also), /*totals=*/true);
}

Result<store::WriteOp> ExecutionRecorder::SessionTotals(const json::object& ended) {
  CAIRN_ASSIGN_OR_RETURN(model::Breadcrumb session,
                         FindAt(store_, owner_id_, kSessionSchema, SessionPath(session_id_), "session"));
  json::object context = session.context.as_object();
  context["last_execution_id"] = ended.at("id");
  if (ended.contains("last_snapshot_id") && !ended.at("last_snapshot_id").is_null()) {
    context["last_snapshot_id"] = ended.at("last_snapshot_id");
  }
  auto number = [](const json::value* usage, const char* key) -> int64_t {
    const json::value* v = usage && usage->is_object() ? usage->as_object().if_contains(key) : nullptr;
    return v && v->is_int64() ? v->as_int64() : 0;
  };
  const json::value* before = context.if_contains("token_usage");
  const json::value* added = ended.if_contains("token_usage");
  json::object totals;
  for (const char* key : {"input", "output", "total"}) totals[key] = number(before, key) + number(added, key);
  context["token_usage"] = std::move(totals);
  model::BreadcrumbPatch patch;
  patch.context.Set(std::move(context));
  return store::WriteOp::Update(session.id, std::move(patch), session.version);
}

Result<RunInput> LoadRunInput(store::Store& store, const std::string& owner_id, const json::object& execution,
                              const model::Limits& limits, const search::Searcher* searcher,
                              const exec::ReaderFor& reader_for) {
  std::string execution_id = Str(execution, "id");
  std::string session_id = Str(execution, "session_id");
  CAIRN_ASSIGN_OR_RETURN(model::Breadcrumb session,
                         FindAt(store, owner_id, kSessionSchema, SessionPath(session_id), "session " + session_id));
  const json::object& session_fields = session.context.as_object();
  std::string agent_id = Str(session_fields, "agent_id");
  auto agent_record = FindAt(store, owner_id, model::kAgentSchema, model::AgentPath(agent_id), "agent");
  if (!agent_record.ok()) {
    return Status::NotFound("the agent " + agent_id + " does not exist (define it as an agent.def.v1 record at agents/" +
                            agent_id + ")");
  }
  auto definition = model::ParseAgentDefinition(agent_record->context, limits);
  if (!definition.ok()) return Status::InvalidArgument("the agent " + agent_id + " is not usable: " + definition.status().message());
  RunInput input{std::move(definition).value(), agent_record->id, agent_record->version, {}, {}, {}, {}};

  std::string message_id;
  if (const json::value* asked = execution.if_contains("input"); asked && asked->is_object()) {
    message_id = Str(asked->as_object(), "message_id");
  }
  // The execution's own message, by its execution tag (with many messages queued after it, it
  // may be older than the history window).
  model::BreadcrumbQuery own_query;
  own_query.schema_name = std::string(kMessageSchema);
  own_query.all_tags = {"execution:" + execution_id, "role:user"};
  own_query.include_context = true;
  own_query.order = model::SortOrder::kOldestFirst;
  own_query.limit = 1;
  CAIRN_ASSIGN_OR_RETURN(store::Page own, store.List(owner_id, own_query));
  if (own.items.empty() || !own.items.front().context.is_object() ||
      Str(own.items.front().context.as_object(), "id") != message_id) {
    return Status::NotFound("the execution's message " + message_id + " was not found");
  }
  const model::Breadcrumb& message = own.items.front();
  input.trigger = TurnRecord(message.context.as_object());
  input.trigger["title"] = message.title;
  model::Event& event = input.trigger_event;
  event.breadcrumb_id = message.id;
  event.title = message.title;
  event.trace = message.trace;
  event.owner_id = owner_id;
  event.type = "breadcrumb.created";
  event.schema_name = std::string(kMessageSchema);
  event.tags = {SessionTag(session_id)};
  event.context = input.trigger.at("context");

  // The history, newest first: user messages newer than this one belong to executions queued
  // after it; answers of earlier executions may be newer (written while this one waited).
  model::BreadcrumbQuery history_query;
  history_query.schema_name = std::string(kMessageSchema);
  history_query.all_tags = {TurnTag(session_id)};
  history_query.include_context = true;
  history_query.limit = 2 * kHistoryMessages + 8;
  CAIRN_ASSIGN_OR_RETURN(store::Page recent, store.List(owner_id, history_query));
  json::array history;
  bool seen_trigger = false;
  for (const auto& crumb : recent.items) {
    if (!crumb.context.is_object()) continue;
    const json::object& turn = crumb.context.as_object();
    if (Str(turn, "id") == message_id) {
      seen_trigger = true;
    } else if ((seen_trigger || Str(turn, "role") == "assistant") && history.size() < kHistoryMessages) {
      history.push_back(TurnRecord(turn));
    }
  }
  // What the agent subscribed to, as for a bus-triggered run; then what the session knows.
  input.context =
      exec::AssembleContext(store, owner_id, event, input.trigger, input.definition.subscriptions, searcher,
                            exec::ContextAccess{reader_for ? reader_for(owner_id, message.created_by) : std::nullopt,
                                                input.definition.allow_secret_context});
  if (!Str(session_fields, "initial_context_url").empty()) {
    input.context["initial_context"] =
        json::object{{"title", "The page the session started from"},
                     {"context", json::object{{"url", Str(session_fields, "initial_context_url")}}}};
  }
  const json::object& asked = message.context.as_object();
  json::object about;
  for (const char* key : {"context_url", "related_type", "related_id"}) {
    if (!Str(asked, key).empty()) about[key == std::string_view("context_url") ? "url" : key] = Str(asked, key);
  }
  if (!about.empty()) {
    input.context["message_context"] =
        json::object{{"title", "What the message is about"}, {"context", std::move(about)}};
  }
  if (!history.empty()) input.context["history"] = std::move(history);
  // The same budget as a bus-triggered run, over the whole prompt context.
  input.context_dropped = exec::ApplyContextBudget(input.context, input.definition.subscriptions,
                                                   input.definition.context_budget_tokens.value_or(0));
  return input;
}

}  // namespace cairn::sessions
