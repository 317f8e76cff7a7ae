// An MCP tool called by an agent in a session: the server's notifications/progress are steps of
// the tool's run, told on the session channel (GET /sessions/{id}/events, ephemeral
// `tool.progress` frames naming the run and its parent) and counted in its step_count.
#include "session_support.h"
#include "support/subprocess.h"

namespace cairn::e2e {
namespace {

const std::string kNodeDir = CAIRN_E2E_MCP_NODE_DIR;

class e2e_mcp_sessions : public SessionTest {};

TEST_F(e2e_mcp_sessions, ProgressOfAToolTheAgentCalledIsOnTheSessionChannel) {
  const std::string node = test_support::FindOnPath("node");
  ASSERT_FALSE(node.empty()) << "`node` is not on PATH: run scripts/install-deps test";
  tools().Create(json::object{
      {"schema_name", "mcp.server.v1"},
      {"title", "scripted"},
      {"context", json::object{{"name", "scripted"}, {"transport", "stdio"},
                               {"command", json::array{json::string(node), json::string(kNodeDir + "/scripted-server.mjs")}},
                               {"timeout_ms", 20000}}}});
  json::object tool = tools().AwaitEvent("tool.v1", [](const json::object& e) {
    return StringAt(e, "path") == "tools/scripted__count" && StringAt(e, "type") != "breadcrumb.deleted";
  });
  ASSERT_FALSE(tool.empty()) << tools().Describe("tool.v1");

  Script({Rule(Match({{"last_role", "user"}}), ToolCallsReply({{"scripted__count", json::object{{"steps", 3}}}})),
          Rule(Match({{"last_role", "tool"}}), Text("The tool said {{last_tool_content}}"))});
  SessionAgent("counter", json::object{{"tools", json::array{"scripted__count"}}});
  const std::string sid = NewSessionId("counter");
  SessionStream stream(server(), sid);
  ASSERT_TRUE(stream.Open()) << stream.Describe();
  Posted posted = Send(sid, "count to three");
  ASSERT_TRUE(stream.AwaitType("execution.completed", posted.execution_id)) << stream.Describe();

  // The tool's run: its end is a frame naming the session's run as its parent.
  std::string tool_run;
  for (const SessionEvent& e : stream.Events()) {
    if (e.event_type == "execution.completed" && StringAt(e.data, "parent_execution_id") == posted.execution_id) {
      tool_run = e.execution_id;
    }
  }
  ASSERT_FALSE(tool_run.empty()) << DescribeEvents(stream.Events());

  // Its three progress notifications are steps of that run on the channel, in order, before its end.
  std::vector<SessionEvent> all = stream.Events(true);
  std::vector<SessionEvent> steps;
  size_t last_step_at = 0, tool_end_at = 0;
  for (size_t i = 0; i < all.size(); ++i) {
    if (all[i].event_type == "tool.progress") {
      steps.push_back(all[i]);
      last_step_at = i;
    }
    if (all[i].event_type == "execution.completed" && all[i].execution_id == tool_run) tool_end_at = i;
  }
  ASSERT_EQ(steps.size(), 3u) << DescribeEvents(all);
  EXPECT_LT(last_step_at, tool_end_at) << DescribeEvents(all);
  for (size_t i = 0; i < steps.size(); ++i) {
    const SessionEvent& step = steps[i];
    EXPECT_FALSE(step.stored()) << step.Describe();  // ephemeral: no id, not replayed
    EXPECT_EQ(step.session_id, sid) << step.Describe();
    EXPECT_EQ(step.execution_id, tool_run) << step.Describe();
    EXPECT_EQ(StringAt(step.data, "parent_execution_id"), posted.execution_id) << step.Describe();
    EXPECT_EQ(step.role, "info") << step.Describe();
    EXPECT_EQ(step.content, "counted " + std::to_string(i + 1)) << step.Describe();
    EXPECT_EQ(IntAt(step.metadata, "step"), static_cast<int64_t>(i + 1)) << step.Describe();
    EXPECT_EQ(IntAt(step.metadata, "progress"), static_cast<int64_t>(i + 1)) << step.Describe();
    EXPECT_EQ(IntAt(step.metadata, "total"), 3) << step.Describe();
    EXPECT_EQ(StringAt(step.metadata, "tool"), "scripted__count") << step.Describe();
  }

  // The run's record counts them; the agent got the tool's answer.
  json::object run = GetExecution(tool_run);
  EXPECT_EQ(IntAt(run, "step_count"), 3) << JsonText(run);
  EXPECT_EQ(StringAt(run, "executor"), "scripted__count") << JsonText(run);
  std::vector<json::object> answers = session_tests::WithRole(Messages(sid), "assistant");
  ASSERT_FALSE(answers.empty());
  EXPECT_NE(StringAt(answers.back(), "content").find("counted to 3"), std::string::npos) << JsonText(answers.back());
}

}  // namespace
}  // namespace cairn::e2e
