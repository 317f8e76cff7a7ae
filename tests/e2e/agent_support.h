// Helpers for the agent end-to-end tests (agents_test.cpp, agents_recovery_test.cpp).
//
// AgentTest runs the real server with the built-in tools and the project's scripted
// OpenAI-compatible fixture server (llm_servers.h) as its custom LLM endpoint; each test scripts
// the fixture (SetScript) and drives the server like a client: it writes agent.def.v1 and
// user.message.v1 breadcrumbs and waits for the answers on event streams.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "llm_servers.h"
#include "tool_support.h"

namespace cairn::e2e {

// A fixture rule's `match` from its fields, e.g. Match({{"last_role", "user"}}).
json::object Match(std::initializer_list<std::pair<const char*, json::value>> fields);
// A fixture reply answering with `content` ({{last_content}} and the like are expanded).
json::object Text(const std::string& content);
// A fixture-server rule: {"match": match, "reply": reply} (plus "times" when > 0).
json::object Rule(json::object match, json::object reply, int times = 0);
// A reply asking for tool calls: each {name, arguments}.
json::object ToolCallsReply(std::vector<std::pair<std::string, json::value>> calls);

class AgentTest : public ToolTest {
 protected:
  void SetUp() override;
  std::vector<std::string> ServerArgs() const override;

  FixtureLlm& llm() { return *llm_; }
  // Scripts the fixture with `rules` (first match wins).
  void Script(json::array rules);
  // Creates an agent.def.v1 with `context` (agent_id required); fails the test unless 201.
  json::object DefineAgent(const json::object& context);
  // Writes a user.message.v1 {content, agent_id} tagged session:<session>; returns its record id.
  std::string Say(const std::string& content, const std::string& agent_id, const std::string& session = "s1");
  // Waits for the response (agent.response.v1, or `schema`) whose request is `message_id`.
  json::object AwaitAnswer(const std::string& message_id, const std::string& schema = "agent.response.v1");
  // The chat requests the fixture received so far (request bodies).
  std::vector<json::object> LlmRequests();

 private:
  std::unique_ptr<FixtureLlm> llm_;
};

// The messages of a chat request body.
const json::array& MessagesOf(const json::object& request);
// The tool messages of a chat request, in order.
std::vector<json::object> ToolMessagesOf(const json::object& request);

}  // namespace cairn::e2e
