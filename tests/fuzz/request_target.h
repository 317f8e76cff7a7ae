// The request target as HttpSession's ToHttpRequest (private to src/server/http_session.cpp)
// turns it into an HttpRequest: parsed as an origin-form URL with Boost.URL, the path and the
// query parameters percent-decoded, in order. Mirrored step for step so the targets decode
// exactly as the server does; change both together.
#pragma once

#include <boost/url/parse.hpp>
#include <optional>
#include <string_view>

#include "server/http_types.h"

namespace cairn::fuzz {

// Sets target, path and query of `request`; false when the server would answer 400 (malformed
// target).
inline bool DecodeTarget(std::string_view target, server::HttpRequest& request) {
  request.target = std::string(target);
  auto url = boost::urls::parse_origin_form(target);
  if (!url) return false;
  request.path = url->path();
  request.query.clear();
  for (auto param : url->params()) request.query.emplace_back(param.key, param.value);
  return true;
}

}  // namespace cairn::fuzz
