#include "model/tool_definition.h"

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>

#include "model/definition_fields.h"
#include "model/json_schema.h"
#include "model/secret_ref.h"

namespace cairn::model {
namespace json = boost::json;
namespace {

constexpr int64_t kMaxTimeoutMs = 3'600'000;
constexpr int64_t kMaxConcurrency = 64;
constexpr int64_t kMaxMemoryMb = 1 << 20;
constexpr int64_t kMaxProcesses = 65'536;
constexpr int64_t kMaxOutputBytes = 256 << 20;
constexpr int64_t kMaxCpuSeconds = 86'400;

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
  if (name == "command" || name == "cwd" || name == "env" || name == "secret_env" || name == "cpu_seconds" ||
      name == "memory_mb") {
    return "process";
  }
  if (name == "url" || name == "headers") return "http";
  if (name == "mcp_server" || name == "mcp_tool") return "mcp";
  return nullptr;
}

bool IsEnvName(std::string_view name) {
  if (name.empty() || (name.front() >= '0' && name.front() <= '9')) return false;
  for (char c : name) {
    if (!(c == '_' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))) return false;
  }
  return true;
}

// Which limits were given at the top level (older spellings), so that giving one twice is refused.
struct TopLevelLimits {
  bool timeout_ms = false;
  bool memory_mb = false;
  bool cpu_seconds = false;
};

Status ParseRuntimeField(ToolDefinition& def, std::string_view name, const json::value& value, const std::string& field,
                         const Limits& limits, TopLevelLimits& top) {
  if (name == "builtin") {
    CAIRN_ASSIGN_OR_RETURN(def.builtin, RequireString(value, field, 64));
  } else if (name == "command") {
    CAIRN_ASSIGN_OR_RETURN(def.command, RequireStrings(value, field, true));
  } else if (name == "cwd") {
    CAIRN_ASSIGN_OR_RETURN(def.cwd, RequireString(value, field, 4096));
  } else if (name == "env") {
    CAIRN_ASSIGN_OR_RETURN(def.env, RequireStrings(value, field, false));
    for (size_t i = 0; i < def.env.size(); ++i) {
      CAIRN_RETURN_IF_ERROR(CheckToolEnvName(def.env[i], limits.tool_env, field + "[" + std::to_string(i) + "]"));
    }
  } else if (name == "secret_env") {
    if (!value.is_object()) return Status::Validation(field, "must be an object {\"VAR\": {\"secret\": \"NAME\"}}");
    if (value.as_object().size() > 64) return Status::Validation(field, "may name at most 64 variables");
    for (const auto& [var, ref] : value.as_object()) {
      std::string entry = field + "." + std::string(var);
      if (!IsEnvName(var)) return Status::Validation(entry, "is not an environment variable name ([A-Za-z_][A-Za-z0-9_]*)");
      CAIRN_ASSIGN_OR_RETURN(SecretOrValue secret, ParseSecretReference(ref, entry));
      def.secret_env.emplace_back(std::string(var), std::move(secret.secret_name));
    }
  } else if (name == "cpu_seconds") {
    CAIRN_ASSIGN_OR_RETURN(def.process_limits.cpu_seconds, RequireInt(value, field, 0, kMaxCpuSeconds));
    top.cpu_seconds = true;
  } else if (name == "memory_mb") {
    // 0 used to mean "no limit"; there is always one now.
    CAIRN_ASSIGN_OR_RETURN(int64_t mb, RequireInt(value, field, 0, kMaxMemoryMb));
    if (mb > 0) def.process_limits.memory_mb = mb;
    top.memory_mb = true;
  } else if (name == "url") {
    CAIRN_ASSIGN_OR_RETURN(def.url, RequireString(value, field, 4096));
    if (def.url.rfind("http://", 0) != 0 && def.url.rfind("https://", 0) != 0) {
      return Status::Validation(field, "must be an http:// or https:// URL");
    }
  } else if (name == "mcp_server") {
    CAIRN_ASSIGN_OR_RETURN(def.mcp_server, RequireString(value, field, 64));
  } else if (name == "mcp_tool") {
    CAIRN_ASSIGN_OR_RETURN(def.mcp_tool, RequireString(value, field, 256));
  } else if (name == "headers") {
    CAIRN_ASSIGN_OR_RETURN(def.headers, ParseHeaderList(value, field));
  }
  return Status::Ok();
}

// context.limits: timeout_ms for every runtime, the rest for process tools only.
Status ParseLimits(ToolDefinition& def, const json::value& value, const char* runtime_name, const TopLevelLimits& top) {
  if (!value.is_object()) return Status::Validation("context.limits", "must be an object");
  for (const auto& [key, member] : value.as_object()) {
    const std::string field = "context.limits." + std::string(key);
    const bool given_twice = (key == "timeout_ms" && top.timeout_ms) || (key == "memory_mb" && top.memory_mb) ||
                             (key == "cpu_seconds" && top.cpu_seconds);
    if (given_twice) {
      return Status::Validation(field, "given twice (also as context." + std::string(key) + "); keep limits." +
                                           std::string(key));
    }
    if (key == "timeout_ms") {
      CAIRN_ASSIGN_OR_RETURN(def.timeout_ms, RequireInt(member, field, 1, kMaxTimeoutMs));
      continue;
    }
    int64_t* target = key == "memory_mb"      ? &def.process_limits.memory_mb
                      : key == "processes"    ? &def.process_limits.processes
                      : key == "output_bytes" ? &def.process_limits.output_bytes
                      : key == "cpu_seconds"  ? &def.process_limits.cpu_seconds
                                              : nullptr;
    if (target == nullptr) {
      return Status::Validation(field, "unknown field (timeout_ms, memory_mb, processes, output_bytes, cpu_seconds)");
    }
    if (def.runtime != ToolRuntime::kProcess) {
      return Status::Validation(field, "belongs to the process runtime, not " + std::string(runtime_name));
    }
    const int64_t min = key == "cpu_seconds" ? 0 : 1;
    const int64_t max = key == "memory_mb"      ? kMaxMemoryMb
                        : key == "processes"    ? kMaxProcesses
                        : key == "output_bytes" ? kMaxOutputBytes
                                                : kMaxCpuSeconds;
    CAIRN_ASSIGN_OR_RETURN(*target, RequireInt(member, field, min, max));
  }
  return Status::Ok();
}

}  // namespace

