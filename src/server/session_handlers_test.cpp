// The sessions API routes (server/session_handlers.h): strict query parsing, bodies, status codes
// and response shapes, against a real SessionService over a SqliteStore in a temporary directory
// (no worker runs: executions stay pending unless cancelled). The stream itself is tested end to
// end in sse_stream_test.cpp; here only what the route answers before streaming.
#include "server/session_handlers.h"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

#include "base/clock.h"
#include "base/metrics.h"
#include "server/error_response.h"
#include "server/sse_stream.h"
#include "store/sqlite/sqlite_store.h"
#include "support/sqlite_store.h"
#include "support/fakes.h"

namespace cairn::server {
namespace {

namespace json = boost::json;
using Params = std::vector<std::pair<std::string, std::string>>;

constexpr int64_t kStart = 1'800'000'000'000'000;

// ---------------------------------------------------------------------------------------------
// Query parsing

TEST(SessionQueryTest, SessionFilterDefaultsAndFields) {
  auto empty = ParseSessionFilter({}, model::Limits{});
  ASSERT_TRUE(empty.ok()) << empty.status().ToString();
  EXPECT_EQ(empty->limit, 50u);
  EXPECT_FALSE(empty->status || empty->user_id || empty->agent_id || empty->related_type || empty->related_id ||
               empty->cursor);

  auto full = ParseSessionFilter({{"status", "archived"},
                                  {"user_id", "u1"},
                                  {"agent_id", "a1"},
                                  {"related_type", "ticket"},
                                  {"related_id", "T-1"},
                                  {"limit", "1000"},
                                  {"cursor", "c"}},
                                 model::Limits{});
  ASSERT_TRUE(full.ok()) << full.status().ToString();
  EXPECT_EQ(full->status, "archived");
  EXPECT_EQ(full->user_id, "u1");
  EXPECT_EQ(full->agent_id, "a1");
  EXPECT_EQ(full->related_type, "ticket");
  EXPECT_EQ(full->related_id, "T-1");
  EXPECT_EQ(full->limit, 1000u);
  EXPECT_EQ(full->cursor, "c");
}

// The error is a 400 whose field names the parameter.
void ExpectRefused(const Status& status, const std::string& field) {
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << status.ToString();
  EXPECT_EQ(status.field(), field) << status.ToString();
}

TEST(SessionQueryTest, UnknownRepeatedEmptyAndBadValuesAreRefusedByName) {
  model::Limits limits;
  ExpectRefused(ParseSessionFilter({{"colour", "red"}}, limits).status(), "colour");
  ExpectRefused(ParseSessionFilter({{"user_id", "a"}, {"user_id", "b"}}, limits).status(), "user_id");
  ExpectRefused(ParseSessionFilter({{"user_id", ""}}, limits).status(), "user_id");
  ExpectRefused(ParseSessionFilter({{"status", "open"}}, limits).status(), "status");
  ExpectRefused(ParseSessionFilter({{"cursor", ""}}, limits).status(), "cursor");
  for (const char* bad : {"0", "1001", "-1", "ten", "", "5x", "99999999999999999999"}) {
    ExpectRefused(ParseSessionFilter({{"limit", bad}}, limits).status(), "limit");
  }
  EXPECT_EQ(ParseSessionFilter({{"limit", "1"}}, limits)->limit, 1u);
  // The message names what is allowed.
  auto unknown = ParseExecutionFilter({{"session", "s1"}}, limits);
  EXPECT_NE(unknown.status().message().find("session_id"), std::string::npos) << unknown.status().ToString();
}

TEST(SessionQueryTest, MessageFilter) {
  model::Limits limits;
  auto empty = ParseMessageFilter({}, limits);
  ASSERT_TRUE(empty.ok()) << empty.status().ToString();
  EXPECT_EQ(empty->limit, 100u);
  EXPECT_TRUE(empty->roles.empty());
  EXPECT_FALSE(empty->fold_info);
  EXPECT_FALSE(empty->after);

  auto full = ParseMessageFilter({{"after", "m1"}, {"limit", "7"}, {"roles", "user,assistant,user"}, {"fold_info", "true"}},
                                 limits);
  ASSERT_TRUE(full.ok()) << full.status().ToString();
  EXPECT_EQ(full->after, "m1");
  EXPECT_EQ(full->limit, 7u);
  EXPECT_EQ(full->roles, (std::vector<std::string>{"user", "assistant"}));
  EXPECT_TRUE(full->fold_info);
  EXPECT_FALSE(ParseMessageFilter({{"fold_info", "false"}}, limits)->fold_info);
  EXPECT_EQ(ParseMessageFilter({{"roles", "info,notification"}}, limits)->roles.size(), 2u);

  ExpectRefused(ParseMessageFilter({{"roles", "user,,assistant"}}, limits).status(), "roles");
  ExpectRefused(ParseMessageFilter({{"roles", "user,"}}, limits).status(), "roles");
  ExpectRefused(ParseMessageFilter({{"roles", "bot"}}, limits).status(), "roles");
  ExpectRefused(ParseMessageFilter({{"roles", ""}}, limits).status(), "roles");
  ExpectRefused(ParseMessageFilter({{"fold_info", "yes"}}, limits).status(), "fold_info");
  ExpectRefused(ParseMessageFilter({{"limit", "0"}}, limits).status(), "limit");
  ExpectRefused(ParseMessageFilter({{"cursor", "c"}}, limits).status(), "cursor");  // messages page with `after`
}

TEST(SessionQueryTest, ExecutionFilter) {
  model::Limits limits;
  auto full = ParseExecutionFilter(
      {{"session_id", "s1"}, {"status", "paused"}, {"agent_id", "a"}, {"user_id", "u"}, {"limit", "3"}, {"cursor", "c"}},
      limits);
  ASSERT_TRUE(full.ok()) << full.status().ToString();
  EXPECT_EQ(full->session_id, "s1");
  EXPECT_EQ(full->status, "paused");
  EXPECT_EQ(full->kind, "agent");
  EXPECT_EQ(full->executor, "a");
  EXPECT_EQ(full->user_id, "u");
  EXPECT_EQ(full->limit, 3u);
  EXPECT_EQ(full->cursor, "c");
  EXPECT_EQ(ParseExecutionFilter({}, limits)->limit, 50u);
  for (const char* status : {"pending", "running", "paused", "completed", "failed", "cancelled"}) {
    EXPECT_TRUE(ParseExecutionFilter({{"status", status}}, limits).ok()) << status;
  }
  ExpectRefused(ParseExecutionFilter({{"status", "done"}}, limits).status(), "status");
  ExpectRefused(ParseExecutionFilter({{"related_id", "x"}}, limits).status(), "related_id");
}

// ---------------------------------------------------------------------------------------------
// The session stream's payloads

model::Event MessageEvent(json::object context, std::string schema = std::string(sessions::kMessageSchema)) {
  model::Event event;
  event.seq = 7;
  event.type = "breadcrumb.created";
  event.breadcrumb_id = "m1";
  event.version = 1;
  event.schema_name = std::move(schema);
  event.tags = {"session:s1", "role:user"};
  event.owner_id = "default";
  event.at = kStart + 42;
  event.context = std::move(context);
  return event;
}

TEST(SessionPayloadTest, AStoredMessage) {
  auto payload = SessionMessagePayload(
      "s1", MessageEvent({{"id", "msg-1"}, {"session_id", "s1"}, {"role", "user"}, {"content", "hi"},
                          {"agent_execution_id", "x1"}, {"metadata", {{"k", 1}}}}));
  ASSERT_TRUE(payload.has_value());
  EXPECT_EQ(*payload, (json::object{{"session_id", "s1"},
                                    {"message_id", "msg-1"},  // the message's id, not the breadcrumb's
                                    {"execution_id", "x1"},
                                    {"parent_execution_id", nullptr},
                                    {"event_type", "message.created"},
                                    {"role", "user"},
                                    {"content", "hi"},
                                    {"metadata", {{"k", 1}}},
                                    {"timestamp", kStart + 42}}));
}

TEST(SessionPayloadTest, EventTypeComesFromInfoAndNotificationMetadataOnly) {
  auto info = SessionMessagePayload(
      "s1", MessageEvent({{"role", "info"}, {"content", "Execution queued"}, {"metadata", {{"event_type", "execution.queued"}}}}));
  ASSERT_TRUE(info.has_value());
  EXPECT_EQ(info->at("event_type"), "execution.queued");
  EXPECT_EQ(info->at("execution_id"), nullptr);  // no agent_execution_id
  auto question = SessionMessagePayload(
      "s1", MessageEvent({{"role", "notification"}, {"content", "Which day?"},
                          {"agent_execution_id", "x1"}, {"metadata", {{"event_type", "execution.paused"}}}}));
  EXPECT_EQ(question->at("event_type"), "execution.paused");
  // A user or assistant message never names its own event type; nor does a non-string one.
  auto user = SessionMessagePayload(
      "s1", MessageEvent({{"role", "assistant"}, {"content", "x"}, {"metadata", {{"event_type", "execution.failed"}}}}));
  EXPECT_EQ(user->at("event_type"), "message.created");
  auto odd = SessionMessagePayload("s1", MessageEvent({{"role", "info"}, {"metadata", {{"event_type", 3}}}}));
  EXPECT_EQ(odd->at("event_type"), "message.created");
  // Missing fields: nulls and an empty metadata object; an empty execution id is null; without a
  // message id, the breadcrumb's.
  auto bare = SessionMessagePayload("s1", MessageEvent({{"agent_execution_id", ""}}));
  ASSERT_TRUE(bare.has_value());
  EXPECT_EQ(bare->at("message_id"), "m1");
  EXPECT_EQ(bare->at("role"), nullptr);
  EXPECT_EQ(bare->at("content"), nullptr);
  EXPECT_EQ(bare->at("metadata"), json::object{});
  EXPECT_EQ(bare->at("execution_id"), nullptr);
}

TEST(SessionPayloadTest, TheEndOfADescendantRunNamesItAndItsParent) {
  json::object record{{"id", "t1"}, {"kind", "tool"}, {"executor", "echo"}, {"status", "completed"},
                      {"parent_execution_id", "x1"}, {"root_execution_id", "x1"}, {"depth", 1}};
  auto payload = SessionMessagePayload("s1", MessageEvent(record, std::string(sessions::kExecutionSchema)));
  ASSERT_TRUE(payload.has_value());
  EXPECT_EQ(payload->at("execution_id"), "t1");
  EXPECT_EQ(payload->at("parent_execution_id"), "x1");
  EXPECT_EQ(payload->at("event_type"), "execution.completed");
  EXPECT_EQ(payload->at("metadata").at("executor"), "echo");
  // The session's own runs are told by their messages, not by their records.
  record["parent_execution_id"] = nullptr;
  EXPECT_FALSE(SessionMessagePayload("s1", MessageEvent(record, std::string(sessions::kExecutionSchema))));
}

TEST(SessionPayloadTest, APausedSubAgentAndItsWaitingTaskCarryTheQuestion) {
  json::object awaiting{{"request_id", "c1-1-0"}, {"question", "Which city?"}, {"agent_id", "asker"}, {"execution_id", "c1"}};
  json::object record{{"id", "c1"}, {"kind", "agent"}, {"executor", "asker"}, {"status", "paused"},
                      {"parent_execution_id", "x1"}, {"root_execution_id", "x1"}, {"depth", 1},
                      {"awaiting_input", awaiting}};
  auto paused = SessionMessagePayload("s1", MessageEvent(record, std::string(sessions::kExecutionSchema)));
  ASSERT_TRUE(paused.has_value());
  EXPECT_EQ(paused->at("event_type"), "execution.paused");
  EXPECT_EQ(paused->at("agent_id"), "asker");
  EXPECT_EQ(paused->at("content"), "agent asker paused: Which city?");
  EXPECT_EQ(paused->at("metadata").at("awaiting_input"), json::value(awaiting));
  // Its end is an update of that record.
  record["status"] = "completed";
  record.erase("awaiting_input");
  model::Event ended = MessageEvent(record, std::string(sessions::kExecutionSchema));
  ended.type = "breadcrumb.updated";
  auto end = SessionMessagePayload("s1", ended);
  ASSERT_TRUE(end.has_value());
  EXPECT_EQ(end->at("event_type"), "execution.completed");

  json::object task{{"name", "1-0"}, {"instruction", "book"}, {"assignee", "asker"}, {"status", "waiting"},
                    {"parent_execution_id", "x1"}, {"execution_id", "c1"}, {"request_id", "x1-1-0"},
                    {"awaiting_input", awaiting}};
  model::Event waiting = MessageEvent(task, std::string(model::kAgentTaskSchema));
  waiting.type = "breadcrumb.updated";
  auto frame = SessionMessagePayload("s1", waiting);
  ASSERT_TRUE(frame.has_value());
  EXPECT_EQ(frame->at("event_type"), "task.waiting");
  EXPECT_EQ(frame->at("execution_id"), "c1");
  EXPECT_EQ(frame->at("parent_execution_id"), "x1");
  EXPECT_EQ(frame->at("agent_id"), "asker");
  EXPECT_EQ(frame->at("content"), "Which city?");
  task["status"] = "completed";
  task["result"] = "booked";
  task.erase("awaiting_input");
  auto done = SessionMessagePayload("s1", MessageEvent(task, std::string(model::kAgentTaskSchema)));
  ASSERT_TRUE(done.has_value());
  EXPECT_EQ(done->at("event_type"), "task.completed");
  EXPECT_EQ(done->at("content"), "booked");
}

TEST(SessionPayloadTest, OnlyCreatedMessagesAreSessionEvents) {
  EXPECT_FALSE(SessionMessagePayload("s1", MessageEvent({}, std::string(sessions::kSessionSchema))));
  EXPECT_FALSE(SessionMessagePayload("s1", MessageEvent({}, std::string(sessions::kExecutionSchema))));
  model::Event updated = MessageEvent({{"role", "user"}});
  updated.type = "breadcrumb.updated";
  EXPECT_FALSE(SessionMessagePayload("s1", updated));
  model::Event no_schema = MessageEvent({});
  no_schema.schema_name.reset();
  EXPECT_FALSE(SessionMessagePayload("s1", no_schema));
}

TEST(SessionPayloadTest, AToken) {
  bus::EphemeralEvent token;
  token.type = "agent.token";
  token.owner_id = "default";
  token.tags = {"session:s1"};
  token.at = kStart + 5;
  token.data = {{"execution_id", "x1"}, {"agent_id", "a"}, {"step", 2}, {"delta", "Hel"}};
  EXPECT_EQ(SessionTokenPayload("s1", token), (json::object{{"session_id", "s1"},
                                                            {"message_id", ""},
                                                            {"execution_id", "x1"},
                                                            {"parent_execution_id", nullptr},
                                                            {"agent_id", "a"},
                                                            {"event_type", "agent.token"},
                                                            {"role", "assistant"},
                                                            {"content", "Hel"},
                                                            {"metadata", {{"step", 2}}},
                                                            {"timestamp", kStart + 5}}));
}

TEST(SessionPayloadTest, ASubAgentsTokenAndStepNameItsParent) {
  bus::EphemeralEvent token;
  token.type = "agent.token";
  token.data = {{"execution_id", "x2"}, {"parent_execution_id", "x1"}, {"agent_id", "researcher"}, {"step", 1}, {"delta", "a"}};
  json::object payload = SessionTokenPayload("s1", token);
  EXPECT_EQ(payload.at("parent_execution_id"), "x1");
  EXPECT_EQ(payload.at("agent_id"), "researcher");

  json::object snapshot{{"agent_execution_id", "x2"}, {"parent_execution_id", "x1"}, {"agent_id", "researcher"},
                        {"step_number", 1}, {"is_final", false},
                        {"state", {{"messages", json::array{json::object{{"role", "assistant"}, {"content", nullptr},
                                                                          {"tool_calls", json::array{json::object{{"id", "c1"}}}}}}}}}};
  auto step = SessionMessagePayload("s1", MessageEvent(snapshot, "agent.snapshot.v1"));
  ASSERT_TRUE(step.has_value());
  EXPECT_EQ(step->at("event_type"), "agent.step");
  EXPECT_EQ(step->at("execution_id"), "x2");
  EXPECT_EQ(step->at("parent_execution_id"), "x1");
  EXPECT_EQ(step->at("agent_id"), "researcher");
  EXPECT_EQ(step->at("metadata").as_object().at("tool_calls").as_array().size(), 1u);
  // The step's later snapshots (tool answers) do not repeat it.
  snapshot["records_reply"] = false;
  EXPECT_FALSE(SessionMessagePayload("s1", MessageEvent(snapshot, "agent.snapshot.v1")).has_value());
  snapshot["records_reply"] = true;
  EXPECT_TRUE(SessionMessagePayload("s1", MessageEvent(snapshot, "agent.snapshot.v1")).has_value());
  // A root run's snapshots are told by its session messages, not as steps.
  snapshot["parent_execution_id"] = nullptr;
  EXPECT_FALSE(SessionMessagePayload("s1", MessageEvent(snapshot, "agent.snapshot.v1")).has_value());
}

TEST(SessionPayloadTest, TheStreamSpec) {
  auto spec = SessionStreamSpec("acme", "s1", 12);
  EXPECT_EQ(spec->owner_id, "acme");
  EXPECT_EQ(spec->after_seq, 12);
  EXPECT_EQ(spec->selector.any_tags, (std::vector<std::string>{"session:s1", "session-activity:s1"}));
  EXPECT_FALSE(spec->selector.schema_name.has_value());  // it would keep the tokens out
  EXPECT_TRUE(model::SelectsStoredEvents(spec->selector));
  EXPECT_TRUE(model::SelectsEphemeralEvents(spec->selector));
  ASSERT_TRUE(spec->stored_view && spec->ephemeral_view);
  EXPECT_TRUE(spec->stored_view(MessageEvent({{"role", "user"}})).has_value());
  EXPECT_FALSE(spec->stored_view(MessageEvent({}, std::string(sessions::kSessionSchema))).has_value());
}

// ---------------------------------------------------------------------------------------------
// The routes

struct Reply {
  int status = 0;
  json::value body;
  std::vector<std::pair<std::string, std::string>> headers;
  std::shared_ptr<const SseSpec> stream;

