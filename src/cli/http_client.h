// HttpClient: the one outbound-HTTP seam of the client commands.
//
// The commands talk to an HttpClient, not to libcurl, so their request building and error
// reporting are unit-tested with a scripted fake; CurlHttpClient (curl_http_client.h) is the real one.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"

namespace cairn::cli {

struct HttpRequest {
  std::string method;  // "GET", "POST", "PATCH", "DELETE"
  std::string url;     // absolute, already percent-encoded
  std::vector<std::pair<std::string, std::string>> headers;
  std::optional<std::string> body;  // sent with Content-Type: application/json when present
};

struct HttpReply {
  int status = 0;
  // Response headers in arrival order; names lower-cased so lookups need not care about case.
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;

  // The value of the first header named `name` (lower-case), if any.
  std::optional<std::string> Header(std::string_view name) const {
    for (const auto& [key, value] : headers) {
      if (key == name) return value;
    }
    return std::nullopt;
  }
};

class HttpClient {
 public:
  virtual ~HttpClient() = default;
  // Performs one request. Any HTTP status, 4xx and 5xx included, is a successful HttpReply. An
  // error Status means no complete reply arrived: kUnavailable (cannot connect, connection lost,
  // timed out) or kResourceExhausted (the reply exceeded the client's size bound). Messages name
  // the URL.
  virtual Result<HttpReply> Send(const HttpRequest& request) = 0;
};

}  // namespace cairn::cli
