// HttpTransport: MCP's Streamable HTTP transport (protocol 2025-03-26 and later). Every message is
// POSTed to the server's one URL with Accept: application/json, text/event-stream; the answer is
// a JSON body or an event stream carrying the response (and notifications before it), handed to
// OnMessage before Send returns. The Mcp-Session-Id the server gives at initialize is sent with
// every later request, with MCP-Protocol-Version. A 404 on a request that carried a session id
// means the session is gone: OnClosed, so the client reconnects.
//
// A request's event stream that ends before its response (the server may close it at any time,
// 2025-11-25 "Resumability and Redelivery") is resumed: after the stream's last `retry` (else 1 s,
// at most 30 s) a GET with Last-Event-ID (the stream's last event id) and the session id reopens
// it, and messages are read from it until the response arrives; at most 10 times per request,
// within the request's timeout. A stream that ends without an event id cannot be resumed: the
// request fails (kUnavailable) at once rather than waiting for its timeout.
//
// Listen() opens the standalone GET stream (Accept: text/event-stream) on a thread of its own, for
// what the server sends outside a request (notifications/tools/list_changed, pings). A server
// that has none (405, or any other 4xx) is not asked again; a stream that ends is reopened after
// its `retry` (else 1 s) with Last-Event-ID, a failed attempt after a backoff doubling from 1 s to
// 30 s. Close() ends it.
//
// Outbound requests go through src/net with the server's outbound address policy (DESIGN.md
// "Trust boundaries"): a server on a loopback or private address needs --allow-private-network.
#pragma once

#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "exec/mcp/mcp_transport.h"
#include "net/http_fetch.h"
#include "net/outbound_policy.h"
#include "net/sse_parser.h"

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
  void Listen() override;
  void Close() override;

 private:
  // What one HTTP exchange (the POST of a message, or a GET of an event stream) brought.
  struct Exchange {
    net::HttpFetchResponse response;  // status and headers; the body of a non-2xx
    bool is_stream = false;           // a text/event-stream body
    bool answered = false;            // `answered` was set (on this stream or another)
    std::string json_body;            // an application/json body
  };
  // Performs `request`, delivering the messages of an event stream as they arrive (parsed with
  // `parser`, which keeps the stream's last event id and retry), and stops once `answered` (may
  // be null) is set: Deliver sets the flag of a request when its response arrives, on any stream.
  Result<Exchange> Perform(const net::HttpFetchRequest& request, net::SseParser& parser,
                           const std::atomic<bool>* answered, const std::atomic<bool>* cancel);
  // Resumes the event stream of a request until `answered` (see above).
  Status Resume(net::SseParser& parser, const std::atomic<bool>& answered,
                std::chrono::steady_clock::time_point deadline, const std::atomic<bool>* cancel);
  // The headers of every request: the record's, the session id, the protocol version.
  std::vector<std::pair<std::string, std::string>> RequestHeaders();
  // Waits `delay`; false when cancelled, answered, closed or past `deadline` first.
  bool WaitBeforeResuming(std::chrono::milliseconds delay, std::chrono::steady_clock::time_point deadline,
                          const std::atomic<bool>* cancel, const std::atomic<bool>* answered);
  // The standalone GET stream's thread (see Listen()).
  void ListenLoop();
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
  std::atomic<bool> closing_{false};  // Close() was called: transfers in flight end
  std::condition_variable closed_cv_;
  std::vector<std::unique_ptr<net::HttpConnection>> idle_;  // kept-alive connections
  std::thread listener_;  // the standalone GET stream, once Listen() ran
  // The requests whose Send is under way (serialized id -> set when its response is delivered).
  std::map<std::string, std::shared_ptr<std::atomic<bool>>> awaited_;
};

}  // namespace cairn::exec::mcp
