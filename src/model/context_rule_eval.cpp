#include "model/context_rule_eval.h"

#include <algorithm>
#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/string.hpp>
#include <cctype>
#include <cstdint>
#include <functional>
#include <string_view>
#include <type_traits>

namespace cairn::model {
namespace json = boost::json;
namespace {

int Sign(bool less, bool greater) { return less ? -1 : (greater ? 1 : 0); }

// Compares an integer with a double without rounding either: the double's integral part is
// compared in the integer type (when it fits), then its fractional part breaks the tie.
template <typename Int>
int CompareIntDouble(Int i, double d) {
  constexpr double kLow = std::is_signed_v<Int> ? -0x1p63 : 0.0;  // exact as doubles
  constexpr double kHigh = std::is_signed_v<Int> ? 0x1p63 : 0x1p64;
  if (d >= kHigh) return -1;
  if (d < kLow) return 1;
  Int whole = static_cast<Int>(d);  // truncates toward zero; in range
  if (i != whole) return Sign(i < whole, i > whole);
  double fraction = d - static_cast<double>(whole);  // exact
  return Sign(fraction > 0, fraction < 0);
}

bool Ordered(const json::value& found, const json::value& bound, RuleOp op) {
  int cmp = 0;
  if (found.is_number() && bound.is_number()) {
    cmp = CompareJsonNumbers(found, bound);
  } else if (found.is_string() && bound.is_string()) {
    cmp = std::string_view(found.get_string()).compare(std::string_view(bound.get_string()));  // byte order
  } else {
    return false;
  }
  switch (op) {
    case RuleOp::kGt: return cmp > 0;
    case RuleOp::kGte: return cmp >= 0;
    case RuleOp::kLt: return cmp < 0;
    default: return cmp <= 0;
  }
}

// The array holds an element equal to `v`, or the string contains `v` as a substring.
bool Contains(const json::value& found, const json::value& v) {
  if (found.is_array()) {
    const json::array& items = found.get_array();
    return std::any_of(items.begin(), items.end(), [&](const json::value& item) { return JsonEquals(item, v); });
  }
  if (found.is_string() && v.is_string()) {
    return std::string_view(found.get_string()).find(std::string_view(v.get_string())) != std::string_view::npos;
  }
  return false;
}

bool AnyOf(const json::value& options, const std::function<bool(const json::value&)>& one) {
  if (!options.is_array()) return false;
  const json::array& items = options.get_array();
  return std::any_of(items.begin(), items.end(), one);
}

}  // namespace

const json::value* FindJsonPath(const json::value& root, std::string_view path) {
  if (path.empty() || path[0] != '$') return nullptr;
  const json::value* at = &root;
  size_t i = 1;
  while (i < path.size()) {
    if (path[i] == '.') {
      size_t start = ++i;
      while (i < path.size() && path[i] != '.' && path[i] != '[') ++i;
      if (i == start || !at->is_object()) return nullptr;
      at = at->get_object().if_contains(path.substr(start, i - start));
    } else if (path[i] == '[') {
      size_t index = 0;
      size_t start = ++i;
      while (i < path.size() && std::isdigit(static_cast<unsigned char>(path[i])) && i - start < 18) {
        index = index * 10 + static_cast<size_t>(path[i++] - '0');
      }
      if (i == start || i >= path.size() || path[i] != ']') return nullptr;
      ++i;
      if (!at->is_array() || index >= at->get_array().size()) return nullptr;
      at = &at->get_array()[index];
    } else {
      return nullptr;
    }
    if (!at) return nullptr;
  }
  return at;
}

int CompareJsonNumbers(const json::value& a, const json::value& b) {
  if (a.is_double() && b.is_double()) return Sign(a.get_double() < b.get_double(), a.get_double() > b.get_double());
  if (a.is_double()) return -CompareJsonNumbers(b, a);
  if (b.is_double()) {
    return a.is_int64() ? CompareIntDouble(a.get_int64(), b.get_double()) : CompareIntDouble(a.get_uint64(), b.get_double());
  }
  // Both integers: a negative int64 is below every uint64; otherwise compare as uint64.
  if (a.is_int64() && b.is_int64()) return Sign(a.get_int64() < b.get_int64(), a.get_int64() > b.get_int64());
  if (a.is_int64() && a.get_int64() < 0) return -1;
  if (b.is_int64() && b.get_int64() < 0) return 1;
  uint64_t x = a.is_int64() ? static_cast<uint64_t>(a.get_int64()) : a.get_uint64();
  uint64_t y = b.is_int64() ? static_cast<uint64_t>(b.get_int64()) : b.get_uint64();
  return Sign(x < y, x > y);
}

bool JsonEquals(const json::value& a, const json::value& b) {
  if (a.is_number() || b.is_number()) return a.is_number() && b.is_number() && CompareJsonNumbers(a, b) == 0;
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case json::kind::null: return true;
    case json::kind::bool_: return a.get_bool() == b.get_bool();
    case json::kind::string: return a.get_string() == b.get_string();
    case json::kind::array: {
      const json::array& x = a.get_array();
      const json::array& y = b.get_array();
      return x.size() == y.size() && std::equal(x.begin(), x.end(), y.begin(), JsonEquals);
    }
    case json::kind::object: {
      const json::object& x = a.get_object();
      const json::object& y = b.get_object();
      if (x.size() != y.size()) return false;
      return std::all_of(x.begin(), x.end(), [&](const json::key_value_pair& member) {
        const json::value* other = y.if_contains(member.key());
        return other && JsonEquals(member.value(), *other);
      });
    }
    default: return false;
  }
}

bool RuleHolds(const ContextRule& rule, const json::value& context) {
  const json::value* found = FindJsonPath(context, rule.path);
  const json::value& v = rule.value;
  switch (rule.op) {
    case RuleOp::kExists: return (found != nullptr) == (!v.is_bool() || v.get_bool());
    case RuleOp::kNe: return !found || !JsonEquals(*found, v);
    default: break;
  }
  if (!found) return false;
  switch (rule.op) {
    case RuleOp::kEq: return JsonEquals(*found, v);
    case RuleOp::kGt:
    case RuleOp::kGte:
    case RuleOp::kLt:
    case RuleOp::kLte: return Ordered(*found, v, rule.op);
    case RuleOp::kIn: return AnyOf(v, [&](const json::value& option) { return JsonEquals(*found, option); });
    case RuleOp::kContains: return Contains(*found, v);
    case RuleOp::kContainsAny: return AnyOf(v, [&](const json::value& option) { return Contains(*found, option); });
    case RuleOp::kPrefix:
      return found->is_string() && v.is_string() &&
             std::string_view(found->get_string()).starts_with(std::string_view(v.get_string()));
    default: return false;
  }
}

bool AllRulesHold(const std::vector<ContextRule>& rules, const json::value& context) {
  return std::all_of(rules.begin(), rules.end(), [&](const ContextRule& rule) { return RuleHolds(rule, context); });
}

}  // namespace cairn::model
