#include "base/time_format.h"

#include <cctype>
#include <chrono>
#include <algorithm>

namespace cairn {
namespace {

using namespace std::chrono;

bool ReadDigits(std::string_view text, size_t& pos, size_t count, int& out) {
  if (pos + count > text.size()) return false;
  int value = 0;
  for (size_t i = 0; i < count; ++i) {
    char c = text[pos + i];
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
    value = value * 10 + (c - '0');
  }
  pos += count;
  out = value;
  return true;
}

bool Expect(std::string_view text, size_t& pos, char c) {
  if (pos >= text.size() || text[pos] != c) return false;
  ++pos;
  return true;
}

}  // namespace

std::string FormatRfc3339Micros(int64_t micros) {
  sys_time<microseconds> tp{microseconds{micros}};
  auto day = floor<days>(tp);
  year_month_day ymd{day};
  hh_mm_ss<microseconds> hms{tp - day};
  // Formatted by hand: this runs for every timestamp of every response.
  std::string out = "0000-00-00T00:00:00.000000Z";
  auto put = [&out](size_t pos, int64_t value, int digits) {
    for (int i = digits - 1; i >= 0; --i, value /= 10) out[pos + static_cast<size_t>(i)] = static_cast<char>('0' + value % 10);
  };
  // Inputs come from ParseRfc3339Micros (four-digit years) or the clock, so the year fits.
  put(0, std::clamp(static_cast<int>(ymd.year()), 0, 9999), 4);
  put(5, static_cast<unsigned>(ymd.month()), 2);
  put(8, static_cast<unsigned>(ymd.day()), 2);
  put(11, hms.hours().count(), 2);
  put(14, hms.minutes().count(), 2);
  put(17, hms.seconds().count(), 2);
  put(20, hms.subseconds().count(), 6);
  return out;
}

std::optional<int64_t> ParseRfc3339Micros(std::string_view text) {
  size_t pos = 0;
  int y = 0, mo = 0, d = 0, h = 0, mi = 0, s = 0;
  if (!ReadDigits(text, pos, 4, y) || !Expect(text, pos, '-') || !ReadDigits(text, pos, 2, mo) ||
      !Expect(text, pos, '-') || !ReadDigits(text, pos, 2, d))
    return std::nullopt;
  if (pos >= text.size() || (text[pos] != 'T' && text[pos] != 't' && text[pos] != ' ')) return std::nullopt;
  ++pos;
  if (!ReadDigits(text, pos, 2, h) || !Expect(text, pos, ':') || !ReadDigits(text, pos, 2, mi) ||
      !Expect(text, pos, ':') || !ReadDigits(text, pos, 2, s))
    return std::nullopt;
  int64_t frac_micros = 0;
  if (pos < text.size() && text[pos] == '.') {
    ++pos;
    int digits = 0;
    while (pos < text.size() && std::isdigit(static_cast<unsigned char>(text[pos]))) {
      if (digits < 6) frac_micros = frac_micros * 10 + (text[pos] - '0');
      ++digits;
      ++pos;
    }
    if (digits == 0 || digits > 9) return std::nullopt;
    for (int i = digits; i < 6; ++i) frac_micros *= 10;
  }
  int64_t offset_seconds = 0;
  if (pos < text.size() && (text[pos] == 'Z' || text[pos] == 'z')) {
    ++pos;
  } else if (pos < text.size() && (text[pos] == '+' || text[pos] == '-')) {
    int sign = text[pos] == '+' ? 1 : -1;
    ++pos;
    int oh = 0, om = 0;
    if (!ReadDigits(text, pos, 2, oh) || !Expect(text, pos, ':') || !ReadDigits(text, pos, 2, om)) return std::nullopt;
    if (oh > 23 || om > 59) return std::nullopt;
    offset_seconds = sign * (oh * 3600 + om * 60);
  } else {
    return std::nullopt;
  }
  if (pos != text.size()) return std::nullopt;
  if (mo < 1 || mo > 12 || h > 23 || mi > 59 || s > 60) return std::nullopt;
  year_month_day ymd{year{y}, month{static_cast<unsigned>(mo)}, day{static_cast<unsigned>(d)}};
  if (!ymd.ok()) return std::nullopt;
  int64_t day_micros = duration_cast<microseconds>(sys_days{ymd}.time_since_epoch()).count();
  int64_t micros = day_micros + (int64_t{h} * 3600 + mi * 60 + s - offset_seconds) * 1'000'000 + frac_micros;
  // A leap second or an offset can carry the instant out of the years 0000-9999,
  // which FormatRfc3339Micros could not write back (it would show an earlier time).
  if (micros > kLastRfc3339Micros || micros < kFirstRfc3339Micros) return std::nullopt;
  return micros;
}

}  // namespace cairn
