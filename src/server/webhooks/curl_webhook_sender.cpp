#include "server/webhooks/curl_webhook_sender.h"

#include <algorithm>

#include "net/http_fetch.h"
#include "server/webhooks/delivery_policy.h"

namespace cairn::server::webhooks {

CurlWebhookSender::CurlWebhookSender(std::shared_ptr<const net::OutboundPolicy> policy, size_t max_response_bytes)
    : policy_(std::move(policy)), max_response_bytes_(max_response_bytes) {}

WebhookResponse CurlWebhookSender::Send(const WebhookRequest& request, const std::atomic<bool>* cancel) {
  net::HttpFetchRequest fetch;
  fetch.method = "POST";
  fetch.url = request.url;
  fetch.headers = request.headers;
  fetch.headers.emplace_back("User-Agent", "cairn-webhooks/0.1");
  fetch.body = request.body;
  fetch.timeout = std::max(request.timeout, std::chrono::milliseconds(1));
  fetch.max_response_bytes = max_response_bytes_;
  fetch.truncate_body = true;  // the status decides the outcome; the body is only read, then dropped
  fetch.policy = policy_;
  WebhookResponse response;
  auto fetched = net::HttpFetch(fetch, cancel);
  if (!fetched.ok()) {
    response.error = request.redact(fetched.status().message());
    // A destination the policy refuses (or a request curl cannot make at all) fails the same way
    // on every attempt: only a changed setting or URL helps.
    response.refused = fetched.status().code() == StatusCode::kInvalidArgument;
    return response;
  }
  response.status = fetched->status;
  if (response.status < 200 || response.status >= 300) response.error = "HTTP " + std::to_string(response.status);
  for (const auto& [name, value] : fetched->headers) {
    if (name == "retry-after") response.retry_after_seconds = ParseRetryAfter(value);
  }
  return response;
}

}  // namespace cairn::server::webhooks
