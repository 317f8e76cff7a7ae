// McpServerDefinition: the context of an `mcp.server.v1` breadcrumb at mcp/<name> (docs/mcp.md),
// parsed and checked. cairn connects to the server and offers each of its tools as a tool.v1
// named <name>__<tool> (exec/mcp).
//
// stdio: {"name": "files", "transport": "stdio", "command": ["npx", "server"], "env": ["HOME_DIR"],
//         "cwd": "/srv", "limits": {"memory_mb": 1024, "processes": 256}}
//   command: argv, no shell; env: server variables passed through, as for process tools
//   (CheckToolEnvName); the process runs in the process tools' sandbox (tool user, limits).
// http:  {"name": "remote", "transport": "http", "url": "https://mcp.example.com/mcp",
//         "headers": {"Authorization": "Bearer ..."}}
//   Streamable HTTP; where it may connect is the outbound address policy's to decide. Headers
//   as http tools' and webhooks' (model/secret_ref.h ParseHeaderList): a value is a string or a
//   secret reference {"secret": "<name>"[, "prefix": "Bearer "]} of the record's tenant, resolved
//   at each connect and never stored or logged.
// Both: "timeout_ms" (each tool call, default 60000, 1..3,600,000), "connect_timeout_ms" (connect
// and list, default 30000, 1..600,000), "concurrency" (calls at once per tool, 1..64, default 4),
// "description". Unknown fields and fields of the other transport are refused.
#pragma once

#include <boost/json/value.hpp>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"
#include "model/limits.h"
#include "model/tool_definition.h"

namespace cairn::model {

enum class McpTransportKind { kStdio, kHttp };

struct McpServerDefinition {
  std::string name;
  std::string description;
  McpTransportKind transport = McpTransportKind::kStdio;
  std::vector<std::string> command;  // stdio
  std::vector<std::string> env;      // stdio
  std::string cwd;                   // stdio
  ProcessLimits limits;              // stdio: memory_mb and processes
  std::string url;                   // http
  HeaderList headers;                // http
  int64_t timeout_ms = 60000;
  int64_t connect_timeout_ms = 30000;
  int64_t concurrency = 4;
};

// Whether `name` may name a server: 1 to 32 of A-Z a-z 0-9 - (no '_', which separates the server
// from the tool in <server>__<tool>).
bool IsValidMcpServerName(std::string_view name);

// Errors name the field as "context.<field>".
Result<McpServerDefinition> ParseMcpServerDefinition(const boost::json::value& context, const Limits& limits);

// mcp/<name>
std::string McpServerPath(const std::string& name);

// The tool.v1 name of MCP tool `tool` of server `server`: "<server>__<tool>" with every character
// outside A-Z a-z 0-9 _ - replaced by '_', cut to 64 characters.
std::string McpToolName(const std::string& server, const std::string& tool);

}  // namespace cairn::model