  std::string Header(const std::string& name) const {
    for (const auto& [key, value] : headers) {
      if (key == name) return value;
    }
    return "";
  }
  std::string Str(std::string_view key) const {
    const json::value* v = body.is_object() ? body.get_object().if_contains(key) : nullptr;
    return v && v->is_string() ? std::string(v->get_string()) : "";
  }
  std::string ErrorField() const {
    const json::value* error = body.is_object() ? body.get_object().if_contains("error") : nullptr;
    const json::value* field = error && error->is_object() ? error->get_object().if_contains("field") : nullptr;
    return field && field->is_string() ? std::string(field->get_string()) : "";
  }
  std::string Dump() const { return std::to_string(status) + " " + json::serialize(body); }
};

class SessionRoutesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(store_.Open(clock_, &metrics_));
    service_ = std::make_unique<sessions::SessionService>(*store_, clock_, model::Limits{});
    index_ = std::make_unique<exec::ExecutionIndex>(*store_, runs_);
    AddSessionRoutes(router_, *service_, *index_, bus_, model::Limits{});
  }
  void TearDown() override {
    service_.reset();
    store_.Close();
  }

  // The route's answer as the server would send it (errors through ErrorResponse).
  Reply Call(const std::string& method, const std::string& path, const std::string& body = "", Params query = {},
             Params headers = {{"content-type", "application/json"}}) {
    clock_.Advance(1000);
    HttpRequest request;
    request.method = method;
    request.path = path;
    request.query = std::move(query);
    request.headers = std::move(headers);
    request.body = body;
    Router::Match match = router_.Find(method, path);
    HttpResponse out;
    if (!match.route) {
      out = ErrorResponse(match.error);
    } else {
      request.path_params = match.params;
      Result<HttpResponse> response = match.route->handler(request);
      out = response.ok() ? std::move(response).value() : ErrorResponse(response.status());
    }
    Reply reply;
    reply.status = out.status;
    reply.headers = out.headers;
    reply.stream = std::dynamic_pointer_cast<const SseSpec>(out.event_stream);
    if (!out.body.empty()) reply.body = json::parse(out.body);
    return reply;
  }

