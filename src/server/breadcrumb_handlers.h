// The /breadcrumbs routes (docs/api.md): create, read (three views), list, update, delete.
#pragma once

#include "base/clock.h"
#include "model/limits.h"
#include "server/router.h"
#include "store/store.h"

namespace cairn::server {

// Registers the routes on `router`. `store` and `clock` must outlive the router.
void AddBreadcrumbRoutes(Router& router, store::Store& store, const Clock& clock, const model::Limits& limits);

}  // namespace cairn::server
