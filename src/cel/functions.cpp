#include "cel/functions.h"

#include <re2/re2.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <algorithm>
#include <limits>
#include <string>

#include "cel/time_functions.h"

namespace cairn::cel {
namespace {

Value NoOverload(const Node& node, const Value* args, size_t count) {
  std::string message = "no such overload: " + node.name + "(";
  for (size_t i = 0; i < count; ++i) {
    message += (i ? ", " : "") + std::string(TypeNameString(args[i].type_name()));
  }
  return Value::Error(message + ")");
}

bool ValidUtf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    auto c = static_cast<unsigned char>(s[i]);
    size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (n == 0 || i + n > s.size()) return false;
    uint32_t cp = n == 1 ? c : n == 2 ? (c & 0x1F) : n == 3 ? (c & 0x0F) : (c & 0x07);
    for (size_t k = 1; k < n; ++k) {
      auto d = static_cast<unsigned char>(s[i + k]);
      if ((d & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (d & 0x3F);
    }
    if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10FFFF)) ||
        (cp >= 0xD800 && cp <= 0xDFFF)) {
      return false;
    }
    i += n;
  }
  return true;
}

int64_t CodePoints(std::string_view s) {
  int64_t n = 0;
  for (char c : s) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

Value Concat(std::string_view a, std::string_view b, bool bytes, const Limits& limits) {
  if (a.size() + b.size() > limits.max_string_bytes) return Value::Error("string exceeds the size limit");
  std::string out;
  out.reserve(a.size() + b.size());
  out.append(a).append(b);
  return bytes ? Value::Bytes(std::move(out)) : Value::String(std::move(out));
}

Value Add(const Node& node, const Value& a, const Value& b, const Limits& limits) {
  Kind ka = a.kind(), kb = b.kind();
  if (ka == Kind::kInt && kb == Kind::kInt) {
    int64_t r;
    if (__builtin_add_overflow(a.int_value(), b.int_value(), &r)) return Value::Error("integer overflow");
    return Value::Int(r);
  }
  if (ka == Kind::kUint && kb == Kind::kUint) {
    uint64_t r;
    if (__builtin_add_overflow(a.uint_value(), b.uint_value(), &r)) return Value::Error("unsigned integer overflow");
    return Value::Uint(r);
  }
  if (ka == Kind::kDouble && kb == Kind::kDouble) return Value::Double(a.double_value() + b.double_value());
  if (ka == Kind::kString && kb == Kind::kString) return Concat(a.text(), b.text(), false, limits);
  if (ka == Kind::kBytes && kb == Kind::kBytes) return Concat(a.text(), b.text(), true, limits);
  if (ka == Kind::kList && kb == Kind::kList) {
    if (a.size() + b.size() > limits.max_collection_size) return Value::Error("list exceeds the size limit");
    ValueList items;
    items.reserve(a.size() + b.size());
    for (size_t i = 0; i < a.size(); ++i) items.push_back(a.ListAt(i));
    for (size_t i = 0; i < b.size(); ++i) items.push_back(b.ListAt(i));
    return Value::List(std::move(items));
  }
  if (ka == Kind::kTimestamp && kb == Kind::kDuration) {
    auto t = MakeTimestamp(TotalNanos(a.timestamp_value()) + TotalNanos(b.duration_value()));
    return t ? Value::Time(*t) : Value::Error("timestamp out of range");
  }
  if (ka == Kind::kDuration && kb == Kind::kTimestamp) return Add(node, b, a, limits);
  if (ka == Kind::kDuration && kb == Kind::kDuration) {
    auto d = MakeDuration(TotalNanos(a.duration_value()) + TotalNanos(b.duration_value()));
    return d ? Value::Dur(*d) : Value::Error("duration out of range");
  }
  Value args[] = {a, b};
  return NoOverload(node, args, 2);
}

Value Subtract(const Node& node, const Value& a, const Value& b) {
  Kind ka = a.kind(), kb = b.kind();
  if (ka == Kind::kInt && kb == Kind::kInt) {
    int64_t r;
    if (__builtin_sub_overflow(a.int_value(), b.int_value(), &r)) return Value::Error("integer overflow");
    return Value::Int(r);
  }
  if (ka == Kind::kUint && kb == Kind::kUint) {
    uint64_t r;
    if (__builtin_sub_overflow(a.uint_value(), b.uint_value(), &r)) return Value::Error("unsigned integer overflow");
    return Value::Uint(r);
  }
  if (ka == Kind::kDouble && kb == Kind::kDouble) return Value::Double(a.double_value() - b.double_value());
  if (ka == Kind::kTimestamp && kb == Kind::kTimestamp) {
    auto d = MakeDuration(TotalNanos(a.timestamp_value()) - TotalNanos(b.timestamp_value()));
    return d ? Value::Dur(*d) : Value::Error("duration out of range");
  }
  if (ka == Kind::kTimestamp && kb == Kind::kDuration) {
    auto t = MakeTimestamp(TotalNanos(a.timestamp_value()) - TotalNanos(b.duration_value()));
    return t ? Value::Time(*t) : Value::Error("timestamp out of range");
  }
  if (ka == Kind::kDuration && kb == Kind::kDuration) {
    auto d = MakeDuration(TotalNanos(a.duration_value()) - TotalNanos(b.duration_value()));
    return d ? Value::Dur(*d) : Value::Error("duration out of range");
  }
  Value args[] = {a, b};
  return NoOverload(node, args, 2);
}

Value Arithmetic(const Node& node, const Value& a, const Value& b) {
  Kind ka = a.kind(), kb = b.kind();
  Builtin op = node.builtin;
  if (ka == Kind::kInt && kb == Kind::kInt) {
    int64_t x = a.int_value(), y = b.int_value(), r;
    if (op == Builtin::kMultiply) {
      if (__builtin_mul_overflow(x, y, &r)) return Value::Error("integer overflow");
      return Value::Int(r);
    }
    if (y == 0) return Value::Error(op == Builtin::kDivide ? "division by zero" : "modulus by zero");
    if (x == std::numeric_limits<int64_t>::min() && y == -1) return Value::Error("integer overflow");
    return Value::Int(op == Builtin::kDivide ? x / y : x % y);
  }
  if (ka == Kind::kUint && kb == Kind::kUint) {
    uint64_t x = a.uint_value(), y = b.uint_value(), r;
    if (op == Builtin::kMultiply) {
      if (__builtin_mul_overflow(x, y, &r)) return Value::Error("unsigned integer overflow");
      return Value::Uint(r);
    }
    if (y == 0) return Value::Error(op == Builtin::kDivide ? "division by zero" : "modulus by zero");
    return Value::Uint(op == Builtin::kDivide ? x / y : x % y);
  }
  if (ka == Kind::kDouble && kb == Kind::kDouble && op != Builtin::kModulo) {
    double x = a.double_value(), y = b.double_value();
    return Value::Double(op == Builtin::kMultiply ? x * y : x / y);
  }
  Value args[] = {a, b};
  return NoOverload(node, args, 2);
}

std::optional<int64_t> ParseInt(std::string_view s) {
  if (s.empty()) return std::nullopt;
  bool negative = s[0] == '-';
  if (s[0] == '-' || s[0] == '+') s.remove_prefix(1);
  if (s.empty()) return std::nullopt;
  uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    if (v > (std::numeric_limits<uint64_t>::max() - uint64_t(c - '0')) / 10) return std::nullopt;
    v = v * 10 + uint64_t(c - '0');
  }
  if (negative) {
    if (v > uint64_t(std::numeric_limits<int64_t>::max()) + 1) return std::nullopt;
    return int64_t(uint64_t(0) - v);
  }
  if (v > uint64_t(std::numeric_limits<int64_t>::max())) return std::nullopt;
  return int64_t(v);
}

