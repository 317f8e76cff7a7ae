// workflow.def.v1 parsing (workflow_definition.h): defaults, ordering by needs, templates, and
// errors naming the field.
#include "model/workflow_definition.h"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>

#include "model/selector.h"

namespace cairn::model {
namespace {

namespace json = boost::json;

Result<WorkflowDefinition> Parse(std::string_view text) { return ParseWorkflowDefinition(json::parse(text), Limits{}); }

std::string FieldOf(std::string_view text) {
  auto def = Parse(text);
  EXPECT_FALSE(def.ok()) << text;
  return def.ok() ? "" : def.status().field();
}

TEST(WorkflowDefinitionTest, StepsAreOrderedByTheirNeedsAndTheRequestTriggerComesFirst) {
  auto def = Parse(R"({"name": "chain", "steps": [
      {"id": "third", "tool": "echo", "needs": ["second"]},
      {"id": "first", "tool": "echo", "input": {"text": "${{ input.text }}"}},
      {"id": "second", "agent": "helper", "needs": ["first"], "retry": {"max_attempts": 3},
       "on_error": "continue", "when": "steps.first.status == 'completed'"}]})");
  ASSERT_TRUE(def.ok()) << def.status().ToString();
  ASSERT_EQ(def->steps.size(), 3u);
  EXPECT_EQ(def->steps[0].id, "first");
  EXPECT_EQ(def->steps[1].id, "second");
  EXPECT_EQ(def->steps[2].id, "third");
  EXPECT_EQ(def->steps[1].kind, StepKind::kAgent);
  EXPECT_EQ(def->steps[1].retry.max_attempts, 3);
  EXPECT_TRUE(def->steps[1].continue_on_error);
  EXPECT_FALSE(def->steps[0].continue_on_error);
  EXPECT_EQ(def->steps[0].timeout_ms, 300000);
  EXPECT_EQ(WorkflowPath("chain"), "workflows/chain");

  ASSERT_EQ(def->subscriptions.size(), 1u);
  Event request;
  request.type = "breadcrumb.created";
  request.schema_name = std::string(kWorkflowRequestSchema);
  request.context = json::parse(R"({"workflow": "chain"})");
  EXPECT_TRUE(TriggerMatches(def->subscriptions[0], request));
  request.context = json::parse(R"({"workflow": "other"})");
  EXPECT_FALSE(TriggerMatches(def->subscriptions[0], request));
}

TEST(WorkflowDefinitionTest, CyclesUnknownNeedsAndRepeatedIdsAreRefused) {
  EXPECT_EQ(FieldOf(R"({"name": "w", "steps": [{"id": "a", "tool": "echo", "needs": ["b"]},
                                                {"id": "b", "tool": "echo", "needs": ["a"]}]})"),
            "context.steps");
  EXPECT_EQ(FieldOf(R"({"name": "w", "steps": [{"id": "a", "tool": "echo", "needs": ["nope"]}]})"),
            "context.steps[0].needs[0]");
  EXPECT_EQ(FieldOf(R"({"name": "w", "steps": [{"id": "a", "tool": "echo", "needs": ["a"]}]})"),
            "context.steps[0].needs[0]");
  EXPECT_EQ(FieldOf(R"({"name": "w", "steps": [{"id": "a", "tool": "echo"}, {"id": "a", "tool": "echo"}]})"),
            "context.steps[1].id");
  auto cycle = Parse(R"({"name": "w", "steps": [{"id": "ok", "tool": "echo"},
      {"id": "x", "tool": "echo", "needs": ["y", "ok"]}, {"id": "y", "tool": "echo", "needs": ["x"]}]})");
  ASSERT_FALSE(cycle.ok());
  EXPECT_NE(cycle.status().message().find("x, y"), std::string::npos) << cycle.status().message();
}

