// HttpTransport: MCP's Streamable HTTP transport (protocol 2025-03-26 and later). Every message is
// POSTed to the server's one URL with Accept: application/json, text/event-stream; the answer is
// a JSON body or an event stream carrying the response (and notifications before it), handed to
// OnMessage before Send returns. The Mcp-Session-Id the server gives at initialize is sent with
// every later request, with MCP-Protocol-Version. A 404 on a request that carried a session id
// means the session is gone: OnClosed, so the client reconnects.
//
// Outbound requests go through src/net with the server's outbound address policy (DESIGN.md
// "Trust boundaries"): a server on a loopback or private address needs --allow-private-network.
// Not done: the optional GET stream for messages the server sends outside a request (so
// notifications/tools/list_changed arrive only inside the answer to a request), and resuming a
// broken stream with Last-Event-ID.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "exec/mcp/mcp_transport.h"
#include "net/http_fetch.h"
#include "net/outbound_policy.h"

namespace cairn::exec::mcp {

class HttpTransport final : public McpTransport {
 public:
  HttpTransport(std::string url, std::vector<std::pair<std::string, std::string>> headers,
                std::shared_ptr<const net::OutboundPolicy> policy, size_t max_message_bytes);
  ~HttpTransport() override;

  Status Open(OnMessage on_message, OnClosed on_closed) override;
  Status Send(const boost::json::value& message, std::chrono::milliseconds timeout,
              const std::atomic<bool>* cancel) override;
  void SetProtocolVersion(const std::string& version) override;
  void Close() override;

 private:
  std::unique_ptr<net::HttpConnection> TakeConnection();
  void ReturnConnection(std::unique_ptr<net::HttpConnection> connection);
  void Deliver(boost::json::value message);

  std::string url_;
  std::vector<std::pair<std::string, std::string>> headers_;
  std::shared_ptr<const net::OutboundPolicy> policy_;
  size_t max_message_bytes_;
  OnMessage on_message_;
  OnClosed on_closed_;
  std::mutex mu_;  // guards everything below
  std::string session_id_;
  std::string protocol_version_;
  bool closed_ = false;
  std::vector<std::unique_ptr<net::HttpConnection>> idle_;  // kept-alive connections
};

}  // namespace cairn::exec::mcp