Value ToInt(const Node& node, const Value& v) {
  switch (v.kind()) {
    case Kind::kInt: return v;
    case Kind::kUint:
      if (v.uint_value() > uint64_t(std::numeric_limits<int64_t>::max())) return Value::Error("int range error");
      return Value::Int(int64_t(v.uint_value()));
    case Kind::kDouble: {
      double d = v.double_value();
      // Doubles at or beyond ±2^63 do not fit (the upper bound is exclusive: 2^63 is not an int).
      if (!(d > -9223372036854775808.0 && d < 9223372036854775808.0)) return Value::Error("int range error");
      return Value::Int(int64_t(d));
    }
    case Kind::kString: {
      auto parsed = ParseInt(v.text());
      return parsed ? Value::Int(*parsed) : Value::Error("cannot convert '" + std::string(v.text()) + "' to int");
    }
    case Kind::kTimestamp: return Value::Int(v.timestamp_value().seconds);
    default: return NoOverload(node, &v, 1);
  }
}

Value ToUint(const Node& node, const Value& v) {
  switch (v.kind()) {
    case Kind::kInt:
      if (v.int_value() < 0) return Value::Error("uint range error");
      return Value::Uint(uint64_t(v.int_value()));
    case Kind::kUint: return v;
    case Kind::kDouble: {
      double d = v.double_value();
      if (!(d > -1.0 && d < 18446744073709551616.0)) return Value::Error("uint range error");
      return Value::Uint(uint64_t(d));
    }
    case Kind::kString: {
      std::string_view s = v.text();
      if (s.starts_with('+')) s.remove_prefix(1);
      uint64_t out = 0;
      bool ok = !s.empty();
      for (char c : s) {
        if (c < '0' || c > '9' || out > (std::numeric_limits<uint64_t>::max() - uint64_t(c - '0')) / 10) {
          ok = false;
          break;
        }
        out = out * 10 + uint64_t(c - '0');
      }
      return ok ? Value::Uint(out) : Value::Error("cannot convert '" + std::string(v.text()) + "' to uint");
    }
    default: return NoOverload(node, &v, 1);
  }
}

