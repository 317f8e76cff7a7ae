// The MCP routes (docs/mcp.md):
//   GET /mcp/servers  the MCP servers cairn is a client of, their state and tools (`cairn mcp list`)
//   POST /mcp         cairn as an MCP server over Streamable HTTP (mcp_server/mcp_server_protocol.h):
//                     one JSON-RPC message per POST, answered with application/json (202 for a
//                     notification). Stateless: no Mcp-Session-Id, no GET stream (405). Its tools
//                     run in process: API calls go through this router (with the caller's headers,
//                     so they act as the caller), tool calls and agent messages wait for their
//                     answers on the bus (exec/response_waiter.h).
#pragma once

#include "bus/event_bus.h"
#include "exec/mcp/mcp_manager.h"
#include "server/router.h"
#include "store/store.h"

namespace cairn::server {

struct McpRouteDeps {
  const exec::mcp::McpManager* manager = nullptr;  // null: executors do not run here (no client)
  store::Store* store = nullptr;                   // for POST /mcp's waits
  bus::EventBus* bus = nullptr;
};

// Everything in `deps` and `router` itself must outlive the server.
void AddMcpRoutes(Router& router, McpRouteDeps deps);

}  // namespace cairn::server
