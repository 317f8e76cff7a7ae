// Turning HTTP requests into model inputs: JSON bodies (content type, size, depth), the acting
// identity, If-Match, and the list query. Every failure is a Status with a client-facing message.
#pragma once

#include <boost/json/value.hpp>
#include <optional>

#include "base/status.h"
#include "model/breadcrumb.h"
#include "model/limits.h"
#include "model/query.h"
#include "server/http_types.h"

namespace cairn::server {

// Requires `Content-Type: application/json` (kUnsupportedMediaType) and a well-formed body within
// limits.max_json_depth (kInvalidArgument).
Result<boost::json::value> ParseJsonBody(const HttpRequest& request, const model::Limits& limits);

// The tenant and actor of a request: owner "default"; actor from X-Cairn-Actor (default
// "anonymous"; 1-128 printable ASCII characters, else kInvalidArgument).
Result<model::WriteContext> WriteContextFrom(const HttpRequest& request);

// If-Match as a version: absent or `*` → nullopt (no version check); `3`, `"3"` or `W/"3"` → 3;
// anything else kInvalidArgument.
Result<std::optional<int64_t>> ParseIfMatch(const HttpRequest& request);

// Idempotency-Key: absent → ""; 1-255 printable ASCII characters, else kInvalidArgument.
Result<std::string> ParseIdempotencyKey(const HttpRequest& request);

// GET /breadcrumbs parameters (see docs/api.md). Unknown or repeated parameters (except `tag`) and
// empty list items ("a,,b") are kInvalidArgument.
Result<model::BreadcrumbQuery> ParseListQuery(const HttpRequest& request, const model::Limits& limits);

}  // namespace cairn::server
