// ToolDefinition: the context of a `tool.v1` breadcrumb (docs/executors.md), parsed and checked.
//
// {
//   "name": "weather",                 // [A-Za-z0-9_-]{1,64}: also the function name offered to LLMs
//   "description": "...",
//   "input_schema": {...},             // JSON Schema (json_schema.h); default {"type":"object"}
//   "output_schema": {...},            // JSON Schema, documentation for callers; default {}
//   "subscriptions": {"selectors": [...]},  // subscription.h; default: trigger on tool.request.v1
//                                           // whose context.tool is the name
//   "runtime": "builtin" | "process" | "http",
//   "builtin": "echo",                 // builtin: which implementation (default: the name)
//   "command": ["python3", "t.py"],    // process: argv, no shell
//   "cwd": "/srv/tools", "env": ["PATH", "LANG"],  // process: working dir, variables passed through
//   "cpu_seconds": 5, "memory_mb": 256,            // process: rlimits (0 = none)
//   "url": "https://tools.example.com/run",        // http: the input is POSTed here (where it may
//                                                  // connect: exec/reserved_schema_store.h, src/net)
//   "headers": {"Authorization": "..."},           // http: extra request headers
//   "timeout_ms": 30000,               // per run, 1..3,600,000
//   "concurrency": 4                   // runs at once, 1..64
// }
// Unknown fields and fields of another runtime are refused, so a typo never goes unnoticed.
#pragma once

#include <boost/json/value.hpp>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"
#include "model/limits.h"
#include "model/subscription.h"

namespace cairn::model {

inline constexpr std::string_view kToolSchema = "tool.v1";
inline constexpr std::string_view kToolRequestSchema = "tool.request.v1";
inline constexpr std::string_view kToolResponseSchema = "tool.response.v1";

enum class ToolRuntime { kBuiltin, kProcess, kHttp };

struct ToolDefinition {
  std::string name;
  std::string description;
  boost::json::value input_schema;
  boost::json::value output_schema;
  std::vector<Subscription> subscriptions;  // never empty after parsing
  ToolRuntime runtime = ToolRuntime::kBuiltin;
  std::string builtin;                      // kBuiltin
  std::vector<std::string> command;         // kProcess
  std::string cwd;                          // kProcess
  std::vector<std::string> env;             // kProcess
  int64_t cpu_seconds = 0;                  // kProcess
  int64_t memory_mb = 0;                    // kProcess
  std::string url;                          // kHttp
  std::vector<std::pair<std::string, std::string>> headers;  // kHttp
  int64_t timeout_ms = 30000;
  int64_t concurrency = 4;
};

// Parses and checks a tool.v1 context; errors name the field as "context.<field>".
Result<ToolDefinition> ParseToolDefinition(const boost::json::value& context, const Limits& limits);

// The path every tool.v1 record has: "tools/<name>" (so names are unique per tenant).
std::string ToolPath(const std::string& name);

// Whether `name` is a valid tool name.
bool IsValidToolName(std::string_view name);

// Checks a tool.request.v1 context: {tool: name, input?: any, request_id?: string,
// requested_by?: string}; errors name "context.<field>".
Status ValidateToolRequest(const boost::json::value& context);

}  // namespace cairn::model