  std::string NewSession(const std::string& body = R"({"title":"Trip","user_id":"u1"})") {
    Reply created = Call("POST", "/sessions", body);
    EXPECT_EQ(created.status, 201) << created.Dump();
    return created.Str("id");
  }

  ManualClock clock_{kStart};
  MetricsRegistry metrics_;
  test_support::TempSqliteStore store_{"cairn-session-routes"};
  std::unique_ptr<sessions::SessionService> service_;
  exec::RunRegistry runs_;
  std::unique_ptr<exec::ExecutionIndex> index_;
  test_support::FixedBoundsBus bus_{100, 200};
  Router router_;
};

TEST_F(SessionRoutesTest, LiteralRoutesAreNotTakenForIds) {
  EXPECT_EQ(router_.Find("POST", "/sessions/messages").route->pattern, "/sessions/messages");
  EXPECT_EQ(router_.Find("GET", "/sessions/s1").route->pattern, "/sessions/{id}");
  EXPECT_EQ(router_.Find("GET", "/sessions/s1/events").route->pattern, "/sessions/{id}/events");
  EXPECT_EQ(router_.Find("GET", "/sessions/s1/messages").route->pattern, "/sessions/{id}/messages");
  EXPECT_EQ(router_.Find("POST", "/sessions/s1/messages").route->pattern, "/sessions/{id}/messages");
  EXPECT_EQ(router_.Find("POST", "/executions/x1/cancel").route->pattern, "/executions/{id}/cancel");
  EXPECT_EQ(router_.Find("GET", "/executions/x1/snapshots").route->pattern, "/executions/{id}/snapshots");
  Router::Match wrong = router_.Find("DELETE", "/sessions/s1");
  EXPECT_EQ(wrong.route, nullptr);
  EXPECT_EQ(wrong.allow, "GET, HEAD, PATCH");
}