Value ToDouble(const Node& node, const Value& v) {
  switch (v.kind()) {
    case Kind::kInt: return Value::Double(double(v.int_value()));
    case Kind::kUint: return Value::Double(double(v.uint_value()));
    case Kind::kDouble: return v;
    case Kind::kString: {
      std::string s(v.text());
      char* end = nullptr;
      double d = std::strtod(s.c_str(), &end);
      if (s.empty() || end != s.c_str() + s.size() || s.find_first_of("xXpP") != std::string::npos) {
        return Value::Error("cannot convert '" + s + "' to double");
      }
      return Value::Double(d);
    }
    default: return NoOverload(node, &v, 1);
  }
}

Value ToStringValue(const Node& node, const Value& v) {
  switch (v.kind()) {
    case Kind::kInt: return Value::String(std::to_string(v.int_value()));
    case Kind::kUint: return Value::String(std::to_string(v.uint_value()));
    case Kind::kDouble: return Value::String(FormatDouble(v.double_value()));
    case Kind::kString: return v;
    case Kind::kBytes:
      if (!ValidUtf8(v.text())) return Value::Error("invalid UTF-8 in bytes");
      return Value::String(std::string(v.text()));
    case Kind::kBool: return Value::String(v.bool_value() ? "true" : "false");
    case Kind::kTimestamp: return Value::String(FormatTimestamp(v.timestamp_value()));
    case Kind::kDuration: return Value::String(FormatDuration(v.duration_value()));
    default: return NoOverload(node, &v, 1);
  }
}

Value ToBool(const Node& node, const Value& v) {
  if (v.kind() == Kind::kBool) return v;
  if (v.kind() != Kind::kString) return NoOverload(node, &v, 1);
  std::string_view s = v.text();
  if (s == "true" || s == "True" || s == "TRUE" || s == "t" || s == "1") return Value::Bool(true);
  if (s == "false" || s == "False" || s == "FALSE" || s == "f" || s == "0") return Value::Bool(false);
  return Value::Error("cannot convert '" + std::string(s) + "' to bool");
}

Value Matches(const Node& node, const Value& text, const Value& pattern, const Limits& limits) {
  if (node.regex) return Value::Bool(RE2::PartialMatch(text.text(), *node.regex));
  RE2::Options options;
  options.set_log_errors(false);
  options.set_max_mem(8 << 20);
  RE2 re(pattern.text(), options);
  if (!re.ok()) return Value::Error("invalid regular expression: " + re.error());
  if (re.ProgramSize() > limits.max_regex_program_size) return Value::Error("regular expression too complex");
  return Value::Bool(RE2::PartialMatch(text.text(), re));
}

