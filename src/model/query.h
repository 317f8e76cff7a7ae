// BreadcrumbQuery: what GET /breadcrumbs (and later selectors) can ask of the store.
#pragma once

#include <boost/json/value.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "model/access.h"
#include "model/limits.h"

namespace cairn::model {

enum class RuleOp { kEq, kNe, kGt, kGte, kLt, kLte, kIn, kContains, kContainsAny, kExists, kPrefix };

// One condition on a nested value of `context`, e.g. {"path":"$.a.b[0]","op":"gte","value":3}.
struct ContextRule {
  std::string path;  // validated JSON path: "$" then ".name" or "[index]" steps
  RuleOp op = RuleOp::kEq;
  boost::json::value value;  // for kExists: a boolean (default true); for kPrefix: a string

  bool operator==(const ContextRule&) const = default;  // value compared as boost::json does (1 != 1.0)
};

enum class SortOrder { kNewestFirst, kOldestFirst };

struct BreadcrumbQuery {
  std::optional<std::string> schema_name;
  std::vector<std::string> all_tags;  // every one must be present (`tag` and `all_tags`)
  std::vector<std::string> any_tags;  // at least one must be present
  std::optional<std::string> path;    // exact
  std::optional<std::string> path_prefix;  // whole segments: "a/b" matches "a/b" and "a/b/c", not "a/bc"
  std::vector<ContextRule> context_match;  // all must hold
  SortOrder order = SortOrder::kNewestFirst;
  size_t limit = 50;
  std::optional<std::string> cursor;  // opaque, from a previous page's next_cursor
  bool include_context = false;
  // Whose read rights limit the results (model/access.h); absent: every record of the owner.
  std::optional<AccessScope> reader = std::nullopt;
  // Leaves out records of sensitivity `secret` (context for an agent not allowed them).
  bool exclude_secret = false;
  std::optional<std::string> created_by = std::nullopt;  // exact: only records this actor created
};

std::optional<RuleOp> ParseRuleOp(std::string_view name);
// The wire name of an op ("eq", "contains_any", ...); ParseRuleOp(RuleOpName(op)) == op.
std::string_view RuleOpName(RuleOp op);

// Validates a JSON path like "$.a.b[0]": names are [A-Za-z0-9_-]+, indices are decimal.
Status ValidateJsonPath(const std::string& field, const std::string& path);

// Most JSON values (each element and member, nested ones included) the rules of one query may
// compare: each becomes a term of one SQL expression, which SQLite bounds (a depth of 1,000).
inline constexpr size_t kMaxContextRuleValues = 256;

// Parses `context_match`: an array of rule objects (or one rule object). Errors name the rule
// ("context_match[1].op") and the problem. The rules' values hold at most kMaxContextRuleValues
// JSON values in all.
Result<std::vector<ContextRule>> ParseContextRules(const boost::json::value& rules, const Limits& limits);

}  // namespace cairn::model