TEST_F(SessionRoutesTest, CreateReadListAndUpdateASession) {
  Reply created = Call("POST", "/sessions", R"({"title":"Trip","user_id":"u1"})");
  ASSERT_EQ(created.status, 201) << created.Dump();
  std::string id = created.Str("id");
  ASSERT_FALSE(id.empty()) << created.Dump();
  EXPECT_EQ(created.Header("Location"), "/sessions/" + id);
  EXPECT_EQ(created.Str("title"), "Trip");

  Reply read = Call("GET", "/sessions/" + id);
  EXPECT_EQ(read.status, 200) << read.Dump();
  EXPECT_EQ(read.body, created.body);

  Reply listed = Call("GET", "/sessions", "", {{"user_id", "u1"}});
  ASSERT_EQ(listed.status, 200) << listed.Dump();
  ASSERT_EQ(listed.body.at("items").as_array().size(), 1u) << listed.Dump();
  EXPECT_EQ(listed.body.at("items").at(0).at("id"), json::value(id));
  EXPECT_EQ(listed.body.at("next_cursor"), nullptr);
  EXPECT_TRUE(Call("GET", "/sessions", "", {{"user_id", "nobody"}}).body.at("items").as_array().empty());

  Reply patched = Call("PATCH", "/sessions/" + id, R"({"title":"Porto"})");
  EXPECT_EQ(patched.status, 200) << patched.Dump();
  EXPECT_EQ(patched.Str("title"), "Porto");
  EXPECT_EQ(Call("GET", "/sessions/" + id).Str("title"), "Porto");
}

