// The server's own request/response types. Handlers see only these, never Beast, so handler code
// compiles fast and can be tested without a socket.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cairn::server {

struct HttpRequest {
  std::string method;  // upper case, e.g. "GET"
  std::string target;  // as received: path and query
  std::string path;    // percent-decoded path, no query
  std::vector<std::pair<std::string, std::string>> query;    // decoded, in order
  std::vector<std::pair<std::string, std::string>> headers;  // names lower-cased
  std::string body;
  std::vector<std::string> path_params;  // values of {placeholders}, in order

  // The first header named `name` (lower case), if any.
  std::optional<std::string_view> Header(std::string_view name) const;
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;

  static HttpResponse Json(int status, std::string body);
};

}  // namespace cairn::server
