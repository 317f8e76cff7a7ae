// The signature of a webhook delivery: `X-Cairn-Signature: sha256=<hex>`, the lowercase hex
// HMAC-SHA256 of the raw request body keyed with the webhook's secret (docs/api.md, Webhooks).
#pragma once

#include <string>
#include <string_view>

namespace cairn::server::webhooks {

// Lowercase hex HMAC-SHA256 of `data` keyed with `key`.
std::string HmacSha256Hex(std::string_view key, std::string_view data);

// The X-Cairn-Signature header value for `body`: "sha256=" + HmacSha256Hex(secret, body).
std::string SignatureHeader(std::string_view secret, std::string_view body);

}  // namespace cairn::server::webhooks
