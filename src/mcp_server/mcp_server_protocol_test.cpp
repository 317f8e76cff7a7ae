#include "mcp_server/mcp_server_protocol.h"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <vector>

namespace cairn::mcp_server {
namespace {
namespace json = boost::json;

// Records what the protocol asks of cairn and answers with canned values.
class RecordingBackend final : public CairnBackend {
 public:
  struct Call {
    std::string method, target;
    json::value body;
  };
  Result<json::value> Api(const std::string& method, const std::string& target, const json::value& body) override {
    calls.push_back({method, target, body});
    if (fail) return Status::NotFound("no such breadcrumb");
    return json::value(json::object{{"id", "b1"}, {"items", json::array{}}});
  }
  Result<json::object> CallTool(const std::string& tool, const json::value& input, std::chrono::seconds timeout) override {
    calls.push_back({"TOOL", tool + ":" + std::to_string(timeout.count()), input});
    if (tool == "broken") return json::object{{"status", "error"}, {"error", json::object{{"code", "internal"}, {"message", "boom"}}}};
    return json::object{{"status", "success"}, {"output", json::object{{"echo", input}}}};
  }
  Result<json::object> SendMessage(const std::string& session, const std::string& agent, const std::string& text,
                                   std::chrono::seconds) override {
    calls.push_back({"MESSAGE", session + "|" + agent, json::value(text)});
    return json::object{{"session_id", session}, {"answer", json::object{{"content", "hi"}}}};
  }
  std::vector<Call> calls;
  bool fail = false;
};

json::object Ask(McpServerProtocol& protocol, const std::string& text) {
  auto response = protocol.HandleText(text);
  EXPECT_TRUE(response.has_value()) << text;
  return response ? *response : json::object{};
}

json::object CallTool(McpServerProtocol& protocol, const std::string& name, const json::object& args) {
  json::object message{{"jsonrpc", "2.0"}, {"id", 7}, {"method", "tools/call"},
                       {"params", json::object{{"name", name}, {"arguments", args}}}};
  return Ask(protocol, json::serialize(message));
}

TEST(McpServerProtocol, NegotiatesTheVersion) {
  RecordingBackend backend;
  McpServerProtocol protocol(backend);
  auto answer = Ask(protocol, R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18"}})");
  EXPECT_EQ(answer.at("result").at("protocolVersion"), "2025-06-18");
  EXPECT_EQ(answer.at("id"), 1);
  answer = Ask(protocol, R"({"jsonrpc":"2.0","id":"a","method":"initialize","params":{"protocolVersion":"2024-11-05"}})");
  EXPECT_EQ(answer.at("result").at("protocolVersion"), "2025-11-25");
  EXPECT_EQ(answer.at("id"), "a");
}

TEST(McpServerProtocol, NotificationsAndResponsesGetNoAnswer) {
  RecordingBackend backend;
  McpServerProtocol protocol(backend);
  EXPECT_FALSE(protocol.HandleText(R"({"jsonrpc":"2.0","method":"notifications/initialized"})"));
  EXPECT_FALSE(protocol.HandleText(R"({"jsonrpc":"2.0","id":3,"result":{}})"));
}

TEST(McpServerProtocol, ProtocolErrors) {
  RecordingBackend backend;
  McpServerProtocol protocol(backend);
  EXPECT_EQ(Ask(protocol, "{oops").at("error").at("code"), -32700);
  EXPECT_EQ(Ask(protocol, "[1,2]").at("error").at("code"), -32600);
  EXPECT_EQ(Ask(protocol, R"({"jsonrpc":"2.0","id":1,"method":"prompts/list"})").at("error").at("code"), -32601);
  EXPECT_EQ(Ask(protocol, R"({"jsonrpc":"2.0","id":{},"method":"ping"})").at("error").at("code"), -32600);
  EXPECT_EQ(CallTool(protocol, "nope", {}).at("error").at("code"), -32602);
  EXPECT_TRUE(backend.calls.empty());
}

TEST(McpServerProtocol, ListsItsTools) {
  RecordingBackend backend;
  McpServerProtocol protocol(backend);
  auto tools = Ask(protocol, R"({"jsonrpc":"2.0","id":1,"method":"tools/list"})").at("result").at("tools").as_array();
  std::vector<std::string> names;
  for (const auto& tool : tools) names.emplace_back(tool.at("name").as_string());
  EXPECT_EQ(names, (std::vector<std::string>{"create_breadcrumb", "get_breadcrumb", "query_breadcrumbs", "search_breadcrumbs",
                                             "list_tools", "call_tool", "send_message"}));
  for (const auto& tool : tools) EXPECT_EQ(tool.at("inputSchema").at("type"), "object");
}

TEST(McpServerProtocol, ToolsBecomeApiCalls) {
  RecordingBackend backend;
  McpServerProtocol protocol(backend);
  auto result = CallTool(protocol, "get_breadcrumb", {{"id", "a b/c"}, {"full", true}}).at("result").as_object();
  EXPECT_FALSE(result.contains("isError"));
  EXPECT_EQ(result.at("structuredContent").at("id"), "b1");
  ASSERT_EQ(backend.calls.size(), 1u);
  EXPECT_EQ(backend.calls[0].target, "/breadcrumbs/a%20b%2Fc/full");

  CallTool(protocol, "query_breadcrumbs", {{"tag", "x&y"}, {"limit", 5}});
  EXPECT_EQ(backend.calls.back().target, "/breadcrumbs?tag=x%26y&limit=5&include_context=true");

  CallTool(protocol, "create_breadcrumb", {{"title", "t"}, {"context", {{"a", 1}}}, {"owner_id", "evil"}});
  EXPECT_EQ(backend.calls.back().method, "POST");
  EXPECT_EQ(backend.calls.back().body, (json::value{{"title", "t"}, {"context", {{"a", 1}}}}));
}

TEST(McpServerProtocol, BadArgumentsAreToolErrorsAndCallNothing) {
  RecordingBackend backend;
  McpServerProtocol protocol(backend);
  for (auto [tool, args] : std::vector<std::pair<std::string, json::object>>{
           {"get_breadcrumb", {}},
           {"get_breadcrumb", {{"id", 3}}},
           {"query_breadcrumbs", {{"limit", 1000}}},
           {"create_breadcrumb", {{"tags", json::array{"x"}}}},
           {"call_tool", {{"tool", "echo"}, {"input", "not an object"}}},
           {"call_tool", {{"tool", "echo"}, {"timeout_seconds", 0}}},
           {"send_message", {}}}) {
    auto result = CallTool(protocol, tool, args).at("result").as_object();
    EXPECT_EQ(result.at("isError"), true) << tool << " " << json::serialize(args);
  }
  EXPECT_TRUE(backend.calls.empty());
}

TEST(McpServerProtocol, CallToolAndSendMessage) {
  RecordingBackend backend;
  McpServerProtocol protocol(backend);
  auto result = CallTool(protocol, "call_tool", {{"tool", "echo"}, {"input", {{"x", 1}}}}).at("result").as_object();
  EXPECT_EQ(result.at("structuredContent"), (json::value{{"echo", {{"x", 1}}}}));
  EXPECT_EQ(backend.calls.back().target, "echo:60");
  result = CallTool(protocol, "call_tool", {{"tool", "broken"}}).at("result").as_object();
  EXPECT_EQ(result.at("isError"), true);
  EXPECT_NE(json::serialize(result).find("boom"), std::string::npos);

  result = CallTool(protocol, "send_message", {{"message", "hello"}, {"agent_id", "bot"}}).at("result").as_object();
  EXPECT_FALSE(result.contains("isError"));
  const std::string target = backend.calls.back().target;
  EXPECT_EQ(target.substr(0, 4), "mcp-") << "a new session id";
  EXPECT_EQ(target.substr(target.size() - 4), "|bot");
  backend.fail = true;
  result = CallTool(protocol, "get_breadcrumb", {{"id", "x"}}).at("result").as_object();
  EXPECT_EQ(result.at("isError"), true);
}

}  // namespace
}  // namespace cairn::mcp_server
