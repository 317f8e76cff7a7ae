// The table `cairn list` prints: one row per breadcrumb with ID, VERSION, SCHEMA, TITLE, TAGS,
// UPDATED_AT. Ids are never cut (they are what `cairn get` needs); titles and tags are capped so a
// row fits a terminal. Missing or null values show as "-".
#pragma once

#include <boost/json/array.hpp>
#include <string>

namespace cairn::cli {

// Renders `items` (the list endpoint's items) as a table, header included.
std::string RenderBreadcrumbTable(const boost::json::array& items);

}  // namespace cairn::cli
