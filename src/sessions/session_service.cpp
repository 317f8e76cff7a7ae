#include "sessions/session_service.h"

#include <algorithm>
#include <boost/json/serialize.hpp>

#include "base/time_format.h"
#include "exec/agents/agent_state.h"
#include "exec/agents/delegation.h"
#include "exec/execution_index.h"
#include "model/definition_fields.h"
#include "model/tool_definition.h"
#include "sessions/records.h"

namespace cairn::sessions {
namespace json = boost::json;
namespace {

constexpr size_t kMaxIdBytes = 256;
constexpr size_t kMaxContentBytes = 256 * 1024;
constexpr size_t kMaxUrlBytes = 4096;
constexpr size_t kMaxTitleChars = 60;

Status Only(const json::object& body, std::initializer_list<std::string_view> allowed) {
  for (const auto& [key, value] : body) {
    if (std::find(allowed.begin(), allowed.end(), std::string_view(key)) == allowed.end()) {
      return Status::Validation(std::string(key), "unknown field");
    }
  }
  return Status::Ok();
}

Result<const json::object*> ObjectBody(const json::value& body) {
  if (!body.is_object()) return Status::Validation("body", "must be a JSON object");
  return &body.as_object();
}

// Copies an optional string field (null allowed) into `out`, checking its size.
Status CopyString(const json::object& body, std::string_view key, size_t max, json::object& out) {
  const json::value* v = body.if_contains(key);
  if (!v) return Status::Ok();
  if (v->is_null()) {
    out[key] = nullptr;
    return Status::Ok();
  }
  CAIRN_ASSIGN_OR_RETURN(std::string text, model::RequireString(*v, std::string(key), max));
  out[key] = text;
  return Status::Ok();
}

Status CopyEnum(const json::object& body, std::string_view key, std::initializer_list<std::string_view> allowed,
                json::object& out) {
  const json::value* v = body.if_contains(key);
  if (!v) return Status::Ok();
  if (v->is_string()) {
    for (auto option : allowed) {
      if (v->as_string() == option) {
        out[key] = *v;
        return Status::Ok();
      }
    }
  }
  std::string list;
  for (auto option : allowed) list += (list.empty() ? "" : ", ") + std::string(option);
  return Status::Validation(std::string(key), "must be one of " + list);
}

Status CopyObject(const json::object& body, std::string_view key, json::object& out) {
  const json::value* v = body.if_contains(key);
  if (!v) return Status::Ok();
  if (!v->is_object()) return Status::Validation(std::string(key), "must be an object");
  out[key] = *v;
  return Status::Ok();
}

Status CheckUrl(const json::object& fields, std::string_view key) {
  std::string url = Str(fields, key);
  if (url.empty()) return Status::Ok();
  if (url.rfind("http://", 0) != 0 && url.rfind("https://", 0) != 0) {
    return Status::Validation(std::string(key), "must be an http:// or https:// URL");
  }
  return Status::Ok();
}

std::string TitleFrom(const std::string& content) {
  // Cut at a UTF-8 character boundary.
  size_t n = 0, chars = 0;
  while (n < content.size() && chars < kMaxTitleChars) {
    unsigned char c = static_cast<unsigned char>(content[n]);
    n += c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
    ++chars;
  }
  std::string title = content.substr(0, std::min(n, content.size()));
  for (char& c : title) {
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  }
  return title.empty() ? "New session" : title;
}

json::value Usage0() { return json::object{{"input", 0}, {"output", 0}, {"total", 0}}; }

// A message body {content, metadata?, related_type?, related_id?, context_url?}, checked.
struct MessageInput {
  std::string text;
  json::object metadata;
  json::object extra;  // related_type, related_id, context_url
};

Result<MessageInput> ParseMessageBody(const json::value& body) {
  CAIRN_ASSIGN_OR_RETURN(const json::object* object, ObjectBody(body));
  CAIRN_RETURN_IF_ERROR(Only(*object, {"content", "metadata", "related_type", "related_id", "context_url"}));
  const json::value* content = object->if_contains("content");
  if (!content || !content->is_string() || content->as_string().empty() ||
      content->as_string().size() > kMaxContentBytes) {
    return Status::Validation("content", "is required: a string of 1 to " + std::to_string(kMaxContentBytes) + " bytes");
  }
  json::object extra;
  CAIRN_RETURN_IF_ERROR(CopyString(*object, "related_type", kMaxIdBytes, extra));
  CAIRN_RETURN_IF_ERROR(CopyString(*object, "related_id", kMaxIdBytes, extra));
  CAIRN_RETURN_IF_ERROR(CopyString(*object, "context_url", kMaxUrlBytes, extra));
  CAIRN_RETURN_IF_ERROR(CheckUrl(extra, "context_url"));
  json::object metadata;
  if (const json::value* m = object->if_contains("metadata")) {
    if (!m->is_object()) return Status::Validation("metadata", "must be an object");
    metadata = m->as_object();
  }
  return MessageInput{std::string(content->as_string()), std::move(metadata), std::move(extra)};
}

// The facade writes session records as cairn itself, in the caller's name (created_by).
model::WriteContext Ctx(const Caller& caller) { return model::WriteContext{caller.owner_id, caller.actor, true}; }

}  // namespace

SessionService::SessionService(store::Store& store, const Clock& clock, model::Limits limits)
    : store_(store), clock_(clock), limits_(limits), ids_(clock) {}

std::mutex& SessionService::SessionLock(const std::string& session_id) {
  return session_locks_[std::hash<std::string>{}(session_id) % session_locks_.size()];
}

Result<model::BreadcrumbDraft> SessionService::SessionDraft(const json::object& body, const std::string& id,
                                                           const std::string& default_title) {
  CAIRN_RETURN_IF_ERROR(Only(body, {"title", "user_id", "agent_id", "related_type", "related_id",
                                    "initial_context_url", "metadata", "policy", "snapshot_policy"}));
  json::object fields{{"id", id},
                      {"user_id", nullptr},
                      {"agent_id", std::string(kDefaultAgent)},
                      {"title", default_title},
                      {"status", "active"},
                      {"related_type", nullptr},
                      {"related_id", nullptr},
                      {"initial_context_url", nullptr},
                      {"metadata", json::object{}},
                      {"policy", "enqueue"},
                      {"snapshot_policy", "final"},
                      {"last_execution_id", nullptr},
                      {"last_snapshot_id", nullptr},
                      {"token_usage", Usage0()}};
  CAIRN_RETURN_IF_ERROR(CopyString(body, "title", limits_.max_title_bytes, fields));
  CAIRN_RETURN_IF_ERROR(CopyString(body, "user_id", kMaxIdBytes, fields));
  CAIRN_RETURN_IF_ERROR(CopyString(body, "related_type", kMaxIdBytes, fields));
  CAIRN_RETURN_IF_ERROR(CopyString(body, "related_id", kMaxIdBytes, fields));
  CAIRN_RETURN_IF_ERROR(CopyString(body, "initial_context_url", kMaxUrlBytes, fields));
  CAIRN_RETURN_IF_ERROR(CheckUrl(fields, "initial_context_url"));
  CAIRN_RETURN_IF_ERROR(CopyObject(body, "metadata", fields));
  CAIRN_RETURN_IF_ERROR(CopyEnum(body, "policy", {"enqueue", "reject", "interrupt"}, fields));
  CAIRN_RETURN_IF_ERROR(CopyEnum(body, "snapshot_policy", {"final", "steps", "debug"}, fields));
  if (const json::value* agent = body.if_contains("agent_id")) {
    if (!agent->is_string() || !model::IsValidDefinitionName(agent->as_string())) {
      return Status::Validation("agent_id", "must be an agent id (1 to 64 of A-Z a-z 0-9 _ -)");
    }
    fields["agent_id"] = *agent;
  }
  if (!fields.at("title").is_string() || fields.at("title").as_string().empty()) fields["title"] = default_title;
  model::BreadcrumbDraft draft;
  draft.schema_name = std::string(kSessionSchema);
  draft.title = Str(fields, "title");
  draft.path = SessionPath(id);
  draft.tags = {SessionTag(id), "session"};
  draft.context = std::move(fields);
  return draft;
}

Result<json::object> SessionService::CreateSession(const Caller& caller, const json::value& body) {
  CAIRN_ASSIGN_OR_RETURN(const json::object* object, ObjectBody(body));
  CAIRN_ASSIGN_OR_RETURN(model::BreadcrumbDraft draft, SessionDraft(*object, ids_.Next(), "New session"));
  CAIRN_ASSIGN_OR_RETURN(auto created, store_.Create(Ctx(caller), draft, ""));
  return SessionView(created.breadcrumb);
}

Result<model::Breadcrumb> SessionService::LoadSession(const Caller& caller, const std::string& id) {
  if (id.empty() || id.size() > kMaxIdBytes) return Status::NotFound("session not found");
  CAIRN_ASSIGN_OR_RETURN(model::Breadcrumb session, FindAt(store_, caller.owner_id, kSessionSchema, SessionPath(id),
                                                          "session " + id));
  if (caller.only_creator && session.created_by != *caller.only_creator) {
    return Status::NotFound("session " + id + " not found");
  }
  return session;
}

Status SessionService::CheckExecutionAccess(const Caller& caller, const std::string& id) {
  if (!caller.only_creator) return Status::Ok();
  auto record = id.empty() || id.size() > kMaxIdBytes
                    ? Result<model::Breadcrumb>(Status::NotFound(""))
                    : FindAt(store_, caller.owner_id, kExecutionSchema, exec::ExecutionRecordPath(id), "execution " + id);
  if (!record.ok() && record.status().code() != StatusCode::kNotFound) return record.status();
  if (!record.ok() || record->created_by != *caller.only_creator) return Status::NotFound("execution " + id + " not found");
  return Status::Ok();
}

Result<model::Breadcrumb> SessionService::LoadExecution(const Caller& caller, const std::string& id) {
  if (id.empty() || id.size() > kMaxIdBytes) return Status::NotFound("execution not found");
  CAIRN_ASSIGN_OR_RETURN(model::Breadcrumb crumb, FindAt(store_, caller.owner_id, kExecutionSchema,
                                                        exec::ExecutionRecordPath(id), "execution " + id));
  if (caller.only_creator && crumb.created_by != *caller.only_creator) return Status::NotFound("execution " + id + " not found");
  if (std::find(crumb.tags.begin(), crumb.tags.end(), "session-execution") == crumb.tags.end()) {
    return Status::NotFound("execution " + id + " is not a session run (of those, only cancel applies)");
  }
  return crumb;
}

Result<json::object> SessionService::GetSession(const Caller& caller, const std::string& id) {
  CAIRN_ASSIGN_OR_RETURN(model::Breadcrumb crumb, LoadSession(caller, id));
  return SessionView(crumb);
}

Result<Listing> SessionService::ListSessions(const Caller& caller, const SessionFilter& filter) {
  model::BreadcrumbQuery query;
  query.schema_name = std::string(kSessionSchema);
  query.all_tags = {"session"};
  query.include_context = true;
  query.limit = filter.limit;
  query.cursor = filter.cursor;
  query.created_by = caller.only_creator;
  auto add = [&](const char* field, const std::optional<std::string>& value) {
    if (value) query.context_match.push_back(model::ContextRule{std::string("$.") + field, model::RuleOp::kEq, json::value(*value)});
  };
  add("status", filter.status);
  add("user_id", filter.user_id);
  add("agent_id", filter.agent_id);
  add("related_type", filter.related_type);
  add("related_id", filter.related_id);
  CAIRN_ASSIGN_OR_RETURN(store::Page page, store_.List(caller.owner_id, query));
  Listing out;
  for (const auto& crumb : page.items) out.items.push_back(SessionView(crumb));
  out.next_cursor = page.next_cursor;
  return out;
}

Result<json::object> SessionService::UpdateSession(const Caller& caller, const std::string& id, const json::value& body) {
  CAIRN_ASSIGN_OR_RETURN(const json::object* object, ObjectBody(body));
  CAIRN_RETURN_IF_ERROR(Only(*object, {"title", "status", "metadata"}));
  if (object->empty()) return Status::Validation("body", "names nothing to change (title, status, metadata)");
  json::object changes;
  CAIRN_RETURN_IF_ERROR(CopyString(*object, "title", limits_.max_title_bytes, changes));
  if (changes.contains("title") && (!changes.at("title").is_string() || changes.at("title").as_string().empty())) {
    return Status::Validation("title", "must be a non-empty string");
  }
  CAIRN_RETURN_IF_ERROR(CopyEnum(*object, "status", {"active", "archived", "closed"}, changes));
  CAIRN_RETURN_IF_ERROR(CopyObject(*object, "metadata", changes));
  std::lock_guard lock(SessionLock(id));
  for (int attempt = 0;; ++attempt) {
    CAIRN_ASSIGN_OR_RETURN(model::Breadcrumb crumb, LoadSession(caller, id));
    json::object context = crumb.context.as_object();
    for (const auto& [key, value] : changes) context[key] = value;
    model::BreadcrumbPatch patch;
    if (changes.contains("title")) patch.title.Set(Str(context, "title"));
    patch.context.Set(std::move(context));
    auto updated = store_.Update(Ctx(caller), crumb.id, patch, crumb.version);
    // An execution ending meanwhile updates the session's totals: read it again.
    if (!updated.ok() && updated.status().code() == StatusCode::kFailedPrecondition && attempt < 4) continue;
    CAIRN_RETURN_IF_ERROR(updated.status());
    return SessionView(*updated);
  }
}

Result<std::vector<model::Breadcrumb>> SessionService::ActiveExecutions(const std::string& owner_id,
                                                                        const std::string& session_id) {
  model::BreadcrumbQuery query;
  query.schema_name = std::string(kExecutionSchema);
  query.all_tags = {ActiveTag(session_id)};
  query.include_context = true;
  query.order = model::SortOrder::kOldestFirst;
  query.limit = 100;
  CAIRN_ASSIGN_OR_RETURN(store::Page page, store_.List(owner_id, query));
  std::vector<model::Breadcrumb> valid;
  for (auto& crumb : page.items) {
    if (crumb.context.is_object()) valid.push_back(std::move(crumb));
  }
  return valid;
}

Result<Accepted> SessionService::PostMessage(const Caller& caller, const std::string& session_id, const json::value& body) {
  CAIRN_ASSIGN_OR_RETURN(MessageInput message, ParseMessageBody(body));
  std::string text = std::move(message.text);
  json::object extra = std::move(message.extra);
  json::object metadata = std::move(message.metadata);
  std::unique_lock lock(SessionLock(session_id));
  CAIRN_ASSIGN_OR_RETURN(model::Breadcrumb session, LoadSession(caller, session_id));
  const json::object& fields = session.context.as_object();
  if (Str(fields, "status") == "closed") {
    return Status::Conflict("session " + session_id + " is closed; it takes no more messages");
  }
  CAIRN_ASSIGN_OR_RETURN(std::vector<model::Breadcrumb> active, ActiveExecutions(caller.owner_id, session_id));
  for (const auto& execution : active) {
    if (Str(execution.context.as_object(), "status") == "paused") {
      // The message answers the question the paused execution asked.
      lock.unlock();
      std::string id = Str(execution.context.as_object(), "id");
      CAIRN_ASSIGN_OR_RETURN(json::object answered, Answer(caller, id, text, std::move(metadata)));
      return Accepted{session_id, Str(answered, "answer_message_id"), id};
    }
  }
  std::string policy = Str(fields, "policy");
  if (!active.empty() && policy == "reject") {
    return Status::Conflict("an execution of session " + session_id + " is still " +
                            Str(active.front().context.as_object(), "status") + " (the session's policy is reject)");
  }
  std::vector<std::string> interrupted;
  if (policy == "interrupt") {
    for (const auto& execution : active) interrupted.push_back(Str(execution.context.as_object(), "id"));
  }
  Accepted accepted{session_id, ids_.Next(), ids_.Next()};
  json::object input{{"content", text}, {"message_id", accepted.message_id}};
  exec::ExecutionRecord pending;
  pending.id = accepted.execution_id;
  pending.kind = "agent";
  pending.executor = Str(fields, "agent_id");
  pending.lineage = exec::Lineage{"", accepted.execution_id, 0, session_id};
  pending.input = std::move(input);
  pending.created_micros = clock_.NowMicros();
  model::BreadcrumbDraft execution = exec::ExecutionDraft(pending);
  execution.title = "execution of " + Str(fields, "agent_id");
  json::object& record = execution.context.as_object();
  // What is particular to session runs.
  record["user_id"] = fields.at("user_id");
  record["snapshot_policy"] = fields.at("snapshot_policy");
  record["awaiting_input"] = nullptr;
  execution.tags.push_back("session-execution");
  execution.tags.push_back(ActiveTag(session_id));
  std::vector<store::WriteOp> ops;
  ops.push_back(store::WriteOp::Create(
      MessageDraft(session_id, accepted.message_id, "user", text, accepted.execution_id, "", std::move(metadata), extra)));
  ops.push_back(store::WriteOp::Create(std::move(execution)));
  ops.push_back(store::WriteOp::Create(
      MessageDraft(session_id, ids_.Next(), "info", "Execution queued", accepted.execution_id, "execution.queued")));
  CAIRN_RETURN_IF_ERROR(store_.Apply(Ctx(caller), ops).status());
  lock.unlock();
  for (const auto& id : interrupted) {
    auto cancelled = CancelExecution(caller, id);
    if (!cancelled.ok() && cancelled.status().code() != StatusCode::kConflict) return cancelled.status();
  }
  if (notify_) notify_(caller.owner_id, session_id);
  return accepted;
}

Result<Accepted> SessionService::PostFirstMessage(const Caller& caller, const json::value& body) {
  CAIRN_ASSIGN_OR_RETURN(const json::object* object, ObjectBody(body));
  json::object session_fields, message_fields;
  for (const auto& [key, value] : *object) {
    bool message_field = key == "content" || key == "metadata" || key == "related_type" || key == "related_id" ||
                         key == "context_url";
    if (key == "session") {
      if (!value.is_object()) return Status::Validation("session", "must be an object");
      for (const auto& [k, v] : value.as_object()) session_fields[k] = v;
    } else if (message_field) {
      message_fields[key] = value;
    } else {
      session_fields[key] = value;
    }
  }
  // Check the message before anything is written.
  CAIRN_ASSIGN_OR_RETURN(MessageInput message, ParseMessageBody(message_fields));
  CAIRN_ASSIGN_OR_RETURN(model::BreadcrumbDraft draft, SessionDraft(session_fields, ids_.Next(), TitleFrom(message.text)));
  std::string session_id = Str(draft.context.as_object(), "id");
  CAIRN_RETURN_IF_ERROR(store_.Create(Ctx(caller), draft, "").status());
  return PostMessage(caller, session_id, message_fields);
}

Result<Listing> SessionService::ListMessages(const Caller& caller, const std::string& session_id,
                                             const MessageFilter& filter) {
  CAIRN_RETURN_IF_ERROR(LoadSession(caller, session_id).status());
  model::BreadcrumbQuery query;
  query.schema_name = std::string(kMessageSchema);
  query.all_tags = {SessionTag(session_id)};
  query.include_context = true;
  query.order = model::SortOrder::kOldestFirst;
  query.limit = 500;
  Listing out;
  bool after_seen = !filter.after;
  while (out.items.size() < filter.limit) {
    CAIRN_ASSIGN_OR_RETURN(store::Page page, store_.List(caller.owner_id, query));
    for (const auto& crumb : page.items) {
      if (!crumb.context.is_object()) continue;
      const json::object& c = crumb.context.as_object();
      if (!after_seen) {
        after_seen = Str(c, "id") == *filter.after;
        continue;
      }
      std::string role = Str(c, "role");
      if (filter.fold_info && role == "info") continue;
      if (!filter.roles.empty() && std::find(filter.roles.begin(), filter.roles.end(), role) == filter.roles.end()) continue;
      out.items.push_back(MessageView(crumb));
      if (out.items.size() == filter.limit) break;
    }
    if (!page.next_cursor || out.items.size() == filter.limit) break;
    query.cursor = page.next_cursor;
  }
  if (!after_seen) return Status::NotFound("message " + *filter.after + " is not in session " + session_id);
  return out;
}

Result<json::object> SessionService::Transition(const Caller& caller, const std::string& id, const std::string& to,
                                                json::object changes, std::vector<store::WriteOp> also) {
  CAIRN_ASSIGN_OR_RETURN(model::Breadcrumb crumb, LoadExecution(caller, id));
  std::string from = Str(crumb.context.as_object(), "status");
  if (!exec::CanMoveExecution(from, to)) {
    return Status::Conflict("execution " + id + " is " + from + "; it cannot become " + to);
  }
  changes["status"] = to;
  std::vector<store::WriteOp> ops;
  ops.push_back(store::WriteOp::Update(crumb.id, ExecutionPatch(crumb, changes), crumb.version));
  for (auto& op : also) ops.push_back(std::move(op));
  auto written = store_.Apply(Ctx(caller), ops);
  if (!written.ok() && written.status().code() == StatusCode::kFailedPrecondition) {
    return Status::Conflict("execution " + id + " changed meanwhile (it was " + from + "); read it again");
  }
  CAIRN_RETURN_IF_ERROR(written.status());
  return exec::ExecutionRecordView(written->front().breadcrumb);
}

Result<json::object> SessionService::CancelExecution(const Caller& caller, const std::string& id) {
  CAIRN_ASSIGN_OR_RETURN(model::Breadcrumb crumb, LoadExecution(caller, id));
  const json::object& fields = crumb.context.as_object();
  std::string status = Str(fields, "status");
  if (!exec::IsActiveStatus(status)) {
    return Status::Conflict("execution " + id + " is " + status + "; it cannot be cancelled");
  }
  // A running execution is stopped by its worker, which writes the end (its descendants in
  // flight are cancelled with it).
  if (status == "running" && cancel_running_ && cancel_running_(caller.owner_id, id)) {
    return exec::ExecutionRecordView(crumb);
  }
  std::string session_id = Str(fields, "session_id");
  std::vector<store::WriteOp> also;
  also.push_back(store::WriteOp::Create(
      MessageDraft(session_id, ids_.Next(), "info", "Execution cancelled", id, "execution.cancelled")));
  if (status == "paused") {
    // Its sub-agents may be paused too (one asked the user): the tasks it handed out end
    // cancelled with it, and then the sub-agents (below).
    CAIRN_ASSIGN_OR_RETURN(auto tasks, exec::CancelOpenTasks(store_, caller.owner_id, id));
    for (auto& op : tasks) also.push_back(std::move(op));
  }
  CAIRN_ASSIGN_OR_RETURN(json::object view,
                         Transition(caller, id, "cancelled",
                                    json::object{{"completed_at", FormatRfc3339Micros(clock_.NowMicros())},
                                                 {"awaiting_input", nullptr}},
                                    std::move(also)));
  if (status == "paused" && cancel_running_) cancel_running_(caller.owner_id, id);
  // The executions queued behind it may run now (a paused one held them back).
  if (notify_) notify_(caller.owner_id, session_id);
  return view;
}

Result<json::object> SessionService::Answer(const Caller& caller, const std::string& id, const std::string& text,
                                            json::object metadata, bool from_user) {
  CAIRN_ASSIGN_OR_RETURN(model::Breadcrumb crumb, LoadExecution(caller, id));
  const json::object& fields = crumb.context.as_object();
  if (Str(fields, "status") != "paused") {
    return Status::Conflict("execution " + id + " is " + Str(fields, "status") + "; only a paused execution takes input");
  }
  const json::value* awaiting = fields.if_contains("awaiting_input");
  std::string request_id = awaiting && awaiting->is_object() ? Str(awaiting->as_object(), "request_id") : "";
  if (request_id.empty()) return Status::Conflict("execution " + id + " is not waiting for input");
  std::string session_id = Str(fields, "session_id");
  std::string message_id = ids_.Next();
  model::BreadcrumbDraft response;
  response.schema_name = std::string(model::kToolResponseSchema);
  response.title = "user_input response";
  response.tags = {"tool:response", "request:" + request_id, "tool:user_input"};
  response.context = json::object{{"request_id", request_id}, {"tool", "user_input"}, {"status", "success"},
                                  {"output", text}, {"duration_ms", 0}};
  std::vector<store::WriteOp> also;
  // The user's answer is part of the conversation; a resume without one is only noted.
  also.push_back(store::WriteOp::Create(
      from_user ? MessageDraft(session_id, message_id, "user", text, id, "", std::move(metadata))
                : MessageDraft(session_id, message_id, "info", "Resumed without an answer", id, "", std::move(metadata))));
  also.push_back(store::WriteOp::Create(std::move(response)));
  CAIRN_ASSIGN_OR_RETURN(json::object view, Transition(caller, id, "running", json::object{{"awaiting_input", nullptr}},
                                                       std::move(also)));
  if (notify_) notify_(caller.owner_id, session_id);
  view["answer_message_id"] = message_id;
  return view;
}

Result<json::object> SessionService::AnswerExecution(const Caller& caller, const std::string& id, const json::value& body) {
  CAIRN_ASSIGN_OR_RETURN(const json::object* object, ObjectBody(body));
  CAIRN_RETURN_IF_ERROR(Only(*object, {"content", "metadata"}));
  const json::value* content = object->if_contains("content");
  if (!content || !content->is_string() || content->as_string().empty() ||
      content->as_string().size() > kMaxContentBytes) {
    return Status::Validation("content", "is required: a string of 1 to " + std::to_string(kMaxContentBytes) + " bytes");
  }
  json::object metadata;
  if (const json::value* m = object->if_contains("metadata")) {
    if (!m->is_object()) return Status::Validation("metadata", "must be an object");
    metadata = m->as_object();
  }
  CAIRN_ASSIGN_OR_RETURN(std::string answering, AnsweringRun(caller, id));
  CAIRN_ASSIGN_OR_RETURN(json::object view, Answer(caller, answering, std::string(content->as_string()), std::move(metadata)));
  view.erase("answer_message_id");
  return view;
}

Result<std::string> SessionService::AnsweringRun(const Caller& caller, const std::string& id) {
  auto own = LoadExecution(caller, id);
  if (own.ok() || own.status().code() != StatusCode::kNotFound) return id;
  // A sub-agent's execution: its question waits in its session's run.
  auto record = FindAt(store_, caller.owner_id, kExecutionSchema, exec::ExecutionRecordPath(id), "execution " + id);
  if (!record.ok()) return own.status();
  const json::object& fields = record->context.as_object();
  std::string status = Str(fields, "status");
  const json::value* awaiting = fields.if_contains("awaiting_input");
  std::string request_id = awaiting && awaiting->is_object() ? Str(awaiting->as_object(), "request_id") : "";
  if (status != "paused" || request_id.empty()) {
    return Status::Conflict("execution " + id + " is " + status + "; only a paused execution takes input");
  }
  std::string root = Str(fields, "root_execution_id");
  auto root_run = LoadExecution(caller, root);
  const json::value* root_awaiting = root_run.ok() ? root_run->context.as_object().if_contains("awaiting_input") : nullptr;
  if (!root_awaiting || !root_awaiting->is_object() || Str(root_awaiting->as_object(), "request_id") != request_id) {
    return Status::Conflict("execution " + id + " waits for an answer its session's run " + root +
                            " does not wait for (only a sub-agent of a paused session run takes input)");
  }
  return root;
}

Result<json::object> SessionService::ResumeExecution(const Caller& caller, const std::string& id) {
  CAIRN_ASSIGN_OR_RETURN(json::object view, Answer(caller, id, "(the user did not answer)", json::object{{"resumed", true}},
                                                   /*from_user=*/false));
  view.erase("answer_message_id");
  return view;
}

Result<Listing> SessionService::ListSnapshots(const Caller& caller, const std::string& execution_id, size_t limit,
                                              const std::optional<std::string>& cursor) {
  // Any run's snapshots (bus-triggered agent runs have them too; while such a run is in flight
  // it has no record yet, only snapshots).
  CAIRN_RETURN_IF_ERROR(CheckExecutionAccess(caller, execution_id));
  auto record = FindAt(store_, caller.owner_id, kExecutionSchema, exec::ExecutionRecordPath(execution_id), "execution");
  if (!record.ok() && record.status().code() != StatusCode::kNotFound) return record.status();
  model::BreadcrumbQuery query;
  query.schema_name = std::string(kSnapshotSchema);
  query.all_tags = {"execution:" + execution_id};
  query.include_context = true;
  query.limit = limit;
  query.cursor = cursor;
  CAIRN_ASSIGN_OR_RETURN(store::Page page, store_.List(caller.owner_id, query));
  if (!record.ok() && page.items.empty() && !cursor) return Status::NotFound("execution " + execution_id + " not found");
  Listing out;
  for (const auto& crumb : page.items) out.items.push_back(SnapshotView(crumb));
  out.next_cursor = page.next_cursor;
  return out;
}

namespace {

class SnapshotRecords final : public exec::SnapshotReader {
 public:
  SnapshotRecords(store::Store& store, std::string owner) : store_(store), owner_(std::move(owner)) {}
  Result<json::object> Context(const std::string& id) override {
    CAIRN_ASSIGN_OR_RETURN(auto crumb, store_.GetShared(owner_, id));
    if (crumb->schema_name != kSnapshotSchema || !crumb->context.is_object()) {
      return Status::NotFound("snapshot " + id + " not found");
    }
    return crumb->context.as_object();
  }

 private:
  store::Store& store_;
  std::string owner_;
};

}  // namespace

Result<json::object> SessionService::GetSnapshot(const Caller& caller, const std::string& id) {
  if (id.empty() || id.size() > kMaxIdBytes) return Status::NotFound("snapshot not found");
  auto crumb = store_.Get(caller.owner_id, id);
  if (!crumb.ok() || crumb->schema_name != kSnapshotSchema) return Status::NotFound("snapshot " + id + " not found");
  json::object view = SnapshotView(*crumb);
  if (caller.only_creator) {  // a snapshot is as visible as its execution
    const json::value* execution = view.if_contains("execution_id");
    if (execution == nullptr || !execution->is_string() ||
        !CheckExecutionAccess(caller, std::string(execution->get_string())).ok()) {
      return Status::NotFound("snapshot " + id + " not found");
    }
  }
  SnapshotRecords reader(store_, caller.owner_id);
  CAIRN_ASSIGN_OR_RETURN(exec::AgentState state, exec::LoadFullState(reader, id));
  json::object full = exec::StateToJson(state);
  full.erase("messages_from");
  view["state_json"] = std::move(full);
  return view;
}

}  // namespace cairn::sessions
