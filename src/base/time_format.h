// RFC 3339 timestamps as cairn writes them: UTC, microsecond precision, "2026-11-21T01:40:52.123456Z".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace cairn {

// Formats microseconds since the epoch as RFC 3339 UTC with exactly six fractional digits.
std::string FormatRfc3339Micros(int64_t micros);

// The first and last instants with a four-digit year, 0000-01-01T00:00:00Z and
// 9999-12-31T23:59:59.999999Z.
inline constexpr int64_t kFirstRfc3339Micros = -62'167'219'200'000'000;
inline constexpr int64_t kLastRfc3339Micros = 253'402'300'799'999'999;

// Parses an RFC 3339 timestamp ("Z" or a numeric offset; 0 to 9 fractional digits, truncated to
// microseconds). Returns nullopt for anything else, including out-of-range fields and instants
// outside [kFirstRfc3339Micros, kLastRfc3339Micros] (which would not format back to the same time).
std::optional<int64_t> ParseRfc3339Micros(std::string_view text);

}  // namespace cairn
