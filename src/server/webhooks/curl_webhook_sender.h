// CurlWebhookSender: WebhookSender over libcurl, through the one client for client-defined
// destinations (net/http_fetch.h). Bounded: the attempt timeout covers the whole exchange, at most
// `max_response_bytes` of a response body are read (the status decides the outcome), redirects
// are not followed, only http and https.
#pragma once

#include "server/webhooks/webhook_sender.h"

namespace cairn::server::webhooks {

class CurlWebhookSender final : public WebhookSender {
 public:
  explicit CurlWebhookSender(size_t max_response_bytes = 64 * 1024);
  WebhookResponse Send(const WebhookRequest& request, const std::atomic<bool>* cancel) override;

 private:
  size_t max_response_bytes_;
};

}  // namespace cairn::server::webhooks
