#include "server/session_handlers.h"

#include <boost/json/array.hpp>
#include <boost/json/serialize.hpp>
#include <algorithm>
#include <charconv>
#include <string_view>

#include "server/request_support.h"
#include "server/sse_stream.h"

namespace cairn::server {
namespace json = boost::json;
namespace {

using Names = std::vector<std::string_view>;

const Names kSessionStatuses = {"active", "archived", "closed"};
const Names kExecutionStatuses = {"pending", "running", "paused", "completed", "failed", "cancelled"};
const Names kExecutionKinds = {"tool", "agent", "workflow"};
const Names kRoles = {"user", "assistant", "info", "notification"};
constexpr size_t kDefaultLimit = 50;
constexpr size_t kDefaultMessageLimit = 100;

std::string JoinNames(const Names& names, std::string_view separator) {
  std::string out;
  for (std::string_view name : names) {
    if (!out.empty()) out += separator;
    out += name;
  }
  return out;
}

bool Contains(const Names& names, std::string_view name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

Result<sessions::Caller> CallerOf(const HttpRequest& req) {
  CAIRN_ASSIGN_OR_RETURN(model::WriteContext ctx, WriteContextFrom(req));
  sessions::Caller caller{ctx.owner_id, ctx.actor, std::nullopt};
  // Below developer: only its own sessions and their runs (docs/auth.md).
  if (req.principal && !req.principal->Has(auth::Role::kDeveloper)) caller.only_creator = ctx.actor;
  return caller;
}

// A JSON object body (Content-Type, depth and, at the server, size as for every body).
Result<json::value> ObjectBody(const HttpRequest& req, const model::Limits& limits) {
  CAIRN_ASSIGN_OR_RETURN(json::value body, ParseJsonBody(req, limits));
  if (!body.is_object()) return Status::Validation("body", "must be a JSON object");
  return body;
}

// Routes that take no body: none, or an empty JSON object.
Status NoBody(const HttpRequest& req, const model::Limits& limits) {
  if (req.body.empty()) return Status::Ok();
  CAIRN_ASSIGN_OR_RETURN(json::value body, ObjectBody(req, limits));
  if (!body.get_object().empty()) {
    return Status::Validation(std::string(body.get_object().begin()->key()), "unknown field: this route takes no body");
  }
  return Status::Ok();
}

HttpResponse ObjectResponse(int status, const json::object& object) {
  return HttpResponse::Json(status, json::serialize(object));
}

HttpResponse ListingResponse(const sessions::Listing& listing) {
  json::array items;
  items.reserve(listing.items.size());
  for (const auto& item : listing.items) items.emplace_back(item);
  json::object out{{"items", std::move(items)},
                   {"next_cursor", listing.next_cursor ? json::value(*listing.next_cursor) : json::value(nullptr)}};
  return ObjectResponse(200, out);
}

HttpResponse AcceptedResponse(const sessions::Accepted& accepted) {
  json::object out{{"session_id", accepted.session_id},
                   {"message_id", accepted.message_id},
                   {"execution_id", accepted.execution_id.empty() ? json::value(nullptr) : json::value(accepted.execution_id)}};
  return ObjectResponse(202, out);
}

const json::value* Field(const json::value& object, std::string_view key) {
  const json::object* o = object.if_object();
  return o ? o->if_contains(key) : nullptr;
}

json::value ValueOr(const json::value* value, json::value fallback) { return value ? *value : std::move(fallback); }

}  // namespace

Result<sessions::SessionFilter> ParseSessionFilter(const QueryParams& query, const model::Limits& limits) {
  CAIRN_ASSIGN_OR_RETURN(QueryReader q, QueryReader::Open(query, {"status", "user_id", "agent_id", "related_type",
                                                                  "related_id", "limit", "cursor"}));
  sessions::SessionFilter filter;
  CAIRN_ASSIGN_OR_RETURN(filter.status, q.OneOf("status", kSessionStatuses));
  CAIRN_ASSIGN_OR_RETURN(filter.user_id, q.Text("user_id"));
  CAIRN_ASSIGN_OR_RETURN(filter.agent_id, q.Text("agent_id"));
  CAIRN_ASSIGN_OR_RETURN(filter.related_type, q.Text("related_type"));
  CAIRN_ASSIGN_OR_RETURN(filter.related_id, q.Text("related_id"));
  CAIRN_ASSIGN_OR_RETURN(filter.limit, q.Limit(kDefaultLimit, limits.max_list_limit));
  CAIRN_ASSIGN_OR_RETURN(filter.cursor, q.Cursor("cursor"));
  return filter;
}

Result<sessions::MessageFilter> ParseMessageFilter(const QueryParams& query, const model::Limits& limits) {
  CAIRN_ASSIGN_OR_RETURN(QueryReader q, QueryReader::Open(query, {"after", "limit", "roles", "fold_info"}));
  sessions::MessageFilter filter;
  CAIRN_ASSIGN_OR_RETURN(filter.after, q.Text("after"));
  CAIRN_ASSIGN_OR_RETURN(filter.limit, q.Limit(kDefaultMessageLimit, limits.max_list_limit));
  CAIRN_ASSIGN_OR_RETURN(std::optional<std::string> roles, q.Text("roles"));
  if (roles) {
    std::string_view rest = *roles;
    while (true) {
      size_t comma = rest.find(',');
      std::string_view role = rest.substr(0, comma);
      if (!Contains(kRoles, role)) {
        return BadParameter("roles", "must be a comma list of " + JoinNames(kRoles, ", ") + ", got '" +
                                         std::string(role) + "'");
      }
      if (std::find(filter.roles.begin(), filter.roles.end(), role) == filter.roles.end()) {
        filter.roles.emplace_back(role);
      }
      if (comma == std::string_view::npos) break;
      rest.remove_prefix(comma + 1);
    }
  }
  CAIRN_ASSIGN_OR_RETURN(std::optional<bool> fold, q.Bool("fold_info"));
  filter.fold_info = fold.value_or(false);
  return filter;
}

Result<exec::ExecutionListFilter> ParseExecutionFilter(const QueryParams& query, const model::Limits& limits) {
  CAIRN_ASSIGN_OR_RETURN(QueryReader q, QueryReader::Open(query, {"kind", "executor", "status", "session_id", "parent",
                                                                  "root", "agent_id", "user_id", "limit", "cursor"}));
  exec::ExecutionListFilter filter;
  CAIRN_ASSIGN_OR_RETURN(filter.kind, q.OneOf("kind", kExecutionKinds));
  CAIRN_ASSIGN_OR_RETURN(filter.executor, q.Text("executor"));
  CAIRN_ASSIGN_OR_RETURN(filter.status, q.OneOf("status", kExecutionStatuses));
  CAIRN_ASSIGN_OR_RETURN(filter.session_id, q.Text("session_id"));
  CAIRN_ASSIGN_OR_RETURN(filter.parent, q.Text("parent"));
  CAIRN_ASSIGN_OR_RETURN(filter.root, q.Text("root"));
  CAIRN_ASSIGN_OR_RETURN(std::optional<std::string> agent_id, q.Text("agent_id"));
  if (agent_id) {  // the runs of one agent: kind agent, that executor
    if (filter.executor && *filter.executor != *agent_id) {
      return BadParameter("agent_id", "names another executor than executor does");
    }
    if (filter.kind && *filter.kind != "agent") {
      return BadParameter("agent_id", "names an agent but kind is " + *filter.kind);
    }
    filter.kind = "agent";
    filter.executor = agent_id;
  }
  CAIRN_ASSIGN_OR_RETURN(filter.user_id, q.Text("user_id"));
  CAIRN_ASSIGN_OR_RETURN(filter.limit, q.Limit(kDefaultLimit, limits.max_list_limit));
  CAIRN_ASSIGN_OR_RETURN(filter.cursor, q.Cursor("cursor"));
  return filter;
}

namespace {

// The end of a run that descends from one of the session's runs (a tool its agent called):
// recorded once, when it ends.
std::optional<json::object> DescendantPayload(const std::string& session_id, const model::Event& event) {
  const json::value* parent = Field(event.context, "parent_execution_id");
  if (!parent || !parent->is_string() || parent->get_string().empty()) return std::nullopt;  // the session's own
  auto text = [&](std::string_view key) {
    const json::value* v = Field(event.context, key);
    return v && v->is_string() ? std::string(v->get_string()) : std::string();
  };
  std::string status = text("status");
  if (status.empty()) return std::nullopt;
  json::object metadata;
  for (const char* key : {"kind", "executor", "status", "depth", "root_execution_id", "duration_ms", "error", "token_usage"}) {
    metadata[key] = ValueOr(Field(event.context, key), nullptr);
  }
  std::string content = text("kind") + " " + text("executor") + " " + status;
  // A paused sub-agent waits for the user: the frame carries its question.
  if (const json::value* awaiting = Field(event.context, "awaiting_input"); awaiting && awaiting->is_object()) {
    metadata["awaiting_input"] = *awaiting;
    if (const json::value* question = Field(*awaiting, "question"); question && question->is_string()) {
      content += ": " + std::string(question->get_string());
    }
  }
  json::object payload{{"session_id", session_id},
                       {"message_id", ""},
                       {"execution_id", ValueOr(Field(event.context, "id"), nullptr)},
                       {"parent_execution_id", *parent},
                       {"event_type", "execution." + status},
                       {"role", "info"},
                       {"content", std::move(content)},
                       {"metadata", std::move(metadata)},
                       {"timestamp", event.at}};
  if (text("kind") == "agent") payload["agent_id"] = text("executor");
  return payload;
}

// A task an orchestrator of the session's tree handed out, as it changes: task.<status>.
std::optional<json::object> TaskPayload(const std::string& session_id, const model::Event& event) {
  auto text = [&](std::string_view key) {
    const json::value* v = Field(event.context, key);
    return v && v->is_string() ? std::string(v->get_string()) : std::string();
  };
  std::string status = text("status");
  if (status.empty()) return std::nullopt;
  const json::value* awaiting = Field(event.context, "awaiting_input");
  json::value content = ValueOr(Field(event.context, status == "waiting" || status == "pending" || status == "running"
                                                         ? "instruction" : "result"), nullptr);
  if (awaiting && Field(*awaiting, "question")) content = *Field(*awaiting, "question");
  json::object metadata{{"task", ValueOr(Field(event.context, "name"), nullptr)},
                        {"status", status},
                        {"assignee", ValueOr(Field(event.context, "assignee"), nullptr)},
                        {"request_id", ValueOr(Field(event.context, "request_id"), nullptr)},
                        {"awaiting_input", ValueOr(awaiting, nullptr)}};
  return json::object{{"session_id", session_id},
                      {"message_id", ""},
                      {"execution_id", ValueOr(Field(event.context, "execution_id"), nullptr)},
                      {"parent_execution_id", ValueOr(Field(event.context, "parent_execution_id"), nullptr)},
                      {"agent_id", metadata.at("assignee")},
                      {"event_type", "task." + status},
                      {"role", "info"},
                      {"content", std::move(content)},
                      {"metadata", std::move(metadata)},
                      {"timestamp", event.at}};
}

// A sub-agent's step (the snapshot recording its model reply): the reply, with the tool calls
// it asked for.
std::optional<json::object> SubAgentStepPayload(const std::string& session_id, const model::Event& event) {
  const json::value* parent = Field(event.context, "parent_execution_id");
  if (!parent || !parent->is_string() || parent->get_string().empty()) return std::nullopt;
  // A snapshot recording tool answers repeats the step's reply: the step is shown once.
  if (const json::value* reply = Field(event.context, "records_reply"); reply && *reply == false) return std::nullopt;
  const json::value* state = Field(event.context, "state");
  const json::value* messages = state ? Field(*state, "messages") : nullptr;
  json::value content = nullptr;
  json::value tool_calls = json::array{};
  if (messages && messages->is_array() && !messages->as_array().empty()) {
    const json::value& last = messages->as_array().back();
    content = ValueOr(Field(last, "content"), nullptr);
    if (const json::value* calls = Field(last, "tool_calls"); calls && calls->is_array()) tool_calls = *calls;
  }
  json::object metadata{{"agent_id", ValueOr(Field(event.context, "agent_id"), nullptr)},
                        {"step", ValueOr(Field(event.context, "step_number"), nullptr)},
                        {"is_final", ValueOr(Field(event.context, "is_final"), false)},
                        {"tool_calls", std::move(tool_calls)}};
  return json::object{{"session_id", session_id},
                      {"message_id", ""},
                      {"execution_id", ValueOr(Field(event.context, "agent_execution_id"), nullptr)},
                      {"parent_execution_id", *parent},
                      {"agent_id", metadata.at("agent_id")},
                      {"event_type", "agent.step"},
                      {"role", "assistant"},
                      {"content", std::move(content)},
                      {"metadata", std::move(metadata)},
                      {"timestamp", event.at}};
}

}  // namespace

std::optional<json::object> SessionMessagePayload(const std::string& session_id, const model::Event& event) {
  bool written = event.type == "breadcrumb.created" || event.type == "breadcrumb.updated";
  // A descendant's record is created when it ends or pauses; a paused one is updated when it ends.
  if (written && event.schema_name == exec::kExecutionSchema) return DescendantPayload(session_id, event);
  if (written && event.schema_name == model::kAgentTaskSchema) return TaskPayload(session_id, event);
  if (event.type == "breadcrumb.created" && event.schema_name == model::kAgentSnapshotSchema) {
    return SubAgentStepPayload(session_id, event);
  }
  if (event.type != "breadcrumb.created" || event.schema_name != sessions::kMessageSchema) return std::nullopt;
  const json::value* role = Field(event.context, "role");
  const json::value* metadata = Field(event.context, "metadata");
  const json::value* execution_id = Field(event.context, "agent_execution_id");
  std::string_view event_type = "message.created";
  if (role && role->is_string() && (role->get_string() == "info" || role->get_string() == "notification") &&
      metadata) {
    const json::value* named = Field(*metadata, "event_type");
    if (named && named->is_string()) event_type = named->get_string();
  }
  bool has_execution = execution_id && execution_id->is_string() && !execution_id->get_string().empty();
  // The message's API id (context.id, what POST .../messages answered and GET .../messages lists)
  // is not the breadcrumb's id: the store names the breadcrumb itself.
  const json::value* id = Field(event.context, "id");
  bool has_id = id && id->is_string() && !id->get_string().empty();
  return json::object{{"session_id", session_id},
                      {"message_id", has_id ? *id : json::value(event.breadcrumb_id)},
                      {"execution_id", has_execution ? *execution_id : json::value(nullptr)},
                      {"parent_execution_id", nullptr},  // messages are the session runs' own (roots)
                      {"event_type", event_type},
                      {"role", ValueOr(role, nullptr)},
                      {"content", ValueOr(Field(event.context, "content"), nullptr)},
                      {"metadata", ValueOr(metadata, json::object{})},
                      {"timestamp", event.at}};
}

json::object SessionTokenPayload(const std::string& session_id, const bus::EphemeralEvent& event) {
  auto data = [&](std::string_view key) { return ValueOr(event.data.if_contains(key), nullptr); };
  return json::object{{"session_id", session_id},
                      {"message_id", ""},
                      {"execution_id", data("execution_id")},
                      {"parent_execution_id", data("parent_execution_id")},
                      {"agent_id", data("agent_id")},
                      {"event_type", model::kAgentTokenEventType},
                      {"role", "assistant"},
                      {"content", ValueOr(event.data.if_contains("delta"), "")},
                      {"metadata", json::object{{"step", data("step")}}},
                      {"timestamp", event.at}};
}

json::object SessionToolProgressPayload(const std::string& session_id, const bus::EphemeralEvent& event) {
  auto data = [&](std::string_view key) { return ValueOr(event.data.if_contains(key), nullptr); };
  json::object metadata{{"tool", data("tool")}, {"request_id", data("request_id")}, {"step", data("step")},
                        {"progress", data("progress")}, {"total", data("total")}};
  json::value content = data("message");
  if (!content.is_string()) {
    // No message: "<progress>" or "<progress>/<total>" as the server counted.
    std::string text = json::serialize(metadata.at("progress"));
    if (!metadata.at("total").is_null()) text += "/" + json::serialize(metadata.at("total"));
    content = text;
  }
  return json::object{{"session_id", session_id},
                      {"message_id", ""},
                      {"execution_id", data("execution_id")},
                      {"parent_execution_id", data("parent_execution_id")},
                      {"event_type", model::kToolProgressEventType},
                      {"role", "info"},
                      {"content", std::move(content)},
                      {"metadata", std::move(metadata)},
                      {"timestamp", event.at}};
}

std::shared_ptr<SseSpec> SessionStreamSpec(const std::string& owner_id, const std::string& session_id,
                                           int64_t after_seq) {
  auto spec = std::make_shared<SseSpec>();
  spec->owner_id = owner_id;
  spec->after_seq = after_seq;
  // No schema_name condition: it would never match a token (sse_stream.h). The stored view keeps
  // the messages among the session's events and the ends of the runs descending from the
  // session's runs (the session and its own runs carry the tag too; their changes are told by
  // the messages written with them).
  // Sub-agents' steps carry session-activity:<id> (their records are not the session's).
  spec->selector.any_tags = {"session:" + session_id, "session-activity:" + session_id};
  // Tools' progress (MCP) too: their requests carry the session-activity tag of the agent's session.
  spec->selector.types = {"breadcrumb.created", "breadcrumb.updated", std::string(model::kAgentTokenEventType),
                          std::string(model::kToolProgressEventType)};
  spec->stored_view = [session_id](const model::Event& event) { return SessionMessagePayload(session_id, event); };
  spec->ephemeral_view = [session_id](const bus::EphemeralEvent& event) -> std::optional<json::object> {
    if (event.type == model::kToolProgressEventType) return SessionToolProgressPayload(session_id, event);
    if (event.type != model::kAgentTokenEventType) return std::nullopt;
    return SessionTokenPayload(session_id, event);
  };
  return spec;
}

void AddSessionRoutes(Router& router, sessions::SessionService& service, exec::ExecutionIndex& executions,
                      bus::EventBus& bus, const model::Limits& limits) {
  using sessions::Caller;
  auto& svc = service;

  // --- Sessions ---
  router.Add("POST", "/sessions", Dispatch::kWorker, [&svc, limits](const HttpRequest& req) -> Result<HttpResponse> {
    CAIRN_ASSIGN_OR_RETURN(Caller caller, CallerOf(req));
    CAIRN_RETURN_IF_ERROR(NoQueryParameters(req));
    CAIRN_ASSIGN_OR_RETURN(json::value body, ObjectBody(req, limits));
    CAIRN_ASSIGN_OR_RETURN(json::object session, svc.CreateSession(caller, body));
    HttpResponse response = ObjectResponse(201, session);
    if (const json::value* id = session.if_contains("id"); id && id->is_string()) {
      response.headers.emplace_back("Location", "/sessions/" + std::string(id->get_string()));
    }
    return response;
  });

  router.Add("GET", "/sessions", Dispatch::kWorker, [&svc, limits](const HttpRequest& req) -> Result<HttpResponse> {
    CAIRN_ASSIGN_OR_RETURN(Caller caller, CallerOf(req));
    CAIRN_ASSIGN_OR_RETURN(sessions::SessionFilter filter, ParseSessionFilter(req.query, limits));
    CAIRN_ASSIGN_OR_RETURN(sessions::Listing listing, svc.ListSessions(caller, filter));
    return ListingResponse(listing);
  });

  // Before /sessions/{id}: a literal segment is registered ahead of the placeholder at its place.
  router.Add("POST", "/sessions/messages", Dispatch::kWorker, [&svc, limits](const HttpRequest& req) -> Result<HttpResponse> {
    CAIRN_ASSIGN_OR_RETURN(Caller caller, CallerOf(req));
    CAIRN_RETURN_IF_ERROR(NoQueryParameters(req));
    CAIRN_ASSIGN_OR_RETURN(json::value body, ObjectBody(req, limits));
    CAIRN_ASSIGN_OR_RETURN(sessions::Accepted accepted, svc.PostFirstMessage(caller, body));
    return AcceptedResponse(accepted);
  });

  router.Add("GET", "/sessions/{id}", Dispatch::kWorker, [&svc](const HttpRequest& req) -> Result<HttpResponse> {
    CAIRN_ASSIGN_OR_RETURN(Caller caller, CallerOf(req));
    CAIRN_RETURN_IF_ERROR(NoQueryParameters(req));
    CAIRN_ASSIGN_OR_RETURN(json::object session, svc.GetSession(caller, req.path_params[0]));
    return ObjectResponse(200, session);
  });

  router.Add("PATCH", "/sessions/{id}", Dispatch::kWorker, [&svc, limits](const HttpRequest& req) -> Result<HttpResponse> {
    CAIRN_ASSIGN_OR_RETURN(Caller caller, CallerOf(req));
    CAIRN_RETURN_IF_ERROR(NoQueryParameters(req));
    CAIRN_ASSIGN_OR_RETURN(json::value body, ObjectBody(req, limits));
    CAIRN_ASSIGN_OR_RETURN(json::object session, svc.UpdateSession(caller, req.path_params[0], body));
    return ObjectResponse(200, session);
  });

  // --- Messages ---
  router.Add("POST", "/sessions/{id}/messages", Dispatch::kWorker, [&svc, limits](const HttpRequest& req) -> Result<HttpResponse> {
    CAIRN_ASSIGN_OR_RETURN(Caller caller, CallerOf(req));
    CAIRN_RETURN_IF_ERROR(NoQueryParameters(req));
    CAIRN_ASSIGN_OR_RETURN(json::value body, ObjectBody(req, limits));
    CAIRN_ASSIGN_OR_RETURN(sessions::Accepted accepted, svc.PostMessage(caller, req.path_params[0], body));
    return AcceptedResponse(accepted);
  });

  router.Add("GET", "/sessions/{id}/messages", Dispatch::kWorker, [&svc, limits](const HttpRequest& req) -> Result<HttpResponse> {
    CAIRN_ASSIGN_OR_RETURN(Caller caller, CallerOf(req));
    CAIRN_ASSIGN_OR_RETURN(sessions::MessageFilter filter, ParseMessageFilter(req.query, limits));
    CAIRN_ASSIGN_OR_RETURN(sessions::Listing listing, svc.ListMessages(caller, req.path_params[0], filter));
    return ListingResponse(listing);
  });

  // --- The session's event stream ---
  router.Add("GET", "/sessions/{id}/events", Dispatch::kWorker, [&svc, &bus](const HttpRequest& req) -> Result<HttpResponse> {
    CAIRN_ASSIGN_OR_RETURN(Caller caller, CallerOf(req));
    CAIRN_RETURN_IF_ERROR(QueryReader::Open(req.query, {"since"}).status());
    const std::string& id = req.path_params[0];
    CAIRN_RETURN_IF_ERROR(svc.GetSession(caller, id).status());  // 404 before the stream starts
    CAIRN_ASSIGN_OR_RETURN(int64_t after_seq, StreamResumePoint(req, bus));
    HttpResponse response;
    response.event_stream = SessionStreamSpec(caller.owner_id, id, after_seq);
    return response;
  });

  // --- Executions ---
  // Executions of every kind (exec::ExecutionIndex); session runs are cancelled by the service.
  auto& index = executions;
  router.Add("GET", "/executions", Dispatch::kWorker, [&index, limits](const HttpRequest& req) -> Result<HttpResponse> {
    CAIRN_ASSIGN_OR_RETURN(Caller caller, CallerOf(req));
    CAIRN_ASSIGN_OR_RETURN(exec::ExecutionListFilter filter, ParseExecutionFilter(req.query, limits));
    filter.created_by = caller.only_creator;
    CAIRN_ASSIGN_OR_RETURN(exec::ExecutionPage page, index.List(caller.owner_id, filter));
    return ListingResponse(sessions::Listing{std::move(page.items), std::move(page.next_cursor)});
  });

  router.Add("GET", "/executions/{id}", Dispatch::kWorker, [&svc, &index](const HttpRequest& req) -> Result<HttpResponse> {
    CAIRN_ASSIGN_OR_RETURN(Caller caller, CallerOf(req));
    CAIRN_RETURN_IF_ERROR(NoQueryParameters(req));
    CAIRN_RETURN_IF_ERROR(svc.CheckExecutionAccess(caller, req.path_params[0]));
    CAIRN_ASSIGN_OR_RETURN(json::object execution, index.Get(caller.owner_id, req.path_params[0]));
    return ObjectResponse(200, execution);
  });

  router.Add("GET", "/executions/{id}/tree", Dispatch::kWorker, [&svc, &index](const HttpRequest& req) -> Result<HttpResponse> {
    CAIRN_ASSIGN_OR_RETURN(Caller caller, CallerOf(req));
    CAIRN_RETURN_IF_ERROR(NoQueryParameters(req));
    CAIRN_RETURN_IF_ERROR(svc.CheckExecutionAccess(caller, req.path_params[0]));
    CAIRN_ASSIGN_OR_RETURN(json::object tree, index.Tree(caller.owner_id, req.path_params[0]));
    return ObjectResponse(200, tree);
  });

  router.Add("GET", "/executions/{id}/messages", Dispatch::kWorker, [&svc, &index](const HttpRequest& req) -> Result<HttpResponse> {
    CAIRN_ASSIGN_OR_RETURN(Caller caller, CallerOf(req));
    CAIRN_RETURN_IF_ERROR(NoQueryParameters(req));
    CAIRN_RETURN_IF_ERROR(svc.CheckExecutionAccess(caller, req.path_params[0]));
    CAIRN_ASSIGN_OR_RETURN(json::object messages, index.Messages(caller.owner_id, req.path_params[0]));
    return ObjectResponse(200, messages);
  });

  router.Add("POST", "/executions/{id}/cancel", Dispatch::kWorker,
             [&svc, &index, limits](const HttpRequest& req) -> Result<HttpResponse> {
    CAIRN_ASSIGN_OR_RETURN(Caller caller, CallerOf(req));
    CAIRN_RETURN_IF_ERROR(NoQueryParameters(req));
    CAIRN_RETURN_IF_ERROR(NoBody(req, limits));
    CAIRN_RETURN_IF_ERROR(svc.CheckExecutionAccess(caller, req.path_params[0]));
    auto execution = svc.CancelExecution(caller, req.path_params[0]);
    if (!execution.ok() && execution.status().code() == StatusCode::kNotFound) {
      execution = index.Cancel(caller.owner_id, req.path_params[0]);  // not a session run
    }
    CAIRN_RETURN_IF_ERROR(execution.status());
    return ObjectResponse(200, *execution);
  });

  router.Add("POST", "/executions/{id}/resume", Dispatch::kWorker, [&svc, limits](const HttpRequest& req) -> Result<HttpResponse> {
    CAIRN_ASSIGN_OR_RETURN(Caller caller, CallerOf(req));
    CAIRN_RETURN_IF_ERROR(NoQueryParameters(req));
    CAIRN_RETURN_IF_ERROR(NoBody(req, limits));
    CAIRN_ASSIGN_OR_RETURN(json::object execution, svc.ResumeExecution(caller, req.path_params[0]));
    return ObjectResponse(200, execution);
  });

  router.Add("POST", "/executions/{id}/input", Dispatch::kWorker, [&svc, limits](const HttpRequest& req) -> Result<HttpResponse> {
    CAIRN_ASSIGN_OR_RETURN(Caller caller, CallerOf(req));
    CAIRN_RETURN_IF_ERROR(NoQueryParameters(req));
    CAIRN_ASSIGN_OR_RETURN(json::value body, ObjectBody(req, limits));
    CAIRN_ASSIGN_OR_RETURN(json::object execution, svc.AnswerExecution(caller, req.path_params[0], body));
    return ObjectResponse(200, execution);
  });

  // --- Snapshots ---
  router.Add("GET", "/executions/{id}/snapshots", Dispatch::kWorker, [&svc, limits](const HttpRequest& req) -> Result<HttpResponse> {
    CAIRN_ASSIGN_OR_RETURN(Caller caller, CallerOf(req));
    CAIRN_ASSIGN_OR_RETURN(QueryReader q, QueryReader::Open(req.query, {"limit", "cursor"}));
    CAIRN_ASSIGN_OR_RETURN(size_t limit, q.Limit(kDefaultLimit, limits.max_list_limit));
    CAIRN_ASSIGN_OR_RETURN(std::optional<std::string> cursor, q.Cursor("cursor"));
    CAIRN_ASSIGN_OR_RETURN(sessions::Listing listing, svc.ListSnapshots(caller, req.path_params[0], limit, cursor));
    return ListingResponse(listing);
  });

  router.Add("GET", "/snapshots/{id}", Dispatch::kWorker, [&svc](const HttpRequest& req) -> Result<HttpResponse> {
    CAIRN_ASSIGN_OR_RETURN(Caller caller, CallerOf(req));
    CAIRN_RETURN_IF_ERROR(NoQueryParameters(req));
    CAIRN_ASSIGN_OR_RETURN(json::object snapshot, svc.GetSnapshot(caller, req.path_params[0]));
    return ObjectResponse(200, snapshot);
  });
}

}  // namespace cairn::server
