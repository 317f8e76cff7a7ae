// JSON helpers shared by every module: bounded parsing, canonical serialisation and checksums.
#pragma once

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"

namespace cairn {

// The one entry point for JSON from outside the process (request bodies, query parameters,
// selectors, model replies, tool results) and from the store. Parses `text` as one JSON value.
// Rejects (kInvalidArgument) malformed JSON and invalid UTF-8 (with the byte position), nesting
// deeper than `max_depth`, trailing garbage, and numbers beyond the range of a double (`1e400`,
// `-1e400`), naming their JSON path ("number out of range at $.context.n"): such a number parses
// to infinity, which has no JSON text, so whatever stored it could never read it back. Numbers
// too small to represent (`1e-400`) become 0, and integers beyond 64 bits become doubles.
Result<boost::json::value> ParseJson(std::string_view text, size_t max_depth);

// The JSON path ("$.a[2].b", `$["odd key"]` for keys that are not identifiers) of the first
// number in `value` that is infinite or NaN, or nullopt when every number is finite. Values built
// in code can hold such numbers (a division by zero); ParseJson never returns one.
std::optional<std::string> FindNonFiniteNumber(const boost::json::value& value);

// Ok when every number in `value` is finite; else kInvalidArgument "<what>: number out of range
// at <path>". Every store write checks its JSON with this, so nothing unreadable is ever stored.
Status CheckFiniteNumbers(const boost::json::value& value, std::string_view what);

// Serialises `value` canonically: object keys sorted by byte order, no insignificant whitespace.
// Two values equal as JSON documents with the same number representations give the same bytes.
std::string CanonicalJson(const boost::json::value& value);

// "sha256:" + lowercase hex SHA-256 of `data`.
std::string Sha256Checksum(std::string_view data);

// The nesting depth of `value` (a scalar is 0, [] is 1, [[1]] is 2).
size_t JsonDepth(const boost::json::value& value);

// The string member `key` of `object`, "" when it is absent or not a string.
std::string StringMember(const boost::json::object& object, std::string_view key);

// The JSON kind as a word for error messages: "string", "number", "object", ...
std::string_view JsonKindName(const boost::json::value& value);

}  // namespace cairn
