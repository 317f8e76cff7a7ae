#include "model/json_schema.h"

#include <algorithm>
#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/string.hpp>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "base/json_util.h"
#include "model/context_rule_eval.h"

namespace cairn::model {
namespace json = boost::json;
namespace {

constexpr std::string_view kTypeNames[] = {"object", "array", "string", "number", "integer", "boolean", "null"};

// The keywords we enforce; ValidateSchemaDefinition checks each one's value below. Listed here
// for the "unknown keyword" message.
constexpr std::string_view kSupported[] = {
    "type", "enum", "const", "nullable",
    "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
    "minLength", "maxLength",
    "items", "minItems", "maxItems", "uniqueItems",
    "properties", "required", "additionalProperties", "minProperties", "maxProperties",
    "allOf", "anyOf", "oneOf", "not"};

// Keywords that only describe: accepted anywhere and never enforced ("format" is an annotation in
// draft 2020-12 too; "example" is OpenAPI's singular form).
constexpr std::string_view kAnnotations[] = {
    "title", "description", "default", "examples", "example", "$schema", "$id", "$comment",
    "format", "deprecated", "readOnly", "writeOnly"};

// JSON Schema keywords that change validation but that this subset does not implement. They get
// a clearer message than an unknown keyword, since the author meant them.
constexpr std::string_view kUnsupported[] = {
    "$ref", "$defs", "definitions", "$anchor", "$dynamicRef", "$dynamicAnchor", "$recursiveRef", "$recursiveAnchor",
    "pattern", "patternProperties", "propertyNames", "if", "then", "else",
    "dependentRequired", "dependentSchemas", "dependencies", "multipleOf",
    "contains", "minContains", "maxContains", "prefixItems", "additionalItems",
    "unevaluatedItems", "unevaluatedProperties", "contentSchema"};

// The numeric bounds, with the operator they require of a value (draft 2020 style: exclusive
// bounds are numbers of their own, not booleans qualifying minimum/maximum).
struct Bound {
  std::string_view keyword;
  std::string_view op;
  bool (*holds)(int cmp);  // cmp: the value compared with the bound
};
constexpr Bound kBounds[] = {
    {"minimum", ">=", [](int cmp) { return cmp >= 0; }},
    {"maximum", "<=", [](int cmp) { return cmp <= 0; }},
    {"exclusiveMinimum", ">", [](int cmp) { return cmp > 0; }},
    {"exclusiveMaximum", "<", [](int cmp) { return cmp < 0; }},
};

constexpr std::string_view kCounts[] = {"minLength", "maxLength", "minItems", "maxItems", "minProperties",
                                        "maxProperties"};

template <typename List>
bool Listed(const List& list, std::string_view name) {
  return std::find(std::begin(list), std::end(list), name) != std::end(list);
}

bool IsBound(std::string_view keyword) {
  return std::any_of(std::begin(kBounds), std::end(kBounds), [&](const Bound& b) { return b.keyword == keyword; });
}

std::string JoinNames(const auto& names) {
  std::string out;
  for (std::string_view name : names) {
    if (!out.empty()) out += ", ";
    out += name;
  }
  return out;
}

// A non-negative integer keyword value (minLength, ...). JSON Schema counts 3.0 as an integer.
std::optional<uint64_t> AsCount(const json::value& v) {
  if (v.is_uint64()) return v.get_uint64();
  if (v.is_int64()) {
    if (v.get_int64() < 0) return std::nullopt;
    return static_cast<uint64_t>(v.get_int64());
  }
  if (v.is_double()) {
    double d = v.get_double();
    if (!std::isfinite(d) || d < 0 || std::trunc(d) != d) return std::nullopt;
    return d >= 0x1p64 ? UINT64_MAX : static_cast<uint64_t>(d);
  }
  return std::nullopt;
}

// "integer" is a property of the value, not of its representation: 3.0 is one, 3.5 is not.
bool IsInteger(const json::value& v) {
  if (v.is_int64() || v.is_uint64()) return true;
  return v.is_double() && std::isfinite(v.get_double()) && std::trunc(v.get_double()) == v.get_double();
}

bool HasType(std::string_view type, const json::value& v) {
  if (type == "integer") return IsInteger(v);
  if (type == "number") return v.is_number();
  return type == JsonKindName(v);  // object, array, string, boolean, null
}

std::string TypeNoun(std::string_view type) {
  if (type == "null") return "null";
  bool vowel = type == "object" || type == "array" || type == "integer";
  return (vowel ? "an " : "a ") + std::string(type);
}

// Numbers as people write them (3, 0.5, 1e+300), not as boost::json serialises doubles (3E0).
std::string FormatNumber(const json::value& v) {
  if (v.is_int64()) return std::to_string(v.get_int64());
  if (v.is_uint64()) return std::to_string(v.get_uint64());
  char buffer[32];
  return std::string(buffer, std::to_chars(buffer, buffer + sizeof buffer, v.get_double()).ptr);
}

std::string FormatJson(const json::value& v) {
  if (v.is_number()) return FormatNumber(v);
  std::string out;
  if (const json::array* items = v.if_array()) {
    for (const json::value& item : *items) out += (out.empty() ? "[" : ",") + FormatJson(item);
    return out.empty() ? "[]" : out + "]";
  }
  if (const json::object* members = v.if_object()) {
    for (const auto& member : *members) {
      out += (out.empty() ? "{" : ",") + json::serialize(json::string_view(member.key())) + ":" +
             FormatJson(member.value());
    }
    return out.empty() ? "{}" : out + "}";
  }
  return json::serialize(v);
}

// Bounds messages built from schema contents (a huge enum, many anyOf branches); cuts at a code
// point boundary so that the message stays valid UTF-8.
std::string Truncated(std::string text, size_t max = 400) {
  if (text.size() <= max) return text;
  size_t cut = max;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  text.resize(cut);
  return text + "...";
}

// Unicode code points in valid UTF-8: every byte except continuation bytes (10xxxxxx) starts one.
uint64_t CodePoints(std::string_view s) {
  return static_cast<uint64_t>(
      std::count_if(s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

int KindRank(const json::value& v) {
  switch (v.kind()) {
    case json::kind::null: return 0;
    case json::kind::bool_: return 1;
    case json::kind::int64:
    case json::kind::uint64:
    case json::kind::double_: return 2;
    case json::kind::string: return 3;
    case json::kind::array: return 4;
    case json::kind::object: return 5;
  }
  return 6;
}

std::vector<const json::key_value_pair*> SortedMembers(const json::object& obj) {
  std::vector<const json::key_value_pair*> members;
  members.reserve(obj.size());
  for (const auto& member : obj) members.push_back(&member);
  std::sort(members.begin(), members.end(), [](const auto* a, const auto* b) { return a->key() < b->key(); });
  return members;
}

// A total order whose equality is JsonEquals, so that uniqueItems can sort the items instead of
// comparing every pair (quadratic in a request-sized array).
int CompareJson(const json::value& a, const json::value& b) {
  if (KindRank(a) != KindRank(b)) return KindRank(a) < KindRank(b) ? -1 : 1;
  switch (a.kind()) {
    case json::kind::null: return 0;
    case json::kind::bool_: return static_cast<int>(a.get_bool()) - static_cast<int>(b.get_bool());
    case json::kind::string: {
      int cmp = std::string_view(a.get_string()).compare(std::string_view(b.get_string()));
      return cmp < 0 ? -1 : (cmp > 0 ? 1 : 0);
    }
    case json::kind::array: {
      const json::array& x = a.get_array();
      const json::array& y = b.get_array();
      for (size_t i = 0; i < x.size() && i < y.size(); ++i) {
        if (int cmp = CompareJson(x[i], y[i]); cmp != 0) return cmp;
      }
      return x.size() < y.size() ? -1 : (x.size() > y.size() ? 1 : 0);
    }
    case json::kind::object: {
      if (a.get_object().size() != b.get_object().size()) return a.get_object().size() < b.get_object().size() ? -1 : 1;
      auto x = SortedMembers(a.get_object());
      auto y = SortedMembers(b.get_object());
      for (size_t i = 0; i < x.size(); ++i) {
        if (x[i]->key() != y[i]->key()) return x[i]->key() < y[i]->key() ? -1 : 1;
        if (int cmp = CompareJson(x[i]->value(), y[i]->value()); cmp != 0) return cmp;
      }
      return 0;
    }
    default: return CompareJsonNumbers(a, b);
  }
}

// The first duplicate in `items` as (earlier index, later index), choosing the smallest later
// index, or nullopt when all items are distinct.
std::optional<std::pair<size_t, size_t>> FindDuplicate(const json::array& items) {
  std::vector<size_t> order(items.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  // Stable: equal items stay in index order, so each run of equals starts with its first two.
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return CompareJson(items[a], items[b]) < 0; });
  std::optional<std::pair<size_t, size_t>> first;
  for (size_t k = 1; k < order.size(); ++k) {
    bool run_start = k == 1 || CompareJson(items[order[k - 2]], items[order[k - 1]]) != 0;
    if (run_start && CompareJson(items[order[k - 1]], items[order[k]]) == 0 && (!first || order[k] < first->second)) {
      first = {order[k - 1], order[k]};
    }
  }
  return first;
}

const json::array* ArrayAt(const json::object& schema, std::string_view keyword) {
  const json::value* v = schema.if_contains(keyword);
  return v ? v->if_array() : nullptr;
}

std::string Index(size_t i) { return "[" + std::to_string(i) + "]"; }

// ---- Checking schema definitions ----

class DefinitionChecker {
 public:
  explicit DefinitionChecker(size_t max_depth) : max_depth_(max_depth) {}

  Status Schema(const json::value& schema, const std::string& field, size_t depth) const {
    if (depth > max_depth_) {
      return Status::Validation(field, "schema nested deeper than " + std::to_string(max_depth_) + " levels");
    }
    const json::object* obj = schema.if_object();
    if (!obj) return Status::Validation(field, "must be a JSON Schema object, not " + std::string(JsonKindName(schema)));
    for (const auto& member : *obj) {
      CAIRN_RETURN_IF_ERROR(Keyword(member.key(), member.value(), field + "." + std::string(member.key()), depth));
    }
    return Status::Ok();
  }

 private:
  // A schema where JSON Schema also allows the boolean schemas (true: anything, false: nothing).
  Status Subschema(const json::value& schema, const std::string& field, size_t depth) const {
    if (schema.is_bool()) return Status::Ok();
    return Schema(schema, field, depth);
  }

  Status Keyword(std::string_view key, const json::value& v, const std::string& field, size_t depth) const {
    if (Listed(kAnnotations, key) || key.starts_with("x-")) return Status::Ok();
    if (key == "type") return TypeKeyword(v, field);
    if (key == "required") {
      const json::array* names = v.if_array();
      if (!names) return Status::Validation(field, "must be an array of property names");
      for (size_t i = 0; i < names->size(); ++i) {
        if (!(*names)[i].is_string()) return Status::Validation(field + Index(i), "must be a string");
      }
      return Status::Ok();
    }
    if (key == "properties") {
      const json::object* properties = v.if_object();
      if (!properties) return Status::Validation(field, "must be an object mapping property names to schemas");
      for (const auto& property : *properties) {
        CAIRN_RETURN_IF_ERROR(Subschema(property.value(), field + "." + std::string(property.key()), depth + 1));
      }
      return Status::Ok();
    }
    if (key == "items" && v.is_array()) {
      return Status::Validation(field, "must be one schema (the tuple form, an array of schemas, is not supported)");
    }
    if (key == "items" || key == "additionalProperties" || key == "not") return Subschema(v, field, depth + 1);
    if (key == "allOf" || key == "anyOf" || key == "oneOf") {
      const json::array* schemas = v.if_array();
      if (!schemas || schemas->empty()) return Status::Validation(field, "must be a non-empty array of schemas");
      for (size_t i = 0; i < schemas->size(); ++i) {
        CAIRN_RETURN_IF_ERROR(Subschema((*schemas)[i], field + Index(i), depth + 1));
      }
      return Status::Ok();
    }
    if (key == "enum") {
      // An empty enum accepts nothing: surely a mistake rather than intent.
      if (!v.is_array() || v.get_array().empty()) return Status::Validation(field, "must be a non-empty array of values");
      return Status::Ok();
    }
    if (key == "const") return Status::Ok();
    if (IsBound(key)) {
      if (v.is_number()) return Status::Ok();
      return Status::Validation(field, v.is_bool() ? "must be a number (the draft-04 boolean form is not supported)"
                                                   : "must be a number");
    }
    if (Listed(kCounts, key)) {
      if (AsCount(v)) return Status::Ok();
      return Status::Validation(field, "must be a non-negative integer");
    }
    if (key == "uniqueItems" || key == "nullable") {
      if (v.is_bool()) return Status::Ok();
      return Status::Validation(field, "must be a boolean");
    }
    if (Listed(kUnsupported, key)) {
      bool reference = key == "$ref" || key == "$defs" || key == "definitions";
      return Status::Validation(field, reference ? "is not supported (inline the referenced schema instead)"
                                                 : "is not supported");
    }
    return Status::Validation(field, "unknown keyword (a typo? supported: " + JoinNames(kSupported) + ")");
  }

  static Status TypeKeyword(const json::value& v, const std::string& field) {
    auto known = [](const json::value& name) {
      return name.is_string() && Listed(kTypeNames, std::string_view(name.get_string()));
    };
    const std::string unknown = "unknown type (one of " + JoinNames(kTypeNames) + ")";
    if (v.is_string()) return known(v) ? Status::Ok() : Status::Validation(field, unknown);
    const json::array* names = v.if_array();
    if (!names || names->empty()) return Status::Validation(field, "must be a type name or a non-empty array of them");
    for (size_t i = 0; i < names->size(); ++i) {
      if (!known((*names)[i])) return Status::Validation(field + Index(i), unknown);
      if (std::find(names->begin(), names->begin() + static_cast<std::ptrdiff_t>(i), (*names)[i]) !=
          names->begin() + static_cast<std::ptrdiff_t>(i)) {
        return Status::Validation(field + Index(i), "duplicate type");
      }
    }
    return Status::Ok();
  }

  size_t max_depth_;
};

// ---- Validating values ----
// Each helper reads keywords defensively (if_array, is_number, ...) so that a schema that skipped
// ValidateSchemaDefinition can give a wrong answer but never undefined behaviour.

Status Validate(const json::value& schema, const json::value& value, const std::string& path);

Status CheckType(const json::value& type, const json::value& value, const std::string& path) {
  std::vector<std::string_view> names;
  if (type.is_string()) names.push_back(type.get_string());
  if (const json::array* list = type.if_array()) {
    for (const json::value& name : *list) {
      if (name.is_string()) names.push_back(name.get_string());
    }
  }
  if (names.empty() || std::any_of(names.begin(), names.end(), [&](std::string_view t) { return HasType(t, value); })) {
    return Status::Ok();
  }
  std::string expected;  // "a string", "a string or null", "an object, an array or null"
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0) expected += i + 1 == names.size() ? " or " : ", ";
    expected += TypeNoun(names[i]);
  }
  return Status::Validation(path, "must be " + expected);
}

// Checks a size against a min/max keyword pair: "must have at least 2 items".
Status CheckCount(const json::object& schema, std::string_view min_key, std::string_view max_key, uint64_t count,
                  std::string_view singular, std::string_view plural, const std::string& path) {
  auto limit = [&](std::string_view key) -> std::optional<uint64_t> {
    const json::value* v = schema.if_contains(key);
    return v ? AsCount(*v) : std::nullopt;
  };
  auto describe = [&](uint64_t n) { return std::to_string(n) + " " + std::string(n == 1 ? singular : plural); };
  if (auto min = limit(min_key); min && count < *min) return Status::Validation(path, "must have at least " + describe(*min));
  if (auto max = limit(max_key); max && count > *max) return Status::Validation(path, "must have at most " + describe(*max));
  return Status::Ok();
}

Status CheckNumber(const json::object& schema, const json::value& value, const std::string& path) {
  for (const Bound& bound : kBounds) {
    const json::value* limit = schema.if_contains(bound.keyword);
    if (limit && limit->is_number() && !bound.holds(CompareJsonNumbers(value, *limit))) {
      return Status::Validation(path, "must be " + std::string(bound.op) + " " + FormatNumber(*limit));
    }
  }
  return Status::Ok();
}

Status CheckArray(const json::object& schema, const json::array& items, const std::string& path) {
  CAIRN_RETURN_IF_ERROR(CheckCount(schema, "minItems", "maxItems", items.size(), "item", "items", path));
  const json::value* unique = schema.if_contains("uniqueItems");
  if (unique && unique->is_bool() && unique->get_bool()) {
    if (auto duplicate = FindDuplicate(items)) {
      return Status::Validation(path, "must not contain duplicate items (" + Index(duplicate->second) + " equals " +
                                          Index(duplicate->first) + ")");
    }
  }
  if (const json::value* item_schema = schema.if_contains("items")) {
    for (size_t i = 0; i < items.size(); ++i) {
      CAIRN_RETURN_IF_ERROR(Validate(*item_schema, items[i], path + Index(i)));
    }
  }
  return Status::Ok();
}

Status CheckObject(const json::object& schema, const json::object& members, const std::string& path) {
  CAIRN_RETURN_IF_ERROR(
      CheckCount(schema, "minProperties", "maxProperties", members.size(), "property", "properties", path));
  if (const json::array* required = ArrayAt(schema, "required")) {
    for (const json::value& name : *required) {
      if (name.is_string() && !members.contains(name.get_string())) {
        return Status::Validation(path + "." + std::string(name.get_string()), "is required");
      }
    }
  }
  const json::value* properties_value = schema.if_contains("properties");
  const json::object* properties = properties_value ? properties_value->if_object() : nullptr;
  const json::value* additional = schema.if_contains("additionalProperties");
  for (const auto& member : members) {
    const json::value* member_schema = properties ? properties->if_contains(member.key()) : nullptr;
    std::string member_path = path + "." + std::string(member.key());
    if (!member_schema && additional && additional->is_bool() && !additional->get_bool()) {
      // Said apart from a plain `false` schema: the usual cause is a misspelt member name.
      return Status::Validation(member_path, "is not allowed (additionalProperties is false)");
    }
    if (!member_schema) member_schema = additional;
    if (member_schema) {
      CAIRN_RETURN_IF_ERROR(Validate(*member_schema, member.value(), member_path));
    }
  }
  return Status::Ok();
}

Status CheckCombinators(const json::object& schema, const json::value& value, const std::string& path) {
  if (const json::array* all = ArrayAt(schema, "allOf")) {
    // The failing branch's own error is the most precise one (it may name a nested member).
    for (const json::value& branch : *all) {
      CAIRN_RETURN_IF_ERROR(Validate(branch, value, path));
    }
  }
  if (const json::array* any = ArrayAt(schema, "anyOf")) {
    // No single branch is "the" failure, so the message lists why each one failed.
    std::string reasons;
    bool matched = false;
    for (size_t i = 0; i < any->size() && !matched; ++i) {
      Status status = Validate((*any)[i], value, path);
      matched = status.ok();
      if (!matched) reasons += (i == 0 ? "anyOf" : "; anyOf") + Index(i) + ": " + status.message();
    }
    if (!matched) return Status::Validation(path, Truncated("must match at least one schema in anyOf (" + reasons) + ")");
  }
  if (const json::array* one = ArrayAt(schema, "oneOf")) {
    std::string reasons;
    std::vector<size_t> matches;
    for (size_t i = 0; i < one->size() && matches.size() < 2; ++i) {
      Status status = Validate((*one)[i], value, path);
      if (status.ok()) {
        matches.push_back(i);
      } else {
        reasons += (reasons.empty() ? "oneOf" : "; oneOf") + Index(i) + ": " + status.message();
      }
    }
    if (matches.empty()) {
      return Status::Validation(path, Truncated("must match exactly one schema in oneOf, matched none (" + reasons) + ")");
    }
    if (matches.size() > 1) {
      return Status::Validation(path, "must match exactly one schema in oneOf, matched oneOf" + Index(matches[0]) +
                                          " and oneOf" + Index(matches[1]));
    }
  }
  if (const json::value* negated = schema.if_contains("not"); negated && Validate(*negated, value, path).ok()) {
    return Status::Validation(path, "must not match the schema in not");
  }
  return Status::Ok();
}

Status Validate(const json::value& schema, const json::value& value, const std::string& path) {
  if (schema.is_bool()) {
    return schema.get_bool() ? Status::Ok() : Status::Validation(path, "is not allowed (the schema is false)");
  }
  const json::object* obj = schema.if_object();
  if (!obj) return Status::Ok();
  const json::value* nullable = obj->if_contains("nullable");
  if (value.is_null() && nullable && nullable->is_bool() && nullable->get_bool()) return Status::Ok();
  if (const json::value* type = obj->if_contains("type")) {
    CAIRN_RETURN_IF_ERROR(CheckType(*type, value, path));
  }
  if (const json::array* options = ArrayAt(*obj, "enum")) {
    if (std::none_of(options->begin(), options->end(), [&](const json::value& o) { return JsonEquals(value, o); })) {
      return Status::Validation(path, "must be one of " + Truncated(FormatJson(*options)));
    }
  }
  if (const json::value* constant = obj->if_contains("const"); constant && !JsonEquals(value, *constant)) {
    return Status::Validation(path, "must be equal to " + Truncated(FormatJson(*constant)));
  }
  if (value.is_number()) {
    CAIRN_RETURN_IF_ERROR(CheckNumber(*obj, value, path));
  } else if (const json::string* text = value.if_string()) {
    CAIRN_RETURN_IF_ERROR(CheckCount(*obj, "minLength", "maxLength", CodePoints(*text), "character", "characters", path));
  } else if (const json::array* items = value.if_array()) {
    CAIRN_RETURN_IF_ERROR(CheckArray(*obj, *items, path));
  } else if (const json::object* members = value.if_object()) {
    CAIRN_RETURN_IF_ERROR(CheckObject(*obj, *members, path));
  }
  return CheckCombinators(*obj, value, path);
}

}  // namespace

Status ValidateSchemaDefinition(const json::value& schema, const std::string& field, size_t max_depth) {
  return DefinitionChecker(max_depth).Schema(schema, field, 1);
}

Status ValidateAgainstSchema(const json::value& schema, const json::value& value, const std::string& root) {
  return Validate(schema, value, root);
}

}  // namespace cairn::model
