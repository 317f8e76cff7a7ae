#include "server/router.h"

#include <atomic>
#include <future>
#include <memory>

namespace cairn::server {
namespace {

std::vector<std::string> Split(const std::string& path) {
  std::vector<std::string> segments;
  size_t start = 1;  // paths start with '/'
  while (start <= path.size()) {
    size_t slash = path.find('/', start);
    if (slash == std::string::npos) slash = path.size();
    segments.push_back(path.substr(start, slash - start));
    start = slash + 1;
  }
  if (!segments.empty() && segments.back().empty()) segments.pop_back();  // tolerate a trailing '/'
  return segments;
}

bool MatchSegments(const Route& route, const std::vector<std::string>& segments, std::vector<std::string>& params) {
  if (route.segments.size() != segments.size()) return false;
  params.clear();
  for (size_t i = 0; i < segments.size(); ++i) {
    const std::string& want = route.segments[i];
    if (!want.empty() && want.front() == '{') {
      if (segments[i].empty()) return false;
      params.push_back(segments[i]);
    } else if (want != segments[i]) {
      return false;
    }
  }
  return true;
}

}  // namespace

void Router::Add(std::string method, std::string pattern, Dispatch dispatch, Handler handler) {
  RouteAccess access = AccessFor(method, pattern);
  Route route{std::move(method), pattern, dispatch, std::move(handler), {}, Split(pattern), access};
  routes_.push_back(std::move(route));
}

void Router::AddAsync(std::string method, std::string pattern, AsyncHandler handler) {
  // The blocking form, for callers on a thread that may wait (another route forwarding to this one).
  Handler blocking = [handler](const HttpRequest& request) -> Result<HttpResponse> {
    auto built = std::make_shared<std::promise<ResponseBuilder>>();
    auto replied = std::make_shared<std::atomic<bool>>(false);
    std::future<ResponseBuilder> answer = built->get_future();
    // As on a connection, the first reply stands: a second one must not throw on the replier's
    // thread (the store's writer).
    handler(request, [built, replied](ResponseBuilder build) {
      if (!replied->exchange(true)) built->set_value(std::move(build));
    });
    return answer.get()();
  };
  Add(std::move(method), std::move(pattern), Dispatch::kAsync, std::move(blocking));
  routes_.back().async_handler = std::move(handler);
}

Router::Match Router::Find(const std::string& method, const std::string& path) const {
  Match match;
  if (path.empty() || path.front() != '/') {
    match.error = Status::NotFound("no route for " + path);
    return match;
  }
  std::vector<std::string> segments = Split(path);
  std::vector<std::string> params;
  for (const auto& route : routes_) {
    if (!MatchSegments(route, segments, params)) continue;
    if (route.method == method || (method == "HEAD" && route.method == "GET")) {
      match.route = &route;
      match.params = std::move(params);
      match.allow.clear();
      return match;
    }
    match.allow += (match.allow.empty() ? "" : ", ") + route.method;
    if (route.method == "GET") match.allow += ", HEAD";
  }
  if (!match.allow.empty()) {
    match.error = Status(StatusCode::kMethodNotAllowed, method + " is not allowed on " + path + " (allowed: " +
                                                            match.allow + ")");
  } else {
    match.error = Status::NotFound("no route for " + method + " " + path);
  }
  return match;
}

}  // namespace cairn::server
