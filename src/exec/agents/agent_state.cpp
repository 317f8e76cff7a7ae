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
  if (v && v->is_uint64()) return static_cast<int64_t>(std::min<uint64_t>(v->as_uint64(), INT64_MAX));
  return v && v->is_int64() ? v->as_int64() : 0;
}

std::string StringOrEmpty(const json::object& o, std::string_view key) {
  const json::value* v = o.if_contains(key);
  return v && v->is_string() ? std::string(v->as_string()) : "";
}

}  // namespace

json::object StateToJson(const AgentState& state, size_t messages_from) {
  json::array messages;
  for (size_t i = messages_from; i < state.messages.size(); ++i) messages.push_back(llm::MessageToJson(state.messages[i]));
  json::array pending;
  for (const auto& p : state.pending) {
    json::object item{{"id", p.call.id}, {"name", p.call.name}, {"arguments", p.call.arguments},
                      {"request_id", p.request_id}};
    // An answered request's result is its tool.response.v1, read again on resume: storing it in
    // every snapshot of the step would grow with the square of the answers.
    item["result"] = p.result && p.request_id.empty() ? json::value(*p.result) : json::value(nullptr);
    pending.push_back(std::move(item));
  }
  json::object counts;
  for (const auto& [signature, n] : state.call_counts) counts[signature] = n;
  return json::object{{"step", state.step},
                      {"messages_from", static_cast<int64_t>(messages_from)},
                      {"messages", std::move(messages)},
                      {"pending", std::move(pending)},
                      {"usage", UsageToJson(state.usage)},
                      {"call_counts", std::move(counts)},
                      {"repair_asked", state.repair_asked},
                      {"snapshots", state.snapshots}};
}

Result<AgentState> StateFromJson(const json::value& value, size_t* messages_from) {
  const json::object* o = value.if_object();
  if (!o) return Status::Internal("agent snapshot state is not an object");
  AgentState state;
  int64_t from = IntOr0(*o, "messages_from");
  if (from < 0) return Status::Internal("agent snapshot state has a negative messages_from");
  if (messages_from) {
    *messages_from = static_cast<size_t>(from);
  } else if (from != 0) {
    return Status::Internal("agent snapshot state is a delta; read it with LoadFullState");
  }
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

Result<AgentState> LoadFullState(SnapshotReader& reader, const std::string& snapshot_id) {
  std::vector<std::pair<std::string, json::object>> chain;  // newest first
  std::string id = snapshot_id;
  while (true) {
    if (chain.size() > static_cast<size_t>(kFullSnapshotEvery) * 4) {
      return Status::Internal("snapshot " + snapshot_id + ": its chain of deltas does not end");
    }
    CAIRN_ASSIGN_OR_RETURN(json::object context, reader.Context(id));
    const json::value* state = context.if_contains("state");
    if (!state || !state->is_object()) return Status::Internal("snapshot " + id + " has no state");
    bool delta = IntOr0(state->as_object(), "messages_from") > 0;
    std::string parent = StringOrEmpty(context, "parent_snapshot_id");
    chain.emplace_back(id, std::move(context));
    if (!delta) break;
    if (parent.empty()) return Status::Internal("snapshot " + id + " is a delta without a parent");
    id = parent;
  }
  std::vector<llm::ChatMessage> messages;
  AgentState newest;
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    size_t from = 0;
    CAIRN_ASSIGN_OR_RETURN(AgentState part, StateFromJson(it->second.at("state"), &from));
    if (from > messages.size()) return Status::Internal("snapshot " + it->first + " starts past its parent's messages");
    messages.resize(from);
    for (auto& m : part.messages) messages.push_back(std::move(m));
    newest = std::move(part);
  }
  newest.messages = std::move(messages);
  newest.snapshot_messages = newest.messages.size();
  newest.last_snapshot_id = snapshot_id;
  return newest;
}

}  // namespace cairn::exec
