// Field checks shared by the parsers of definitions (tool.v1, agent.def.v1): each returns the
// value or a kValidation error naming `field`.
#pragma once

#include <boost/json/value.hpp>
#include <cstdint>
#include <optional>
#include <string_view>
#include <string>
#include <vector>

#include "base/status.h"
#include "model/subscription.h"

namespace cairn::model {

// A string of at most `max_bytes`.
Result<std::string> RequireString(const boost::json::value& value, const std::string& field, size_t max_bytes);

// An integer in [min, max].
Result<int64_t> RequireInt(const boost::json::value& value, const std::string& field, int64_t min, int64_t max);

// An array of at most 256 non-empty strings (of at most 4 KiB); with `non_empty`, not empty.
Result<std::vector<std::string>> RequireStrings(const boost::json::value& value, const std::string& field,
                                                bool non_empty);

// Whether `name` is 1 to 64 of A-Z a-z 0-9 _ - (tool names, agent ids).
bool IsValidDefinitionName(std::string_view name);

// The fields every request to an executor may carry besides what it asks for (tool.request.v1,
// workflow.request.v1): request_id, requested_by and the requester's lineage (execution_id,
// root_execution_id, execution_depth, session_id; exec/execution_record.h). nullopt when `key`
// is none of them; else the check of `value` (kValidation naming `field`).
std::optional<Status> CheckRequestField(std::string_view key, const boost::json::value& value, const std::string& field);

// A definition's subscriptions: `given` when the definition had selectors (at least one must be a
// trigger, else kValidation naming context.subscriptions.selectors), else `default_trigger`.
Result<std::vector<Subscription>> DefinitionSubscriptions(std::vector<Subscription> given, bool had_selectors,
                                                          Subscription default_trigger);

}  // namespace cairn::model
