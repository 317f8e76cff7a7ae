#include "server/system_handlers.h"

#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>
#include <chrono>

namespace cairn::server {

void AddSystemRoutes(Router& router, MetricsRegistry& metrics, std::string version) {
  auto started = std::chrono::steady_clock::now();
  router.Add("GET", "/health", Dispatch::kInline, [version, started](const HttpRequest&) -> Result<HttpResponse> {
    auto uptime = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - started);
    boost::json::object out{{"status", "ok"}, {"version", version}, {"uptime_seconds", uptime.count()}};
    return HttpResponse::Json(200, boost::json::serialize(out));
  });
  router.Add("GET", "/metrics", Dispatch::kInline, [&metrics](const HttpRequest&) -> Result<HttpResponse> {
    HttpResponse response = HttpResponse::Json(200, metrics.RenderPrometheus());
    response.content_type = "text/plain; version=0.0.4";
    return response;
  });
}

}  // namespace cairn::server
