// The daily LLM token quota per tenant (docs/auth.md, "Token quota"): counted from the usage the
// model replies report, durable across a kill -9, enforced before every model call of session
// and event-triggered runs alike, and raised by a system admin. (The day rolling over is
// src/exec/token_quota_test.cpp's, with a hand-set clock.)
#include "session_support.h"

namespace cairn::e2e {
namespace {

using namespace std::chrono_literals;
using namespace session_tests;

class e2e_quota : public SessionTest {
 protected:
  std::vector<std::string> ServerArgs() const override {
    auto args = SessionTest::ServerArgs();
    for (const char* arg : {"--daily-token-quota", "100"}) args.push_back(arg);
    return args;
  }
  // Every reply reports 60 tokens.
  void ScriptReplies() {
    json::object reply = Text("fine");
    reply["usage"] = json::object{{"prompt_tokens", 40}, {"completion_tokens", 20}, {"total_tokens", 60}};
    Script({Rule(Match({{"last_role", "user"}}), reply)});
  }
  json::object Usage() {
    Response r = client().Get("/tenants/default/usage");
    EXPECT_EQ(r.status, 200) << r.Describe();
    return ObjectOf(r);
  }
};

TEST_F(e2e_quota, RunsStopAtTheQuotaTheCountSurvivesAKillAndAnAdminRaisesIt) {
  ScriptReplies();
  SessionAgent("counted");
  std::string sid = NewSessionId("counted");
  auto stream = std::make_unique<SessionStream>(server(), sid);
  ASSERT_TRUE(stream->Open()) << stream->Describe();
  // 60, then 120 tokens: the second run starts below the quota and is the one that crosses it.
  for (const char* text : {"one", "two"}) {
    Posted p = Send(sid, text);
    auto end = stream->AwaitEnd(p.execution_id);
    ASSERT_TRUE(end) << stream->Describe();
    EXPECT_EQ(end->event_type, "execution.completed") << end->Describe();
  }
  json::object usage = Usage();
  EXPECT_EQ(IntAt(usage, "tokens_used"), 120) << JsonText(usage);
  EXPECT_EQ(IntAt(usage, "daily_token_quota"), 100);
  Response metrics = client().Get("/metrics");  // the same count, labelled with the tenant
  EXPECT_NE(metrics.body.find("\ncairn_llm_tokens_total{tenant=\"default\"} 120\n"), std::string::npos) << metrics.body;

  // The next run is refused before it calls the model: on the execution and the session channel.
  Posted refused = Send(sid, "three");
  auto end = stream->AwaitEnd(refused.execution_id);
  ASSERT_TRUE(end) << stream->Describe();
  EXPECT_EQ(end->event_type, "execution.failed");
  EXPECT_EQ(StringAt(end->metadata, "code"), "quota_exceeded") << end->Describe();
  EXPECT_NE(end->content.find("120 of its 100"), std::string::npos) << end->content;
  json::object execution = GetExecution(refused.execution_id);
  EXPECT_EQ(StringAt(ObjAt(execution, "error"), "code"), "quota_exceeded") << JsonText(execution);
  EXPECT_EQ(LlmRequests().size(), 2u);

  // An agent triggered by an event is held to the same quota.
  SessionAgent("plain");
  std::string message = Say("hello", "plain", "s-plain");
  json::object answer = AwaitAnswer(message);
  EXPECT_NE(JsonText(answer).find("quota_exceeded"), std::string::npos) << JsonText(answer);
  EXPECT_EQ(LlmRequests().size(), 2u);

  // A kill -9 keeps the day's count.
  stream.reset();
  server().Kill9();
  ASSERT_TRUE(server().Start()) << server().error();
  Reconnect();
  EXPECT_EQ(IntAt(Usage(), "tokens_used"), 120);
  stream = std::make_unique<SessionStream>(server(), sid);
  ASSERT_TRUE(stream->Open()) << stream->Describe();
  Posted after = Send(sid, "four");
  auto after_end = stream->AwaitEnd(after.execution_id);
  ASSERT_TRUE(after_end) << stream->Describe();
  EXPECT_EQ(StringAt(after_end->metadata, "code"), "quota_exceeded") << after_end->Describe();

  // The tenant's own quota overrides the default.
  Response raised = client().Patch("/tenants/default", R"({"daily_token_quota": 1000})");
  ASSERT_EQ(raised.status, 200) << raised.Describe();
  EXPECT_EQ(IntAt(ObjectOf(raised), "daily_token_quota"), 1000);
  Posted allowed = Send(sid, "five");
  auto allowed_end = stream->AwaitEnd(allowed.execution_id);
  ASSERT_TRUE(allowed_end) << stream->Describe();
  EXPECT_EQ(allowed_end->event_type, "execution.completed") << allowed_end->Describe();
  EXPECT_EQ(IntAt(Usage(), "tokens_used"), 180);
}

TEST_F(e2e_quota, BadQuotasAreRefusedNamingTheField) {
  EXPECT_TRUE(IsError(client().Patch("/tenants/default", R"({"daily_token_quota": -1})"), 422, "validation_failed",
                      "daily_token_quota"));
  EXPECT_TRUE(IsError(client().Patch("/tenants/default", R"({"daily_token_quota": "many"})"), 422, "validation_failed",
                      "daily_token_quota"));
  EXPECT_TRUE(IsError(client().Patch("/tenants/default", R"({})"), 422, "validation_failed", "daily_token_quota"));
  EXPECT_TRUE(IsError(client().Patch("/tenants/default", R"({"quota": 5})"), 422, "validation_failed", "quota"));
  EXPECT_TRUE(IsError(client().Post("/tenants", R"({"id":"t1","daily_token_quota":1.5})"), 422, "validation_failed",
                      "daily_token_quota"));
  EXPECT_TRUE(IsError(client().Patch("/tenants/nowhere", R"({"daily_token_quota": 5})"), 404, "not_found"));
  EXPECT_EQ(IntAt(Usage(), "daily_token_quota"), 100) << "nothing changed";
}

}  // namespace
}  // namespace cairn::e2e
