#include "model/mcp_server_definition.h"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>

namespace cairn::model {
namespace {

Result<McpServerDefinition> Parse(const char* json) { return ParseMcpServerDefinition(boost::json::parse(json), Limits{}); }

TEST(McpServerDefinition, Stdio) {
  auto def = Parse(R"({"name":"files","transport":"stdio","command":["node","s.js"],"cwd":"/srv",
                       "limits":{"memory_mb":256},"timeout_ms":5000,"concurrency":2})");
  ASSERT_TRUE(def.ok()) << def.status().message();
  EXPECT_EQ(def->transport, McpTransportKind::kStdio);
  EXPECT_EQ(def->command, (std::vector<std::string>{"node", "s.js"}));
  EXPECT_EQ(def->limits.memory_mb, 256);
  EXPECT_EQ(def->limits.processes, 256);  // the process tools' default
  EXPECT_EQ(def->timeout_ms, 5000);
  EXPECT_EQ(def->connect_timeout_ms, 30000);
  EXPECT_EQ(def->concurrency, 2);
}

TEST(McpServerDefinition, Http) {
  auto def = Parse(R"({"name":"r-1","transport":"http","url":"https://x.example/mcp","headers":{"Authorization":"Bearer t"}})");
  ASSERT_TRUE(def.ok()) << def.status().message();
  ASSERT_EQ(def->headers.size(), 1u);
  EXPECT_EQ(def->headers[0].first, "Authorization");
  EXPECT_EQ(def->headers[0].second.value, "Bearer t");
  EXPECT_FALSE(def->headers[0].second.is_reference());
}

TEST(McpServerDefinition, SecretHeader) {
  auto def = Parse(R"({"name":"r","transport":"http","url":"https://x.example/mcp",
                       "headers":{"Authorization":{"secret":"mcp.token-1"},"X-Plain":"p"}})");
  ASSERT_TRUE(def.ok()) << def.status().message();
  ASSERT_EQ(def->headers.size(), 2u);
  EXPECT_EQ(def->headers[0].second.secret_name, "mcp.token-1");
  EXPECT_EQ(def->headers[0].second.value, "");
  EXPECT_EQ(def->headers[1].second.secret_name, "");
  EXPECT_EQ(def->headers[1].second.value, "p");
}

TEST(McpServerDefinition, RefusalsNameTheField) {
  struct Case {
    const char* json;
    const char* field;
  };
  for (const Case& c : std::vector<Case>{
           {R"([])", "context"},
           {R"({"name":"x"})", "context.transport"},
           {R"({"name":"x","transport":"sse"})", "context.transport"},
           {R"({"transport":"stdio","command":["a"]})", "context.name"},
           {R"({"name":"","transport":"stdio","command":["a"]})", "context.name"},
           {R"({"name":"a_b","transport":"stdio","command":["a"]})", "context.name"},
           {R"({"name":"x","transport":"stdio"})", "context.command"},
           {R"({"name":"x","transport":"stdio","command":[]})", "context.command"},
           {R"({"name":"x","transport":"stdio","command":["a"],"url":"http://h/"})", "context.url"},
           {R"({"name":"x","transport":"http","url":"http://h/","env":["A"]})", "context.env"},
           {R"({"name":"x","transport":"http"})", "context.url"},
           {R"({"name":"x","transport":"http","url":"file:///etc/passwd"})", "context.url"},
           {R"({"name":"x","transport":"http","url":"http://h/","headers":{"A":{"secret":"a b"}}})", "context.headers.A.secret"},
           {R"({"name":"x","transport":"http","url":"http://h/","headers":{"A":{"secret":""}}})", "context.headers.A.secret"},
           {R"({"name":"x","transport":"http","url":"http://h/","headers":{"A":{"secret":"s","x":1}}})", "context.headers.A.x"},
           {R"({"name":"x","transport":"http","url":"http://h/","headers":{"A":{"value":"s"}}})", "context.headers.A.value"},
           {R"({"name":"x","transport":"http","url":"http://h/","headers":{"A":"a\r\nB: b"}})", "context.headers.A"},
           {R"({"name":"x","transport":"http","url":"http://h/","headers":{"A B":"a"}})", "context.headers.A B"},
           {R"({"name":"x","transport":"stdio","command":["a"],"limits":{"cpu_seconds":1}})", "context.limits.cpu_seconds"},
           {R"({"name":"x","transport":"stdio","command":["a"],"timeout_ms":0})", "context.timeout_ms"},
           {R"({"name":"x","transport":"stdio","command":["a"],"concurrency":65})", "context.concurrency"},
           {R"({"name":"x","transport":"stdio","command":["a"],"extra":1})", "context.extra"},
       }) {
    auto def = Parse(c.json);
    ASSERT_FALSE(def.ok()) << c.json;
    EXPECT_EQ(def.status().field(), c.field) << c.json << ": " << def.status().message();
  }
}

TEST(McpServerDefinition, ToolNames) {
  EXPECT_EQ(McpToolName("files", "read_file"), "files__read_file");
  EXPECT_EQ(McpToolName("gh", "repos/get.issue"), "gh__repos_get_issue");
  EXPECT_EQ(McpToolName("s", std::string(100, 'x')).size(), 64u);
  EXPECT_TRUE(IsValidToolName(McpToolName("s", "a b:c/d")));
  EXPECT_EQ(McpServerPath("files"), "mcp/files");
}

}  // namespace
}  // namespace cairn::model