bool IsBaseToolEnvName(std::string_view name) {
  return name == "PATH" || name == "LANG" || name == "TZ" || name == "HOME";
}

bool ToolEnvPatternMatches(std::string_view pattern, std::string_view name) {
  // Iterative glob with one backtrack point: the last '*' seen.
  size_t p = 0, n = 0, star = std::string_view::npos, resume = 0;
  while (n < name.size()) {
    if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      resume = n;
    } else if (p < pattern.size() && pattern[p] == name[n]) {
      ++p;
      ++n;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      n = ++resume;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

Status CheckToolEnvName(std::string_view name, const ToolEnvPolicy& policy, const std::string& field) {
  const std::string quoted = "'" + std::string(name) + "'";
  if (!IsEnvName(name)) {
    return Status::Validation(field, quoted + " is not an environment variable name ([A-Za-z_][A-Za-z0-9_]*)");
  }
  // Never passed, whatever the allow-list says: the server's own settings and the keys it holds.
  if (name.substr(0, 6) == "CAIRN_") {
    return Status(StatusCode::kInvalidArgument,
                  field + ": " + quoted + " is a cairn setting; CAIRN_* variables are never passed to tools", field);
  }
  for (const std::string& secret : policy.secret_names) {
    if (name == secret) {
      return Status(StatusCode::kInvalidArgument,
                    field + ": " + quoted + " holds an LLM provider's API key and is never passed to tools", field);
    }
  }
  if (IsBaseToolEnvName(name)) return Status::Ok();
  for (const std::string& pattern : policy.allow) {
    if (ToolEnvPatternMatches(pattern, name)) return Status::Ok();
  }
  return Status::Validation(field, quoted + " is not allowed by the server's --tool-env-allow" +
                                       (policy.allow.empty() ? " (empty: only PATH, LANG, TZ and HOME)" : ""));
}

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
  const json::value* limits_value = nullptr;  // parsed once the runtime is known
  TopLevelLimits top;
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
      } else if (value == "mcp") {
        def.runtime = ToolRuntime::kMcp;
      } else {
        return Status::Validation(field, "must be builtin, process, http or mcp");
      }
      has_runtime = true;
    } else if (key == "timeout_ms") {
      CAIRN_ASSIGN_OR_RETURN(def.timeout_ms, RequireInt(value, field, 1, kMaxTimeoutMs));
      top.timeout_ms = true;
    } else if (key == "limits") {
      limits_value = &value;
    } else if (key == "concurrency") {
      CAIRN_ASSIGN_OR_RETURN(def.concurrency, RequireInt(value, field, 1, kMaxConcurrency));
    } else if (RuntimeOfField(key)) {
      runtime_fields.emplace_back(std::string(key), &value);
    } else {
      return Status::Validation(field, "unknown field");
    }
  }
  if (!has_name) return Status::Validation("context.name", "is required");
  if (!has_runtime) return Status::Validation("context.runtime", "is required (builtin, process, http or mcp)");
  const char* runtime_name = def.runtime == ToolRuntime::kBuiltin   ? "builtin"
                             : def.runtime == ToolRuntime::kProcess ? "process"
                             : def.runtime == ToolRuntime::kHttp    ? "http"
                                                                    : "mcp";
  for (const auto& [key, value] : runtime_fields) {
    std::string field = "context." + key;
    if (std::string_view(RuntimeOfField(key)) != runtime_name) {
      return Status::Validation(field, "belongs to the " + std::string(RuntimeOfField(key)) + " runtime, not " + runtime_name);
    }
    CAIRN_RETURN_IF_ERROR(ParseRuntimeField(def, key, *value, field, limits, top));
  }
  if (limits_value != nullptr) CAIRN_RETURN_IF_ERROR(ParseLimits(def, *limits_value, runtime_name, top));
  if (def.runtime == ToolRuntime::kBuiltin && def.builtin.empty()) def.builtin = def.name;
  if (def.runtime == ToolRuntime::kProcess && def.command.empty()) {
    return Status::Validation("context.command", "is required for the process runtime");
  }
  if (def.runtime == ToolRuntime::kHttp && def.url.empty()) {
    return Status::Validation("context.url", "is required for the http runtime");
  }
  if (def.runtime == ToolRuntime::kMcp && (def.mcp_server.empty() || def.mcp_tool.empty())) {
    return Status::Validation(def.mcp_server.empty() ? "context.mcp_server" : "context.mcp_tool",
                              "is required for the mcp runtime");
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
    } else if (auto checked = CheckRequestField(key, value, field)) {
      CAIRN_RETURN_IF_ERROR(*checked);
    } else if (key != "input") {
      return Status::Validation(field, "unknown field (tool, input, request_id, requested_by, execution_id, "
                                       "root_execution_id, execution_depth, session_id)");
    }
  }
  if (!o.contains("tool")) return Status::Validation("context.tool", "is required");
  return Status::Ok();
}

}  // namespace cairn::model
