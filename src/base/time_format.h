// RFC 3339 timestamps as cairn writes them: UTC, microsecond precision, "2026-11-21T01:40:52.123456Z".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace cairn {

// Formats microseconds since the epoch as RFC 3339 UTC with exactly six fractional digits.
std::string FormatRfc3339Micros(int64_t micros);

// Parses an RFC 3339 timestamp ("Z" or a numeric offset; 0 to 9 fractional digits, truncated to
// microseconds). Returns nullopt for anything else, including out-of-range fields.
std::optional<int64_t> ParseRfc3339Micros(std::string_view text);

}  // namespace cairn