std::optional<TimeField> GetterField(Builtin b) {
  switch (b) {
    case Builtin::kGetFullYear: return TimeField::kFullYear;
    case Builtin::kGetMonth: return TimeField::kMonth;
    case Builtin::kGetDate: return TimeField::kDate;
    case Builtin::kGetDayOfMonth: return TimeField::kDayOfMonth;
    case Builtin::kGetDayOfWeek: return TimeField::kDayOfWeek;
    case Builtin::kGetDayOfYear: return TimeField::kDayOfYear;
    case Builtin::kGetHours: return TimeField::kHours;
    case Builtin::kGetMinutes: return TimeField::kMinutes;
    case Builtin::kGetSeconds: return TimeField::kSeconds;
    case Builtin::kGetMilliseconds: return TimeField::kMilliseconds;
    default: return std::nullopt;
  }
}

}  // namespace

std::string FormatDouble(double d) {
  if (std::isnan(d)) return "NaN";
  if (std::isinf(d)) return d > 0 ? "+Inf" : "-Inf";
  char buf[64];
  int precision = 1;
  for (; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof buf, "%.*e", precision - 1, d);
    if (std::strtod(buf, nullptr) == d) break;
  }
  // buf holds the shortest digits in %e form: read its exponent to choose Go's %e or %f layout
  // (strconv.FormatFloat(d, 'g', -1, 64), which cel-go's string(double) uses: exponential below
  // 1e-4 and from 1e6 on).
  int exponent = std::atoi(std::strchr(buf, 'e') + 1);
  if (exponent < -4 || exponent >= 6) return buf;
  std::snprintf(buf, sizeof buf, "%.*f", std::max(precision - 1 - exponent, 0), d);
  return buf;
}

