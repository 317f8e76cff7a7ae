#include "server/webhooks/webhook_sender.h"

#include "server/webhooks/webhook_signature.h"

namespace cairn::server::webhooks {

WebhookRequest BuildDeliveryRequest(const store::Webhook& hook, int64_t seq, std::string body,
                                    std::chrono::milliseconds timeout) {
  WebhookRequest request;
  request.url = hook.url;
  request.timeout = timeout;
  request.headers.emplace_back("Content-Type", "application/json");
  request.headers.emplace_back("X-Cairn-Event-Id", std::to_string(seq));
  if (hook.secret) {
    // The same signature under the reference (RCRT) API's name too, for its receivers (docs/rcrt.md).
    std::string signature = SignatureHeader(*hook.secret, body);
    request.headers.emplace_back("X-Cairn-Signature", signature);
    request.headers.emplace_back("X-RCRT-Signature", std::move(signature));
  }
  request.body = std::move(body);
  return request;
}

}  // namespace cairn::server::webhooks
