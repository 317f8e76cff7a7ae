// JSON as the client commands print it: indented for people by default, one line with --compact.
// Doubles print in their shortest round-trip form, with ".0" when integral ("1.5", "2.0",
// "1e+300"), rather than Boost.JSON's "1.5E0".
#pragma once

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <string>
#include <string_view>

namespace cairn::cli {

// Two-space indentation, one member or element per line, "key": value; empty containers as {} and
// []. Object members keep the server's order (it is meaningful: id first). No trailing newline.
std::string PrettyJson(const boost::json::value& value);

// The same on one line, without insignificant whitespace.
std::string CompactJson(const boost::json::value& value);

// PrettyJson, or CompactJson when `compact`.
std::string FormatJson(const boost::json::value& value, bool compact);

}  // namespace cairn::cli
