// The delegate tool's checks and records (delegation.h); end to end in tests/e2e/nested_agents_test.cpp.
#include "exec/agents/delegation.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <boost/json/parse.hpp>

namespace cairn::exec {
namespace {
namespace json = boost::json;

model::AgentDefinition Orchestrator() {
  model::AgentDefinition def;
  def.agent_id = "boss";
  def.agents = {"researcher", "writer"};
  def.max_delegation_depth = 2;
  def.max_children = 3;
  return def;
}

std::string CodeOf(const std::string& arguments, int64_t depth = 0, int64_t before = 0) {
  std::string code;
  auto checked = CheckDelegateCall(json::parse(arguments), Orchestrator(), depth, before, &code);
  return checked.ok() ? "ok" : code;
}

TEST(DelegationTest, ACallNamesAListedAgentAndATask) {
  std::string code;
  auto call = CheckDelegateCall(json::parse(R"({"agent": "writer", "task": "write", "input": {"n": 1}})"), Orchestrator(),
                                0, 0, &code);
  ASSERT_TRUE(call.ok()) << call.status().ToString();
  EXPECT_EQ(call->agent, "writer");
  EXPECT_EQ(call->task, "write");
  EXPECT_EQ(call->input, json::parse(R"({"n": 1})"));
  EXPECT_EQ(CodeOf(R"({"agent": "stranger", "task": "x"})"), "unknown_agent");
  EXPECT_EQ(CodeOf(R"({"agent": "writer"})"), "invalid_arguments");
  EXPECT_EQ(CodeOf(R"({"agent": "writer", "task": ""})"), "invalid_arguments");
  EXPECT_EQ(CodeOf(R"({"agent": "writer", "task": 7})"), "invalid_arguments");
  EXPECT_EQ(CodeOf(R"(["writer"])"), "invalid_arguments");
  std::string big = R"({"agent": "writer", "task": ")" + std::string(64 * 1024 + 1, 'x') + R"("})";
  EXPECT_EQ(CodeOf(big), "invalid_arguments");
}

TEST(DelegationTest, DepthAndChildrenAreBounded) {
  const char* ok = R"({"agent": "writer", "task": "t"})";
  EXPECT_EQ(CodeOf(ok, 1), "ok");               // the child runs at depth 2: allowed
  EXPECT_EQ(CodeOf(ok, 2), "depth_exceeded");   // it would run at 3
  EXPECT_EQ(CodeOf(ok, 0, 2), "ok");
  EXPECT_EQ(CodeOf(ok, 0, 3), "too_many_children");
}

TEST(DelegationTest, TheRecordsCarryTheTaskAndTheLineage) {
  DelegateCall call{"writer", "write it", json::parse(R"({"n": 1})")};
  Lineage lineage{"", "root1", 0, "s1"};
  auto drafts = DelegationDrafts(call, TaskId(2, 1), "exec1-2-1", "boss", "exec1", lineage, model::Trace{}, 100);
  ASSERT_EQ(drafts.size(), 2u);
  EXPECT_EQ(drafts[0].schema_name, std::string(model::kAgentTaskSchema));
  EXPECT_EQ(drafts[0].path, "executions/exec1/tasks/2-1");
  const json::object& task = drafts[0].context.as_object();
  EXPECT_EQ(task.at("status"), "pending");
  EXPECT_EQ(task.at("assignee"), "writer");
  EXPECT_EQ(task.at("parent_execution_id"), "exec1");
  EXPECT_EQ(drafts[1].schema_name, std::string(model::kUserMessageSchema));
  const json::object& message = drafts[1].context.as_object();
  EXPECT_EQ(message.at("agent_id"), "writer");
  EXPECT_EQ(message.at("request_id"), "exec1-2-1");
  EXPECT_EQ(message.at("content"), "write it\n\nInput (JSON): {\"n\":1}");
  EXPECT_EQ(message.at("execution_id"), "exec1");  // the child's parent
  EXPECT_EQ(message.at("root_execution_id"), "root1");
  EXPECT_EQ(message.at("session_id"), "s1");
  // The session's channel follows the task.
  EXPECT_NE(std::find(drafts[0].tags.begin(), drafts[0].tags.end(), "session-activity:s1"), drafts[0].tags.end());
}

TEST(DelegationTest, TasksHandedOutTogetherShareWhatIsLeft) {
  EXPECT_EQ(TaskBudgetShare(10, 1), 10);
  EXPECT_EQ(TaskBudgetShare(10, 2), 5);
  EXPECT_EQ(TaskBudgetShare(10, 3), 3);  // rounded down: together they get no more than is left
  EXPECT_EQ(TaskBudgetShare(2, 3), 0);
  EXPECT_EQ(TaskBudgetShare(0, 2), 0);
  EXPECT_EQ(TaskBudgetShare(-5, 2), 0);  // a reply that overshot the budget leaves nothing
  EXPECT_EQ(TaskBudgetShare(10, 0), 0);
}

TEST(DelegationTest, AnAnswerBecomesTheToolResult) {
  EXPECT_EQ(DelegateResultText(json::parse(R"({"status": "success", "message": "done"})").as_object()), "done");
  EXPECT_EQ(DelegateResultText(json::parse(R"({"status": "error", "error": {"code": "llm_error", "message": "m"}})").as_object()),
            R"({"error":{"code":"llm_error","message":"m"}})");
  EXPECT_EQ(DelegatedAgent(R"({"agent": "writer", "task": "t"})"), "writer");
  EXPECT_EQ(DelegatedAgent("not json"), "");
}

}  // namespace
}  // namespace cairn::exec
