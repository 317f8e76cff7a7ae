// NativeRoutes: the handlers of cairn's own routes, looked up once, for the /rcrt routes to call.
// An /rcrt handler rewrites the request into the native one's shape, calls it (so the same
// validation, store, auth and bus do the work) and rewrites a successful answer into the
// reference's shape; errors pass through unchanged.
#pragma once

#include <boost/json/value.hpp>
#include <functional>
#include <string>

#include "server/router.h"

namespace cairn::server::rcrt {

class NativeRoutes {
 public:
  explicit NativeRoutes(const Router& router) : router_(router) {}

  // The handler of (method, pattern). kInternal when it is not registered (the native routes must
  // be added before the /rcrt ones).
  Result<Handler> Get(const std::string& method, const std::string& pattern) const;

 private:
  const Router& router_;
};

// `request` with its path parameters and body replaced (the body serialised from `body`).
HttpRequest Rewritten(const HttpRequest& request, std::vector<std::string> path_params, const boost::json::value& body);

// Calls `handler`; on a 2xx JSON answer, replaces its body with `reshape(parsed body)` (headers and
// status kept). Errors and other answers pass through.
Result<HttpResponse> CallAndReshape(const Handler& handler, const HttpRequest& request,
                                    const std::function<boost::json::value(boost::json::value)>& reshape);

}  // namespace cairn::server::rcrt
