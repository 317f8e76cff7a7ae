// The /webhooks and /dlq routes (docs/api.md, Webhooks): webhook CRUD and the dead-letter queue.
#pragma once

#include <chrono>
#include <functional>
#include <memory>

#include "base/status.h"
#include "model/limits.h"
#include "model/secret_ref.h"
#include "net/outbound_policy.h"
#include "server/router.h"
#include "server/webhooks/webhook_sender.h"
#include "store/webhook_store.h"

namespace cairn::server {

struct WebhookRouteOptions {
  model::Limits limits;
  size_t max_webhooks_per_tenant = 100;
  std::chrono::milliseconds attempt_timeout{10000};  // for POST /dlq/{id}/retry
  // Judges the literal host of a webhook URL on create and update (400 when refused); null is the
  // default policy. The sender enforces the same policy on every delivery.
  std::shared_ptr<const net::OutboundPolicy> outbound_policy;
  // Secret references of webhooks, for POST /dlq/{id}/retry (the deliverer's resolver).
  model::SecretResolver resolve_secret = {};
};

// Registers the routes on `router`. `on_change` runs after every successful create, update or
// delete of a webhook (the deliverer's Refresh). Everything passed by reference must outlive the
// router.
void AddWebhookRoutes(Router& router, store::WebhookStore& store, webhooks::WebhookSender& sender,
                      std::function<Status()> on_change, const WebhookRouteOptions& options);

}  // namespace cairn::server
