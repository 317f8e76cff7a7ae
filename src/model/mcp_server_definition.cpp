#include "model/mcp_server_definition.h"

#include "model/definition_fields.h"
#include "model/secret_ref.h"

namespace cairn::model {
namespace json = boost::json;

namespace {

constexpr int64_t kMaxTimeoutMs = 3'600'000;
constexpr int64_t kMaxConnectTimeoutMs = 600'000;
constexpr int64_t kMaxConcurrency = 64;

bool IsStdioField(std::string_view key) { return key == "command" || key == "env" || key == "cwd" || key == "limits"; }
bool IsHttpField(std::string_view key) { return key == "url" || key == "headers"; }

Status ParseLimits(McpServerDefinition& def, const json::value& value) {
  if (!value.is_object()) return Status::Validation("context.limits", "must be an object {memory_mb, processes}");
  for (const auto& [key, v] : value.as_object()) {
    std::string field = "context.limits." + std::string(key);
    if (key == "memory_mb") {
      CAIRN_ASSIGN_OR_RETURN(def.limits.memory_mb, RequireInt(v, field, 1, 1'048'576));
    } else if (key == "processes") {
      CAIRN_ASSIGN_OR_RETURN(def.limits.processes, RequireInt(v, field, 1, 65'536));
    } else {
      return Status::Validation(field, "unknown field (memory_mb, processes)");
    }
  }
  return Status::Ok();
}

}  // namespace

bool IsValidMcpServerName(std::string_view name) {
  if (name.empty() || name.size() > 32) return false;
  for (char c : name) {
    if (!(c == '-' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))) return false;
  }
  return true;
}

std::string McpServerPath(const std::string& name) { return "mcp/" + name; }

std::string McpToolName(const std::string& server, const std::string& tool) {
  std::string name = server + "__";
  for (char c : tool) {
    bool ok = c == '-' || c == '_' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
    name += ok ? c : '_';
  }
  if (name.size() > 64) name.resize(64);
  return name;
}

Result<McpServerDefinition> ParseMcpServerDefinition(const json::value& context, const Limits& limits) {
  if (!context.is_object()) return Status::Validation("context", "an mcp.server.v1 context must be an object");
  const json::object& o = context.as_object();
  McpServerDefinition def;
  const json::value* transport = o.if_contains("transport");
  if (!transport) return Status::Validation("context.transport", "is required (stdio or http)");
  if (*transport == "stdio") {
    def.transport = McpTransportKind::kStdio;
  } else if (*transport == "http") {
    def.transport = McpTransportKind::kHttp;
  } else {
    return Status::Validation("context.transport", "must be stdio or http");
  }
  const bool stdio = def.transport == McpTransportKind::kStdio;
  for (const auto& [key, value] : o) {
    std::string field = "context." + std::string(key);
    if ((IsStdioField(key) && !stdio) || (IsHttpField(key) && stdio)) {
      return Status::Validation(field, std::string("belongs to the ") + (stdio ? "http" : "stdio") + " transport");
    }
    if (key == "transport") continue;
    if (key == "name") {
      CAIRN_ASSIGN_OR_RETURN(def.name, RequireString(value, field, 32));
      if (!IsValidMcpServerName(def.name)) return Status::Validation(field, "must be 1 to 32 of A-Z a-z 0-9 -");
    } else if (key == "description") {
      CAIRN_ASSIGN_OR_RETURN(def.description, RequireString(value, field, 16 * 1024));
    } else if (key == "command") {
      CAIRN_ASSIGN_OR_RETURN(def.command, RequireStrings(value, field, true));
    } else if (key == "env") {
      CAIRN_ASSIGN_OR_RETURN(def.env, RequireStrings(value, field, false));
      for (size_t i = 0; i < def.env.size(); ++i) {
        CAIRN_RETURN_IF_ERROR(CheckToolEnvName(def.env[i], limits.tool_env, field + "[" + std::to_string(i) + "]"));
      }
    } else if (key == "cwd") {
      CAIRN_ASSIGN_OR_RETURN(def.cwd, RequireString(value, field, 4096));
    } else if (key == "limits") {
      CAIRN_RETURN_IF_ERROR(ParseLimits(def, value));
    } else if (key == "url") {
      CAIRN_ASSIGN_OR_RETURN(def.url, RequireString(value, field, 4096));
      if (def.url.rfind("http://", 0) != 0 && def.url.rfind("https://", 0) != 0) {
        return Status::Validation(field, "must be an http:// or https:// URL");
      }
    } else if (key == "headers") {
      CAIRN_ASSIGN_OR_RETURN(def.headers, ParseHeaderList(value, "context.headers"));
    } else if (key == "timeout_ms") {
      CAIRN_ASSIGN_OR_RETURN(def.timeout_ms, RequireInt(value, field, 1, kMaxTimeoutMs));
    } else if (key == "connect_timeout_ms") {
      CAIRN_ASSIGN_OR_RETURN(def.connect_timeout_ms, RequireInt(value, field, 1, kMaxConnectTimeoutMs));
    } else if (key == "concurrency") {
      CAIRN_ASSIGN_OR_RETURN(def.concurrency, RequireInt(value, field, 1, kMaxConcurrency));
    } else {
      return Status::Validation(field, "unknown field");
    }
  }
  if (def.name.empty()) return Status::Validation("context.name", "is required");
  if (stdio && def.command.empty()) return Status::Validation("context.command", "is required for the stdio transport");
  if (!stdio && def.url.empty()) return Status::Validation("context.url", "is required for the http transport");
  return def;
}

}  // namespace cairn::model
