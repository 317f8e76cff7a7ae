// agent.def.v1 parsing (agent_definition.h): defaults, every field, and errors naming the field.
#include <gtest/gtest.h>

#include <boost/json/parse.hpp>

#include "model/agent_definition.h"

namespace cairn::model {
namespace {

namespace json = boost::json;

TEST(AgentDefinitionTest, MinimalGetsDefaultsAndTriggersOnMessagesToIt) {
  auto def = ParseAgentDefinition(json::parse(R"({"agent_id": "helper"})"), Limits{});
  ASSERT_TRUE(def.ok()) << def.status().ToString();
  EXPECT_EQ(def->max_iterations, 10);
  EXPECT_TRUE(def->stream);
  EXPECT_TRUE(def->tools.empty());
  EXPECT_FALSE(def->output);
  ASSERT_EQ(def->subscriptions.size(), 1u);
  Event to_it;
  to_it.type = "breadcrumb.created";
  to_it.schema_name = "user.message.v1";
  to_it.context = json::parse(R"({"content": "hi", "agent_id": "helper"})");
  EXPECT_TRUE(TriggerMatches(def->subscriptions[0], to_it));
  Event to_other = to_it;
  to_other.context = json::parse(R"({"content": "hi", "agent_id": "other"})");
  EXPECT_FALSE(TriggerMatches(def->subscriptions[0], to_other));
  EXPECT_EQ(AgentPath("helper"), "agents/helper");
}

TEST(AgentDefinitionTest, EveryField) {
  auto def = ParseAgentDefinition(json::parse(R"({
      "agent_id": "triage", "description": "d", "model": "openrouter/x/y", "temperature": 0.5,
      "system_prompt": "s", "tools": ["echo"], "max_iterations": 3, "max_tokens": 100,
      "max_tokens_per_execution": 1000, "stream": false, "timeout_ms": 5000, "tool_timeout_ms": 400,
      "concurrency": 2, "agents": ["researcher", "writer"], "max_delegation_depth": 2, "max_children": 4,
      "output": {"schema_name": "t.v1", "tags": ["x"], "schema": {"type": "object"}},
      "subscriptions": {"selectors": [{"schema_name": "ticket.v1"}]}})"),
                                  Limits{});
  ASSERT_TRUE(def.ok()) << def.status().ToString();
  EXPECT_EQ(def->model, "openrouter/x/y");
  EXPECT_EQ(def->temperature, 0.5);
  EXPECT_EQ(def->max_tokens, 100);
  EXPECT_FALSE(def->stream);
  ASSERT_TRUE(def->output);
  EXPECT_EQ(def->output->schema_name, "t.v1");
  EXPECT_EQ(def->subscriptions[0].selector.schema_name, "ticket.v1");
  EXPECT_EQ(def->agents, (std::vector<std::string>{"researcher", "writer"}));
  EXPECT_EQ(def->max_delegation_depth, 2);
  EXPECT_EQ(def->max_children, 4);
}

TEST(AgentDefinitionTest, MistakesAreNamed) {
  struct Case {
    const char* json;
    const char* field;
  } cases[] = {
      {R"([])", "context"},
      {R"({})", "context.agent_id"},
      {R"({"agent_id": "a b"})", "context.agent_id"},
      {R"({"agent_id": "a", "temperature": -1})", "context.temperature"},
      {R"({"agent_id": "a", "max_iterations": 101})", "context.max_iterations"},
      {R"({"agent_id": "a", "tools": "echo"})", "context.tools"},
      {R"({"agent_id": "a", "tools": ["ok", "not ok"]})", "context.tools[1]"},
      {R"({"agent_id": "a", "stream": 1})", "context.stream"},
      {R"({"agent_id": "a", "output": {"tags": []}})", "context.output.schema_name"},
      {R"({"agent_id": "a", "output": {"schema_name": "tool.request.v1"}})", "context.output.schema_name"},
      {R"({"agent_id": "a", "output": {"schema_name": "x.v1", "schema": {"type": "nonsense"}}})", "context.output.schema.type"},
      {R"({"agent_id": "a", "subscriptions": {"selectors": [{"schema_name": "x.v1", "role": "context"}]}})",
       "context.subscriptions.selectors"},
      {R"({"agent_id": "a", "colour": "red"})", "context.colour"},
      {R"({"agent_id": "a", "agents": ["b", "not ok"]})", "context.agents[1]"},
      {R"({"agent_id": "a", "agents": ["b", "a"]})", "context.agents"},
      {R"({"agent_id": "a", "max_delegation_depth": 0})", "context.max_delegation_depth"},
      {R"({"agent_id": "a", "max_children": 257})", "context.max_children"},
  };
  for (const auto& c : cases) {
    auto parsed = ParseAgentDefinition(json::parse(c.json), Limits{});
    ASSERT_FALSE(parsed.ok()) << c.json;
    EXPECT_EQ(parsed.status().code(), StatusCode::kValidation) << c.json;
    EXPECT_EQ(parsed.status().field(), c.field) << c.json << " -> " << parsed.status().message();
  }
}

TEST(AgentDefinitionTest, ContextBudgetIsOptionalAndBounded) {
  auto none = ParseAgentDefinition(json::parse(R"({"agent_id": "a"})"), Limits{});
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->context_budget_tokens.has_value());
  auto set = ParseAgentDefinition(json::parse(R"({"agent_id": "a", "context_budget_tokens": 4000})"), Limits{});
  ASSERT_TRUE(set.ok()) << set.status().ToString();
  EXPECT_EQ(set->context_budget_tokens, 4000);
  for (const char* bad : {R"({"agent_id": "a", "context_budget_tokens": 0})",
                          R"({"agent_id": "a", "context_budget_tokens": 10000001})",
                          R"({"agent_id": "a", "context_budget_tokens": "4000"})",
                          R"({"agent_id": "a", "context_budget_tokens": 1.5})"}) {
    auto parsed = ParseAgentDefinition(json::parse(bad), Limits{});
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_EQ(parsed.status().field(), "context.context_budget_tokens") << bad;
  }
}

TEST(AgentDefinitionTest, ApiKeyIsOnlyASecretReference) {
  auto set = ParseAgentDefinition(json::parse(R"({"agent_id": "a", "api_key": {"secret": "OPENAI_KEY"}})"), Limits{});
  ASSERT_TRUE(set.ok()) << set.status().ToString();
  EXPECT_EQ(set->api_key_secret, "OPENAI_KEY");
  struct Case {
    const char* json;
    const char* field;
  };
  for (const Case& c : std::vector<Case>{{R"({"agent_id": "a", "api_key": "sk-plain"})", "context.api_key"},
                                         {R"({"agent_id": "a", "api_key": {"secret": "a b"}})", "context.api_key.secret"},
                                         {R"({"agent_id": "a", "api_key": {"secret": "K", "prefix": "x"}})",
                                          "context.api_key.prefix"}}) {
    auto parsed = ParseAgentDefinition(json::parse(c.json), Limits{});
    ASSERT_FALSE(parsed.ok()) << c.json;
    EXPECT_EQ(parsed.status().field(), c.field) << c.json << ": " << parsed.status().message();
  }
}

}  // namespace
}  // namespace cairn::model
