// Sessions end to end: the API itself — session records written around it, invalid transitions,
// unknown ids, bad bodies and parameters, PATCH, step snapshots, a thousand sessions paged, the
// default agent. See sessions_stream_test.cpp for the setting.
#include <algorithm>
#include <set>

#include "session_support.h"

namespace cairn::e2e {
namespace {

using namespace std::chrono_literals;
using namespace session_tests;
using SteadyClock = std::chrono::steady_clock;

TEST_F(e2e_sessions, SessionRecordsCannotBeWrittenAroundTheApi) {
  std::string sid = NewSessionId("default-chat-assistant");
  auto before = StoreSnapshot();
  for (const char* schema : {"agent.session.v1", "agent.session.message.v1", "agent.execution.v1", "agent.snapshot.v1"}) {
    Response r = client().Post("/breadcrumbs", JsonText(json::object{{"schema_name", schema}, {"title", "forged"},
                                                                     {"context", json::object{{"status", "pending"}}}}));
    EXPECT_TRUE(IsError(r, 422, "validation_failed", "schema_name")) << schema << ": " << r.body;
  }
  // Nor changed or deleted through /breadcrumbs.
  auto sessions = ListAll("schema_name=agent.session.v1");
  ASSERT_EQ(sessions.size(), 1u);
  std::string record = StringAt(sessions[0], "id");
  EXPECT_TRUE(IsError(client().Patch("/breadcrumbs/" + record, R"({"context":"x"})"), 422, "validation_failed"));
  EXPECT_TRUE(IsError(client().Delete("/breadcrumbs/" + record), 422, "validation_failed"));
  EXPECT_EQ(StoreSnapshot(), before);
  EXPECT_EQ(client().Get("/sessions/" + sid).status, 200);
}

// ---- invalid requests ---------------------------------------------------------------------------

TEST_F(e2e_sessions, InvalidTransitionsAreConflicts) {
  Script({Rule(Match({{"last_role", "user"}, {"last_content_contains", "nap"}}), SleepCall(10000)),
          Rule(Match({{"last_role", "user"}}), Text("ok"))});
  SessionAgent("helper");
  std::string sid = NewSessionId("helper");
  SessionStream stream(server(), sid);
  ASSERT_TRUE(stream.Open()) << stream.Describe();
  Posted done = Send(sid, "hi");
  ASSERT_TRUE(stream.AwaitEnd(done.execution_id));
  ASSERT_EQ(StringAt(GetExecution(done.execution_id), "status"), "completed");
  std::string x = "/executions/" + done.execution_id;
  auto before = StoreSnapshot();
  EXPECT_TRUE(IsError(PostJson(x + "/cancel", json::object{}), 409, "conflict")) << "cancel a completed execution";
  EXPECT_TRUE(IsError(PostJson(x + "/resume", json::object{}), 409, "conflict")) << "resume a completed execution";
  EXPECT_TRUE(IsError(PostJson(x + "/input", json::object{{"content", "late"}}), 409, "conflict"))
      << "answer a completed execution";
  EXPECT_EQ(StoreSnapshot(), before);

  // A running one takes no input and cannot be resumed.
  Posted running = Send(sid, "take a nap");
  ASSERT_TRUE(stream.AwaitType("tool.called", running.execution_id));
  std::string y = "/executions/" + running.execution_id;
  EXPECT_TRUE(IsError(PostJson(y + "/input", json::object{{"content", "now?"}}), 409, "conflict"));
  EXPECT_TRUE(IsError(PostJson(y + "/resume", json::object{}), 409, "conflict"));
  EXPECT_EQ(StringAt(GetExecution(running.execution_id), "status"), "running");
  ASSERT_EQ(PostJson(y + "/cancel", json::object{}).status, 200);
  ASSERT_TRUE(stream.AwaitEnd(running.execution_id, 9000ms));
  EXPECT_TRUE(IsError(PostJson(y + "/cancel", json::object{}), 409, "conflict")) << "cancel twice";
}

TEST_F(e2e_sessions, UnknownIdsAre404OnEveryRoute) {
  Script({Rule(Match({{"last_role", "user"}}), Text("ok"))});
  SessionAgent("helper");
  std::string sid = NewSessionId("helper");
  SessionStream stream(server(), sid);
  ASSERT_TRUE(stream.Open()) << stream.Describe();
  Posted p = Send(sid, "hi");
  ASSERT_TRUE(stream.AwaitEnd(p.execution_id));
  std::string snapshot_id = StringAt(GetExecution(p.execution_id), "last_snapshot_id");
  std::string plain = StringAt(CreateOk(json::object{{"title", "not a session"}}), "id");
  auto before = StoreSnapshot();

  // Ids that exist as something else are unknown here too.
  const std::vector<std::string> not_sessions = {"0193e4c2-0000-7000-8000-000000000000", "nope", p.execution_id,
                                                 p.message_id, plain, snapshot_id};
  const std::vector<std::string> not_executions = {"0193e4c2-0000-7000-8000-000000000000", "nope", sid, p.message_id,
                                                   plain, snapshot_id};
  const std::vector<std::string> not_snapshots = {"0193e4c2-0000-7000-8000-000000000000", "nope", sid, p.execution_id,
                                                  plain};
  HttpClient quick(server().port());
  quick.set_timeout(5000ms);  // a stream answered 200 by mistake must not hang the test
  for (const auto& id : not_sessions) {
    std::string s = "/sessions/" + id;
    EXPECT_TRUE(IsError(client().Get(s), 404, "not_found")) << s;
    EXPECT_TRUE(IsError(client().Patch(s, R"({"title":"x"})"), 404, "not_found")) << s;
    EXPECT_TRUE(IsError(client().Post(s + "/messages", R"({"content":"x"})"), 404, "not_found")) << s;
    EXPECT_TRUE(IsError(client().Get(s + "/messages"), 404, "not_found")) << s;
    EXPECT_TRUE(IsError(quick.Get(s + "/events"), 404, "not_found")) << s;
  }
  for (const auto& id : not_executions) {
    std::string x = "/executions/" + id;
    EXPECT_TRUE(IsError(client().Get(x), 404, "not_found")) << x;
    EXPECT_TRUE(IsError(client().Post(x + "/cancel", "{}"), 404, "not_found")) << x;
    EXPECT_TRUE(IsError(client().Post(x + "/resume", "{}"), 404, "not_found")) << x;
    EXPECT_TRUE(IsError(client().Post(x + "/input", R"({"content":"x"})"), 404, "not_found")) << x;
    EXPECT_TRUE(IsError(client().Get(x + "/snapshots"), 404, "not_found")) << x;
  }
  for (const auto& id : not_snapshots) {
    EXPECT_TRUE(IsError(client().Get("/snapshots/" + id), 404, "not_found")) << id;
  }
  EXPECT_EQ(StoreSnapshot(), before);
}

TEST_F(e2e_sessions, BadBodiesAre422BadParametersAre400AndNothingIsWritten) {
  SessionAgent("helper");
  std::string sid = NewSessionId("helper");
  auto before = StoreSnapshot();

  struct Case {
    const char* body;
    const char* field;
  };
  const Case create[] = {
      {R"([])", "body"},
      {R"("a session")", "body"},
      {R"({"policy": "sometimes"})", "policy"},
      {R"({"snapshot_policy": "all"})", "snapshot_policy"},
      {R"({"title": 5})", "title"},
      {R"({"metadata": "x"})", "metadata"},
      {R"({"user_id": 7})", "user_id"},
      {R"({"agent_id": ["a"]})", "agent_id"},
      {R"({"related_id": {}})", "related_id"},
      {R"({"initial_context_url": false})", "initial_context_url"},
  };
  for (const auto& c : create) {
    EXPECT_TRUE(IsErrorNaming(client().Post("/sessions", c.body), 422, "validation_failed", c.field)) << c.body;
  }
  EXPECT_TRUE(IsClientError(client().Post("/sessions", "{not json")));
  const Case patch[] = {
      {R"([])", "body"},
      {R"({"status": "deleted"})", "status"},
      {R"({"title": 7})", "title"},
      {R"({"metadata": []})", "metadata"},
  };
  for (const auto& c : patch) {
    EXPECT_TRUE(IsErrorNaming(client().Patch("/sessions/" + sid, c.body), 422, "validation_failed", c.field)) << c.body;
  }
  const Case message[] = {
      {R"([])", "body"},
      {R"({})", "content"},
      {R"({"content": 5})", "content"},
      {R"({"content": null})", "content"},
      {R"({"content": "x", "metadata": "y"})", "metadata"},
  };
  for (const auto& c : message) {
    EXPECT_TRUE(IsErrorNaming(client().Post("/sessions/" + sid + "/messages", c.body), 422, "validation_failed", c.field))
        << c.body;
  }
  const Case queries[] = {
      {"/sessions?limit=0", "limit"},
      {"/sessions?limit=1001", "limit"},
      {"/sessions?limit=abc", "limit"},
      {"/sessions?status=bogus", "status"},
      {"/sessions?user_id=", "user_id"},
      {"/sessions?bogus=1", "bogus"},
      {"/sessions?limit=5&limit=6", "limit"},
      {"/executions?status=bogus", "status"},
      {"/executions?limit=0", "limit"},
      {"/sessions/SID/messages?roles=robot", "roles"},
      {"/sessions/SID/messages?fold_info=maybe", "fold_info"},
      {"/sessions/SID/messages?limit=0", "limit"},
      {"/sessions?cursor=garbage", "cursor"},
      {"/executions?cursor=garbage", "cursor"},
      {"/sessions/SID?x=1", "x"},
      {"/sessions/SID/events?since=1&since=2", "since"},
  };
  for (const auto& c : queries) {
    std::string target = c.body;
    if (auto at = target.find("SID"); at != std::string::npos) target.replace(at, 3, sid);
    EXPECT_TRUE(IsErrorNaming(client().Get(target), 400, "bad_request", c.field)) << target;
  }
  HttpClient quick(server().port());
  quick.set_timeout(5000ms);
  EXPECT_EQ(quick.Get("/sessions/" + sid + "/events?since=abc").status, 400);
  EXPECT_EQ(quick.Get("/sessions/" + sid + "/events?since=999999999").status, 400) << "since ahead of the newest event";
  EXPECT_EQ(StoreSnapshot(), before);
  EXPECT_TRUE(LlmRequests().empty());
}

TEST_F(e2e_sessions, PatchUpdatesASessionAndAClosedOneTakesNoMessages) {
  SessionAgent("helper");
  std::string sid = NewSessionId("helper", json::object{{"metadata", json::object{{"a", 1}}}});
  json::object created = GetSession(sid);
  Response r = client().Patch("/sessions/" + sid, R"({"title": "Renamed", "metadata": {"b": 2}, "status": "archived"})");
  ASSERT_EQ(r.status, 200) << r.Describe();
  json::object patched = ObjectOf(r);
  EXPECT_EQ(StringAt(patched, "title"), "Renamed");
  EXPECT_EQ(StringAt(patched, "status"), "archived");
  EXPECT_EQ(JsonText(patched.at("metadata")), R"({"b":2})");
  EXPECT_GE(MicrosAt(patched, "updated_at"), MicrosAt(created, "updated_at"));
  EXPECT_EQ(JsonText(GetSession(sid)), JsonText(patched));
  EXPECT_EQ(IdsOf(ListEvery("/sessions?status=archived")), std::vector<std::string>{sid});

  ASSERT_EQ(client().Patch("/sessions/" + sid, R"({"status": "closed"})").status, 200);
  auto before = StoreSnapshot();
  Response refused = PostJson("/sessions/" + sid + "/messages", json::object{{"content", "hello?"}});
  EXPECT_TRUE(IsError(refused, 409, "conflict")) << "a closed session takes no messages";
  EXPECT_EQ(StoreSnapshot(), before);
}

// ---- snapshots ----------------------------------------------------------------------------------

TEST_F(e2e_sessions, StepSnapshotsReadBackAsFullStates) {
  // Nine tool rounds with distinct arguments, then the answer: ten model calls, ten steps.
  json::array rules;
  for (int i = 0; i < 9; ++i) {
    rules.push_back(Rule(Match({{"tool_results", i}}), ToolCallsReply({{"echo", json::object{{"text", "round " + std::to_string(i)}}}})));
  }
  rules.push_back(Rule(Match({}), Text("all rounds done")));
  Script(std::move(rules));
  SessionAgent("rounds", json::object{{"max_iterations", 20}});
  std::string sid = NewSessionId("rounds", json::object{{"snapshot_policy", "steps"}});
  SessionStream stream(server(), sid);
  ASSERT_TRUE(stream.Open()) << stream.Describe();
  Posted p = Send(sid, "go round");
  auto end = stream.AwaitEnd(p.execution_id);
  ASSERT_TRUE(end);
  ASSERT_EQ(end->event_type, "execution.completed") << stream.Describe();
  EXPECT_EQ(IntAt(GetExecution(p.execution_id), "step_count"), 10);

  int pages = 0;
  auto snapshots = ListEvery("/executions/" + p.execution_id + "/snapshots", 3, &pages);
  ASSERT_GE(snapshots.size(), 10u) << "one per step";
  EXPECT_GE(pages, 4);
  std::set<std::string> ids;
  size_t finals = 0;
  for (const auto& s : snapshots) {
    ids.insert(StringAt(s, "id"));
    finals += IsTrueAt(s, "is_final") ? 1 : 0;
    EXPECT_FALSE(IsTrueAt(s, "debug_mode")) << JsonText(s);
  }
  EXPECT_EQ(ids.size(), snapshots.size()) << "no duplicates across pages";
  EXPECT_EQ(finals, 1u);
  EXPECT_TRUE(IsTrueAt(snapshots.front(), "is_final")) << "newest first";
  EXPECT_EQ(StringAt(snapshots.front(), "id"), StringAt(GetExecution(p.execution_id), "last_snapshot_id"));

  // Oldest first: every full state extends the previous one.
  std::reverse(snapshots.begin(), snapshots.end());
  json::array previous;
  int64_t previous_step = -1;
  for (size_t i = 0; i < snapshots.size(); ++i) {
    std::string id = StringAt(snapshots[i], "id");
    Response r = client().Get("/snapshots/" + id);
    ASSERT_EQ(r.status, 200) << r.Describe();
    json::object snapshot = ObjectOf(r);
    json::object state = StateOf(snapshot);
    ASSERT_TRUE(state.contains("messages") && state.at("messages").is_array()) << JsonText(snapshot);
    const json::array& messages = state.at("messages").as_array();
    ASSERT_GE(messages.size(), previous.size()) << "snapshot " << i;
    for (size_t m = 0; m < previous.size(); ++m) {
      EXPECT_EQ(JsonText(messages[m]), JsonText(previous[m])) << "snapshot " << i << " message " << m;
    }
    int64_t step = IntAt(snapshot, "step_number");
    EXPECT_GE(step, previous_step) << JsonText(snapshot);
    if (i > 0) {
      EXPECT_EQ(StringAt(snapshot, "parent_snapshot_id"), StringAt(snapshots[i - 1], "id")) << JsonText(snapshot);
    }
    previous = messages;
    previous_step = step;
  }
  std::string whole = JsonText(previous);
  for (int i = 0; i < 9; ++i) EXPECT_NE(whole.find("round " + std::to_string(i)), std::string::npos) << i;
  EXPECT_NE(whole.find("all rounds done"), std::string::npos);

  // debug: every snapshot says so.
  Script({Rule(Match({{"last_role", "user"}}), ToolCallsReply({{"echo", json::object{{"text", "dbg"}}}})),
          Rule(Match({{"last_role", "tool"}}), Text("debugged"))});
  std::string debug_sid = NewSessionId("rounds", json::object{{"snapshot_policy", "debug"}});
  SessionStream debug_stream(server(), debug_sid);
  ASSERT_TRUE(debug_stream.Open());
  Posted d = Send(debug_sid, "debug me");
  ASSERT_TRUE(debug_stream.AwaitEnd(d.execution_id));
  auto debug_snapshots = ListEvery("/executions/" + d.execution_id + "/snapshots");
  EXPECT_GE(debug_snapshots.size(), 2u);
  for (const auto& s : debug_snapshots) EXPECT_TRUE(IsTrueAt(s, "debug_mode")) << JsonText(s);
}

// ---- many sessions ------------------------------------------------------------------------------

TEST_F(e2e_sessions, AThousandSessionsListedWithFiltersAndCursorsNewestFirst) {
  constexpr int kCount = 1000;
  std::vector<std::string> ids;
  ids.reserve(kCount);
  for (int i = 0; i < kCount; ++i) {
    json::object body{{"title", "session " + std::to_string(i)}, {"user_id", i % 2 == 0 ? "u1" : "u2"},
                      {"agent_id", i % 10 == 0 ? "special" : "helper"}};
    if (i % 100 == 0) {
      body["related_type"] = "ticket";
      body["related_id"] = "T" + std::to_string(i);
    }
    Response r = client().Post("/sessions", json::serialize(body));
    ASSERT_EQ(r.status, 201) << i << ": " << r.Describe();
    ids.push_back(StringAt(ObjectOf(r), "id"));
  }
  std::set<std::string> unique(ids.begin(), ids.end());
  ASSERT_EQ(unique.size(), ids.size());
  for (int i = 0; i < 10; ++i) {
    ASSERT_EQ(client().Patch("/sessions/" + ids[i * 7], R"({"status":"archived"})").status, 200);
  }

  auto newest_first = [&](const std::function<bool(int)>& keep) {
    std::vector<std::string> out;
    for (int i = kCount - 1; i >= 0; --i) {
      if (keep(i)) out.push_back(ids[i]);
    }
    return out;
  };
  int pages = 0;
  auto all = ListEvery("/sessions", 100, &pages);
  EXPECT_EQ(pages, 10);
  EXPECT_EQ(IdsOf(all), newest_first([](int) { return true; }));
  for (size_t i = 1; i < all.size(); ++i) {
    EXPECT_LE(MicrosAt(all[i], "created_at"), MicrosAt(all[i - 1], "created_at")) << i;
  }
  EXPECT_EQ(IdsOf(ListEvery("/sessions?user_id=u1", 37)), newest_first([](int i) { return i % 2 == 0; }));
  EXPECT_EQ(IdsOf(ListEvery("/sessions?user_id=u2", 1000)), newest_first([](int i) { return i % 2 == 1; }));
  EXPECT_EQ(IdsOf(ListEvery("/sessions?agent_id=special", 7)), newest_first([](int i) { return i % 10 == 0; }));
  EXPECT_EQ(IdsOf(ListEvery("/sessions?user_id=u1&agent_id=special", 9)), newest_first([](int i) { return i % 10 == 0; }));
  EXPECT_EQ(IdsOf(ListEvery("/sessions?related_type=ticket", 3)), newest_first([](int i) { return i % 100 == 0; }));
  EXPECT_EQ(IdsOf(ListEvery("/sessions?related_type=ticket&related_id=T300")), std::vector<std::string>{ids[300]});
  EXPECT_EQ(IdsOf(ListEvery("/sessions?status=archived", 4)),
            newest_first([](int i) { return i % 7 == 0 && i / 7 < 10; }));
  EXPECT_EQ(ListEvery("/sessions?status=active", 500).size(), static_cast<size_t>(kCount - 10));
  EXPECT_TRUE(ListEvery("/sessions?user_id=nobody").empty());
  // The default page is 50.
  Response first_page = client().Get("/sessions");
  ASSERT_EQ(first_page.status, 200);
  json::object first_body = ObjectOf(first_page);
  const json::value* first_items = first_body.if_contains("items");
  ASSERT_TRUE(first_items != nullptr && first_items->is_array()) << first_page.body.substr(0, 300);
  EXPECT_EQ(first_items->as_array().size(), 50u);
}

// ---- the default agent --------------------------------------------------------------------------

class e2e_sessions_default_agent : public SessionTest {
 protected:
  std::vector<std::string> ServerArgs() const override {
    auto args = SessionTest::ServerArgs();
    args.push_back("--default-agent=true");
    return args;
  }
};

TEST_F(e2e_sessions_default_agent, ASessionWithoutAnAgentTalksToTheDefaultAgent) {
  Script({Rule(Match({{"last_role", "user"}}), ToolCallsReply({{"echo", json::object{{"text", "hi"}}}})),
          Rule(Match({{"last_role", "tool"}}), Text("The default agent used echo"))});
  json::object session = NewSession(json::object{});
  std::string sid = StringAt(session, "id");
  ASSERT_FALSE(sid.empty());
  EXPECT_EQ(StringAt(session, "agent_id"), "default-chat-assistant");
  EXPECT_EQ(StringAt(session, "title"), "New session");
  SessionStream stream(server(), sid);
  ASSERT_TRUE(stream.Open()) << stream.Describe();
  Posted p = Send(sid, "say hi through a tool");
  auto end = stream.AwaitEnd(p.execution_id);
  ASSERT_TRUE(end);
  EXPECT_EQ(end->event_type, "execution.completed") << stream.Describe();
  auto requests = LlmRequests();
  ASSERT_EQ(requests.size(), 2u) << "run once, by the session (not again by the user.message.v1 subscription)";
  auto offered = OfferedTools(requests[0]);
  for (const char* tool : {"echo", "sleep", "user_input"}) {
    EXPECT_NE(std::find(offered.begin(), offered.end(), tool), offered.end()) << tool << " offered";
  }
  EXPECT_TRUE(ListIds("schema_name=agent.response.v1").empty()) << "the answer is a session message";
  auto assistant = WithRole(Messages(sid), "assistant");
  ASSERT_EQ(assistant.size(), 1u);
  EXPECT_EQ(StringAt(assistant[0], "content"), "The default agent used echo");
}

}  // namespace
}  // namespace cairn::e2e
