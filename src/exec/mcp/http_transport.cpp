#include "exec/mcp/http_transport.h"

#include <boost/json/serialize.hpp>
#include <algorithm>

#include "base/json_util.h"
#include "base/log.h"

namespace cairn::exec::mcp {
namespace json = boost::json;

namespace {
constexpr size_t kMaxJsonDepth = 64;
constexpr size_t kMaxIdleConnections = 8;
constexpr int kMaxResumptions = 10;
constexpr std::chrono::milliseconds kDefaultRetry{1000};
constexpr std::chrono::milliseconds kMaxRetry{30000};
constexpr std::chrono::milliseconds kCancelPoll{20};
constexpr std::chrono::milliseconds kListenConnectTimeout{10000};
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
    for (json::value& item : message.as_array()) Deliver(std::move(item));
    return;
  }
  // A response to a request whose Send is still reading (or resuming) a stream: it may stop.
  if (message.is_object() && !message.as_object().contains("method")) {
    if (const json::value* id = message.as_object().if_contains("id")) {
      std::lock_guard lock(mu_);
      auto it = awaited_.find(json::serialize(*id));
      if (it != awaited_.end()) it->second->store(true);
      closed_cv_.notify_all();
    }
  }
  on_message_(std::move(message));
}

std::vector<std::pair<std::string, std::string>> HttpTransport::RequestHeaders() {
  auto headers = headers_;
  std::lock_guard lock(mu_);
  if (!session_id_.empty()) headers.emplace_back("Mcp-Session-Id", session_id_);
  if (!protocol_version_.empty()) headers.emplace_back("MCP-Protocol-Version", protocol_version_);
  return headers;
}

Result<HttpTransport::Exchange> HttpTransport::Perform(const net::HttpFetchRequest& request, net::SseParser& parser,
                                                       const std::atomic<bool>* answered, const std::atomic<bool>* cancel) {
  Exchange exchange;
  Status body_error = Status::Ok();
  auto is_answered = [answered] { return answered != nullptr && answered->load(); };
  net::HttpStreamHandler handler;
  handler.on_head = [&](const net::HttpFetchResponse& head) {
    exchange.is_stream = head.content_type.find("text/event-stream") != std::string::npos;
    std::string session = net::HeaderValue(head.headers, "mcp-session-id");
    if (!session.empty()) {
      std::lock_guard lock(mu_);
      session_id_ = session;
    }
    return true;
  };
  handler.on_body = [&](std::string_view chunk) {
    if (!exchange.is_stream) {
      if (exchange.json_body.size() + chunk.size() > max_message_bytes_) {
        body_error = Status::PayloadTooLarge("an MCP answer was larger than " + std::to_string(max_message_bytes_) + " bytes");
        return false;
      }
      exchange.json_body.append(chunk);
      return true;
    }
    if (Status fed = parser.Feed(chunk); !fed.ok()) {
      body_error = fed;
      return false;
    }
    while (auto event = parser.Next()) {
      if (event->data.empty()) continue;  // a priming event (an id, maybe a retry; no message)
      auto parsed = ParseJson(event->data, kMaxJsonDepth);
      if (parsed.ok()) Deliver(std::move(parsed).value());
    }
    // The answer is in: what the server may still send on this stream is not waited for.
    return !is_answered();
  };
  net::HttpCancel http_cancel;
  // Also when the answer came another way (the GET stream): this stream has nothing more to give.
  http_cancel.requested = [this, cancel, is_answered] {
    return closing_.load() || (cancel != nullptr && cancel->load()) || is_answered();
  };
  auto connection = TakeConnection();
  auto response = connection->Stream(request, handler, http_cancel);
  if (!response.ok() && is_answered() && !closing_.load()) {
    exchange.answered = true;  // stopped because the answer is in
    return exchange;
  }
  if (!response.ok()) return response.status();
  exchange.answered = is_answered();
  // A transfer stopped before its end leaves the connection in no state to be reused.
  if (!exchange.answered || !exchange.is_stream) ReturnConnection(std::move(connection));
  CAIRN_RETURN_IF_ERROR(body_error);
  exchange.response = std::move(response).value();
  if (!exchange.is_stream && !exchange.json_body.empty() && exchange.response.status / 100 == 2) {
    CAIRN_ASSIGN_OR_RETURN(json::value parsed, ParseJson(exchange.json_body, kMaxJsonDepth));
    Deliver(std::move(parsed));
    exchange.answered = is_answered();
  }
  return exchange;
}

