// CEL values to Boost.JSON, for templating and API output. (JSON to CEL is Value::FromJson, which
// borrows instead of copying.)
//
// null, bool, int (int64), uint (uint64), double and string map to themselves; lists become
// arrays, maps objects (int, uint and bool keys written as their decimal / "true" text);
// timestamps become RFC 3339 strings, durations "1.5s" strings, bytes base64 strings, types
// their names. An error value, a NaN, an infinity or nesting deeper than kMaxValueNesting cannot be
// represented and yields a Status.
#pragma once

#include <boost/json/value.hpp>

#include "base/status.h"
#include "cel/value.h"

namespace cairn::cel {

Result<boost::json::value> ToJson(const Value& value);

}  // namespace cairn::cel
