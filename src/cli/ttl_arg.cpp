#include "cli/ttl_arg.h"

#include <limits>

#include "base/time_format.h"

namespace cairn::cli {

namespace {

constexpr int64_t kMicrosPerSecond = 1'000'000;

int64_t UnitMicros(char unit) {
  switch (unit) {
    case 's': return kMicrosPerSecond;
    case 'm': return 60 * kMicrosPerSecond;
    case 'h': return 3600 * kMicrosPerSecond;
    case 'd': return 86400 * kMicrosPerSecond;
    case 'w': return 7 * 86400 * kMicrosPerSecond;
    default: return 0;
  }
}

Status BadTtl(std::string_view text) {
  return Status::InvalidArgument("--ttl '" + std::string(text) +
                                 "' is neither an RFC 3339 time (2030-01-02T03:04:05Z) nor a duration "
                                 "from now (90s, 30m, 12h, 7d, 1h30m)");
}

}  // namespace

Result<std::string> ResolveTtl(std::string_view text, int64_t now_micros) {
  if (ParseRfc3339Micros(text).has_value()) return std::string(text);

  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  int64_t total = 0;
  size_t i = 0;
  if (text.empty()) return BadTtl(text);
  while (i < text.size()) {
    int64_t number = 0;
    const size_t digits_start = i;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
      const int digit = text[i] - '0';
      if (number > (kMax - digit) / 10) return BadTtl(text);
      number = number * 10 + digit;
      ++i;
    }
    if (i == digits_start || i == text.size()) return BadTtl(text);
    const int64_t unit = UnitMicros(text[i]);
    ++i;
    if (unit == 0 || number > kMax / unit) return BadTtl(text);
    if (total > kMax - number * unit) return BadTtl(text);
    total += number * unit;
  }
  if (total == 0) return BadTtl(text);
  // RFC 3339 has four-digit years: 9999-12-31T23:59:59.999999Z is the last time it can write.
  constexpr int64_t kLastRfc3339Micros = 253'402'300'799'999'999;
  if (now_micros > kLastRfc3339Micros - total) return BadTtl(text);
  return FormatRfc3339Micros(now_micros + total);
}

}  // namespace cairn::cli
