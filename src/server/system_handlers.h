// GET /health and GET /metrics (Prometheus text; for a tenant's admin, without the series labelled
// with another tenant).
#pragma once

#include <string>

#include "base/metrics.h"
#include "server/router.h"

namespace cairn::server {

// `metrics` must outlive the router. `version` is reported by /health.
void AddSystemRoutes(Router& router, MetricsRegistry& metrics, std::string version);

}  // namespace cairn::server