TEST_F(SessionRoutesTest, ListingPagesWithTheCursor) {
  for (int i = 0; i < 3; ++i) NewSession();
  Reply first = Call("GET", "/sessions", "", {{"limit", "2"}});
  ASSERT_EQ(first.status, 200) << first.Dump();
  EXPECT_EQ(first.body.at("items").as_array().size(), 2u);
  ASSERT_TRUE(first.body.at("next_cursor").is_string()) << first.Dump();
  Reply second = Call("GET", "/sessions", "", {{"limit", "2"}, {"cursor", first.Str("next_cursor")}});
  ASSERT_EQ(second.status, 200) << second.Dump();
  EXPECT_EQ(second.body.at("items").as_array().size(), 1u);
  EXPECT_EQ(second.body.at("next_cursor"), nullptr);
}

TEST_F(SessionRoutesTest, BodiesMustBeJsonObjects) {
  EXPECT_EQ(Call("POST", "/sessions", R"({"title":"x"})", {}, {}).status, 415);
  EXPECT_EQ(Call("POST", "/sessions", R"({"title":)").status, 400);
  EXPECT_EQ(Call("POST", "/sessions", "").status, 400);
  Reply array = Call("POST", "/sessions", "[1]");
  EXPECT_EQ(array.status, 422) << array.Dump();
  EXPECT_EQ(array.ErrorField(), "body");
  std::string deep(100, '[');
  deep += std::string(100, ']');
  EXPECT_EQ(Call("POST", "/sessions", R"({"metadata":)" + deep + "}").status, 400);
  std::string id = NewSession();
  EXPECT_EQ(Call("PATCH", "/sessions/" + id, "\"closed\"").status, 422);
  EXPECT_EQ(Call("POST", "/sessions/" + id + "/messages", "null").status, 422);
  EXPECT_EQ(Call("POST", "/sessions/messages", "42").status, 422);
}

