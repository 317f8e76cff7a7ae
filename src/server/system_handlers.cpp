#include "server/system_handlers.h"

#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>
#include <chrono>

#include "server/request_support.h"

namespace cairn::server {

void AddSystemRoutes(Router& router, MetricsRegistry& metrics, std::string version) {
  auto started = std::chrono::steady_clock::now();
  router.Add("GET", "/health", Dispatch::kInline, [version, started](const HttpRequest& req) -> Result<HttpResponse> {
    CAIRN_RETURN_IF_ERROR(NoQueryParameters(req));
    auto uptime = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - started);
    boost::json::object out{{"status", "ok"}, {"version", version}, {"uptime_seconds", uptime.count()}};
    return HttpResponse::Json(200, boost::json::serialize(out));
  });
  router.Add("GET", "/metrics", Dispatch::kInline, [&metrics](const HttpRequest& req) -> Result<HttpResponse> {
    CAIRN_RETURN_IF_ERROR(NoQueryParameters(req));
    // A tenant's admin sees the server's own series and its tenant's, not another tenant's; a
    // system admin (and everyone with --auth=none) sees them all.
    const auth::Principal* principal = req.principal.get();
    std::string_view only_tenant = principal && !principal->system_admin ? std::string_view(principal->tenant) : "";
    HttpResponse response = HttpResponse::Json(200, metrics.RenderPrometheus(only_tenant));
    response.content_type = "text/plain; version=0.0.4";
    return response;
  });
}

}  // namespace cairn::server
