#include "exec/execution_index.h"

#include <algorithm>
#include <map>
#include <set>

#include "base/json_util.h"
#include "base/time_format.h"
#include "exec/agents/conversation.h"
#include "exec/execution_record.h"

namespace cairn::exec {
namespace json = boost::json;
namespace {

constexpr size_t kMaxIdBytes = 128;

bool Matches(const json::object& record, const ExecutionListFilter& f) {
  auto is = [&](const std::optional<std::string>& want, std::string_view field) {
    return !want || StringMember(record, field) == *want;
  };
  return is(f.kind, "kind") && is(f.executor, "executor") && is(f.status, "status") && is(f.session_id, "session_id") &&
         is(f.parent, "parent_execution_id") && is(f.root, "root_execution_id") && is(f.user_id, "user_id");
}

Result<std::optional<model::Breadcrumb>> FindRecord(store::Store& store, const std::string& owner_id,
                                                    const std::string& id) {
  if (id.empty() || id.size() > kMaxIdBytes) return std::optional<model::Breadcrumb>();
  model::BreadcrumbQuery query;
  query.path = ExecutionRecordPath(id);
  query.include_context = true;
  query.limit = 1;
  CAIRN_ASSIGN_OR_RETURN(store::Page page, store.List(owner_id, query));
  if (page.items.empty() || page.items.front().schema_name != kExecutionSchema ||
      !page.items.front().context.is_object()) {
    return std::optional<model::Breadcrumb>();
  }
  return std::optional<model::Breadcrumb>(std::move(page.items.front()));
}

json::object Node(const json::object& record) {
  json::object node;
  for (const char* key : {"id", "kind", "executor", "status", "depth", "parent_execution_id", "session_id",
                          "started_at", "completed_at", "duration_ms", "token_usage", "error"}) {
    const json::value* v = record.if_contains(key);
    node[key] = v ? *v : json::value(nullptr);
  }
  return node;
}

// The tasks of the tree of `root`, by the execution that handed them out (oldest first).
Result<std::map<std::string, json::array>> TasksOfTree(store::Store& store, const std::string& owner_id,
                                                       const std::string& root, size_t limit) {
  model::BreadcrumbQuery query;
  query.schema_name = std::string(model::kAgentTaskSchema);
  query.all_tags = {"root:" + root};
  query.include_context = true;
  query.order = model::SortOrder::kOldestFirst;
  query.limit = limit;
  CAIRN_ASSIGN_OR_RETURN(store::Page page, store.List(owner_id, query));
  std::map<std::string, json::array> out;
  for (const auto& crumb : page.items) {
    if (!crumb.context.is_object()) continue;
    const json::object& c = crumb.context.as_object();
    json::object task;
    for (const char* key : {"name", "assignee", "status", "instruction", "result", "execution_id"}) {
      const json::value* v = c.if_contains(key);
      task[key] = v ? *v : json::value(nullptr);
    }
    task["id"] = crumb.id;
    out[StringMember(c, "parent_execution_id")].push_back(std::move(task));
  }
  return out;
}

}  // namespace

json::object ExecutionRecordView(const model::Breadcrumb& crumb) {
  json::object view = crumb.context.is_object() ? crumb.context.as_object() : json::object{};
  if (!view.contains("created_at") || view.at("created_at").is_null()) view["created_at"] = FormatRfc3339Micros(crumb.created_at);
  view["updated_at"] = FormatRfc3339Micros(crumb.updated_at);
  return view;
}

Result<ExecutionPage> ExecutionIndex::List(const std::string& owner_id, const ExecutionListFilter& filter) {
  model::BreadcrumbQuery query;
  query.schema_name = std::string(kExecutionSchema);
  query.all_tags = {"execution"};
  auto tag = [&](const std::optional<std::string>& value, const char* prefix) {
    if (value) query.all_tags.push_back(prefix + *value);
  };
  tag(filter.kind, "kind:");
  tag(filter.executor, "executor:");
  tag(filter.status, "status:");
  tag(filter.session_id, "session:");
  tag(filter.parent, "parent:");
  tag(filter.root, "root:");
  if (filter.user_id) {
    query.context_match.push_back(model::ContextRule{"$.user_id", model::RuleOp::kEq, json::value(*filter.user_id)});
  }
  query.include_context = true;
  query.limit = filter.limit;
  query.cursor = filter.cursor;
  query.created_by = filter.created_by;
  CAIRN_ASSIGN_OR_RETURN(store::Page page, store_.List(owner_id, query));
  ExecutionPage out;
  if (!filter.cursor && !filter.created_by) {
    std::vector<json::object> running = runs_.InFlight(owner_id);
    for (auto& record : running) {
      if (!Matches(record, filter)) continue;
      auto stored = FindRecord(store_, owner_id, StringMember(record, "id"));
      if (stored.ok() && !*stored) out.items.push_back(std::move(record));  // not recorded yet
    }
  }
  for (const auto& crumb : page.items) out.items.push_back(ExecutionRecordView(crumb));
  out.next_cursor = page.next_cursor;
  return out;
}

namespace {

// Whether the in-flight view of a run whose stored record says paused is the newer: a paused run
// that goes on again is in flight while its record still says paused, and starts from that
// record's steps. A run that has just written its pause is still registered for a moment with
// the view it started with, fewer steps ago than the record: the record is the newer then.
bool InFlightIsNewer(const json::object& in_flight, const json::object& paused_record) {
  auto steps = [](const json::object& record) {
    const json::value* count = record.if_contains("step_count");
    return count && count->is_int64() ? count->as_int64() : 0;
  };
  return steps(in_flight) >= steps(paused_record);
}

}  // namespace

Result<json::object> ExecutionIndex::Get(const std::string& owner_id, const std::string& id) {
  CAIRN_ASSIGN_OR_RETURN(std::optional<model::Breadcrumb> stored, FindRecord(store_, owner_id, id));
  if (!stored) {
    if (auto running = runs_.Find(owner_id, id)) return *running;  // not recorded yet
    return Status::NotFound("execution " + id + " not found");
  }
  json::object view = ExecutionRecordView(*stored);
  if (StringMember(view, "status") != "paused") return view;
  if (auto running = runs_.Find(owner_id, id); running && InFlightIsNewer(*running, view)) return *running;
  return view;
}

Result<json::object> ExecutionIndex::Tree(const std::string& owner_id, const std::string& id) {
  CAIRN_ASSIGN_OR_RETURN(json::object top, Get(owner_id, id));
  std::string root = StringMember(top, "root_execution_id");
  if (root.empty()) root = id;
  // Every execution of the tree, stored or in flight (a stored record wins: it is the newer).
  std::map<std::string, json::object> all;
  model::BreadcrumbQuery query;
  query.schema_name = std::string(kExecutionSchema);
  query.all_tags = {"root:" + root};
  query.include_context = true;
  query.order = model::SortOrder::kOldestFirst;
  query.limit = kMaxTreeNodes + 1;
  CAIRN_ASSIGN_OR_RETURN(store::Page page, store_.List(owner_id, query));
  bool truncated = page.items.size() > kMaxTreeNodes;
  for (const auto& crumb : page.items) {
    json::object view = ExecutionRecordView(crumb);
    all[StringMember(view, "id")] = std::move(view);
  }
  for (auto& record : runs_.InFlight(owner_id, root)) {
    auto [it, added] = all.try_emplace(StringMember(record, "id"), record);
    if (!added && StringMember(it->second, "status") == "paused" && InFlightIsNewer(record, it->second)) {
      it->second = std::move(record);
    }
  }
  CAIRN_ASSIGN_OR_RETURN(auto tasks, TasksOfTree(store_, owner_id, root, kMaxTreeNodes));
  auto with_tasks = [&](json::object& node, const std::string& node_id) {
    auto found = tasks.find(node_id);
    if (found != tasks.end()) node["tasks"] = found->second;
  };
  std::multimap<std::string, const json::object*> by_parent;
  for (const auto& [child_id, record] : all) by_parent.emplace(StringMember(record, "parent_execution_id"), &record);

  // Depth-first from `id`, children ordered by when they started.
  size_t nodes = 0;
  std::set<std::string> seen{id};
  auto children_of = [&](auto& self, const std::string& parent) -> json::array {
    std::vector<const json::object*> kids;
    auto [begin, end] = by_parent.equal_range(parent);
    for (auto it = begin; it != end; ++it) kids.push_back(it->second);
    std::sort(kids.begin(), kids.end(), [](const json::object* a, const json::object* b) {
      return std::make_pair(StringMember(*a, "started_at"), StringMember(*a, "id")) < std::make_pair(StringMember(*b, "started_at"), StringMember(*b, "id"));
    });
    json::array out;
    for (const json::object* kid : kids) {
      std::string kid_id = StringMember(*kid, "id");
      if (!seen.insert(kid_id).second) continue;  // a malformed cycle
      if (++nodes > kMaxTreeNodes) {
        truncated = true;
        break;
      }
      json::object node = Node(*kid);
      with_tasks(node, kid_id);
      node["children"] = self(self, kid_id);
      out.push_back(std::move(node));
    }
    return out;
  };
  with_tasks(top, id);
  top["children"] = children_of(children_of, id);
  top["truncated"] = truncated;
  return top;
}

Result<json::object> ExecutionIndex::Messages(const std::string& owner_id, const std::string& id) {
  CAIRN_RETURN_IF_ERROR(Get(owner_id, id).status());
  return ExecutionConversation(store_, owner_id, id);
}

Result<json::object> ExecutionIndex::Cancel(const std::string& owner_id, const std::string& id) {
  CAIRN_ASSIGN_OR_RETURN(json::object record, Get(owner_id, id));
  std::string status = StringMember(record, "status");
  if (!IsActiveStatus(status)) return Status::Conflict("execution " + id + " is " + status + "; it cannot be cancelled");
  if (runs_.CancelTree(owner_id, id) == 0) {
    return Status::Conflict("execution " + id + " is not running in this process");
  }
  record["cancel_requested"] = true;
  return record;
}

}  // namespace cairn::exec
