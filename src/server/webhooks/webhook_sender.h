// WebhookSender: one HTTP POST of a delivery, nothing more (retries are the deliverer's). An
// interface so delivery logic can run against a scripted sender; CurlWebhookSender is the real one.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/secret_redactor.h"
#include "base/status.h"
#include "model/secret_ref.h"
#include "store/webhook_store.h"

namespace cairn::server::webhooks {

struct WebhookRequest {
  std::string url;
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;
  std::chrono::milliseconds timeout{10000};  // the whole attempt: connect, send, receive
  // The secret values in the headers and the signing key: a sender passes every error text
  // through it, so none reaches a dead letter or a log.
  SecretRedactor redact = {};
};

struct WebhookResponse {
  int status = 0;                           // 0: no HTTP response (see error)
  std::string error;                        // why there was no response, or "HTTP <status>"; empty on 2xx
  std::optional<int64_t> retry_after_seconds;  // a Retry-After header in seconds, if any
  // Not sent, and no later attempt would be: the outbound policy refused the destination (or the
  // request cannot be made as it is). The deliverer dead-letters at once instead of retrying.
  bool refused = false;
};

class WebhookSender {
 public:
  virtual ~WebhookSender() = default;
  // Sends `request`. Returns early, with an error, once `*cancel` becomes true (if not null).
  // Thread-safe: called concurrently by every delivery thread.
  virtual WebhookResponse Send(const WebhookRequest& request, const std::atomic<bool>* cancel) = 0;
};

// The delivery of event `seq` (with `body`, the event JSON) to `hook`: its headers, Content-Type,
// X-Cairn-Event-Id and, when the hook has a secret, X-Cairn-Signature (and X-RCRT-Signature).
// Secret references (the signing secret, headers) are resolved now, in the hook's tenant, through
// `resolve`: a missing secret is an error with reason "secret_not_found" (nothing is sent).
Result<WebhookRequest> BuildDeliveryRequest(const store::Webhook& hook, int64_t seq, std::string body,
                                            std::chrono::milliseconds timeout,
                                            const model::SecretResolver& resolve = {});

// What a delivery that could not be built records as its error: "<reason>: <message>".
std::string BuildFailureText(const Status& failure);

}  // namespace cairn::server::webhooks
