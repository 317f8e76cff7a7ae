// Agent durability end to end: the server is killed (SIGKILL) while an agent waits for a slow
// tool; after the restart the execution continues from its snapshot — the model is not asked
// again for the reply it already gave, the tool request is not written again, and the run ends
// with exactly one answer.
#include "agent_support.h"

namespace cairn::e2e {
namespace {

class e2e_agents_recovery : public AgentTest {
 protected:
  std::vector<std::string> ServerArgs() const override {
    auto args = AgentTest::ServerArgs();
    args.insert(args.end(), {"--sync", "normal"});
    return args;
  }
};

TEST_F(e2e_agents_recovery, KillDuringASlowToolCompletesOnceAfterRestart) {
  Script({Rule(json::object{{"last_role", "user"}}, ToolCallsReply({{"sleep", json::object{{"ms", 1500}}}})),
          Rule(json::object{{"last_role", "tool"}}, json::object{{"content", "rested: {{last_tool_content}}"}})});
  DefineAgent(json::object{{"agent_id", "sleeper"}, {"tools", json::array{"sleep"}}});
  std::string id = Say("take a nap", "sleeper");
  // The agent has asked for the tool (the request is written with its snapshot): crash now.
  json::object request = tools().AwaitEvent("tool.request.v1", [](const json::object& e) { return HasTag(e, "agent:sleeper"); });
  std::string request_id = StringAt(ContextOf(request), "request_id");
  ASSERT_FALSE(request_id.empty());
  server().Kill9();
  ASSERT_TRUE(server().Start()) << server().error();
  ReconnectTools();

  json::object answer = AwaitAnswer(id);
  EXPECT_EQ(StringAt(ContextOf(answer), "status"), "success") << JsonText(answer);
  EXPECT_EQ(StringAt(ContextOf(answer), "message").rfind("rested:", 0), 0u) << JsonText(answer);

  // The model got the first request once and the second once.
  auto requests = LlmRequests();
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_EQ(ToolMessagesOf(requests[0]).size(), 0u);
  EXPECT_EQ(ToolMessagesOf(requests[1]).size(), 1u);
  // One tool request, answered once; one answer to the message, from the second attempt.
  EXPECT_EQ(ListAll("schema_name=tool.request.v1&tag=agent:sleeper&include_context=true").size(), 1u);
  tools().AwaitResponse(request_id);
  EXPECT_EQ(tools().ResponsesTo(request_id).size(), 1u);
  json::object execution = tools().AwaitExecution(id);
  EXPECT_EQ(IntAt(ContextOf(execution), "attempt"), 2);
  EXPECT_EQ(ListIds("schema_name=agent.response.v1").size(), 1u);
}

}  // namespace
}  // namespace cairn::e2e
