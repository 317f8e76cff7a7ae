// The tool.v1 records of one MCP server's tools (docs/mcp.md): one per tool, at
// tools/<server>__<tool>, runtime "mcp", tagged "mcp" and "mcp:<server>", written by
// "system:mcp". Syncing writes only what changed: a listed tool whose record differs is
// updated, a new one created, a record whose tool is no longer listed deleted.
#pragma once

#include <string>
#include <vector>

#include "exec/mcp/mcp_client.h"
#include "model/limits.h"
#include "model/mcp_server_definition.h"
#include "store/store.h"

namespace cairn::exec::mcp {

inline constexpr char kMcpActor[] = "system:mcp";

// The tool.v1 context for `tool` of `server`. Its input schema is the server's when cairn's
// schema checker accepts it, else {"type": "object"} (the server still checks its arguments).
boost::json::object ToolContextFor(const model::McpServerDefinition& server, const McpTool& tool);

// Makes the stored tool.v1 records of `server` in tenant `owner` exactly `tools`.
Status SyncTools(store::Store& store, const std::string& owner, const model::McpServerDefinition& server,
                 const std::vector<McpTool>& tools);

// Deletes every tool.v1 record of the server named `server` of tenant `owner`.
Status RemoveTools(store::Store& store, const std::string& owner, const std::string& server);

// Deletes the tool.v1 records of tenant `owner` of servers not in `servers` (records of servers
// removed while cairn was not running).
Status RemoveToolsOfOtherServers(store::Store& store, const std::string& owner, const std::vector<std::string>& servers);

}  // namespace cairn::exec::mcp
