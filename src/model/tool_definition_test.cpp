// tool.v1 limits and the environment a process tool may name (the rest of ParseToolDefinition
// is covered in subscription_test.cpp).
#include "model/tool_definition.h"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>

namespace cairn::model {
namespace {

namespace json = boost::json;

Result<ToolDefinition> Parse(const std::string& text, const Limits& limits = Limits{}) {
  return ParseToolDefinition(json::parse(text), limits);
}

std::string Process(const std::string& extra) {
  return R"({"name": "t", "runtime": "process", "command": ["t"])" + (extra.empty() ? "" : ", " + extra) + "}";
}

TEST(ToolLimitsTest, ProcessToolsGetTheDocumentedDefaults) {
  auto def = Parse(Process(""));
  ASSERT_TRUE(def.ok()) << def.status().ToString();
  EXPECT_EQ(def->timeout_ms, 30000);
  EXPECT_EQ(def->process_limits.memory_mb, 1024);
  EXPECT_EQ(def->process_limits.processes, 256);
  EXPECT_EQ(def->process_limits.output_bytes, 16 << 20);
  EXPECT_EQ(def->process_limits.cpu_seconds, 0);
}

TEST(ToolLimitsTest, LimitsOverrideThem) {
  auto def = Parse(Process(
      R"("limits": {"timeout_ms": 500, "memory_mb": 64, "processes": 8, "output_bytes": 4096, "cpu_seconds": 2})"));
  ASSERT_TRUE(def.ok()) << def.status().ToString();
  EXPECT_EQ(def->timeout_ms, 500);
  EXPECT_EQ(def->process_limits.memory_mb, 64);
  EXPECT_EQ(def->process_limits.processes, 8);
  EXPECT_EQ(def->process_limits.output_bytes, 4096);
  EXPECT_EQ(def->process_limits.cpu_seconds, 2);

  // The timeout is every runtime's.
  auto builtin = Parse(R"({"name": "echo", "runtime": "builtin", "limits": {"timeout_ms": 700}})");
  ASSERT_TRUE(builtin.ok()) << builtin.status().ToString();
  EXPECT_EQ(builtin->timeout_ms, 700);
}

TEST(ToolLimitsTest, OlderSpellingsStillRead) {
  auto def = Parse(Process(R"("timeout_ms": 900, "memory_mb": 128, "cpu_seconds": 3)"));
  ASSERT_TRUE(def.ok()) << def.status().ToString();
  EXPECT_EQ(def->timeout_ms, 900);
  EXPECT_EQ(def->process_limits.memory_mb, 128);
  EXPECT_EQ(def->process_limits.cpu_seconds, 3);
  // memory_mb 0 once meant "no limit": there is always one now.
  def = Parse(Process(R"("memory_mb": 0)"));
  ASSERT_TRUE(def.ok()) << def.status().ToString();
  EXPECT_EQ(def->process_limits.memory_mb, 1024);
}

TEST(ToolLimitsTest, MistakesAreNamed) {
  struct Case {
    std::string json;
    const char* field;
  } cases[] = {
      {Process(R"("limits": 3)"), "context.limits"},
      {Process(R"("limits": {"memory": 5})"), "context.limits.memory"},
      {Process(R"("limits": {"memory_mb": 0})"), "context.limits.memory_mb"},
      {Process(R"("limits": {"memory_mb": 2000000})"), "context.limits.memory_mb"},
      {Process(R"("limits": {"processes": 0})"), "context.limits.processes"},
      {Process(R"("limits": {"output_bytes": 0})"), "context.limits.output_bytes"},
      {Process(R"("limits": {"output_bytes": 1073741824})"), "context.limits.output_bytes"},
      {Process(R"("limits": {"cpu_seconds": -1})"), "context.limits.cpu_seconds"},
      {Process(R"("limits": {"timeout_ms": 0})"), "context.limits.timeout_ms"},
      {Process(R"("limits": {"timeout_ms": 5}, "timeout_ms": 5)"), "context.limits.timeout_ms"},
      {Process(R"("limits": {"memory_mb": 5}, "memory_mb": 5)"), "context.limits.memory_mb"},
      {Process(R"("cpu_seconds": 1, "limits": {"cpu_seconds": 1})"), "context.limits.cpu_seconds"},
      {R"({"name": "t", "runtime": "http", "url": "http://x", "limits": {"memory_mb": 5}})", "context.limits.memory_mb"},
      {R"({"name": "t", "runtime": "builtin", "limits": {"processes": 5}})", "context.limits.processes"},
  };
  for (const auto& c : cases) {
    auto parsed = Parse(c.json);
    ASSERT_FALSE(parsed.ok()) << c.json;
    EXPECT_EQ(parsed.status().code(), StatusCode::kValidation) << c.json;
    EXPECT_EQ(parsed.status().field(), c.field) << c.json << " -> " << parsed.status().message();
  }
}

TEST(ToolSecretEnvTest, ReferencesAreReadAndMistakesNamed) {
  auto def = Parse(Process(R"("secret_env": {"API_TOKEN": {"secret": "TOKEN"}})"));
  ASSERT_TRUE(def.ok()) << def.status().ToString();
  ASSERT_EQ(def->secret_env.size(), 1u);
  EXPECT_EQ(def->secret_env[0], (std::pair<std::string, std::string>{"API_TOKEN", "TOKEN"}));
  struct Case {
    std::string json;
    const char* field;
  } cases[] = {
      {Process(R"("secret_env": ["X"])"), "context.secret_env"},
      {Process(R"("secret_env": {"1X": {"secret": "S"}})"), "context.secret_env.1X"},
      {Process(R"("secret_env": {"X": "S"})"), "context.secret_env.X"},
      {Process(R"("secret_env": {"X": {"secret": "S", "more": 1}})"), "context.secret_env.X.more"},
      {Process(R"("secret_env": {"X": {"secret": 5}})"), "context.secret_env.X.secret"},
      {R"({"name": "t", "runtime": "http", "url": "https://x.example", "secret_env": {}})", "context.secret_env"},
  };
  for (const auto& c : cases) {
    auto parsed = Parse(c.json);
    ASSERT_FALSE(parsed.ok()) << c.json;
    EXPECT_EQ(parsed.status().field(), c.field) << c.json << ": " << parsed.status().ToString();
  }
}

TEST(ToolEnvTest, PatternsMatchWholeNames) {
  EXPECT_TRUE(ToolEnvPatternMatches("PGHOST", "PGHOST"));
  EXPECT_FALSE(ToolEnvPatternMatches("PGHOST", "PGHOSTS"));
  EXPECT_TRUE(ToolEnvPatternMatches("PG*", "PG"));
  EXPECT_TRUE(ToolEnvPatternMatches("PG*", "PGPORT"));
  EXPECT_FALSE(ToolEnvPatternMatches("PG*", "XPG"));
  EXPECT_TRUE(ToolEnvPatternMatches("*_URL", "DATABASE_URL"));
  EXPECT_TRUE(ToolEnvPatternMatches("A*B*C", "AxxBxxBxC"));
  EXPECT_FALSE(ToolEnvPatternMatches("A*B*C", "AxxBxx"));
  EXPECT_TRUE(ToolEnvPatternMatches("*", "ANYTHING"));
}

TEST(ToolEnvTest, TheAllowListDecides) {
  Limits limits;
  // Nothing allowed by default but the variables every tool gets anyway.
  EXPECT_TRUE(Parse(Process(R"("env": ["PATH", "LANG", "TZ", "HOME"])"), limits).ok());
  auto refused = Parse(Process(R"("env": ["PATH", "PGHOST"])"), limits);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kValidation);
  EXPECT_EQ(refused.status().field(), "context.env[1]");
  EXPECT_NE(refused.status().message().find("PGHOST"), std::string::npos) << refused.status().message();

  limits.tool_env.allow = {"PG*", "DATABASE_URL"};
  auto allowed = Parse(Process(R"("env": ["PGHOST", "PGPORT", "DATABASE_URL"])"), limits);
  ASSERT_TRUE(allowed.ok()) << allowed.status().ToString();
  EXPECT_EQ(allowed->env, (std::vector<std::string>{"PGHOST", "PGPORT", "DATABASE_URL"}));
  EXPECT_EQ(Parse(Process(R"("env": ["HTTP_PROXY"])"), limits).status().field(), "context.env[0]");
  EXPECT_EQ(Parse(Process(R"("env": ["A=B"])"), limits).status().code(), StatusCode::kValidation);
  EXPECT_EQ(Parse(Process(R"("env": ["PG HOST"])"), limits).status().field(), "context.env[0]");
}

TEST(ToolEnvTest, SettingsAndProviderKeysAreNeverPassedWhateverTheAllowList) {
  Limits limits;
  limits.tool_env.allow = {"*"};
  limits.tool_env.secret_names = {"OPENAI_API_KEY", "OPENROUTER_API_KEY"};
  EXPECT_TRUE(Parse(Process(R"("env": ["PGHOST"])"), limits).ok());
  for (const char* name : {"CAIRN_LLM_API_KEY", "CAIRN_DATA_DIR", "CAIRN_", "OPENAI_API_KEY", "OPENROUTER_API_KEY"}) {
    auto parsed = Parse(Process(std::string(R"("env": ["PGHOST", ")") + name + "\"]"), limits);
    ASSERT_FALSE(parsed.ok()) << name;
    EXPECT_EQ(parsed.status().code(), StatusCode::kInvalidArgument) << name;
    EXPECT_EQ(parsed.status().field(), "context.env[1]") << name;
    EXPECT_NE(parsed.status().message().find(name), std::string::npos) << parsed.status().message();
  }
  // Exact names only: a variable that merely resembles a key is the allow-list's business.
  EXPECT_TRUE(Parse(Process(R"("env": ["OPENAI_API_KEY_FILE", "XCAIRN_Y"])"), limits).ok());
}

}  // namespace
}  // namespace cairn::model
