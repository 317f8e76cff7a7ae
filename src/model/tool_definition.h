// ToolDefinition: the context of a `tool.v1` breadcrumb (docs/executors.md), parsed and checked.
//
// {
//   "name": "weather",                 // [A-Za-z0-9_-]{1,64}: also the function name offered to LLMs
//   "description": "...",
//   "input_schema": {...},             // JSON Schema (json_schema.h); default {"type":"object"}
//   "output_schema": {...},            // JSON Schema, documentation for callers; default {}
//   "subscriptions": {"selectors": [...]},  // subscription.h; default: trigger on tool.request.v1
//                                           // whose context.tool is the name
//   "runtime": "builtin" | "process" | "http" | "mcp",
//   "builtin": "echo",                 // builtin: which implementation (default: the name)
//   "command": ["python3", "t.py"],    // process: argv, no shell
//   "cwd": "/srv/tools",               // process: working dir (default: the run's own directory)
//   "env": ["PGHOST"],                 // process: server variables passed through (CheckToolEnvName)
//   "secret_env": {"API_TOKEN": {"secret": "NAME"}},  // process: the tenant's secret NAME, resolved
//                                      // at each run (docs/secrets.md); its value is redacted from the output
//   "url": "https://tools.example.com/run",        // http: the input is POSTed here (where it may
//                                                  // connect: exec/reserved_schema_store.h, src/net)
//   "headers": {"X-Api-Key": "...",                // http: extra request headers, literal or a
//               "Authorization": {"secret": "T", "prefix": "Bearer "}},  // tenant's secret (model/secret_ref.h),
//                                                  // resolved at each call and redacted from the output
//   "mcp_server": "files", "mcp_tool": "read_file",  // mcp: a tool of the mcp.server.v1 at
//                                                  // mcp/<mcp_server> (exec/mcp; written by cairn)
//   "limits": {"timeout_ms": 30000,    // per run, every runtime, 1..3,600,000
//              "memory_mb": 1024, "processes": 256, "output_bytes": 16777216,
//              "cpu_seconds": 0},      // process only (ProcessLimits)
//   "concurrency": 4                   // runs at once, 1..64
// }
// Older spellings, still read: top-level "timeout_ms", "memory_mb" and "cpu_seconds" mean the
// same as in "limits" (a top-level memory_mb of 0, once "no limit", now means the default); giving
// one both ways is refused. Unknown fields and fields of another runtime are refused, so a typo
// never goes unnoticed.
#pragma once

#include <boost/json/value.hpp>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"
#include "model/limits.h"
#include "model/reserved.h"
#include "model/secret_ref.h"
#include "model/subscription.h"

namespace cairn::model {

enum class ToolRuntime { kBuiltin, kProcess, kHttp, kMcp };

// A process tool's limits per run (docs/executors.md, "Process tools"); the defaults are the
// documented ones.
struct ProcessLimits {
  int64_t memory_mb = 1024;          // RLIMIT_DATA of each process, 1..1,048,576
  int64_t processes = 256;           // RLIMIT_NPROC (counted per user: see docs), 1..65,536
  int64_t output_bytes = 16 << 20;   // the most read from fd 3, 1..268,435,456
  int64_t cpu_seconds = 0;           // RLIMIT_CPU, 0 (none: the timeout bounds it)..86,400
};

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
  std::vector<std::string> env;             // kProcess; each passed CheckToolEnvName
  std::vector<std::pair<std::string, std::string>> secret_env;  // kProcess: (variable, secret name)
  ProcessLimits process_limits;             // kProcess
  std::string url;                          // kHttp
  HeaderList headers;                       // kHttp: values literal or {"secret": NAME}
  std::string mcp_server;                   // kMcp: the server's name
  std::string mcp_tool;                     // kMcp: the tool's name on that server
  int64_t timeout_ms = 30000;
  int64_t concurrency = 4;
};

// Parses and checks a tool.v1 context; errors name the field as "context.<field>". `env` is
// checked against limits.tool_env (CheckToolEnvName), so its kInvalidArgument comes through.
Result<ToolDefinition> ParseToolDefinition(const boost::json::value& context, const Limits& limits);

// The variables every process tool gets from cairn itself: PATH, LANG and TZ (the server's values)
// and HOME (the run's own directory). Naming one in `env` changes nothing.
bool IsBaseToolEnvName(std::string_view name);

// Whether an --tool-env-allow pattern matches `name`: '*' stands for any run of characters
// (none included), everything else for itself.
bool ToolEnvPatternMatches(std::string_view pattern, std::string_view name);

// Whether a definition may name server variable `name` in `env`, with `field` naming the entry
// ("context.env[2]"):
//   kInvalidArgument  never, whatever the allow-list says: cairn's own settings (CAIRN_*) and the
//                     provider key variables (policy.secret_names)
//   kValidation       not a variable name ([A-Za-z_][A-Za-z0-9_]*), or not a base name and no
//                     pattern of policy.allow matches it
Status CheckToolEnvName(std::string_view name, const ToolEnvPolicy& policy, const std::string& field);

// The path every tool.v1 record has: "tools/<name>" (so names are unique per tenant).
std::string ToolPath(const std::string& name);

// Whether `name` is a valid tool name.
bool IsValidToolName(std::string_view name);

// Checks a tool.request.v1 context: {tool: name, input?: any, request_id?: string,
// requested_by?: string}; errors name "context.<field>".
Status ValidateToolRequest(const boost::json::value& context);

}  // namespace cairn::model
