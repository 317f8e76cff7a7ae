#include "agent_support.h"

#include <gtest/gtest.h>

namespace cairn::e2e {

json::object Match(std::initializer_list<std::pair<const char*, json::value>> fields) {
  json::object m;
  for (const auto& [k, v] : fields) m[k] = v;
  return m;
}

json::object Text(const std::string& content) { return json::object{{"content", content}}; }

json::object Rule(json::object match, json::object reply, int times) {
  json::object rule{{"match", std::move(match)}, {"reply", std::move(reply)}};
  if (times > 0) rule["times"] = times;
  return rule;
}

json::object ToolCallsReply(std::vector<std::pair<std::string, json::value>> calls) {
  json::array list;
  for (auto& [name, arguments] : calls) list.push_back(json::object{{"name", name}, {"arguments", arguments}});
  return json::object{{"tool_calls", std::move(list)}};
}

void AgentTest::SetUp() {
  llm_ = std::make_unique<FixtureLlm>(json::object{{"rules", json::array{}}});
  ASSERT_TRUE(llm_->Start()) << llm_->error();
  ToolTest::SetUp();
}

std::vector<std::string> AgentTest::ServerArgs() const {
  return {"--llm-base-url", llm_->base_url(), "--llm-model", "fixture-model", "--llm-backoff-base-ms", "1"};
}

void AgentTest::Script(json::array rules) {
  ASSERT_TRUE(llm_->SetScript(json::object{{"rules", std::move(rules)}}));
}

json::object AgentTest::DefineAgent(const json::object& context) {
  return tools().Create(json::object{{"schema_name", "agent.def.v1"}, {"title", "agent"}, {"context", context}});
}

std::string AgentTest::Say(const std::string& content, const std::string& agent_id, const std::string& session) {
  json::object context{{"content", content}};
  if (!agent_id.empty()) context["agent_id"] = agent_id;
  json::object record = tools().Create(json::object{{"schema_name", "user.message.v1"},
                                                    {"title", content.substr(0, 60)},
                                                    {"tags", json::array{json::value("session:" + session)}},
                                                    {"context", std::move(context)}});
  return StringAt(record, "id");
}

json::object AgentTest::AwaitAnswer(const std::string& message_id, const std::string& schema) {
  return tools().AwaitEvent(schema, [&](const json::object& e) { return HasTag(e, "request:" + message_id); });
}

std::vector<json::object> AgentTest::LlmRequests() {
  std::vector<json::object> out;
  for (auto& body : llm_->Requests()) {
    if (body.is_object()) out.push_back(body.as_object());
  }
  return out;
}

const json::array& MessagesOf(const json::object& request) {
  static const json::array kEmpty;
  const json::value* messages = request.if_contains("messages");
  return messages && messages->is_array() ? messages->as_array() : kEmpty;
}

std::vector<json::object> ToolMessagesOf(const json::object& request) {
  std::vector<json::object> out;
  for (const auto& m : MessagesOf(request)) {
    if (m.is_object() && StringAt(m.as_object(), "role") == "tool") out.push_back(m.as_object());
  }
  return out;
}

}  // namespace cairn::e2e
