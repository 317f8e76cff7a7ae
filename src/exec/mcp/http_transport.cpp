#include "exec/mcp/http_transport.h"

#include <boost/json/serialize.hpp>

#include "base/json_util.h"
#include "net/sse_parser.h"

namespace cairn::exec::mcp {
namespace json = boost::json;

namespace {
constexpr size_t kMaxJsonDepth = 64;
constexpr size_t kMaxIdleConnections = 8;
}  // namespace

HttpTransport::HttpTransport(std::string url, std::vector<std::pair<std::string, std::string>> headers,
                             std::shared_ptr<const net::OutboundPolicy> policy, size_t max_message_bytes)
    : url_(std::move(url)), headers_(std::move(headers)), policy_(std::move(policy)),
      max_message_bytes_(max_message_bytes) {}

HttpTransport::~HttpTransport() { Close(); }

Status HttpTransport::Open(OnMessage on_message, OnClosed on_closed) {
  on_message_ = std::move(on_message);
  on_closed_ = std::move(on_closed);
  return Status::Ok();
}

void HttpTransport::SetProtocolVersion(const std::string& version) {
  std::lock_guard lock(mu_);
  protocol_version_ = version;
}

std::unique_ptr<net::HttpConnection> HttpTransport::TakeConnection() {
  std::lock_guard lock(mu_);
  if (idle_.empty()) return std::make_unique<net::HttpConnection>();
  auto connection = std::move(idle_.back());
  idle_.pop_back();
  return connection;
}

void HttpTransport::ReturnConnection(std::unique_ptr<net::HttpConnection> connection) {
  std::lock_guard lock(mu_);
  if (!closed_ && idle_.size() < kMaxIdleConnections) idle_.push_back(std::move(connection));
}

void HttpTransport::Deliver(json::value message) {
  if (message.is_array()) {  // a JSON-RPC batch (2025-03-26)
    for (json::value& item : message.as_array()) on_message_(std::move(item));
  } else {
    on_message_(std::move(message));
  }
}

Status HttpTransport::Send(const json::value& message, std::chrono::milliseconds timeout,
                           const std::atomic<bool>* cancel) {
  net::HttpFetchRequest request;
  request.method = "POST";
  request.url = url_;
  request.headers = headers_;
  request.headers.emplace_back("Content-Type", "application/json");
  request.headers.emplace_back("Accept", "application/json, text/event-stream");
  std::string sent_session;
  {
    std::lock_guard lock(mu_);
    if (closed_) return Status::Unavailable("the MCP connection is closed");
    sent_session = session_id_;
    if (!session_id_.empty()) request.headers.emplace_back("Mcp-Session-Id", session_id_);
    if (!protocol_version_.empty()) request.headers.emplace_back("MCP-Protocol-Version", protocol_version_);
  }
  request.body = json::serialize(message);
  request.timeout = timeout;
  request.max_response_bytes = max_message_bytes_;
  request.policy = policy_;

  bool is_stream = false;
  std::string json_body;
  Status body_error = Status::Ok();
  net::SseParser parser(max_message_bytes_);
  net::HttpStreamHandler handler;
  handler.on_head = [&](const net::HttpFetchResponse& head) {
    is_stream = head.content_type.find("text/event-stream") != std::string::npos;
    std::string session = net::HeaderValue(head.headers, "mcp-session-id");
    if (!session.empty()) {
      std::lock_guard lock(mu_);
      session_id_ = session;
    }
    return true;
  };
  handler.on_body = [&](std::string_view chunk) {
    if (!is_stream) {
      if (json_body.size() + chunk.size() > max_message_bytes_) {
        body_error = Status::PayloadTooLarge("an MCP answer was larger than " + std::to_string(max_message_bytes_) + " bytes");
        return false;
      }
      json_body.append(chunk);
      return true;
    }
    if (Status fed = parser.Feed(chunk); !fed.ok()) {
      body_error = fed;
      return false;
    }
    while (auto event = parser.Next()) {
      if (event->data.empty()) continue;  // a priming event (an id, no message)
      auto parsed = ParseJson(event->data, kMaxJsonDepth);
      if (parsed.ok()) Deliver(std::move(parsed).value());
    }
    return true;
  };
  net::HttpCancel http_cancel;
  if (cancel != nullptr) http_cancel.requested = [cancel] { return cancel->load(); };
  auto connection = TakeConnection();
  auto response = connection->Stream(request, handler, http_cancel);
  if (!response.ok()) return response.status();
  ReturnConnection(std::move(connection));
  CAIRN_RETURN_IF_ERROR(body_error);
  if (response->status == 404 && !sent_session.empty()) {
    if (on_closed_) on_closed_("the server ended the MCP session (404)");
    return Status::Unavailable("the MCP session ended");
  }
  if (response->status < 200 || response->status > 299) {
    std::string body = response->body.substr(0, 300);
    return Status::Unavailable(url_ + " answered " + std::to_string(response->status) + (body.empty() ? "" : ": " + body));
  }
  if (!is_stream && !json_body.empty()) {
    CAIRN_ASSIGN_OR_RETURN(json::value parsed, ParseJson(json_body, kMaxJsonDepth));
    Deliver(std::move(parsed));
  }
  return Status::Ok();
}

void HttpTransport::Close() {
  std::vector<std::unique_ptr<net::HttpConnection>> idle;
  {
    std::lock_guard lock(mu_);
    if (closed_) return;
    closed_ = true;
    idle.swap(idle_);
  }
  // Tell the server the session is over (best effort; a server may not support it).
  std::string session;
  {
    std::lock_guard lock(mu_);
    session = session_id_;
  }
  if (session.empty()) return;
  net::HttpFetchRequest request;
  request.method = "DELETE";
  request.url = url_;
  request.headers = headers_;
  request.headers.emplace_back("Mcp-Session-Id", session);
  request.timeout = std::chrono::milliseconds(2000);
  request.policy = policy_;
  (void)net::HttpFetch(request);
}

}  // namespace cairn::exec::mcp
