// The /rcrt routes: the reference (RCRT) system's API over cairn's own routes (docs/rcrt.md), all
// registered here. Each handler translates shapes only: it calls the native handler (same
// validation, store, search, bus, webhooks and authenticator), so a bad request gets the same
// clear error and changes nothing.
#pragma once

#include "base/status.h"
#include "server/rcrt/rcrt_services.h"
#include "server/router.h"

namespace cairn::server::rcrt {

// Registers every /rcrt route on `router`. The native routes must already be registered
// (kInternal naming the first one missing otherwise).
Status AddRcrtRoutes(Router& router, const RcrtServices& services);

}  // namespace cairn::server::rcrt
