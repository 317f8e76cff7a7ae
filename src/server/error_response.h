// The one place where a Status becomes an HTTP status and a JSON error body:
//   {"error":{"code":"<snake_case>","message":"...","field":"..."}}   (field: the part at fault, if any)
// The body is always valid JSON: ill-formed UTF-8 in the message or field (request text quoted in
// it) is replaced by U+FFFD, never copied.
#pragma once

#include "base/status.h"
#include "server/http_types.h"

namespace cairn::server {

int HttpStatusFor(StatusCode code);

// `status` must not be ok.
HttpResponse ErrorResponse(const Status& status);

}  // namespace cairn::server