Value CallBuiltin(const Node& node, const Value* args, size_t count, const Limits& limits) {
  const Value& a = args[0];
  switch (node.builtin) {
    case Builtin::kAdd: return Add(node, a, args[1], limits);
    case Builtin::kSubtract: return Subtract(node, a, args[1]);
    case Builtin::kMultiply: case Builtin::kDivide: case Builtin::kModulo: return Arithmetic(node, a, args[1]);
    case Builtin::kNegate:
      if (a.kind() == Kind::kInt) {
        if (a.int_value() == std::numeric_limits<int64_t>::min()) return Value::Error("integer overflow");
        return Value::Int(-a.int_value());
      }
      if (a.kind() == Kind::kDouble) return Value::Double(-a.double_value());
      return NoOverload(node, args, count);
    case Builtin::kNot:
      if (a.kind() == Kind::kBool) return Value::Bool(!a.bool_value());
      return NoOverload(node, args, count);
    case Builtin::kEqual: return Value::Bool(ValuesEqual(a, args[1]));
    case Builtin::kNotEqual: return Value::Bool(!ValuesEqual(a, args[1]));
    case Builtin::kLess: case Builtin::kLessEqual: case Builtin::kGreater: case Builtin::kGreaterEqual: {
      auto order = CompareValues(a, args[1]);
      if (!order) return NoOverload(node, args, count);
      switch (node.builtin) {
        case Builtin::kLess: return Value::Bool(*order == Order::kLess);
        case Builtin::kLessEqual: return Value::Bool(*order == Order::kLess || *order == Order::kEqual);
        case Builtin::kGreater: return Value::Bool(*order == Order::kGreater);
        default: return Value::Bool(*order == Order::kGreater || *order == Order::kEqual);
      }
    }
    case Builtin::kIn: {
      const Value& container = args[1];
      if (container.kind() == Kind::kList) {
        for (size_t i = 0; i < container.size(); ++i) {
          if (ValuesEqual(a, container.ListAt(i))) return Value::Bool(true);
        }
        return Value::Bool(false);
      }
      if (container.kind() == Kind::kMap) return Value::Bool(container.MapFind(a).has_value());
      return NoOverload(node, args, count);
    }
    case Builtin::kSize:
      if (a.kind() == Kind::kString) return Value::Int(CodePoints(a.text()));
      if (a.kind() == Kind::kBytes) return Value::Int(int64_t(a.text().size()));
      if (a.kind() == Kind::kList || a.kind() == Kind::kMap) return Value::Int(int64_t(a.size()));
      return NoOverload(node, args, count);
    case Builtin::kContains: case Builtin::kStartsWith: case Builtin::kEndsWith: case Builtin::kMatches: {
      if (count != 2 || a.kind() != Kind::kString || args[1].kind() != Kind::kString) return NoOverload(node, args, count);
      std::string_view s = a.text(), t = args[1].text();
      if (node.builtin == Builtin::kContains) return Value::Bool(s.find(t) != std::string_view::npos);
      if (node.builtin == Builtin::kStartsWith) return Value::Bool(s.starts_with(t));
      if (node.builtin == Builtin::kEndsWith) return Value::Bool(s.ends_with(t));
      return Matches(node, a, args[1], limits);
    }
    case Builtin::kSplit: {
      if (count != 2 || a.kind() != Kind::kString || args[1].kind() != Kind::kString) return NoOverload(node, args, count);
      std::string_view s = a.text(), sep = args[1].text();
      ValueList parts;
      if (sep.empty()) {  // every character (code point) alone, as the strings extension does
        for (size_t i = 0; i < s.size();) {
          size_t n = 1;
          while (i + n < s.size() && (static_cast<unsigned char>(s[i + n]) & 0xC0) == 0x80) ++n;
          parts.push_back(Value::String(std::string(s.substr(i, n))));
          i += n;
        }
      } else {
        size_t start = 0;
        while (true) {
          size_t at = s.find(sep, start);
          parts.push_back(Value::String(std::string(s.substr(start, at == std::string_view::npos ? at : at - start))));
          if (at == std::string_view::npos) break;
          start = at + sep.size();
        }
      }
      if (parts.size() > limits.max_collection_size) return Value::Error("list exceeds the size limit");
      return Value::List(std::move(parts));
    }
    case Builtin::kLowerAscii: case Builtin::kUpperAscii: case Builtin::kTrim: {
      if (count != 1 || a.kind() != Kind::kString) return NoOverload(node, args, count);
      std::string s(a.text());
      if (node.builtin == Builtin::kTrim) {
        size_t first = s.find_first_not_of(" \t\r\n\v\f");
        size_t last = s.find_last_not_of(" \t\r\n\v\f");
        return Value::String(first == std::string::npos ? "" : s.substr(first, last - first + 1));
      }
      for (char& c : s) {
        if (node.builtin == Builtin::kLowerAscii && c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
        if (node.builtin == Builtin::kUpperAscii && c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
      }
      return Value::String(std::move(s));
    }
    case Builtin::kToInt: return ToInt(node, a);
    case Builtin::kToUint: return ToUint(node, a);
    case Builtin::kToDouble: return ToDouble(node, a);
    case Builtin::kToString: return ToStringValue(node, a);
    case Builtin::kToBytes:
      if (a.kind() == Kind::kBytes) return a;
      if (a.kind() == Kind::kString) return Value::Bytes(std::string(a.text()));
      return NoOverload(node, args, count);
    case Builtin::kToBool: return ToBool(node, a);
    case Builtin::kType: return Value::Type(a.type_name());
    case Builtin::kDyn: return a;
    case Builtin::kToTimestamp:
      if (a.kind() == Kind::kTimestamp) return a;
      if (a.kind() == Kind::kString) {
        auto t = ParseTimestamp(a.text());
        return t ? Value::Time(*t) : Value::Error("invalid timestamp '" + std::string(a.text()) + "'");
      }
      if (a.kind() == Kind::kInt) {
        auto t = MakeTimestamp(Nanos128(a.int_value()) * 1'000'000'000);
        return t ? Value::Time(*t) : Value::Error("timestamp out of range");
      }
      return NoOverload(node, args, count);
    case Builtin::kToDuration:
      if (a.kind() == Kind::kDuration) return a;
      if (a.kind() == Kind::kString) {
        auto d = ParseDuration(a.text());
        return d ? Value::Dur(*d) : Value::Error("invalid duration '" + std::string(a.text()) + "'");
      }
      return NoOverload(node, args, count);
    default: break;
  }
  if (auto field = GetterField(node.builtin)) {
    if (a.kind() == Kind::kTimestamp && count == 1) return TimestampField(a.timestamp_value(), *field, "");
    if (a.kind() == Kind::kTimestamp && count == 2 && args[1].kind() == Kind::kString) {
      return TimestampField(a.timestamp_value(), *field, args[1].text());
    }
    if (a.kind() == Kind::kDuration && count == 1) return DurationField(a.duration_value(), *field);
  }
  return NoOverload(node, args, count);
}

}  // namespace cairn::cel
