#include "server/rcrt/native_routes.h"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

namespace cairn::server::rcrt {
namespace json = boost::json;

Result<Handler> NativeRoutes::Get(const std::string& method, const std::string& pattern) const {
  for (const auto& route : router_.routes()) {
    if (route.method == method && route.pattern == pattern) return route.handler;
  }
  return Status::Internal("rcrt: the native route " + method + " " + pattern + " is not registered");
}

HttpRequest Rewritten(const HttpRequest& request, std::vector<std::string> path_params, const json::value& body) {
  HttpRequest copy = request;
  copy.path_params = std::move(path_params);
  copy.body = json::serialize(body);
  return copy;
}

Result<HttpResponse> CallAndReshape(const Handler& handler, const HttpRequest& request,
                                    const std::function<json::value(json::value)>& reshape) {
  CAIRN_ASSIGN_OR_RETURN(HttpResponse response, handler(request));
  if (response.status < 200 || response.status >= 300 || response.body.empty() || response.event_stream) return response;
  boost::system::error_code ec;
  json::value parsed = json::parse(response.body, ec);
  if (ec) return Status::Internal("rcrt: the native answer is not JSON");
  response.body = json::serialize(reshape(std::move(parsed)));
  return response;
}

}  // namespace cairn::server::rcrt
