// What the /rcrt routes need besides the native routes they call (docs/rcrt.md). Nothing here owns
// anything; every reference must outlive the router the routes are added to.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>

#include "base/status.h"
#include "model/limits.h"
#include "store/webhook_store.h"

namespace cairn::server::rcrt {

struct RcrtServices {
  model::Limits limits;
  store::WebhookStore& webhooks;               // for POST /rcrt/agents/{id}/secret
  std::function<Status()> on_webhooks_change;  // the deliverer's Refresh; may be empty
  size_t event_context_max_bytes = 65536;      // larger contexts are left out of stream frames
  std::chrono::milliseconds ping_interval{5000};  // the reference's stream ping
};

}  // namespace cairn::server::rcrt