TEST_F(SessionRoutesTest, QueryParametersAreStrictOnEveryRoute) {
  std::string id = NewSession();
  Reply unknown = Call("GET", "/sessions", "", {{"state", "active"}});
  EXPECT_EQ(unknown.status, 400) << unknown.Dump();
  EXPECT_EQ(unknown.ErrorField(), "state");
  Reply limit = Call("GET", "/executions", "", {{"limit", "1001"}});
  EXPECT_EQ(limit.status, 400) << limit.Dump();
  EXPECT_EQ(limit.ErrorField(), "limit");
  EXPECT_EQ(Call("GET", "/sessions/" + id + "/messages", "", {{"roles", "robot"}}).ErrorField(), "roles");
  EXPECT_EQ(Call("GET", "/sessions/" + id + "/messages", "", {{"fold_info", "1"}}).ErrorField(), "fold_info");
  EXPECT_EQ(Call("GET", "/executions/x/snapshots", "", {{"limit", "0"}}).ErrorField(), "limit");
  EXPECT_EQ(Call("GET", "/executions/x/snapshots", "", {{"status", "x"}}).ErrorField(), "status");
  // Routes that take no parameters refuse any.
  EXPECT_EQ(Call("GET", "/sessions/" + id, "", {{"verbose", "1"}}).ErrorField(), "verbose");
  EXPECT_EQ(Call("POST", "/sessions", "{}", {{"dry_run", "1"}}).ErrorField(), "dry_run");
  EXPECT_EQ(Call("GET", "/sessions/" + id + "/events", "", {{"types", "agent.token"}}).ErrorField(), "types");
}

TEST_F(SessionRoutesTest, TheActorHeaderIsChecked) {
  EXPECT_EQ(Call("GET", "/sessions", "", {}, {{"x-cairn-actor", std::string(200, 'a')}}).status, 400);
  EXPECT_EQ(Call("GET", "/sessions", "", {}, {{"x-cairn-actor", "user:ada"}}).status, 200);
}

TEST_F(SessionRoutesTest, UnknownIdsAre404) {
  EXPECT_EQ(Call("GET", "/sessions/nope").status, 404);
  EXPECT_EQ(Call("PATCH", "/sessions/nope", R"({"title":"x"})").status, 404);
  EXPECT_EQ(Call("POST", "/sessions/nope/messages", R"({"content":"hi"})").status, 404);
  EXPECT_EQ(Call("GET", "/sessions/nope/messages").status, 404);
  EXPECT_EQ(Call("GET", "/sessions/nope/events").status, 404);
  EXPECT_EQ(Call("GET", "/executions/nope").status, 404);
  EXPECT_EQ(Call("POST", "/executions/nope/cancel").status, 404);
  EXPECT_EQ(Call("POST", "/executions/nope/resume").status, 404);
  EXPECT_EQ(Call("POST", "/executions/nope/input", R"({"content":"x"})").status, 404);
  EXPECT_EQ(Call("GET", "/snapshots/nope").status, 404);
}

