// Validation of webhook target URLs.
#pragma once

#include <string_view>

#include "base/status.h"

namespace cairn::server::webhooks {

inline constexpr size_t kMaxWebhookUrlBytes = 2048;

// An absolute http:// or https:// URL with a host, at most kMaxWebhookUrlBytes, without user
// info (URLs are shown in listings and logs: credentials belong in the secret) and without a
// fragment. Otherwise kValidation on field "url".
Status ValidateWebhookUrl(std::string_view url);

}  // namespace cairn::server::webhooks
