// The server's own request/response types. Handlers see only these, never Beast, so handler code
// compiles fast and can be tested without a socket.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "auth/principal.h"

namespace cairn::server {

// Query parameters, percent-decoded, in the order received (names may repeat).
using QueryParams = std::vector<std::pair<std::string, std::string>>;

struct HttpRequest {
  std::string method;  // upper case, e.g. "GET"
  std::string target;  // as received: path and query
  std::string path;    // percent-decoded path, no query
  QueryParams query;
  std::vector<std::pair<std::string, std::string>> headers;  // names lower-cased
  std::string body;
  std::vector<std::string> path_params;  // values of {placeholders}, in order
  // Who sent it (server/request_auth.h); null with --auth=none and on public routes.
  std::shared_ptr<const auth::Principal> principal;

  // The first header named `name` (lower case), if any.
  std::optional<std::string_view> Header(std::string_view name) const;
};

// What an event-stream route asks the session to start instead of a plain response (SSE). The
// selector is opaque here (owned by the stream implementation).
struct EventStreamSpec {
  virtual ~EventStreamSpec() = default;
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  // When set, the connection becomes an event stream (status/body are ignored).
  std::shared_ptr<const EventStreamSpec> event_stream;

  static HttpResponse Json(int status, std::string body);
};

}  // namespace cairn::server
