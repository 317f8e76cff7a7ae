// Stored selectors: POST/GET/DELETE /subscriptions/selectors. A stored selector is a breadcrumb
// with the reserved schema `subscription.selector.v1` (context {name, selector}), so it is listed,
// versioned and streamed like everything else; this facade validates it and keeps it well-formed.
// SSE streams and (later) remote runners refer to one by id (`selector_id`).
#pragma once

#include "base/clock.h"
#include "model/limits.h"
#include "model/selector.h"
#include "server/router.h"
#include "store/store.h"

namespace cairn::server {

// Registers the routes on `router`. `store` must outlive the router.
void AddSelectorRoutes(Router& router, store::Store& store, const model::Limits& limits);

// The selector stored under `id` for `owner_id`: kNotFound if there is none (or the breadcrumb is
// not a stored selector), kValidation if the stored one no longer parses.
Result<model::Selector> LoadStoredSelector(store::Store& store, const std::string& owner_id, const std::string& id,
                                           const model::Limits& limits);

}  // namespace cairn::server