Status HttpTransport::Send(const json::value& message, std::chrono::milliseconds timeout,
                           const std::atomic<bool>* cancel) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::string sent_session;
  {
    std::lock_guard lock(mu_);
    if (closed_) return Status::Unavailable("the MCP connection is closed");
    sent_session = session_id_;
  }
  net::HttpFetchRequest request;
  request.method = "POST";
  request.url = url_;
  request.headers = RequestHeaders();
  request.headers.emplace_back("Content-Type", "application/json");
  request.headers.emplace_back("Accept", "application/json, text/event-stream");
  request.body = json::serialize(message);
  request.timeout = timeout;
  request.max_response_bytes = max_message_bytes_;
  request.policy = policy_;
  // A request (not a notification or a response) is answered by a message with its id, on
  // whichever stream it comes.
  std::shared_ptr<std::atomic<bool>> answered;
  std::string awaited;
  if (message.is_object() && message.as_object().contains("method")) {
    if (const json::value* id = message.as_object().if_contains("id")) {
      awaited = json::serialize(*id);
      answered = std::make_shared<std::atomic<bool>>(false);
      std::lock_guard lock(mu_);
      awaited_[awaited] = answered;
    }
  }
  struct Forget {
    HttpTransport& transport;
    const std::string& id;
    ~Forget() {
      if (id.empty()) return;
      std::lock_guard lock(transport.mu_);
      transport.awaited_.erase(id);
    }
  } forget{*this, awaited};
  net::SseParser parser(max_message_bytes_);
  auto performed = Perform(request, parser, answered.get(), cancel);
  if (!performed.ok()) {
    // A stream cut off after it gave an event id is resumed like one the server ended.
    const bool stopped = closing_.load() || (cancel != nullptr && cancel->load());
    if (answered && !stopped && !parser.last_event_id().empty()) return Resume(parser, *answered, deadline, cancel);
    return performed.status();
  }
  Exchange& exchange = *performed;
  if (exchange.answered) return Status::Ok();
  const int status = exchange.response.status;
  if (status == 404 && !sent_session.empty()) {
    if (on_closed_) on_closed_("the server ended the MCP session (404)");
    return Status::Unavailable("the MCP session ended");
  }
  if (status < 200 || status > 299) {
    std::string body = exchange.response.body.substr(0, 300);
    return Status::Unavailable(url_ + " answered " + std::to_string(status) + (body.empty() ? "" : ": " + body));
  }
  if (!exchange.is_stream || !answered) return Status::Ok();
  return Resume(parser, *answered, deadline, cancel);
}

Status HttpTransport::Resume(net::SseParser& parser, const std::atomic<bool>& answered,
                             std::chrono::steady_clock::time_point deadline, const std::atomic<bool>* cancel) {
  for (int attempt = 0; attempt < kMaxResumptions; ++attempt) {
    if (answered.load()) return Status::Ok();
    if (parser.last_event_id().empty()) {
      return Status::Unavailable("the MCP server ended the event stream before answering, with no event id to resume from");
    }
    auto delay = std::chrono::milliseconds(std::clamp<int64_t>(parser.retry_ms().value_or(kDefaultRetry.count()), 0,
                                                               kMaxRetry.count()));
    if (!WaitBeforeResuming(delay, deadline, cancel, &answered)) {
      if (answered.load()) return Status::Ok();
      return Status::Unavailable("the MCP request's event stream ended and could not be resumed in time");
    }
    net::HttpFetchRequest request;
    request.method = "GET";
    request.url = url_;
    request.headers = RequestHeaders();
    request.headers.emplace_back("Accept", "text/event-stream");
    request.headers.emplace_back("Last-Event-ID", parser.last_event_id());
    request.timeout = std::max(std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()),
                               std::chrono::milliseconds(1));
    request.max_response_bytes = max_message_bytes_;
    request.policy = policy_;
    parser.Reset();  // a new connection; the last event id stays
    CAIRN_ASSIGN_OR_RETURN(Exchange exchange, Perform(request, parser, &answered, cancel));
    if (exchange.answered) return Status::Ok();
    const int status = exchange.response.status;
    if (status == 404) {
      if (on_closed_) on_closed_("the server ended the MCP session (404)");
      return Status::Unavailable("the MCP session ended");
    }
    if (status < 200 || status > 299 || !exchange.is_stream) {
      return Status::Unavailable("resuming the MCP event stream (GET " + url_ + ", Last-Event-ID) answered " +
                                 std::to_string(status) + (exchange.is_stream ? "" : " without an event stream"));
    }
  }
  return Status::Unavailable("the MCP server did not answer after " + std::to_string(kMaxResumptions) +
                             " resumptions of its event stream");
}

