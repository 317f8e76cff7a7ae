// The one place where a Status becomes an HTTP status and a JSON error body:
//   {"error":{"code":"<snake_case>","message":"...","field":"..."}}   (field only for validation)
#pragma once

#include "base/status.h"
#include "server/http_types.h"

namespace cairn::server {

int HttpStatusFor(StatusCode code);

// `status` must not be ok.
HttpResponse ErrorResponse(const Status& status);

}  // namespace cairn::server