TEST_F(SessionRoutesTest, AMessageIsAcceptedAndStartsAnExecution) {
  std::string id = NewSession();
  Reply posted = Call("POST", "/sessions/" + id + "/messages", R"({"content":"Find me a train to Porto"})");
  ASSERT_EQ(posted.status, 202) << posted.Dump();
  EXPECT_EQ(posted.Str("session_id"), id);
  std::string message_id = posted.Str("message_id");
  std::string execution_id = posted.Str("execution_id");
  EXPECT_FALSE(message_id.empty()) << posted.Dump();
  EXPECT_FALSE(execution_id.empty()) << posted.Dump();
  EXPECT_EQ(posted.body.as_object().size(), 3u) << posted.Dump();

  // The user message and the "Execution queued" info, oldest first.
  Reply all = Call("GET", "/sessions/" + id + "/messages");
  ASSERT_EQ(all.status, 200) << all.Dump();
  const json::array& items = all.body.at("items").as_array();
  ASSERT_GE(items.size(), 2u) << all.Dump();
  EXPECT_EQ(items.at(0).at("id"), json::value(message_id));
  EXPECT_EQ(items.at(0).at("role"), "user");
  EXPECT_TRUE(all.body.as_object().contains("next_cursor"));
  Reply users = Call("GET", "/sessions/" + id + "/messages", "", {{"roles", "user"}});
  ASSERT_EQ(users.body.at("items").as_array().size(), 1u) << users.Dump();
  Reply folded = Call("GET", "/sessions/" + id + "/messages", "", {{"fold_info", "true"}});
  for (const auto& item : folded.body.at("items").as_array()) EXPECT_NE(item.at("role"), "info") << folded.Dump();
  Reply after = Call("GET", "/sessions/" + id + "/messages", "", {{"after", message_id}, {"limit", "1"}});
  ASSERT_EQ(after.body.at("items").as_array().size(), 1u) << after.Dump();
  EXPECT_NE(after.body.at("items").at(0).at("id"), json::value(message_id));

  Reply execution = Call("GET", "/executions/" + execution_id);
  ASSERT_EQ(execution.status, 200) << execution.Dump();
  EXPECT_EQ(execution.Str("status"), "pending");
  EXPECT_EQ(execution.Str("session_id"), id);
  Reply listed = Call("GET", "/executions", "", {{"session_id", id}, {"status", "pending"}});
  ASSERT_EQ(listed.status, 200) << listed.Dump();
  ASSERT_EQ(listed.body.at("items").as_array().size(), 1u) << listed.Dump();
  EXPECT_EQ(listed.body.at("next_cursor"), nullptr);

  Reply snapshots = Call("GET", "/executions/" + execution_id + "/snapshots");
  ASSERT_EQ(snapshots.status, 200) << snapshots.Dump();
  EXPECT_TRUE(snapshots.body.at("items").as_array().empty());
  EXPECT_EQ(snapshots.body.at("next_cursor"), nullptr);
}

TEST_F(SessionRoutesTest, TheStreamViewOfTheStoredEventsIsTheMessagesAsPosted) {
  std::string id = NewSession();
  std::string other = NewSession();
  Reply posted = Call("POST", "/sessions/" + id + "/messages", R"({"content":"Find me a train"})");
  ASSERT_EQ(posted.status, 202) << posted.Dump();
  ASSERT_EQ(Call("POST", "/sessions/" + other + "/messages", R"({"content":"elsewhere"})").status, 202);
  Reply stream = Call("GET", "/sessions/" + id + "/events");
  ASSERT_NE(stream.stream, nullptr) << stream.Dump();
  // What the stream would send of every event the facade wrote (the session, the execution, the
  // messages of both sessions): the two messages of this session, as GET .../messages lists them.
  auto events = store_->ReadEvents(0, 1000);
  ASSERT_TRUE(events.ok()) << events.status().ToString();
  std::vector<json::object> sent;
  for (const auto& event : *events) {
    if (!model::Matches(stream.stream->selector, event)) continue;
    if (auto view = stream.stream->stored_view(event)) sent.push_back(*view);
  }
  Reply listed = Call("GET", "/sessions/" + id + "/messages");
  const json::array& items = listed.body.at("items").as_array();
  ASSERT_EQ(sent.size(), items.size()) << listed.Dump();
  ASSERT_GE(sent.size(), 2u);
  for (size_t i = 0; i < sent.size(); ++i) {
    EXPECT_EQ(sent[i].at("message_id"), items.at(i).at("id")) << json::serialize(sent[i]);
    EXPECT_EQ(sent[i].at("session_id"), json::value(id));
    EXPECT_EQ(sent[i].at("role"), items.at(i).at("role"));
    EXPECT_EQ(sent[i].at("content"), items.at(i).at("content"));
  }
  EXPECT_EQ(sent[0].at("message_id"), json::value(posted.Str("message_id")));
  EXPECT_EQ(sent[0].at("event_type"), "message.created");
  EXPECT_EQ(sent[0].at("execution_id"), json::value(posted.Str("execution_id")));
  EXPECT_EQ(sent[1].at("event_type"), "execution.queued");
}

