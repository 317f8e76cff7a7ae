// ApiClient: one call to the cairn HTTP API, with the API's error contract decoded.
//
// Callers give a method, a path relative to the server URL (already percent-encoded) and an
// optional JSON body; they get the decoded JSON reply of a 2xx, or a Status that is ready to show
// to a person:
//   - an HTTP error carries the server's own error.message, followed by "(HTTP <status> <code>)"
//     and, for a validation error whose message does not begin with it, the field;
//     Status::code() is the server's code and field() its field;
//   - no reply at all (refused, timed out, reset) is kUnavailable naming the server URL and
//     suggesting how to point the client elsewhere.
#pragma once

#include <boost/json/value.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"
#include "cli/http_client.h"

namespace cairn::cli {

struct ApiReply {
  int status = 0;
  boost::json::value body;  // null for an empty body (204)
  std::vector<std::pair<std::string, std::string>> headers;  // names lower-case

  std::optional<std::string> Header(std::string_view name) const;
};

class ApiClient {
 public:
  // `server_url` is a normalised base URL (NormalizeServerUrl); `actor` becomes X-Cairn-Actor.
  ApiClient(HttpClient& http, std::string server_url, std::optional<std::string> actor);

  // `path_and_query` starts with '/'. `headers` are added to the request (Idempotency-Key, If-Match).
  Result<ApiReply> Call(std::string method, const std::string& path_and_query,
                        const std::optional<boost::json::value>& body = std::nullopt,
                        std::vector<std::pair<std::string, std::string>> headers = {});

  const std::string& server_url() const { return server_url_; }

 private:
  HttpClient& http_;
  std::string server_url_;
  std::optional<std::string> actor_;
};

// Turns a non-2xx reply into the Status described above (exposed for tests).
Status ErrorFromReply(const HttpReply& reply, const std::string& method, const std::string& url);

}  // namespace cairn::cli
