#include "exec/mcp/tool_materializer.h"

#include <algorithm>
#include <map>

#include "base/log.h"
#include "model/json_schema.h"
#include "model/reserved.h"
#include "model/tool_definition.h"

namespace cairn::exec::mcp {
namespace json = boost::json;

namespace {

constexpr size_t kMaxDescriptionBytes = 16 * 1024;

model::WriteContext Writer(const std::string& owner) { return model::WriteContext{owner, kMcpActor}; }

// Every stored tool.v1 tagged mcp:<server> (or tagged mcp at all when `server` is empty).
Result<std::vector<model::Breadcrumb>> StoredTools(store::Store& store, const std::string& owner, const std::string& server) {
  std::vector<model::Breadcrumb> found;
  model::BreadcrumbQuery query;
  query.schema_name = std::string(model::kToolSchema);
  query.all_tags = {server.empty() ? "mcp" : "mcp:" + server};
  query.include_context = true;
  query.limit = 200;
  while (true) {
    CAIRN_ASSIGN_OR_RETURN(store::Page page, store.List(owner, query));
    for (auto& item : page.items) found.push_back(std::move(item));
    if (!page.next_cursor) return found;
    query.cursor = page.next_cursor;
  }
}

std::string ServerOf(const model::Breadcrumb& crumb) {
  const json::value* server = crumb.context.is_object() ? crumb.context.as_object().if_contains("mcp_server") : nullptr;
  return server && server->is_string() ? std::string(server->as_string()) : "";
}

}  // namespace

json::object ToolContextFor(const model::McpServerDefinition& server, const McpTool& tool) {
  std::string description = tool.description.empty() ? tool.title : tool.description;
  if (description.size() > kMaxDescriptionBytes) description.resize(kMaxDescriptionBytes);
  json::value input_schema = tool.input_schema;
  if (!model::ValidateSchemaDefinition(input_schema, "input_schema").ok()) {
    CAIRN_LOG_INFO("MCP server {}: the input schema of {} is not one cairn checks; the server checks its input",
                   server.name, tool.name);
    input_schema = json::object{{"type", "object"}};
  }
  return json::object{
      {"name", model::McpToolName(server.name, tool.name)},
      {"description", description},
      {"input_schema", std::move(input_schema)},
      {"runtime", "mcp"},
      {"mcp_server", server.name},
      {"mcp_tool", tool.name},
      {"limits", json::object{{"timeout_ms", server.timeout_ms}}},
      {"concurrency", server.concurrency},
  };
}

Status SyncTools(store::Store& store, const std::string& owner, const model::McpServerDefinition& server,
                 const std::vector<McpTool>& tools) {
  CAIRN_ASSIGN_OR_RETURN(std::vector<model::Breadcrumb> stored, StoredTools(store, owner, server.name));
  std::map<std::string, const model::Breadcrumb*> by_path;
  for (const auto& crumb : stored) {
    if (crumb.path) by_path[*crumb.path] = &crumb;
  }
  std::map<std::string, bool> wanted;
  for (const McpTool& tool : tools) {
    json::object context = ToolContextFor(server, tool);
    std::string name(context.at("name").as_string());
    std::string path = model::ToolPath(name);
    if (wanted.count(path)) {
      CAIRN_LOG_WARN("MCP server {}: tools {} and another map to the same name {}; keeping the first", server.name,
                     tool.name, name);
      continue;
    }
    wanted[path] = true;
    auto existing = by_path.find(path);
    if (existing != by_path.end()) {
      if (existing->second->context == json::value(context)) continue;
      model::BreadcrumbPatch patch;
      patch.context.Set(std::move(context));
      auto updated = store.Update(Writer(owner), existing->second->id, patch, existing->second->version);
      if (!updated.ok()) CAIRN_LOG_WARN("MCP server {}: cannot update tool {}: {}", server.name, name, updated.status().message());
      continue;
    }
    model::BreadcrumbDraft draft;
    draft.schema_name = std::string(model::kToolSchema);
    draft.title = "tool " + name + " (MCP " + server.name + ")";
    draft.tags = {"tool", "mcp", "mcp:" + server.name};
    draft.path = path;
    draft.context = std::move(context);
    auto created = store.Create(Writer(owner), draft, "");
    if (!created.ok()) {
      // A path taken by a tool.v1 that is not this server's: its owner keeps it.
      CAIRN_LOG_WARN("MCP server {}: cannot register tool {}: {}", server.name, name, created.status().message());
    }
  }
  for (const auto& crumb : stored) {
    if (crumb.path && wanted.count(*crumb.path)) continue;
    Status deleted = store.Delete(Writer(owner), crumb.id, std::nullopt);
    if (!deleted.ok() && deleted.code() != StatusCode::kNotFound) return deleted;
  }
  return Status::Ok();
}

Status RemoveTools(store::Store& store, const std::string& owner, const std::string& server) {
  model::McpServerDefinition definition;
  definition.name = server;
  return SyncTools(store, owner, definition, {});
}

Status RemoveToolsOfOtherServers(store::Store& store, const std::string& owner, const std::vector<std::string>& servers) {
  CAIRN_ASSIGN_OR_RETURN(std::vector<model::Breadcrumb> stored, StoredTools(store, owner, ""));
  for (const auto& crumb : stored) {
    if (std::find(servers.begin(), servers.end(), ServerOf(crumb)) != servers.end()) continue;
    Status deleted = store.Delete(Writer(owner), crumb.id, std::nullopt);
    if (!deleted.ok() && deleted.code() != StatusCode::kNotFound) return deleted;
  }
  return Status::Ok();
}

}  // namespace cairn::exec::mcp
