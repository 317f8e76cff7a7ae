// URL building for the client commands: percent-encoding, the --server base URL, query strings.
//
// Ids and query values come from users and may hold any byte ('/', '?', '&', '#', spaces, UTF-8),
// so every one of them goes through PercentEncode before it is put into a URL.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"

namespace cairn::cli {

// Percent-encodes every byte of `text` except the RFC 3986 unreserved characters
// (A-Z a-z 0-9 - . _ ~). Safe for a path segment and for a query key or value.
std::string PercentEncode(std::string_view text);

// Normalises a --server / CAIRN_SERVER value into a base URL without a trailing '/':
// "127.0.0.1:8081" -> "http://127.0.0.1:8081", "http://h:1/api/" -> "http://h:1/api".
// kInvalidArgument for an empty value, a scheme other than http/https, no host, whitespace,
// or a query or fragment (they cannot be combined with the API paths appended to the base).
Result<std::string> NormalizeServerUrl(std::string_view server);

// An ordered list of query parameters (a key may repeat, as `tag` does).
class QueryString {
 public:
  void Add(std::string key, std::string value) { params_.emplace_back(std::move(key), std::move(value)); }
  bool empty() const { return params_.empty(); }
  // "" when empty, else "?k=v&k2=v2" with keys and values percent-encoded.
  std::string Build() const;

 private:
  std::vector<std::pair<std::string, std::string>> params_;
};

}  // namespace cairn::cli
