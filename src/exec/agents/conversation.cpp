#include "exec/agents/conversation.h"

#include "exec/agents/agent_state.h"
#include "exec/llm/chat_json.h"
#include "model/reserved.h"

namespace cairn::exec {
namespace json = boost::json;
namespace {

std::string SnapshotPrefix(const std::string& execution_id) { return "snapshots/" + execution_id + "/"; }

class PathSnapshotReader final : public SnapshotReader {
 public:
  PathSnapshotReader(store::Store& store, std::string owner, std::string prefix)
      : store_(store), owner_(std::move(owner)), prefix_(std::move(prefix)) {}
  Result<json::object> Context(const std::string& id) override {
    CAIRN_ASSIGN_OR_RETURN(auto crumb, store_.GetShared(owner_, id));
    if (crumb->schema_name != model::kAgentSnapshotSchema || !crumb->path || crumb->path->rfind(prefix_, 0) != 0 ||
        !crumb->context.is_object()) {
      return Status::Internal("snapshot " + id + " is not one of this execution's");
    }
    return crumb->context.as_object();
  }

 private:
  store::Store& store_;
  std::string owner_, prefix_;
};

}  // namespace

Result<json::object> ExecutionConversation(store::Store& store, const std::string& owner_id,
                                           const std::string& execution_id) {
  json::object out{{"execution_id", execution_id}, {"agent_id", nullptr}, {"step", 0}, {"snapshot_id", nullptr},
                   {"messages", json::array{}}, {"pending", json::array{}}};
  model::BreadcrumbQuery query;
  query.schema_name = std::string(model::kAgentSnapshotSchema);
  query.all_tags = {"execution:" + execution_id};
  query.path_prefix = "snapshots/" + execution_id;  // path segments: no trailing '/'

  query.include_context = true;
  query.limit = 1;
  CAIRN_ASSIGN_OR_RETURN(store::Page page, store.List(owner_id, query));
  if (page.items.empty()) return out;
  const model::Breadcrumb& newest = page.items.front();
  PathSnapshotReader reader(store, owner_id, SnapshotPrefix(execution_id));
  CAIRN_ASSIGN_OR_RETURN(AgentState state, LoadFullState(reader, newest.id));
  if (const json::value* agent = newest.context.as_object().if_contains("agent_id")) out["agent_id"] = *agent;
  out["step"] = state.step;
  out["snapshot_id"] = newest.id;
  json::array messages;
  for (const auto& message : state.messages) messages.push_back(llm::MessageToJson(message));
  out["messages"] = std::move(messages);
  json::array pending;
  for (const auto& p : state.pending) {
    if (!p.result) pending.push_back(json::object{{"id", p.call.id}, {"name", p.call.name}, {"arguments", p.call.arguments}});
  }
  out["pending"] = std::move(pending);
  out["usage"] = json::object{{"prompt", state.usage.prompt}, {"completion", state.usage.completion}, {"total", state.usage.total}};
  return out;
}

}  // namespace cairn::exec
