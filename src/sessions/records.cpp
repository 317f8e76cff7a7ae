#include "sessions/records.h"

#include <mutex>
#include <unordered_map>

#include "base/time_format.h"
#include "exec/execution_record.h"
#include "sessions/session_service.h"

namespace cairn::sessions {
namespace json = boost::json;

std::string SessionPath(const std::string& session_id) { return "sessions/" + session_id; }
std::string SessionTag(const std::string& session_id) { return "session:" + session_id; }
std::string TurnTag(const std::string& session_id) { return "turn:" + session_id; }
std::string ActiveTag(const std::string& session_id) { return "active:" + session_id; }

std::string Str(const json::object& o, std::string_view key) {
  const json::value* v = o.if_contains(key);
  return v && v->is_string() ? std::string(v->as_string()) : "";
}

namespace {

json::object WithTimes(const model::Breadcrumb& crumb) {
  json::object view = crumb.context.is_object() ? crumb.context.as_object() : json::object{};
  view["created_at"] = FormatRfc3339Micros(crumb.created_at);
  view["updated_at"] = FormatRfc3339Micros(crumb.updated_at);
  return view;
}

}  // namespace

json::object SessionView(const model::Breadcrumb& crumb) { return WithTimes(crumb); }

json::object MessageView(const model::Breadcrumb& crumb) {
  json::object view = WithTimes(crumb);
  view.erase("updated_at");
  return view;
}

json::object SnapshotView(const model::Breadcrumb& crumb) {
  const json::object* c = crumb.context.if_object();
  auto get = [&](std::string_view key) { return c && c->contains(key) ? c->at(key) : json::value(nullptr); };
  return json::object{{"id", crumb.id},
                      {"agent_execution_id", get("agent_execution_id")},
                      {"parent_snapshot_id", get("parent_snapshot_id")},
                      {"agent_id", get("agent_id")},
                      {"agent_name", get("agent_name")},
                      {"step_number", get("step_number")},
                      {"is_final", get("is_final")},
                      {"debug_mode", get("debug_mode")},
                      {"created_at", FormatRfc3339Micros(crumb.created_at)}};
}

model::BreadcrumbDraft MessageDraft(const std::string& session_id, const std::string& message_id,
                                    const std::string& role, const std::string& content,
                                    const std::string& execution_id, const std::string& event_type,
                                    json::object metadata, json::object extra) {
  if (!event_type.empty()) metadata["event_type"] = event_type;
  json::object context{{"id", message_id},
                       {"session_id", session_id},
                       {"role", role},
                       {"content", content},
                       {"agent_execution_id", execution_id.empty() ? json::value(nullptr) : json::value(execution_id)},
                       {"related_type", nullptr},
                       {"related_id", nullptr},
                       {"context_url", nullptr},
                       {"metadata", std::move(metadata)}};
  for (auto& [key, value] : extra) context[key] = std::move(value);
  model::BreadcrumbDraft draft;
  draft.schema_name = std::string(kMessageSchema);
  draft.title = role + " message";
  draft.tags = {SessionTag(session_id), "role:" + role};
  if (role == "user" || role == "assistant") draft.tags.push_back(TurnTag(session_id));
  if (!execution_id.empty()) draft.tags.push_back("execution:" + execution_id);
  draft.context = std::move(context);
  return draft;
}

model::BreadcrumbPatch ExecutionPatch(const model::Breadcrumb& current, const json::object& changes) {
  json::object context = current.context.is_object() ? current.context.as_object() : json::object{};
  for (const auto& [key, value] : changes) context[key] = value;
  std::vector<std::string> tags = exec::ExecutionTags(context);
  tags.push_back("session-execution");
  if (exec::IsActiveStatus(Str(context, "status"))) tags.push_back(ActiveTag(Str(context, "session_id")));
  model::BreadcrumbPatch patch;
  patch.context.Set(std::move(context));
  patch.tags.Set(std::move(tags));
  return patch;
}

namespace {

// The record id last found at each (owner, path). A path is unique per tenant, so a record read by
// that id which still has that path is the one at the path: the point read (often answered by the
// store's read cache) replaces a list query, and a moved, deleted or expired record falls back to
// the query.
class PathIds {
 public:
  std::string Get(const std::string& key) {
    std::lock_guard lock(mu_);
    auto it = ids_.find(key);
    return it == ids_.end() ? std::string() : it->second;
  }
  void Put(const std::string& key, const std::string& id) {
    std::lock_guard lock(mu_);
    if (ids_.size() >= kMaxEntries) ids_.clear();  // bounded; refilled by the next lookups
    ids_[key] = id;
  }

 private:
  static constexpr size_t kMaxEntries = 65536;
  std::mutex mu_;
  std::unordered_map<std::string, std::string> ids_;
};

PathIds& KnownPathIds() {
  static PathIds ids;
  return ids;
}

}  // namespace

Result<model::Breadcrumb> FindAt(store::Store& store, const std::string& owner_id, std::string_view schema,
                                 const std::string& path, const std::string& what) {
  std::string key = owner_id + '\n' + path;
  if (std::string id = KnownPathIds().Get(key); !id.empty()) {
    auto known = store.GetShared(owner_id, id);
    if (known.ok() && (*known)->path == path && (*known)->owner_id == owner_id) {
      if ((*known)->schema_name != schema) return Status::NotFound(what + " not found");
      if (!(*known)->context.is_object()) return Status::Internal(what + " is not a valid record (no object context)");
      return **known;
    }
  }
  // By path alone: the unique path index finds it at once (with the schema too, SQLite may pick the
  // schema index and scan every record of the schema).
  model::BreadcrumbQuery query;
  query.path = path;
  query.include_context = true;
  query.limit = 1;
  CAIRN_ASSIGN_OR_RETURN(store::Page page, store.List(owner_id, query));
  if (!page.items.empty()) KnownPathIds().Put(key, page.items.front().id);
  if (page.items.empty() || page.items.front().schema_name != schema) return Status::NotFound(what + " not found");
  if (!page.items.front().context.is_object()) return Status::Internal(what + " is not a valid record (no object context)");
  return std::move(page.items.front());
}

}  // namespace cairn::sessions
