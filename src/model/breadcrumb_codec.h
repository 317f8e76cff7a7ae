// JSON <-> breadcrumb: validation of client input and the views the API returns.
//
// Parsing is strict: unknown fields, wrong types and values outside the Limits are kValidation
// errors whose field() names the part at fault ("tags[2]", "ttl"). Nothing is coerced silently.
#pragma once

#include <boost/json/object.hpp>

#include "base/status.h"
#include "model/breadcrumb.h"
#include "model/limits.h"

namespace cairn::model {

// Validates a create body. `now_micros` is used to refuse a ttl already in the past.
Result<BreadcrumbDraft> ParseDraft(const boost::json::value& body, const Limits& limits, int64_t now_micros);

// Validates a PATCH body; an empty patch is a kValidation error.
Result<BreadcrumbPatch> ParsePatch(const boost::json::value& body, const Limits& limits, int64_t now_micros);

// The whole record (GET /breadcrumbs/{id}/full, create and update responses).
boost::json::object FullView(const Breadcrumb& crumb);

// The context view (GET /breadcrumbs/{id}): identity, title, tags, version and the context with
// its llm_hints applied.
boost::json::object ContextView(const Breadcrumb& crumb);

// ContextView / FullView already serialised, without copying the context into a JSON object
// first (the hot path of GET /breadcrumbs/{id}). Same bytes as serialize(ContextView(crumb)).
std::string SerializeContextView(const Breadcrumb& crumb);
std::string SerializeFullView(const Breadcrumb& crumb);

// A list item: the full record, without `context` unless `include_context`.
boost::json::object ListItemView(const Breadcrumb& crumb, bool include_context);

boost::json::object VersionView(const BreadcrumbVersion& version);

// Field checks shared with query parsing.
Status ValidateSchemaName(const std::string& field, const std::string& value, const Limits& limits);
Status ValidateTag(const std::string& field, const std::string& value, const Limits& limits);
Status ValidatePath(const std::string& field, const std::string& value, const Limits& limits);

}  // namespace cairn::model