bool HttpTransport::WaitBeforeResuming(std::chrono::milliseconds delay, std::chrono::steady_clock::time_point deadline,
                                       const std::atomic<bool>* cancel, const std::atomic<bool>* answered) {
  const auto until = std::chrono::steady_clock::now() + delay;
  if (until >= deadline) return false;
  std::unique_lock lock(mu_);
  while (!closed_ && !(cancel != nullptr && cancel->load()) && !(answered != nullptr && answered->load())) {
    const auto now = std::chrono::steady_clock::now();
    if (now >= until) return true;
    // The caller's cancel flag has no way to wake us: look at it every kCancelPoll.
    closed_cv_.wait_until(lock, std::min(until, now + kCancelPoll));
  }
  return false;
}

void HttpTransport::Listen() {
  std::lock_guard lock(mu_);
  if (closed_ || listener_.joinable()) return;
  listener_ = std::thread([this] { ListenLoop(); });
}

void HttpTransport::ListenLoop() {
  net::SseParser parser(max_message_bytes_);
  auto backoff = kDefaultRetry;
  const auto never = std::chrono::steady_clock::time_point::max();
  while (!closing_.load()) {
    net::HttpFetchRequest request;
    request.method = "GET";
    request.url = url_;
    request.headers = RequestHeaders();
    request.headers.emplace_back("Accept", "text/event-stream");
    if (!parser.last_event_id().empty()) request.headers.emplace_back("Last-Event-ID", parser.last_event_id());
    request.timeout = std::chrono::milliseconds(0);  // the stream stays open as long as the server likes
    request.connect_timeout = kListenConnectTimeout;
    request.max_response_bytes = max_message_bytes_;
    request.policy = policy_;
    parser.Reset();
    auto exchange = Perform(request, parser, nullptr, nullptr);
    if (closing_.load()) return;
    std::chrono::milliseconds delay;
    if (!exchange.ok()) {
      CAIRN_LOG_DEBUG("MCP {}: the GET stream failed: {}", url_, exchange.status().message());
      delay = backoff;
      backoff = std::min(backoff * 2, kMaxRetry);
    } else if (exchange->response.status / 100 == 2 && exchange->is_stream) {
      // The server ended the stream (as it may at any time): reopen it where it stopped.
      delay = std::chrono::milliseconds(std::clamp<int64_t>(parser.retry_ms().value_or(kDefaultRetry.count()), 0,
                                                            kMaxRetry.count()));
      backoff = kDefaultRetry;
    } else {
      // 405 and the like: this server sends nothing outside requests (or not this way).
      CAIRN_LOG_DEBUG("MCP {}: no GET stream (answered {})", url_, exchange->response.status);
      return;
    }
    if (!WaitBeforeResuming(delay, never, nullptr, nullptr)) return;
  }
}

void HttpTransport::Close() {
  std::vector<std::unique_ptr<net::HttpConnection>> idle;
  std::thread listener;
  {
    std::lock_guard lock(mu_);
    if (closed_) return;
    closed_ = true;
    closing_ = true;
    idle.swap(idle_);
    listener.swap(listener_);
    closed_cv_.notify_all();
  }
  if (listener.joinable()) listener.join();  // its transfer sees closing_ within a poll
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
