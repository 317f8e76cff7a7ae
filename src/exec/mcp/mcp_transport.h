// McpTransport: how JSON-RPC messages travel between cairn's MCP client and one server
// (docs/mcp.md): over a child's stdin/stdout (stdio_transport.h) or Streamable HTTP
// (http_transport.h). The client (mcp_client.h) knows nothing of which.
#pragma once

#include <boost/json/value.hpp>
#include <atomic>
#include <chrono>
#include <functional>
#include <string>

#include "base/status.h"

namespace cairn::exec::mcp {

class McpTransport {
 public:
  // Every message the server sends (responses, notifications, requests), in arrival order.
  using OnMessage = std::function<void(boost::json::value message)>;
  // The connection is gone (the process exited, the session ended); `why` says how. Once.
  using OnClosed = std::function<void(const std::string& why)>;

  virtual ~McpTransport() = default;

  // Opens the connection (starts the process). Callbacks may run on a thread of the transport
  // until Close() returns.
  virtual Status Open(OnMessage on_message, OnClosed on_closed) = 0;

  // Sends one message. A transport may deliver what the server answers to it (stdio: later, on its
  // reader thread; HTTP: the response body or its event stream, before Send returns). `cancel`
  // (may be null) ends a Send still waiting for its answer with kUnavailable.
  virtual Status Send(const boost::json::value& message, std::chrono::milliseconds timeout,
                      const std::atomic<bool>* cancel) = 0;

  // The protocol version the client negotiated (HTTP sends it in every request's header).
  virtual void SetProtocolVersion(const std::string& /*version*/) {}

  // After the handshake: opens the way for messages the server sends outside any request, where
  // the transport needs one (HTTP: the standalone GET stream; stdio always has it).
  virtual void Listen() {}

  // Ends the connection; no callback runs after it returns. Idempotent.
  virtual void Close() = 0;

  // For logs and `cairn mcp list`: recent stderr of a process, "" otherwise.
  virtual std::string Diagnostics() const { return ""; }
};

}  // namespace cairn::exec::mcp
