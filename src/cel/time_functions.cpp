#include "cel/time_functions.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

namespace cairn::cel {
namespace {

constexpr int64_t kMinSeconds = -62135596800;  // 0001-01-01T00:00:00Z
constexpr int64_t kMaxSeconds = 253402300799;  // 9999-12-31T23:59:59Z
constexpr Nanos128 kNanos = 1'000'000'000;

// Days since 1970-01-01 of a proleptic Gregorian date (the well-known era-based algorithm).
int64_t DaysFromCivil(int64_t y, int64_t m, int64_t d) {
  y -= m <= 2;
  int64_t era = (y >= 0 ? y : y - 399) / 400;
  int64_t yoe = y - era * 400;
  int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

struct Civil {
  int64_t year, month, day;
};
Civil CivilFromDays(int64_t z) {
  z += 719468;
  int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  int64_t doe = z - era * 146097;
  int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  int64_t y = yoe + era * 400;
  int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  int64_t mp = (5 * doy + 2) / 153;
  int64_t d = doy - (153 * mp + 2) / 5 + 1;
  int64_t m = mp + (mp < 10 ? 3 : -9);
  return {y + (m <= 2), m, d};
}

bool Digits(std::string_view s, size_t at, size_t n, int64_t* out) {
  if (at + n > s.size()) return false;
  int64_t v = 0;
  for (size_t i = at; i < at + n; ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    v = v * 10 + (s[i] - '0');
  }
  *out = v;
  return true;
}

// "+hh:mm", "-hh:mm" or "hh:mm" to seconds east of UTC.
std::optional<int64_t> ParseOffset(std::string_view s) {
  int sign = 1;
  size_t at = 0;
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) {
    sign = s[0] == '-' ? -1 : 1;
    at = 1;
  }
  int64_t h, m;
  if (s.size() != at + 5 || s[at + 2] != ':' || !Digits(s, at, 2, &h) || !Digits(s, at + 3, 2, &m)) return std::nullopt;
  if (h > 23 || m > 59) return std::nullopt;
  return sign * (h * 3600 + m * 60);
}

// The offsets of one IANA zone, from its TZif file.
struct Zone {
  std::vector<int64_t> transitions;   // ascending UTC seconds
  std::vector<int32_t> offset_after;  // offset in force from transitions[i]
  int32_t initial_offset = 0;

  int64_t OffsetAt(int64_t utc) const {
    auto it = std::upper_bound(transitions.begin(), transitions.end(), utc);
    if (it == transitions.begin()) return initial_offset;
    return offset_after[size_t(it - transitions.begin() - 1)];
  }
};

int64_t ReadBigEndian(const std::string& data, size_t at, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v = (v << 8) | static_cast<unsigned char>(data[at + size_t(i)]);
  if (bytes == 4) return int32_t(uint32_t(v));
  return int64_t(v);
}

std::shared_ptr<const Zone> LoadZone(std::string_view name) {
  // Zone names are path components under the zoneinfo root: refuse anything that could leave it.
  if (name.empty() || name.size() > 64 || name.front() == '/' || name.find("..") != std::string_view::npos) return nullptr;
  for (char c : name) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '/' || c == '_' || c == '-' || c == '+')) return nullptr;
  }
  std::ifstream in("/usr/share/zoneinfo/" + std::string(name), std::ios::binary);
  if (!in) return nullptr;
  std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (data.size() < 44 || data.compare(0, 4, "TZif") != 0 || data.size() > (1u << 20)) return nullptr;
  auto counts = [&](size_t at, int64_t c[6]) {
    for (int i = 0; i < 6; ++i) c[i] = ReadBigEndian(data, at + 20 + size_t(i) * 4, 4);
  };
  int64_t c[6];  // isutcnt, isstdcnt, leapcnt, timecnt, typecnt, charcnt
  counts(0, c);
  size_t at = 44;
  int time_bytes = 4;
  if (data[4] >= '2') {  // skip the 32-bit block; read the 64-bit one
    at += size_t(c[3] * 4 + c[3] + c[4] * 6 + c[5] + c[2] * 8 + c[1] + c[0]);
    if (data.size() < at + 44) return nullptr;
    counts(at, c);
    at += 44;
    time_bytes = 8;
  }
  size_t need = size_t(c[3] * time_bytes + c[3] + c[4] * 6);
  if (c[4] <= 0 || data.size() < at + need) return nullptr;
  auto zone = std::make_shared<Zone>();
  size_t index_at = at + size_t(c[3] * time_bytes);
  size_t types_at = index_at + size_t(c[3]);
  auto offset_of = [&](size_t type) { return int32_t(ReadBigEndian(data, types_at + type * 6, 4)); };
  zone->initial_offset = offset_of(0);
  for (int64_t i = 0; i < c[3]; ++i) {
    size_t type = static_cast<unsigned char>(data[index_at + size_t(i)]);
    if (int64_t(type) >= c[4]) return nullptr;
    zone->transitions.push_back(ReadBigEndian(data, at + size_t(i * time_bytes), time_bytes));
    zone->offset_after.push_back(offset_of(type));
  }
  return zone;
}

