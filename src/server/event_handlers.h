// The event routes: GET /events/stream (SSE, resumable; DESIGN.md §4).
#pragma once

#include "bus/event_bus.h"
#include "model/limits.h"
#include "server/router.h"
#include "store/store.h"

namespace cairn::server {

// Registers the routes on `router`. `bus` and `store` (for stored selectors) must outlive the router.
void AddEventRoutes(Router& router, bus::EventBus& bus, store::Store& store, const model::Limits& limits);

}  // namespace cairn::server
