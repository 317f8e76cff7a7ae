// Router: maps (method, path) to a handler. Patterns are literal segments and `{name}`
// placeholders ("/breadcrumbs/{id}/full"); a placeholder matches one non-empty segment. A GET
// route also answers HEAD (RFC 9110 §9.3.2: the session then sends the head of its response
// only), and Allow lists HEAD wherever it lists GET.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "base/status.h"
#include "server/http_types.h"
#include "server/route_access.h"

namespace cairn::server {

// Where a handler runs: kInline on the connection's I/O thread (cheap, non-blocking work such as
// point reads), kWorker on the blocking worker pool (writes wait for a group commit; scans),
// kAsync for an AsyncHandler (below).
enum class Dispatch { kInline, kWorker, kAsync };

// A handler returns a response, or a Status that the server turns into a JSON error.
using Handler = std::function<Result<HttpResponse>(const HttpRequest&)>;

// How an AsyncHandler answers: it calls the Reply exactly once, from any thread, with a function
// that builds the response (or the error) on the connection's thread. A write's handler replies
// from the store's writer thread, so the writer only hands the result over and the response is
// serialised elsewhere.
using ResponseBuilder = std::function<Result<HttpResponse>()>;
using Reply = std::function<void(ResponseBuilder)>;
// A handler that starts its work and returns without waiting for it (a write queued for its group
// commit). It must not block: it runs on the connection's I/O thread when the body is small, on
// the worker pool otherwise (parsing a large body takes time; its answer is then built there too).
// A handler that throws before replying is answered 500. Unlike a kWorker route, the number of
// such requests in flight is bounded by the connections, not the worker pool: a write queue that
// is full answers kResourceExhausted.
using AsyncHandler = std::function<void(const HttpRequest&, Reply)>;

struct Route {
  std::string method;
  std::string pattern;  // also the `route` label of metrics
  Dispatch dispatch = Dispatch::kWorker;
  Handler handler;             // for kAsync routes, waits for `async_handler` (for callers that may block)
  AsyncHandler async_handler;  // kAsync routes only
  std::vector<std::string> segments;
  RouteAccess access;  // from AccessFor(method, pattern)
};

class Router {
 public:
  void Add(std::string method, std::string pattern, Dispatch dispatch, Handler handler);
  // Adds a kAsync route.
  void AddAsync(std::string method, std::string pattern, AsyncHandler handler);

  struct Match {
    const Route* route = nullptr;     // null when nothing matched
    std::vector<std::string> params;  // placeholder values
    Status error;                     // kNotFound, or kMethodNotAllowed with `allow` set
    std::string allow;                // "GET, PATCH" for 405
  };
  Match Find(const std::string& method, const std::string& path) const;

  // Every route, in registration order. Stable once the server runs (routes are added first).
  const std::vector<Route>& routes() const { return routes_; }

 private:
  std::vector<Route> routes_;
};

}  // namespace cairn::server
