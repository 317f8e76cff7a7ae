// McpClient: one connection to one MCP server (docs/mcp.md), over any McpTransport. JSON-RPC 2.0:
// requests with ids, their responses matched by id, notifications both ways.
//
// Connect() runs the initialize handshake: it offers the newest protocol version cairn speaks
// (kProtocolVersions, newest first) and accepts the server's answer if it is one of them, then
// sends notifications/initialized. Every request has a timeout; when it passes, or the caller's
// cancel flag is set, the client sends notifications/cancelled for it and returns kUnavailable.
// tools/call asks for progress (a progressToken in _meta); notifications/progress for it reach the
// caller's callback, never after CallTool has returned. notifications/tools/list_changed calls the OnToolsChanged callback. Requests
// from the server: ping is answered; anything else gets "method not found" (cairn offers no
// sampling, roots or elicitation).
//
// Thread-safe: any number of calls at once. Callbacks run on the transport's thread and must not
// call Close().
#pragma once

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "base/status.h"
#include "exec/mcp/mcp_transport.h"

namespace cairn::exec::mcp {

inline constexpr const char* kProtocolVersions[] = {"2025-11-25", "2025-06-18", "2025-03-26"};

struct McpTool {
  std::string name;
  std::string title;
  std::string description;
  boost::json::value input_schema;   // as the server gave it (an object)
  boost::json::value output_schema;  // null when none
};

// A notifications/progress of a running call: {progress, total?, message?}.
using ProgressCallback = std::function<void(const boost::json::object& progress)>;

class McpClient {
 public:
  explicit McpClient(std::unique_ptr<McpTransport> transport);
  ~McpClient();  // Close()s
  McpClient(const McpClient&) = delete;
  McpClient& operator=(const McpClient&) = delete;

  // Set before Connect().
  void OnToolsChanged(std::function<void()> callback) { on_tools_changed_ = std::move(callback); }
  void OnClosed(std::function<void(const std::string& why)> callback) { on_closed_ = std::move(callback); }

  // Opens the transport and runs the handshake within `timeout`. kUnavailable when the server
  // cannot be reached or does not answer; kFailedPrecondition for a protocol version cairn does
  // not speak (the message names both).
  Status Connect(std::chrono::milliseconds timeout);

  // Every tool (all pages of tools/list), within `timeout` for each page; at most `max_tools`.
  Result<std::vector<McpTool>> ListTools(std::chrono::milliseconds timeout, size_t max_tools);

  // tools/call: the CallToolResult as the server sent it ({content, structuredContent?, isError?}).
  Result<boost::json::object> CallTool(const std::string& name, const boost::json::value& arguments,
                                       std::chrono::milliseconds timeout, const std::atomic<bool>* cancel,
                                       ProgressCallback progress);

  // The version agreed at Connect(), and the server's serverInfo.
  std::string protocol_version() const;
  boost::json::object server_info() const;
  // Whether the connection has ended (the process exited, the session was closed).
  bool closed() const;
  std::string close_reason() const;
  std::string Diagnostics() const { return transport_->Diagnostics(); }

  void Close();

 private:
  struct Pending {
    bool done = false;
    boost::json::value response;
    ProgressCallback progress;
    // Held while `progress` runs; `finished` (set under it when the request returns) stops later
    // calls, so the callback never outlives the request that gave it.
    std::mutex progress_mu;
    bool finished = false;
  };
  Result<boost::json::value> Request(const std::string& method, boost::json::object params,
                                     std::chrono::milliseconds timeout, const std::atomic<bool>* cancel,
                                     ProgressCallback progress = nullptr);
  Status Notify(const std::string& method, boost::json::object params);
  void HandleMessage(boost::json::value message);
  void HandleClosed(const std::string& why);

  std::unique_ptr<McpTransport> transport_;
  std::function<void()> on_tools_changed_;
  std::function<void(const std::string&)> on_closed_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::map<int64_t, std::shared_ptr<Pending>> pending_;
  int64_t next_id_ = 1;
  bool closed_ = false;
  std::string close_reason_;
  std::string protocol_version_;
  boost::json::object server_info_;
  std::atomic<bool> close_called_{false};
};

// The output of a tool.v1 of runtime "mcp" for a CallToolResult (docs/mcp.md): {"content": [...]
// as sent (text, image, audio, resource items), "text": the text items joined with "\n",
// "structured": structuredContent when present}. isError true is an error whose message is that
// text.
Result<boost::json::value> MapCallResult(const boost::json::object& result);

}  // namespace cairn::exec::mcp
