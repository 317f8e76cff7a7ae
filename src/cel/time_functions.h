// Timestamps and durations: parsing, formatting, arithmetic with range checks, and the calendar
// getters in UTC, a fixed offset ("+05:30", "-08:00", "02:00") or an IANA zone read from the
// system's TZif files (/usr/share/zoneinfo; transitions only, so instants past the file's last
// transition use its last offset).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "cel/value.h"

namespace cairn::cel {

// Nanosecond counts of the whole timestamp range (±3e20) overflow int64: arithmetic on them is
// done in 128 bits (a GCC/Clang extension, hence the marker for -Wpedantic).
__extension__ typedef __int128 Nanos128;

// RFC 3339 ("2009-02-13T23:31:30.123Z", "...+01:00"); nullopt if malformed or out of range.
std::optional<Timestamp> ParseTimestamp(std::string_view text);
// RFC 3339 in UTC with the fraction trimmed of trailing zeros (Go's RFC3339Nano).
std::string FormatTimestamp(Timestamp t);
// Go-style durations: "1.5s", "-2h45m", "300ms", units h m s ms us µs ns; nullopt if malformed
// or beyond the range of int64 nanoseconds (about ±292 years).
std::optional<Duration> ParseDuration(std::string_view text);
// Seconds with a trimmed fraction: "1.5s", "-3600s", "0s".
std::string FormatDuration(Duration d);

// Range-checked construction; nullopt when out of range.
std::optional<Timestamp> MakeTimestamp(Nanos128 total_nanos);
std::optional<Duration> MakeDuration(Nanos128 total_nanos);
Nanos128 TotalNanos(Timestamp t);
Nanos128 TotalNanos(Duration d);

enum class TimeField { kFullYear, kMonth, kDate, kDayOfMonth, kDayOfWeek, kDayOfYear, kHours, kMinutes, kSeconds, kMilliseconds };
// A calendar field of `t` in `zone` (empty: UTC); an error value for an unknown zone.
Value TimestampField(Timestamp t, TimeField field, std::string_view zone);
// getHours/getMinutes/getSeconds/getMilliseconds of a duration: the whole duration in that unit.
Value DurationField(Duration d, TimeField field);

}  // namespace cairn::cel
