#include "exec/agents/agent_state.h"

#include <boost/json/array.hpp>

#include "exec/llm/chat_json.h"

namespace cairn::exec {
namespace json = boost::json;
namespace {

json::object UsageToJson(const llm::Usage& usage) {
  return json::object{{"prompt", usage.prompt}, {"completion", usage.completion}, {"total", usage.total}};
}

int64_t IntOr0(const json::object& o, std::string_view key) {
  const json::value* v = o.if_contains(key);
  return v && v->is_int64() ? v->as_int64() : 0;
}

std::string StringOrEmpty(const json::object& o, std::string_view key) {
  const json::value* v = o.if_contains(key);
  return v && v->is_string() ? std::string(v->as_string()) : "";
}

}  // namespace

json::object StateToJson(const AgentState& state) {
  json::array messages;
  for (const auto& m : state.messages) messages.push_back(llm::MessageToJson(m));
  json::array pending;
  for (const auto& p : state.pending) {
    json::object item{{"id", p.call.id}, {"name", p.call.name}, {"arguments", p.call.arguments},
                      {"request_id", p.request_id}};
    item["result"] = p.result ? json::value(*p.result) : json::value(nullptr);
    pending.push_back(std::move(item));
  }
  json::object counts;
  for (const auto& [signature, n] : state.call_counts) counts[signature] = n;
  return json::object{{"step", state.step},
                      {"messages", std::move(messages)},
                      {"pending", std::move(pending)},
                      {"usage", UsageToJson(state.usage)},
                      {"call_counts", std::move(counts)},
                      {"repair_asked", state.repair_asked},
                      {"snapshots", state.snapshots}};
}

Result<AgentState> StateFromJson(const json::value& value) {
  const json::object* o = value.if_object();
  if (!o) return Status::Internal("agent snapshot state is not an object");
  AgentState state;
  state.step = IntOr0(*o, "step");
  state.snapshots = IntOr0(*o, "snapshots");
  const json::value* messages = o->if_contains("messages");
  const json::value* pending = o->if_contains("pending");
  if (!messages || !messages->is_array() || !pending || !pending->is_array()) {
    return Status::Internal("agent snapshot state lacks messages or pending");
  }
  for (const auto& m : messages->as_array()) {
    CAIRN_ASSIGN_OR_RETURN(llm::ChatMessage message, llm::MessageFromJson(m));
    state.messages.push_back(std::move(message));
  }
  for (const auto& p : pending->as_array()) {
    if (!p.is_object()) return Status::Internal("agent snapshot: a pending call is not an object");
    const json::object& item = p.as_object();
    PendingCall call;
    call.call = llm::ToolCallRequest{StringOrEmpty(item, "id"), StringOrEmpty(item, "name"),
                                     StringOrEmpty(item, "arguments")};
    call.request_id = StringOrEmpty(item, "request_id");
    if (const json::value* result = item.if_contains("result"); result && result->is_string()) {
      call.result = std::string(result->as_string());
    }
    state.pending.push_back(std::move(call));
  }
  if (const json::value* usage = o->if_contains("usage"); usage && usage->is_object()) {
    state.usage = llm::Usage{IntOr0(usage->as_object(), "prompt"), IntOr0(usage->as_object(), "completion"),
                             IntOr0(usage->as_object(), "total")};
  }
  if (const json::value* counts = o->if_contains("call_counts"); counts && counts->is_object()) {
    for (const auto& [signature, n] : counts->as_object()) {
      if (n.is_int64()) state.call_counts[std::string(signature)] = n.as_int64();
    }
  }
  if (const json::value* repair = o->if_contains("repair_asked"); repair && repair->is_bool()) {
    state.repair_asked = repair->as_bool();
  }
  return state;
}

}  // namespace cairn::exec
