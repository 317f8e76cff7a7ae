// Reading every record a query matches, page after page: the one loop for start-up scans and
// "all of a kind" listings, so none of them stops at the first page.
#pragma once

#include <functional>
#include <string>

#include "base/status.h"
#include "store/store.h"

namespace cairn::store {

// Calls `visit` with each record of `owner_id` that `query` matches, in the query's order, reading
// query.limit records a page and following next_cursor until the last page. Returns the first
// error of a List (records already visited stay visited).
Status ForEachRecord(Store& store, const std::string& owner_id, model::BreadcrumbQuery query,
                     const std::function<void(const model::Breadcrumb&)>& visit);

}  // namespace cairn::store
