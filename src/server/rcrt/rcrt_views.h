// Shapes of the reference (RCRT) API built from cairn's values (docs/rcrt.md).
#pragma once

#include <boost/json/object.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "model/event.h"

namespace cairn::server::rcrt {

// The `data:` JSON of an event on /rcrt/events/stream: {type, breadcrumb_id, owner_id, version,
// schema_name, title, tags, path, updated_by, updated_at, context | context_omitted}. Creates and
// updates are both "breadcrumb.updated" (the reference's clients wait for that type); deletes are
// "breadcrumb.deleted".
boost::json::object EventFrame(const model::Event& event, size_t max_context_bytes);

// A reference role name as cairn's: curator → admin, emitter → user, subscriber → reader; any other
// name (cairn's own: reader, user, developer, admin, or a mistake the native route refuses) as is.
std::string CairnRoleName(std::string_view name);

}  // namespace cairn::server::rcrt
