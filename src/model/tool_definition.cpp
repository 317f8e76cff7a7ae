#include "model/tool_definition.h"

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>

#include "model/definition_fields.h"
#include "model/json_schema.h"

namespace cairn::model {
namespace json = boost::json;
namespace {

constexpr int64_t kMaxTimeoutMs = 3'600'000;
constexpr int64_t kMaxConcurrency = 64;

Subscription DefaultTrigger(const std::string& name) {
  Subscription sub;
  sub.selector.schema_name = std::string(kToolRequestSchema);
  sub.selector.context_match.push_back(ContextRule{"$.tool", RuleOp::kEq, json::value(name)});
  sub.selector.types = {"breadcrumb.created"};
  sub.role = SubscriptionRole::kTrigger;
  sub.key = std::string(kToolRequestSchema);
  return sub;
}

// Which fields belong to which runtime: a field of another runtime is a mistake worth naming.
const char* RuntimeOfField(std::string_view name) {
  if (name == "builtin") return "builtin";
  if (name == "command" || name == "cwd" || name == "env" || name == "cpu_seconds" || name == "memory_mb") {
    return "process";
  }
  if (name == "url" || name == "headers") return "http";
  return nullptr;
}

Status ParseRuntimeField(ToolDefinition& def, std::string_view name, const json::value& value, const std::string& field) {
  if (name == "builtin") {
    CAIRN_ASSIGN_OR_RETURN(def.builtin, RequireString(value, field, 64));
  } else if (name == "command") {
    CAIRN_ASSIGN_OR_RETURN(def.command, RequireStrings(value, field, true));
  } else if (name == "cwd") {
    CAIRN_ASSIGN_OR_RETURN(def.cwd, RequireString(value, field, 4096));
  } else if (name == "env") {
    CAIRN_ASSIGN_OR_RETURN(def.env, RequireStrings(value, field, false));
  } else if (name == "cpu_seconds") {
    CAIRN_ASSIGN_OR_RETURN(def.cpu_seconds, RequireInt(value, field, 0, 86400));
  } else if (name == "memory_mb") {
    CAIRN_ASSIGN_OR_RETURN(def.memory_mb, RequireInt(value, field, 0, 1 << 20));
  } else if (name == "url") {
    CAIRN_ASSIGN_OR_RETURN(def.url, RequireString(value, field, 4096));
    if (def.url.rfind("http://", 0) != 0 && def.url.rfind("https://", 0) != 0) {
      return Status::Validation(field, "must be an http:// or https:// URL");
    }
  } else if (name == "headers") {
    if (!value.is_object()) return Status::Validation(field, "must be an object of header names to strings");
    for (const auto& [header, header_value] : value.as_object()) {
      CAIRN_ASSIGN_OR_RETURN(std::string text, RequireString(header_value, field + "." + std::string(header), 8192));
      def.headers.emplace_back(std::string(header), std::move(text));
    }
  }
  return Status::Ok();
}

}  // namespace

bool IsValidToolName(std::string_view name) { return IsValidDefinitionName(name); }

std::string ToolPath(const std::string& name) { return "tools/" + name; }

Result<ToolDefinition> ParseToolDefinition(const json::value& context, const Limits& limits) {
  if (!context.is_object()) return Status::Validation("context", "a tool.v1 context must be an object");
  const json::object& o = context.as_object();
  ToolDefinition def;
  def.input_schema = json::object{{"type", "object"}};
  def.output_schema = json::object{};
  bool has_name = false, has_runtime = false, has_selectors = false;
  std::vector<std::pair<std::string, const json::value*>> runtime_fields;
  for (const auto& [key, value] : o) {
    std::string field = "context." + std::string(key);
    if (key == "name") {
      CAIRN_ASSIGN_OR_RETURN(def.name, RequireString(value, field, 64));
      if (!IsValidToolName(def.name)) return Status::Validation(field, "must be 1 to 64 of A-Z a-z 0-9 _ -");
      has_name = true;
    } else if (key == "description") {
      CAIRN_ASSIGN_OR_RETURN(def.description, RequireString(value, field, 16 * 1024));
    } else if (key == "input_schema" || key == "output_schema") {
      CAIRN_RETURN_IF_ERROR(ValidateSchemaDefinition(value, field));
      (key == "input_schema" ? def.input_schema : def.output_schema) = value;
    } else if (key == "subscriptions") {
      if (!value.is_object()) return Status::Validation(field, "must be an object {\"selectors\": [...]}");
      for (const auto& [sub_key, sub_value] : value.as_object()) {
        if (sub_key != "selectors") return Status::Validation(field + "." + std::string(sub_key), "unknown field (selectors)");
        CAIRN_ASSIGN_OR_RETURN(def.subscriptions, ParseSubscriptions(sub_value, field + ".selectors", limits));
        has_selectors = !def.subscriptions.empty();
      }
    } else if (key == "runtime") {
      if (value == "builtin") {
        def.runtime = ToolRuntime::kBuiltin;
      } else if (value == "process") {
        def.runtime = ToolRuntime::kProcess;
      } else if (value == "http") {
        def.runtime = ToolRuntime::kHttp;
      } else {
        return Status::Validation(field, "must be builtin, process or http");
      }
      has_runtime = true;
    } else if (key == "timeout_ms") {
      CAIRN_ASSIGN_OR_RETURN(def.timeout_ms, RequireInt(value, field, 1, kMaxTimeoutMs));
    } else if (key == "concurrency") {
      CAIRN_ASSIGN_OR_RETURN(def.concurrency, RequireInt(value, field, 1, kMaxConcurrency));
    } else if (RuntimeOfField(key)) {
      runtime_fields.emplace_back(std::string(key), &value);
    } else {
      return Status::Validation(field, "unknown field");
    }
  }
  if (!has_name) return Status::Validation("context.name", "is required");
  if (!has_runtime) return Status::Validation("context.runtime", "is required (builtin, process or http)");
  const char* runtime_name = def.runtime == ToolRuntime::kBuiltin ? "builtin"
                             : def.runtime == ToolRuntime::kProcess ? "process" : "http";
  for (const auto& [key, value] : runtime_fields) {
    std::string field = "context." + key;
    if (std::string_view(RuntimeOfField(key)) != runtime_name) {
      return Status::Validation(field, "belongs to the " + std::string(RuntimeOfField(key)) + " runtime, not " + runtime_name);
    }
    CAIRN_RETURN_IF_ERROR(ParseRuntimeField(def, key, *value, field));
  }
  if (def.runtime == ToolRuntime::kBuiltin && def.builtin.empty()) def.builtin = def.name;
  if (def.runtime == ToolRuntime::kProcess && def.command.empty()) {
    return Status::Validation("context.command", "is required for the process runtime");
  }
  if (def.runtime == ToolRuntime::kHttp && def.url.empty()) {
    return Status::Validation("context.url", "is required for the http runtime");
  }
  CAIRN_ASSIGN_OR_RETURN(def.subscriptions,
                         DefinitionSubscriptions(std::move(def.subscriptions), has_selectors, DefaultTrigger(def.name)));
  return def;
}

Status ValidateToolRequest(const json::value& context) {
  if (!context.is_object()) return Status::Validation("context", "a tool.request.v1 context must be an object");
  const json::object& o = context.as_object();
  for (const auto& [key, value] : o) {
    std::string field = "context." + std::string(key);
    if (key == "tool") {
      if (!value.is_string() || !IsValidToolName(value.as_string())) {
        return Status::Validation(field, "must be a tool name (1 to 64 of A-Z a-z 0-9 _ -)");
      }
    } else if (key == "request_id" || key == "requested_by") {
      if (!value.is_string() || value.as_string().empty() || value.as_string().size() > 256) {
        return Status::Validation(field, "must be a string of 1 to 256 bytes");
      }
    } else if (key != "input") {
      return Status::Validation(field, "unknown field (tool, input, request_id, requested_by)");
    }
  }
  if (!o.contains("tool")) return Status::Validation("context.tool", "is required");
  return Status::Ok();
}

}  // namespace cairn::model
