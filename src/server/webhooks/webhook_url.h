// Validation of webhook target URLs.
#pragma once

#include <string_view>

#include "base/status.h"
#include "net/outbound_policy.h"

namespace cairn::server::webhooks {

inline constexpr size_t kMaxWebhookUrlBytes = 2048;

// An absolute http:// or https:// URL with a host, at most kMaxWebhookUrlBytes, without user
// info (URLs are shown in listings and logs: credentials belong in the secret) and without a
// fragment. Otherwise kValidation on field "url".
Status ValidateWebhookUrl(std::string_view url);

// The destination check of a webhook URL when it is written: a literal host the outbound policy
// refuses (an IP address in a refused range, localhost) is kInvalidArgument (400) "url: destination
// ... allow it with --allow-private-network". A name is judged by its address at delivery.
Status CheckWebhookDestination(std::string_view url, const net::OutboundPolicy& policy);

}  // namespace cairn::server::webhooks