TEST_F(SessionRoutesTest, AFirstMessageCreatesTheSession) {
  Reply posted = Call("POST", "/sessions/messages",
                      R"({"content":"hello there","user_id":"u1","initial_context_url":"https://example.com/page"})");
  ASSERT_EQ(posted.status, 202) << posted.Dump();
  std::string id = posted.Str("session_id");
  Reply session = Call("GET", "/sessions/" + id);
  ASSERT_EQ(session.status, 200) << session.Dump();
  EXPECT_EQ(session.Str("initial_context_url"), "https://example.com/page");
  EXPECT_EQ(session.Str("title"), "hello there");
}

TEST_F(SessionRoutesTest, ExecutionControlsAnswerWithTheExecutionOr409) {
  std::string id = NewSession();
  std::string execution_id = Call("POST", "/sessions/" + id + "/messages", R"({"content":"hi"})").Str("execution_id");
  ASSERT_FALSE(execution_id.empty());
  const std::string base = "/executions/" + execution_id;
  EXPECT_EQ(Call("POST", base + "/resume").status, 409);  // pending is not paused
  EXPECT_EQ(Call("POST", base + "/input", R"({"content":"Tuesday"})").status, 409);
  EXPECT_EQ(Call("POST", base + "/cancel", R"({"why":"x"})").ErrorField(), "why");  // no body fields
  Reply cancelled = Call("POST", base + "/cancel", "{}");
  ASSERT_EQ(cancelled.status, 200) << cancelled.Dump();
  EXPECT_EQ(cancelled.Str("id"), execution_id);
  EXPECT_EQ(cancelled.Str("status"), "cancelled");
  EXPECT_EQ(Call("POST", base + "/cancel").status, 409);  // no body at all is fine too
}

TEST_F(SessionRoutesTest, AClosedSessionTakesNoMessages) {
  std::string id = NewSession();
  ASSERT_EQ(Call("PATCH", "/sessions/" + id, R"({"status":"closed"})").status, 200);
  Reply refused = Call("POST", "/sessions/" + id + "/messages", R"({"content":"hi"})");
  EXPECT_EQ(refused.status, 409) << refused.Dump();
  EXPECT_NE(refused.Dump().find("closed"), std::string::npos) << refused.Dump();
}

TEST_F(SessionRoutesTest, TheEventStreamResumesLikeEventsStream) {
  std::string id = NewSession();
  Reply live = Call("GET", "/sessions/" + id + "/events");
  ASSERT_NE(live.stream, nullptr) << live.Dump();
  EXPECT_EQ(live.stream->after_seq, 200);  // the newest event
  EXPECT_EQ(live.stream->owner_id, "default");
  EXPECT_EQ(live.stream->selector.any_tags, (std::vector<std::string>{"session:" + id, "session-activity:" + id}));
  EXPECT_EQ(Call("GET", "/sessions/" + id + "/events", "", {{"since", "150"}}).stream->after_seq, 150);
  EXPECT_EQ(Call("GET", "/sessions/" + id + "/events", "", {{"since", "99"}}).stream->after_seq, 99);
  EXPECT_EQ(Call("GET", "/sessions/" + id + "/events", "", {{"since", "120"}}, {{"last-event-id", "180"}}).stream->after_seq,
            180);
  Reply gone = Call("GET", "/sessions/" + id + "/events", "", {{"since", "50"}});
  EXPECT_EQ(gone.status, 410) << gone.Dump();
  EXPECT_EQ(Call("GET", "/sessions/" + id + "/events", "", {{"since", "201"}}).status, 400);
  EXPECT_EQ(Call("GET", "/sessions/" + id + "/events", "", {{"since", "abc"}}).status, 400);
  Reply twice = Call("GET", "/sessions/" + id + "/events", "", {{"since", "1"}, {"since", "2"}});
  EXPECT_EQ(twice.status, 400) << twice.Dump();
  EXPECT_EQ(twice.ErrorField(), "since");
}

}  // namespace
}  // namespace cairn::server