TEST(WorkflowDefinitionTest, EveryFieldIsCheckedAndNamed) {
  EXPECT_EQ(FieldOf(R"({"steps": [{"id": "a", "tool": "echo"}]})"), "context.name");
  EXPECT_EQ(FieldOf(R"({"name": "w"})"), "context.steps");
  EXPECT_EQ(FieldOf(R"({"name": "w", "steps": []})"), "context.steps");
  EXPECT_EQ(FieldOf(R"({"name": "w w", "steps": [{"id": "a", "tool": "echo"}]})"), "context.name");
  EXPECT_EQ(FieldOf(R"({"name": "w", "steps": [{"id": "a-b", "tool": "echo"}]})"), "context.steps[0].id");
  EXPECT_EQ(FieldOf(R"({"name": "w", "steps": [{"id": "1a", "tool": "echo"}]})"), "context.steps[0].id");
  EXPECT_EQ(FieldOf(R"({"name": "w", "steps": [{"id": "a"}]})"), "context.steps[0]");
  EXPECT_EQ(FieldOf(R"({"name": "w", "steps": [{"id": "a", "tool": "echo", "agent": "x"}]})"), "context.steps[0]");
  EXPECT_EQ(FieldOf(R"({"name": "w", "steps": [{"id": "a", "tool": "echo", "retry": {"max_attempts": 11}}]})"),
            "context.steps[0].retry.max_attempts");
  EXPECT_EQ(FieldOf(R"({"name": "w", "steps": [{"id": "a", "tool": "echo",
                                                "retry": {"backoff_ms": 500, "max_backoff_ms": 100}}]})"),
            "context.steps[0].retry.max_backoff_ms");
  EXPECT_EQ(FieldOf(R"({"name": "w", "steps": [{"id": "a", "tool": "echo", "on_error": "ignore"}]})"),
            "context.steps[0].on_error");
  EXPECT_EQ(FieldOf(R"({"name": "w", "steps": [{"id": "a", "tool": "echo", "concurrency": 0}]})"),
            "context.steps[0].concurrency");
  EXPECT_EQ(FieldOf(R"({"name": "w", "steps": [{"id": "a", "tool": "echo", "timeout_ms": 0}]})"),
            "context.steps[0].timeout_ms");
  EXPECT_EQ(FieldOf(R"({"name": "w", "steps": [{"id": "a", "tool": "echo", "when": "${{ x }}"}]})"),
            "context.steps[0].when");
  EXPECT_EQ(FieldOf(R"({"name": "w", "steps": [{"id": "a", "tool": "echo", "for_each": "  "}]})"),
            "context.steps[0].for_each");
  EXPECT_EQ(FieldOf(R"({"name": "w", "steps": [{"id": "a", "tool": "echo", "input": {"x": ["${{ input.a "]}}]})"),
            "context.steps[0].input.x[0]");
  EXPECT_EQ(FieldOf(R"({"name": "w", "steps": [{"id": "a", "tool": "echo"}], "output": "${{}}"})"), "context.output");
  EXPECT_EQ(FieldOf(R"({"name": "w", "steps": [{"id": "a", "tool": "echo", "colour": 1}]})"), "context.steps[0].colour");
  EXPECT_EQ(FieldOf(R"({"name": "w", "steps": [{"id": "a", "tool": "echo"}], "input_schema": {"type": "strng"}})"),
            "context.input_schema.type");
  EXPECT_EQ(FieldOf(R"({"name": "w", "steps": [{"id": "a", "tool": "echo"}], "subscriptions": {"selectors": [
                        {"key": "workflow.request.v1", "schema_name": "x.v1"}]}})"),
            "context.subscriptions.selectors");
}

TEST(WorkflowDefinitionTest, TemplatesSplitIntoTextAndTrimmedExpressions) {
  auto parts = SplitTemplate("Hello ${{ input.name }}, you are ${{input.age}}!", "f");
  ASSERT_TRUE(parts.ok());
  ASSERT_EQ(parts->size(), 5u);
  EXPECT_FALSE((*parts)[0].expression);
  EXPECT_EQ((*parts)[0].text, "Hello ");
  EXPECT_TRUE((*parts)[1].expression);
  EXPECT_EQ((*parts)[1].text, "input.name");
  EXPECT_EQ((*parts)[3].text, "input.age");
  EXPECT_EQ((*parts)[4].text, "!");
  auto one = SplitTemplate("${{ steps.a.output }}", "f");
  ASSERT_TRUE(one.ok());
  ASSERT_EQ(one->size(), 1u);
  EXPECT_TRUE((*one)[0].expression);
  auto plain = SplitTemplate("no templates {{ here }}", "f");
  ASSERT_TRUE(plain.ok());
  ASSERT_EQ(plain->size(), 1u);
  EXPECT_FALSE((*plain)[0].expression);
  EXPECT_FALSE(SplitTemplate("${{ a ", "f").ok());
  EXPECT_FALSE(SplitTemplate("x ${{   }} y", "f").ok());
}

TEST(WorkflowDefinitionTest, RequestsAreChecked) {
  EXPECT_TRUE(ValidateWorkflowRequest(json::parse(R"({"workflow": "w", "input": {"a": 1}, "request_id": "r1"})")).ok());
  EXPECT_EQ(ValidateWorkflowRequest(json::parse(R"({"input": {}})")).field(), "context.workflow");
  EXPECT_EQ(ValidateWorkflowRequest(json::parse(R"({"workflow": "a b"})")).field(), "context.workflow");
  EXPECT_EQ(ValidateWorkflowRequest(json::parse(R"({"workflow": "w", "execution_depth": -1})")).field(),
            "context.execution_depth");
  EXPECT_EQ(ValidateWorkflowRequest(json::parse(R"({"workflow": "w", "extra": 1})")).field(), "context.extra");
  EXPECT_EQ(ValidateWorkflowRequest(json::parse(R"([])")).field(), "context");
}

}  // namespace
}  // namespace cairn::model
