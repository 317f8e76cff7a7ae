#include "server/webhooks/webhook_sender.h"

#include "server/webhooks/webhook_signature.h"

namespace cairn::server::webhooks {

Result<WebhookRequest> BuildDeliveryRequest(const store::Webhook& hook, int64_t seq, std::string body,
                                            std::chrono::milliseconds timeout, const model::SecretResolver& resolve) {
  WebhookRequest request;
  request.url = hook.url;
  request.timeout = timeout;
  // Stored headers were validated when written; ones that no longer parse are not sent.
  if (hook.headers.is_object() && !hook.headers.as_object().empty()) {
    CAIRN_ASSIGN_OR_RETURN(model::HeaderList headers, model::ParseHeaderList(hook.headers, "headers"));
    CAIRN_ASSIGN_OR_RETURN(request.headers, model::ResolveHeaders(headers, hook.owner_id, resolve, &request.redact));
  }
  request.headers.emplace_back("Content-Type", "application/json");
  request.headers.emplace_back("X-Cairn-Event-Id", std::to_string(seq));
  std::optional<std::string> secret = hook.secret;
  if (hook.secret_name) {
    CAIRN_ASSIGN_OR_RETURN(secret, model::ResolveSecretOrValue(model::SecretOrValue{"", *hook.secret_name}, hook.owner_id,
                                                               resolve, "signing secret", &request.redact));
  }
  if (secret) {
    // The same signature under the reference (RCRT) API's name too, for its receivers (docs/rcrt.md).
    std::string signature = SignatureHeader(*secret, body);
    request.headers.emplace_back("X-Cairn-Signature", signature);
    request.headers.emplace_back("X-RCRT-Signature", std::move(signature));
  }
  request.body = std::move(body);
  return request;
}

std::string BuildFailureText(const Status& failure) {
  std::string reason = failure.reason().empty() ? std::string(StatusCodeName(failure.code())) : failure.reason();
  return reason + ": " + failure.message();
}

}  // namespace cairn::server::webhooks
