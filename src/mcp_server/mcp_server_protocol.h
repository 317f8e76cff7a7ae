// McpServerProtocol: cairn as an MCP server (docs/mcp.md) — the JSON-RPC side shared by
// `cairn mcp serve` (stdio, src/cli) and POST /mcp (Streamable HTTP, src/server). It answers
// initialize (protocol versions 2025-11-25, 2025-06-18, 2025-03-26: the client's when cairn speaks
// it, else the newest), ping, tools/list and tools/call; notifications need no answer; anything
// else is "method not found". The tools are cairn's API (create/get/query/search breadcrumbs,
// list and call cairn tools, message an agent in a session), carried out by a CairnBackend: over
// HTTP in the CLI, in process in the server. Stateless: one instance serves any number of
// clients, from any number of threads at once.
#pragma once

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <chrono>
#include <optional>
#include <string>

#include "base/status.h"

namespace cairn::mcp_server {

inline constexpr const char* kServerProtocolVersions[] = {"2025-11-25", "2025-06-18", "2025-03-26"};

// What the tools do, as API calls. Each returns the JSON the API answers, or its error.
class CairnBackend {
 public:
  virtual ~CairnBackend() = default;
  // One request to cairn's HTTP API: `path_and_query` like "/breadcrumbs?tag=x", `body` null for
  // none. A non-2xx answer is an error Status carrying the API's message.
  virtual Result<boost::json::value> Api(const std::string& method, const std::string& path_and_query,
                                         const boost::json::value& body) = 0;
  // Writes a tool.request.v1 for `tool` with `input` and waits up to `timeout` for its
  // tool.response.v1; its context.
  virtual Result<boost::json::object> CallTool(const std::string& tool, const boost::json::value& input,
                                               std::chrono::seconds timeout) = 0;
  // Posts `text` as a user.message.v1 of session `session_id` (tagged session:<id>; a new id when
  // the client gave none) to agent `agent_id` (empty: the default agent) and waits up to `timeout` for the execution's end; {session_id, execution_id,
  // message_id, answer: the agent.response.v1 context}.
  virtual Result<boost::json::object> SendMessage(const std::string& session_id, const std::string& agent_id,
                                                  const std::string& text, std::chrono::seconds timeout) = 0;
};

class McpServerProtocol {
 public:
  explicit McpServerProtocol(CairnBackend& backend) : backend_(backend) {}

  // Handles one message from a client: the response to send, or nullopt for a notification or a
  // response (nothing to send). A message that is not JSON-RPC gets an error response with id null.
  std::optional<boost::json::object> Handle(const boost::json::value& message);

  // Handles one line of the stdio transport (parse errors answered with -32700).
  std::optional<boost::json::object> HandleText(std::string_view text);

  // Whether a client's MCP-Protocol-Version header names a version cairn speaks.
  static bool SpeaksVersion(std::string_view version);

 private:
  Result<boost::json::value> CallTool(const std::string& name, const boost::json::object& arguments);
  CairnBackend& backend_;
};

// The tools/list result: {"tools": [...]}.
boost::json::object ToolList();

}  // namespace cairn::mcp_server