std::shared_ptr<const Zone> FindZone(std::string_view name) {
  static std::mutex mu;
  static std::map<std::string, std::shared_ptr<const Zone>, std::less<>> cache;
  std::lock_guard lock(mu);
  auto it = cache.find(name);
  if (it != cache.end()) return it->second;
  auto zone = LoadZone(name);
  if (cache.size() < 1000) cache.emplace(std::string(name), zone);
  return zone;
}

std::string TrimmedFraction(int64_t nanos) {
  if (nanos == 0) return "";
  char buf[16];
  std::snprintf(buf, sizeof buf, ".%09lld", static_cast<long long>(nanos));
  std::string s = buf;
  while (s.back() == '0') s.pop_back();
  return s;
}

}  // namespace

Nanos128 TotalNanos(Timestamp t) { return Nanos128(t.seconds) * kNanos + t.nanos; }
Nanos128 TotalNanos(Duration d) { return Nanos128(d.seconds) * kNanos + d.nanos; }

std::optional<Timestamp> MakeTimestamp(Nanos128 total) {
  Nanos128 seconds = total / kNanos;
  Nanos128 nanos = total % kNanos;
  if (nanos < 0) {
    nanos += kNanos;
    seconds -= 1;
  }
  if (seconds < kMinSeconds || seconds > kMaxSeconds) return std::nullopt;
  return Timestamp{int64_t(seconds), int32_t(nanos)};
}

std::optional<Duration> MakeDuration(Nanos128 total) {
  // The range of an int64 count of nanoseconds (about ±292 years), as in the reference
  // implementation and its conformance tests: a span between the extreme timestamps is an error.
  if (total > Nanos128(INT64_MAX) || total < Nanos128(INT64_MIN)) return std::nullopt;
  Nanos128 seconds = total / kNanos;  // truncation keeps nanos' sign equal to seconds'
  return Duration{int64_t(seconds), int32_t(total % kNanos)};
}

std::optional<Timestamp> ParseTimestamp(std::string_view s) {
  int64_t year, month, day, hour, minute, second;
  if (!Digits(s, 0, 4, &year) || s.size() < 20 || s[4] != '-' || !Digits(s, 5, 2, &month) || s[7] != '-' ||
      !Digits(s, 8, 2, &day) || (s[10] != 'T' && s[10] != 't') || !Digits(s, 11, 2, &hour) || s[13] != ':' ||
      !Digits(s, 14, 2, &minute) || s[16] != ':' || !Digits(s, 17, 2, &second)) {
    return std::nullopt;
  }
  if (month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59) return std::nullopt;
  static constexpr int kDaysIn[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  if (day > kDaysIn[month - 1] || (month == 2 && day == 29 && !leap)) return std::nullopt;
  size_t at = 19;
  int64_t nanos = 0;
  if (at < s.size() && s[at] == '.') {
    ++at;
    int digits = 0;
    while (at < s.size() && s[at] >= '0' && s[at] <= '9') {
      if (digits == 9) return std::nullopt;
      nanos = nanos * 10 + (s[at] - '0');
      ++digits;
      ++at;
    }
    if (digits == 0) return std::nullopt;
    for (int i = digits; i < 9; ++i) nanos *= 10;
  }
  int64_t offset = 0;
  std::string_view zone = s.substr(at);
  if (zone != "Z" && zone != "z") {
    auto parsed = ParseOffset(zone);
    if (!parsed || zone[0] == ':' || (zone[0] != '+' && zone[0] != '-')) return std::nullopt;
    offset = *parsed;
  }
  int64_t seconds = DaysFromCivil(year, month, day) * 86400 + hour * 3600 + minute * 60 + second - offset;
  return MakeTimestamp(Nanos128(seconds) * kNanos + nanos);
}

std::string FormatTimestamp(Timestamp t) {
  int64_t days = t.seconds >= 0 ? t.seconds / 86400 : (t.seconds - 86399) / 86400;
  int64_t rem = t.seconds - days * 86400;
  Civil c = CivilFromDays(days);
  char buf[48];
  std::snprintf(buf, sizeof buf, "%04lld-%02lld-%02lldT%02lld:%02lld:%02lld", static_cast<long long>(c.year),
                static_cast<long long>(c.month), static_cast<long long>(c.day), static_cast<long long>(rem / 3600),
                static_cast<long long>(rem / 60 % 60), static_cast<long long>(rem % 60));
  return buf + TrimmedFraction(t.nanos) + "Z";
}

std::optional<Duration> ParseDuration(std::string_view s) {
  if (s.empty()) return std::nullopt;
  bool negative = false;
  if (s[0] == '-' || s[0] == '+') {
    negative = s[0] == '-';
    s.remove_prefix(1);
  }
  if (s == "0") return Duration{};
  if (s.empty()) return std::nullopt;
  Nanos128 total = 0;
  while (!s.empty()) {
    // A number with an optional fraction, then a unit.
    Nanos128 whole = 0;
    size_t i = 0;
    bool any = false;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
      whole = whole * 10 + (s[i] - '0');
      if (whole > Nanos128(1) << 80) return std::nullopt;
      ++i;
      any = true;
    }
    Nanos128 frac = 0, scale = 1;
    if (i < s.size() && s[i] == '.') {
      ++i;
      while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
        if (scale < kNanos * 1000) {
          frac = frac * 10 + (s[i] - '0');
          scale *= 10;
        }
        ++i;
        any = true;
      }
    }
    if (!any) return std::nullopt;
    s.remove_prefix(i);
    Nanos128 unit;
    if (s.starts_with("ns")) { unit = 1; s.remove_prefix(2); }
    else if (s.starts_with("us")) { unit = 1000; s.remove_prefix(2); }
    else if (s.starts_with("\xC2\xB5s")) { unit = 1000; s.remove_prefix(3); }
    else if (s.starts_with("ms")) { unit = 1'000'000; s.remove_prefix(2); }
    else if (s.starts_with("s")) { unit = kNanos; s.remove_prefix(1); }
    else if (s.starts_with("m")) { unit = 60 * kNanos; s.remove_prefix(1); }
    else if (s.starts_with("h")) { unit = 3600 * kNanos; s.remove_prefix(1); }
    else return std::nullopt;
    total += whole * unit + frac * unit / scale;
    if (total > Nanos128(INT64_MAX) + 1) return std::nullopt;
  }
  return MakeDuration(negative ? -total : total);
}

