#include "exec/agents/prompt.h"

#include <algorithm>
#include <boost/json/serialize.hpp>

#include "model/agent_definition.h"
#include "model/llm_hints.h"

namespace cairn::exec {
namespace json = boost::json;
namespace {

std::string StringField(const json::object& o, std::string_view key) {
  const json::value* v = o.if_contains(key);
  return v && v->is_string() ? std::string(v->as_string()) : "";
}

bool IsConversationRecord(const json::value& item) {
  if (!item.is_object()) return false;
  std::string schema = StringField(item.as_object(), "schema_name");
  return schema == model::kUserMessageSchema || schema == model::kAgentResponseSchema;
}

std::string RenderValue(const json::value& value) {
  if (value.is_array()) {
    std::string out;
    for (const auto& item : value.as_array()) out += (out.empty() ? "" : "\n") + RenderRecord(item);
    return out.empty() ? "(none)" : out;
  }
  return RenderRecord(value);
}

// The conversation turns of a conversation key, oldest first, without the trigger.
void AppendTurns(const json::array& records, const std::string& trigger_id, std::vector<llm::ChatMessage>& out) {
  for (auto it = records.rbegin(); it != records.rend(); ++it) {  // records come newest first
    const json::object& record = it->as_object();
    if (StringField(record, "id") == trigger_id) continue;
    std::string text = UserTextOf(record);
    if (text.empty()) continue;  // an error answer, or a message without text
    bool is_user = StringField(record, "schema_name") == model::kUserMessageSchema;
    out.push_back(llm::ChatMessage{is_user ? "user" : "assistant", std::move(text), true, {}, ""});
  }
}

}  // namespace

std::string UserTextOf(const json::value& record) {
  if (!record.is_object()) return "";
  const json::value* context = record.as_object().if_contains("context");
  if (!context || !context->is_object()) return "";
  std::string content = StringField(context->as_object(), "content");
  return content.empty() ? StringField(context->as_object(), "message") : content;
}

std::string RenderRecord(const json::value& record) {
  if (!record.is_object()) return json::serialize(record);
  const json::object& o = record.as_object();
  std::string heading = StringField(o, "title");
  std::string schema = StringField(o, "schema_name");
  if (!schema.empty()) heading += (heading.empty() ? "[" : " [") + schema + "]";
  const json::value* context = o.if_contains("context");
  if (!context) return heading + "\n" + json::serialize(record);
  const json::value* hints = o.if_contains("llm_hints");
  if (hints && !hints->is_null() && model::ValidateLlmHints(*hints).ok()) {
    model::RenderedContext rendered = model::ApplyLlmHints(*context, *hints);
    return heading + "\n" + (rendered.text ? *rendered.text : json::serialize(rendered.context));
  }
  return heading + "\n" + json::serialize(*context);
}

std::vector<llm::ChatMessage> BuildPrompt(const std::string& system_prompt, const json::object& context) {
  std::vector<llm::ChatMessage> messages;
  if (!system_prompt.empty()) messages.push_back(llm::ChatMessage{"system", system_prompt, true, {}, ""});
  const json::value* trigger = context.if_contains("trigger");
  std::string trigger_id = trigger && trigger->is_object() ? StringField(trigger->as_object(), "id") : "";
  std::string user_text = trigger ? UserTextOf(*trigger) : "";

  std::string sections;
  std::vector<llm::ChatMessage> turns;
  for (const auto& [key, value] : context) {
    if (key == "trigger") continue;
    json::value rest = value;
    if (value.is_array()) {
      // Messages and answers become turns; anything else fetched with them stays a section.
      json::array conversation, others;
      for (const auto& item : value.as_array()) (IsConversationRecord(item) ? conversation : others).push_back(item);
      AppendTurns(conversation, trigger_id, turns);
      if (!conversation.empty() && others.empty()) continue;
      rest = std::move(others);
    }
    sections += (sections.empty() ? "" : "\n\n") + ("## " + std::string(key) + "\n") + RenderValue(rest);
  }
  if (!sections.empty()) messages.push_back(llm::ChatMessage{"system", "Context:\n\n" + sections, true, {}, ""});
  for (auto& turn : turns) messages.push_back(std::move(turn));
  if (trigger) {
    messages.push_back(llm::ChatMessage{"user", user_text.empty() ? RenderRecord(*trigger) : user_text, true, {}, ""});
  }
  return messages;
}

}  // namespace cairn::exec
