// Context rules evaluated on in-memory JSON (selectors on events), with the same meaning as the
// SQL that src/store/sqlite/query_builder.cpp compiles them to for stored breadcrumbs.
#pragma once

#include <boost/json/value.hpp>
#include <string_view>
#include <vector>

#include "model/query.h"

namespace cairn::model {

// The value that a JSON path ("$", then ".name" / "[index]" steps, as ValidateJsonPath accepts)
// names inside `root`, or nullptr when there is none (a missing key, an index past the end, a
// step into a value of the wrong kind, or a malformed path).
const boost::json::value* FindJsonPath(const boost::json::value& root, std::string_view path);

// Compares two JSON numbers exactly, whatever their representations (int64, uint64, double):
// negative, zero or positive. Both must be numbers.
int CompareJsonNumbers(const boost::json::value& a, const boost::json::value& b);

// JSON equality by value: numbers numerically (1 == 1.0), no equality across kinds ("1" != 1,
// true != 1), arrays element by element, objects member by member whatever their key order.
bool JsonEquals(const boost::json::value& a, const boost::json::value& b);

// Whether `rule` holds for `context`. A missing path makes every op false except `ne` (true) and
// `exists` with value false (true). Ordering ops compare numbers with numbers and strings with
// strings (byte order); mismatched kinds are false.
bool RuleHolds(const ContextRule& rule, const boost::json::value& context);

// Whether every rule holds (true for no rules).
bool AllRulesHold(const std::vector<ContextRule>& rules, const boost::json::value& context);

}  // namespace cairn::model