std::string FormatDuration(Duration d) {
  bool negative = d.seconds < 0 || d.nanos < 0;
  Nanos128 total = TotalNanos(d);
  if (negative) total = -total;
  std::string out = negative ? "-" : "";
  out += std::to_string(static_cast<long long>(total / kNanos));
  out += TrimmedFraction(int64_t(total % kNanos));
  return out + "s";
}

Value TimestampField(Timestamp t, TimeField field, std::string_view zone) {
  int64_t offset = 0;
  if (!zone.empty() && zone != "UTC") {
    if (auto fixed = ParseOffset(zone)) {
      offset = *fixed;
    } else if (auto tz = FindZone(zone)) {
      offset = tz->OffsetAt(t.seconds);
    } else {
      return Value::Error("unknown time zone '" + std::string(zone) + "'");
    }
  }
  int64_t local = t.seconds + offset;
  int64_t days = local >= 0 ? local / 86400 : (local - 86399) / 86400;
  int64_t rem = local - days * 86400;
  Civil c = CivilFromDays(days);
  switch (field) {
    case TimeField::kFullYear: return Value::Int(c.year);
    case TimeField::kMonth: return Value::Int(c.month - 1);
    case TimeField::kDate: return Value::Int(c.day);
    case TimeField::kDayOfMonth: return Value::Int(c.day - 1);
    case TimeField::kDayOfWeek: return Value::Int(((days % 7) + 11) % 7);  // 1970-01-01 was a Thursday
    case TimeField::kDayOfYear: return Value::Int(days - DaysFromCivil(c.year, 1, 1));
    case TimeField::kHours: return Value::Int(rem / 3600);
    case TimeField::kMinutes: return Value::Int(rem / 60 % 60);
    case TimeField::kSeconds: return Value::Int(rem % 60);
    case TimeField::kMilliseconds: return Value::Int(t.nanos / 1'000'000);
  }
  return Value::Error("unknown time field");
}

Value DurationField(Duration d, TimeField field) {
  switch (field) {
    case TimeField::kHours: return Value::Int(d.seconds / 3600);
    case TimeField::kMinutes: return Value::Int(d.seconds / 60);
    case TimeField::kSeconds: return Value::Int(d.seconds);
    case TimeField::kMilliseconds: return Value::Int(int64_t(TotalNanos(d) / 1'000'000));
    default: return Value::Error("no such overload for a duration");
  }
}

}  // namespace cairn::cel
