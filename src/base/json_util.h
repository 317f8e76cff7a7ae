// JSON helpers shared by every module: bounded parsing, canonical serialisation and checksums.
#pragma once

#include <boost/json/value.hpp>
#include <string>
#include <string_view>

#include "base/status.h"

namespace cairn {

// Parses `text` as one JSON value. Rejects (kInvalidArgument, with position) malformed JSON,
// invalid UTF-8, nesting deeper than `max_depth`, and trailing garbage.
Result<boost::json::value> ParseJson(std::string_view text, size_t max_depth);

// Serialises `value` canonically: object keys sorted by byte order, no insignificant whitespace.
// Two values equal as JSON documents with the same number representations give the same bytes.
std::string CanonicalJson(const boost::json::value& value);

// "sha256:" + lowercase hex SHA-256 of `data`.
std::string Sha256Checksum(std::string_view data);

// The nesting depth of `value` (a scalar is 0, [] is 1, [[1]] is 2).
size_t JsonDepth(const boost::json::value& value);

// The JSON kind as a word for error messages: "string", "number", "object", ...
std::string_view JsonKindName(const boost::json::value& value);

}  // namespace cairn
