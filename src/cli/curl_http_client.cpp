#include "cli/curl_http_client.h"

#include <chrono>
#include <memory>
#include <utility>

#include "cli/stop_signal.h"

namespace cairn::cli {

namespace {

// The request as net::HttpConnection takes it: the user's server, so any address and the
// environment's proxies; no redirects.
net::HttpFetchRequest ToNet(const HttpRequest& request, const CurlOptions& options, std::string_view accept) {
  static const auto kAnyAddress = std::make_shared<const net::OutboundPolicy>(net::OutboundPolicy::Unrestricted());
  net::HttpFetchRequest out;
  out.method = request.method.empty() ? "GET" : request.method;
  out.url = request.url;
  out.headers.emplace_back("Accept", std::string(accept));
  if (request.body.has_value()) {
    out.headers.emplace_back("Content-Type", "application/json");
    out.body = *request.body;
  }
  for (const auto& header : request.headers) out.headers.push_back(header);
  out.timeout = std::chrono::milliseconds(options.total_timeout_ms);
  out.connect_timeout = std::chrono::milliseconds(options.connect_timeout_ms);
  out.policy = kAnyAddress;
  out.environment_proxy = true;
  out.user_agent = options.user_agent;
  return out;
}

HttpReply ToReply(net::HttpFetchResponse response) {
  HttpReply reply;
  reply.status = response.status;
  reply.headers = std::move(response.headers);
  reply.body = std::move(response.body);
  return reply;
}

Status Failed(const HttpRequest& request, const Status& status) {
  return Status::Unavailable((request.method.empty() ? "GET" : request.method) + " " + request.url +
                             " failed: " + status.message());
}

}  // namespace

CurlHttpClient::CurlHttpClient(CurlOptions options) : options_(std::move(options)) {}

Result<HttpReply> CurlHttpClient::Send(const HttpRequest& request) {
  net::HttpFetchRequest fetch = ToNet(request, options_, "application/json");
  fetch.max_response_bytes = options_.max_reply_bytes;  // larger replies are refused, not buffered
  Result<net::HttpFetchResponse> response = connection_.Fetch(fetch);
  if (response.ok()) return ToReply(std::move(response).value());
  if (response.status().code() == StatusCode::kPayloadTooLarge) {
    return Status::ResourceExhausted("the reply from " + request.url + " is larger than " +
                                     std::to_string(options_.max_reply_bytes) + " bytes");
  }
  return Failed(request, response.status());
}

CurlStreamClient::CurlStreamClient(CurlOptions options) : options_(std::move(options)) {}

Result<HttpReply> CurlStreamClient::Stream(const HttpRequest& request, const StreamCallbacks& callbacks,
                                           StopSignal* stop) {
  net::HttpFetchRequest fetch = ToNet(request, options_, "text/event-stream");
  fetch.headers.emplace_back("Cache-Control", "no-cache");
  fetch.timeout = std::chrono::milliseconds(0);  // a stream has no end to wait for
  fetch.max_response_bytes = kMaxErrorBodyBytes;
  HttpReply head;  // what a stop leaves to return
  net::HttpStreamHandler handler;
  handler.on_head = [&](const net::HttpFetchResponse& response) {
    head.status = response.status;
    head.headers = response.headers;
    bool success = response.status >= 200 && response.status <= 299;
    return !success || !callbacks.on_open || callbacks.on_open(head);
  };
  if (callbacks.on_data) handler.on_body = callbacks.on_data;
  net::HttpCancel cancel;
  if (stop != nullptr) {
    cancel.requested = [stop] { return stop->stop_requested(); };
    cancel.wake_fd = stop->fd();
    cancel.poll_interval = std::chrono::milliseconds(1000);  // the fd wakes the wait at once
  }
  Result<net::HttpFetchResponse> response = connection_.Stream(fetch, handler, cancel);
  if (response.ok()) return ToReply(std::move(response).value());
  if (stop != nullptr && stop->stop_requested()) return head;  // ended by the stop: not an error
  return Failed(request, response.status());
}

}  // namespace cairn::cli
