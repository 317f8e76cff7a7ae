// Executors per tenant across restarts (docs/auth.md "Tenants"): a tenant other than `default`
// gets the built-in tools and the default agent when it is created, its own tools run again after
// a restart, and its session executions pending at a kill -9 are resumed.
#include <gtest/gtest.h>

#include <algorithm>

#include "auth_support.h"
#include "llm_servers.h"
#include "session_support.h"
#include "sse_client.h"

namespace cairn::e2e {
namespace {

using namespace std::chrono_literals;

class e2e_tenants_recovery : public AuthServerTest {
 protected:
  std::vector<std::string> ServerArgs() const override {
    auto args = AuthServerTest::ServerArgs();
    for (const std::string& arg : {std::string("--llm-base-url"), llm_->base_url(), std::string("--llm-model"),
                                   std::string("fixture-model"), std::string("--llm-backoff-base-ms"), std::string("1"),
                                   std::string("--sync"), std::string("normal"),
                                   std::string("--default-agent=true")}) {
      args.push_back(arg);
    }
    return args;
  }
  void SetUp() override {
    llm_ = std::make_unique<FixtureLlm>(json::object{{"rules", json::array{}}});
    ASSERT_TRUE(llm_->Start()) << llm_->error();
    builtin_tools_ = true;
    AuthServerTest::SetUp();
    ASSERT_EQ(client().Post("/tenants", R"({"id":"acme","name":"Acme"})", Bearer(kBootstrapKey)).status, 201);
    acme_key_ = KeyFor("acme", "ann", {"admin"});
    acme_ = Bearer(acme_key_);
  }
  void Restart(bool kill) {
    if (kill) {
      server().Kill9();
      ASSERT_TRUE(server().Start()) << server().error();
    } else {
      ASSERT_TRUE(server().Restart()) << server().error();
    }
    Reconnect();
  }
  // acme's tool.response.v1 events, from the start of the log.
  std::unique_ptr<SseClient> AcmeResponses() {
    auto stream = std::make_unique<SseClient>(server().url() +
                                              "/events/stream?schema_name=tool.response.v1&since=0&access_token=" +
                                              UrlEncode(acme_key_));
    stream->Start();
    EXPECT_TRUE(stream->WaitForOpen(10s)) << stream->Describe();
    return stream;
  }
  std::string Request(const std::string& tool, json::object input) {
    return StringAt(CreateOk(json::object{{"title", "call"},
                                          {"schema_name", "tool.request.v1"},
                                          {"context", {{"tool", tool}, {"input", std::move(input)}}}},
                             acme_),
                    "id");
  }
  std::vector<std::string> AcmePaths(const std::string& schema) {
    std::vector<std::string> paths;
    Response r = client().Get("/breadcrumbs?schema_name=" + schema + "&limit=100", acme_);
    EXPECT_EQ(r.status, 200) << r.Describe();
    json::object body = ObjectOf(r);
    const auto* items = body.if_contains("items");
    if (items && items->is_array()) {
      for (const auto& item : items->as_array()) paths.push_back(StringAt(item.as_object(), "path"));
    }
    return paths;
  }

  std::unique_ptr<FixtureLlm> llm_;
  std::string acme_key_;
  Headers acme_;
};

bool Contains(const std::vector<std::string>& list, const std::string& item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

TEST_F(e2e_tenants_recovery, ANewTenantGetsTheBuiltinsAndItsToolsRunAfterARestart) {
  // Installed when the tenant was created, in that tenant.
  EXPECT_TRUE(Contains(AcmePaths("tool.v1"), "tools/echo"));
  EXPECT_TRUE(Contains(AcmePaths("agent.def.v1"), "agents/default-chat-assistant"));
  CreateOk(json::object{{"title", "tool mirror"}, {"schema_name", "tool.v1"},
                        {"context", {{"name", "mirror"}, {"runtime", "builtin"}, {"builtin", "echo"}}}},
           acme_);
  Restart(/*kill=*/false);
  // Once more after a restart: the built-ins are not written again.
  std::vector<std::string> tools = AcmePaths("tool.v1");
  EXPECT_EQ(std::count(tools.begin(), tools.end(), "tools/echo"), 1);

  auto responses = AcmeResponses();
  std::string mirror = Request("mirror", json::object{{"x", 1}});
  std::string echo = Request("echo", json::object{{"y", 2}});
  ASSERT_TRUE(responses->WaitForEvents(2, 30s)) << responses->Describe();
  for (const std::string& request : {mirror, echo}) {
    bool answered = false;
    for (const SseFrame& frame : responses->Events()) {
      std::string text = frame.data.value_or("");
      if (text.find(request) == std::string::npos) continue;
      answered = true;
      EXPECT_EQ(text.find("unknown_tool"), std::string::npos) << text;
      EXPECT_NE(text.find("\"status\":\"success\""), std::string::npos) << text;
    }
    EXPECT_TRUE(answered) << request << ": " << responses->Describe();
  }
}

TEST_F(e2e_tenants_recovery, ATenantsPendingSessionExecutionResumesAfterKill9) {
  ASSERT_TRUE(llm_->SetScript(json::object{
      {"rules", {Rule(Match({{"last_role", "user"}}), session_tests::SleepCall(1500)),
                 Rule(Match({{"last_role", "tool"}}), Text("rested: {{last_tool_content}}"))}}}));
  CreateOk(json::object{{"title", "agent sleeper"}, {"schema_name", "agent.def.v1"},
                        {"context", {{"agent_id", "sleeper"}, {"tools", {"sleep"}}, {"system_prompt", "Sleep."}}}},
           acme_);
  Response session = client().Post("/sessions", R"({"agent_id":"sleeper"})", acme_);
  ASSERT_EQ(session.status, 201) << session.Describe();
  std::string sid = StringAt(ObjectOf(session), "id");
  std::string execution;
  {
    SessionStream stream(server(), sid, acme_);
    ASSERT_TRUE(stream.Open()) << stream.Describe();
    Response posted = client().Post("/sessions/" + sid + "/messages", R"({"content":"take a nap"})", acme_);
    ASSERT_EQ(posted.status, 202) << posted.Describe();
    execution = StringAt(ObjectOf(posted), "execution_id");
    ASSERT_TRUE(stream.AwaitType("tool.called", execution)) << stream.Describe();
  }
  Restart(/*kill=*/true);

  SessionStream stream(server(), sid, acme_, "since=0");
  ASSERT_TRUE(stream.Open()) << stream.Describe();
  auto end = stream.AwaitEnd(execution);
  ASSERT_TRUE(end) << stream.Describe();
  EXPECT_EQ(end->event_type, "execution.completed") << stream.Describe();
  EXPECT_EQ(session_tests::CountOf(stream.Events(), "tool.called", execution), 1u) << "the tool call is not made again";
  EXPECT_EQ(llm_->Requests().size(), 2u) << "each model call once";
}

}  // namespace
}  // namespace cairn::e2e
