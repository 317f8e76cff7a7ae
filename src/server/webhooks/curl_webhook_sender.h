// CurlWebhookSender: WebhookSender over libcurl, through the one client for client-defined
// destinations (net/http_fetch.h). Bounded: the attempt timeout covers the whole exchange, at most
// `max_response_bytes` of a response body are read (the status decides the outcome), redirects
// are not followed, only http and https. It connects only where the outbound policy allows
// (net/outbound_policy.h): a refused destination is a `refused` response with the policy's
// message, and nothing is sent.
#pragma once

#include <memory>

#include "net/outbound_policy.h"
#include "server/webhooks/webhook_sender.h"

namespace cairn::server::webhooks {

class CurlWebhookSender final : public WebhookSender {
 public:
  // `policy` null is the default policy (every special-purpose range refused).
  explicit CurlWebhookSender(std::shared_ptr<const net::OutboundPolicy> policy, size_t max_response_bytes = 64 * 1024);
  WebhookResponse Send(const WebhookRequest& request, const std::atomic<bool>* cancel) override;

 private:
  std::shared_ptr<const net::OutboundPolicy> policy_;
  size_t max_response_bytes_;
};

}  // namespace cairn::server::webhooks
