#include "model/query.h"

#include <cctype>
#include <utility>

namespace cairn::model {
namespace json = boost::json;

namespace {

constexpr std::pair<std::string_view, RuleOp> kOps[] = {
    {"eq", RuleOp::kEq},   {"ne", RuleOp::kNe},   {"gt", RuleOp::kGt},
    {"gte", RuleOp::kGte}, {"lt", RuleOp::kLt},   {"lte", RuleOp::kLte},
    {"in", RuleOp::kIn},   {"contains", RuleOp::kContains}, {"contains_any", RuleOp::kContainsAny},
    {"exists", RuleOp::kExists}, {"prefix", RuleOp::kPrefix}};

}  // namespace

std::optional<RuleOp> ParseRuleOp(std::string_view name) {
  for (const auto& [text, op] : kOps) {
    if (text == name) return op;
  }
  return std::nullopt;
}

std::string_view RuleOpName(RuleOp op) {
  for (const auto& [text, candidate] : kOps) {
    if (candidate == op) return text;
  }
  return "?";
}

Status ValidateJsonPath(const std::string& field, const std::string& path) {
  if (path.size() > 512) return Status::Validation(field, "path longer than 512 bytes");
  if (path.empty() || path[0] != '$') return Status::Validation(field, "must start with '$' (e.g. $.a.b)");
  size_t i = 1;
  while (i < path.size()) {
    if (path[i] == '.') {
      size_t start = ++i;
      while (i < path.size() && (std::isalnum(static_cast<unsigned char>(path[i])) || path[i] == '_' || path[i] == '-')) ++i;
      if (i == start) return Status::Validation(field, "empty or invalid name after '.' in " + path);
    } else if (path[i] == '[') {
      size_t start = ++i;
      while (i < path.size() && std::isdigit(static_cast<unsigned char>(path[i]))) ++i;
      if (i == start || i >= path.size() || path[i] != ']' || i - start > 9) {
        return Status::Validation(field, "invalid array index in " + path);
      }
      ++i;
    } else {
      return Status::Validation(field, "unexpected '" + std::string(1, path[i]) + "' in " + path);
    }
  }
  return Status::Ok();
}

namespace {

Result<ContextRule> ParseRule(const json::value& item, const std::string& field) {
  if (!item.is_object()) return Status::Validation(field, "must be an object {path, op, value}");
  const json::object& obj = item.get_object();
  ContextRule rule;
  for (const auto& kv : obj) {
    if (kv.key() != "path" && kv.key() != "op" && kv.key() != "value") {
      return Status::Validation(field + "." + std::string(kv.key()), "unknown field");
    }
  }
  const json::value* path = obj.if_contains("path");
  if (!path || !path->is_string()) return Status::Validation(field + ".path", "is required and must be a string");
  rule.path = std::string(path->get_string());
  CAIRN_RETURN_IF_ERROR(ValidateJsonPath(field + ".path", rule.path));
  const json::value* op = obj.if_contains("op");
  std::string op_name = op && op->is_string() ? std::string(op->get_string()) : "eq";
  if (op && !op->is_string()) return Status::Validation(field + ".op", "must be a string");
  auto parsed = ParseRuleOp(op_name);
  if (!parsed) {
    return Status::Validation(field + ".op", "unknown op '" + op_name +
                                                 "' (eq, ne, gt, gte, lt, lte, in, contains, contains_any, exists, prefix)");
  }
  rule.op = *parsed;
  const json::value* value = obj.if_contains("value");
  switch (rule.op) {
    case RuleOp::kExists:
      if (value && !value->is_bool()) return Status::Validation(field + ".value", "must be a boolean for exists");
      rule.value = value ? *value : json::value(true);
      break;
    case RuleOp::kIn:
    case RuleOp::kContainsAny:
      if (!value || !value->is_array() || value->get_array().empty()) {
        return Status::Validation(field + ".value", "must be a non-empty array for " + op_name);
      }
      if (value->get_array().size() > 100) return Status::Validation(field + ".value", "more than 100 values");
      rule.value = *value;
      break;
    case RuleOp::kGt:
    case RuleOp::kGte:
    case RuleOp::kLt:
    case RuleOp::kLte:
      if (!value || !(value->is_number() || value->is_string())) {
        return Status::Validation(field + ".value", "must be a number or a string for " + op_name);
      }
      rule.value = *value;
      break;
    case RuleOp::kPrefix:
      if (!value || !value->is_string()) return Status::Validation(field + ".value", "must be a string for prefix");
      rule.value = *value;
      break;
    default:
      if (!value) return Status::Validation(field + ".value", "is required for " + op_name);
      rule.value = *value;
  }
  return rule;
}

}  // namespace

namespace {

// The JSON values in `value`, itself included: each becomes one term of the SQL a list runs.
size_t CountValues(const json::value& value) {
  size_t count = 1;
  if (value.is_array()) {
    for (const auto& item : value.get_array()) count += CountValues(item);
  } else if (value.is_object()) {
    for (const auto& member : value.get_object()) count += CountValues(member.value());
  }
  return count;
}

}  // namespace

Result<std::vector<ContextRule>> ParseContextRules(const json::value& rules, const Limits& limits) {
  std::vector<ContextRule> out;
  if (rules.is_object()) {
    CAIRN_ASSIGN_OR_RETURN(ContextRule rule, ParseRule(rules, "context_match"));
    if (CountValues(rule.value) > kMaxContextRuleValues) {
      return Status::Validation("context_match.value", "more than " + std::to_string(kMaxContextRuleValues) +
                                                           " JSON values to compare");
    }
    out.push_back(std::move(rule));
    return out;
  }
  if (!rules.is_array()) return Status::Validation("context_match", "must be an array of rules");
  if (rules.get_array().size() > limits.max_context_rules) {
    return Status::Validation("context_match", "more than " + std::to_string(limits.max_context_rules) + " rules");
  }
  size_t values = 0;
  for (size_t i = 0; i < rules.get_array().size(); ++i) {
    std::string field = "context_match[" + std::to_string(i) + "]";
    CAIRN_ASSIGN_OR_RETURN(ContextRule rule, ParseRule(rules.get_array()[i], field));
    values += CountValues(rule.value);
    if (values > kMaxContextRuleValues) {
      return Status::Validation(field + ".value", "the rules compare more than " +
                                                      std::to_string(kMaxContextRuleValues) + " JSON values in all");
    }
    out.push_back(std::move(rule));
  }
  return out;
}

}  // namespace cairn::model
