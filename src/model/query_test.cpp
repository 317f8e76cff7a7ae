#include "model/query.h"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <string>

namespace cairn::model {
namespace {

namespace json = boost::json;

json::value J(std::string_view text) { return json::parse(text); }

Result<std::vector<ContextRule>> Rules(std::string_view text, const Limits& limits = {}) {
  return ParseContextRules(J(text), limits);
}

void ExpectValidation(const Result<std::vector<ContextRule>>& result, const std::string& field,
                      std::string_view context) {
  ASSERT_FALSE(result.ok()) << context;
  EXPECT_EQ(result.status().code(), StatusCode::kValidation) << context;
  EXPECT_EQ(result.status().field(), field) << context << ": " << result.status().ToString();
}

TEST(ParseRuleOpTest, EveryOpByName) {
  const std::pair<const char*, RuleOp> ops[] = {
      {"eq", RuleOp::kEq},   {"ne", RuleOp::kNe},   {"gt", RuleOp::kGt},
      {"gte", RuleOp::kGte}, {"lt", RuleOp::kLt},   {"lte", RuleOp::kLte},
      {"in", RuleOp::kIn},   {"contains", RuleOp::kContains}, {"contains_any", RuleOp::kContainsAny},
      {"exists", RuleOp::kExists}, {"prefix", RuleOp::kPrefix}};
  for (const auto& [name, op] : ops) {
    EXPECT_EQ(ParseRuleOp(name), op) << name;
    EXPECT_EQ(RuleOpName(op), name);
  }
  for (const char* name : {"", "EQ", "equals", "==", "contains-any", "not_exists"}) {
    EXPECT_EQ(ParseRuleOp(name), std::nullopt) << name;
  }
}

TEST(ParseContextRulesTest, EveryOp) {
  auto rules = Rules(R"([
      {"path":"$.a","op":"eq","value":1},
      {"path":"$.a","op":"ne","value":"x"},
      {"path":"$.n","op":"gt","value":1.5},
      {"path":"$.n","op":"gte","value":2},
      {"path":"$.s","op":"lt","value":"m"},
      {"path":"$.n","op":"lte","value":-3},
      {"path":"$.s","op":"in","value":["a","b",1]},
      {"path":"$.tags","op":"contains","value":"x"},
      {"path":"$.tags","op":"contains_any","value":["x","y"]},
      {"path":"$.maybe","op":"exists","value":false},
      {"path":"$.maybe","op":"exists"},
      {"path":"$.obj","op":"eq","value":{"k":[1]}},
      {"path":"$.z","op":"ne","value":null}])");
  ASSERT_TRUE(rules.ok()) << rules.status().ToString();
  ASSERT_EQ(rules->size(), 13u);
  const RuleOp expected[] = {RuleOp::kEq,  RuleOp::kNe, RuleOp::kGt,       RuleOp::kGte,         RuleOp::kLt,
                             RuleOp::kLte, RuleOp::kIn, RuleOp::kContains, RuleOp::kContainsAny, RuleOp::kExists,
                             RuleOp::kExists, RuleOp::kEq, RuleOp::kNe};
  for (size_t i = 0; i < rules->size(); ++i) EXPECT_EQ((*rules)[i].op, expected[i]) << i;
  EXPECT_EQ((*rules)[0].path, "$.a");
  EXPECT_EQ((*rules)[0].value, J("1"));
  EXPECT_EQ((*rules)[2].value, J("1.5"));
  EXPECT_EQ((*rules)[6].value, J(R"(["a","b",1])"));
  EXPECT_EQ((*rules)[9].value, json::value(false));
  EXPECT_EQ((*rules)[10].value, json::value(true));  // exists defaults to true
  EXPECT_EQ((*rules)[11].value, J(R"({"k":[1]})"));
  EXPECT_TRUE((*rules)[12].value.is_null());
}

TEST(ParseContextRulesTest, OpDefaultsToEq) {
  auto rules = Rules(R"([{"path":"$.a","value":"v"}])");
  ASSERT_TRUE(rules.ok()) << rules.status().ToString();
  EXPECT_EQ((*rules)[0].op, RuleOp::kEq);
}

TEST(ParseContextRulesTest, SingleObjectForm) {
  auto rules = Rules(R"({"path":"$.a.b[0]","op":"gte","value":3})");
  ASSERT_TRUE(rules.ok()) << rules.status().ToString();
  ASSERT_EQ(rules->size(), 1u);
  EXPECT_EQ((*rules)[0].path, "$.a.b[0]");
  EXPECT_EQ((*rules)[0].op, RuleOp::kGte);
  EXPECT_EQ((*rules)[0].value, J("3"));
  // Errors in the single form name "context_match" itself.
  ExpectValidation(Rules(R"({"path":"$.a","op":"bogus","value":1})"), "context_match.op", "single bad op");
}

TEST(ParseContextRulesTest, EmptyArrayIsNoRules) {
  auto rules = Rules("[]");
  ASSERT_TRUE(rules.ok());
  EXPECT_TRUE(rules->empty());
}

TEST(ParseContextRulesTest, MalformedRules) {
  const std::pair<const char*, const char*> cases[] = {
      {R"("$.a")", "context_match"},
      {"1", "context_match"},
      {"null", "context_match"},
      {R"([1])", "context_match[0]"},
      {R"([{"path":"$.a","value":1},"x"])", "context_match[1]"},
      {R"([{"path":"$.a","op":"like","value":1}])", "context_match[0].op"},
      {R"([{"path":"$.a","op":"EQ","value":1}])", "context_match[0].op"},
      {R"([{"path":"$.a","op":3,"value":1}])", "context_match[0].op"},
      {R"([{"path":"$.a","op":null,"value":1}])", "context_match[0].op"},
      {R"([{"op":"eq","value":1}])", "context_match[0].path"},
      {R"([{"path":7,"op":"eq","value":1}])", "context_match[0].path"},
      {R"([{"path":null,"op":"eq","value":1}])", "context_match[0].path"},
      {R"([{"path":"a.b","op":"eq","value":1}])", "context_match[0].path"},
      {R"([{"path":"$..x","op":"eq","value":1}])", "context_match[0].path"},
      {R"([{"path":"$.a[x]","op":"eq","value":1}])", "context_match[0].path"},
      {R"([{"path":"","op":"eq","value":1}])", "context_match[0].path"},
      {R"([{"path":"$.a","op":"eq"}])", "context_match[0].value"},
      {R"([{"path":"$.a","op":"ne"}])", "context_match[0].value"},
      {R"([{"path":"$.a","op":"contains"}])", "context_match[0].value"},
      {R"([{"path":"$.a","op":"in","value":"x"}])", "context_match[0].value"},
      {R"([{"path":"$.a","op":"in","value":[]}])", "context_match[0].value"},
      {R"([{"path":"$.a","op":"in"}])", "context_match[0].value"},
      {R"([{"path":"$.a","op":"contains_any","value":{"x":1}}])", "context_match[0].value"},
      {R"([{"path":"$.a","op":"contains_any","value":[]}])", "context_match[0].value"},
      {R"([{"path":"$.a","op":"exists","value":"yes"}])", "context_match[0].value"},
      {R"([{"path":"$.a","op":"exists","value":1}])", "context_match[0].value"},
      {R"([{"path":"$.a","op":"exists","value":null}])", "context_match[0].value"},
      {R"([{"path":"$.a","op":"gt","value":true}])", "context_match[0].value"},
      {R"([{"path":"$.a","op":"lt","value":[1]}])", "context_match[0].value"},
      {R"([{"path":"$.a","op":"lte"}])", "context_match[0].value"},
      {R"([{"path":"$.a","op":"gte","value":null}])", "context_match[0].value"},
      {R"([{"path":"$.a","op":"prefix","value":1}])", "context_match[0].value"},
      {R"([{"path":"$.a","op":"prefix"}])", "context_match[0].value"},
      {R"([{"path":"$.a","op":"prefix","value":["x"]}])", "context_match[0].value"},
      {R"([{"path":"$.a","op":"eq","value":1,"extra":2}])", "context_match[0].extra"},
      {R"([{"path":"$.a","value":1},{"path":"$.b","value":2},{"path":"$.c","op":"??","value":3}])",
       "context_match[2].op"},
  };
  for (const auto& [text, field] : cases) ExpectValidation(Rules(text), field, text);
}

TEST(ParseContextRulesTest, InTakesAtMostHundredValues) {
  std::string values;
  for (int i = 0; i < 100; ++i) values += (i ? "," : "") + std::to_string(i);
  EXPECT_TRUE(Rules(R"([{"path":"$.a","op":"in","value":[)" + values + "]}]").ok());
  ExpectValidation(Rules(R"([{"path":"$.a","op":"in","value":[)" + values + ",100]}]"), "context_match[0].value",
                   "101 values");
}

std::string Zeros(size_t n) {
  std::string out = "[";
  for (size_t i = 0; i < n; ++i) out += i ? ",0" : "0";
  return out + "]";
}

TEST(ParseContextRulesTest, TheRulesCompareAtMostKMaxContextRuleValuesInAll) {
  // An array of n elements is n + 1 values.
  const size_t most = kMaxContextRuleValues - 1;
  EXPECT_TRUE(Rules(R"([{"path":"$.a","value":)" + Zeros(most) + "}]").ok());
  ExpectValidation(Rules(R"([{"path":"$.a","value":)" + Zeros(most + 1) + "}]"), "context_match[0].value",
                   "one value too many");
  ExpectValidation(Rules(R"({"path":"$.a","op":"ne","value":)" + Zeros(most + 1) + "}"), "context_match.value",
                   "single rule form");
  // In all: two rules of half each are too many together.
  const size_t half = kMaxContextRuleValues / 2;
  ExpectValidation(Rules(R"([{"path":"$.a","value":)" + Zeros(half) + R"(},{"path":"$.b","value":)" + Zeros(half) +
                         "}]"),
                   "context_match[1].value", "two rules");
}

TEST(ParseContextRulesTest, MaxRuleCount) {
  Limits limits;
  limits.max_context_rules = 3;
  std::string three = R"([{"path":"$.a","value":1},{"path":"$.b","value":2},{"path":"$.c","value":3}])";
  std::string four = R"([{"path":"$.a","value":1},{"path":"$.b","value":2},{"path":"$.c","value":3},
                         {"path":"$.d","value":4}])";
  EXPECT_TRUE(Rules(three, limits).ok());
  ExpectValidation(Rules(four, limits), "context_match", "four rules");
  // The default limit is 32.
  std::string many = "[";
  for (int i = 0; i < 33; ++i) many += std::string(i ? "," : "") + R"({"path":"$.a","value":1})";
  many += "]";
  ExpectValidation(Rules(many), "context_match", "33 rules");
}

TEST(ValidateJsonPathTest, AcceptsValidPaths) {
  for (const char* path : {"$", "$.a", "$.a.b", "$.a_b-c.D9", "$[0]", "$.a[0]", "$.a[12][3].b", "$.items[123456789]"}) {
    EXPECT_TRUE(ValidateJsonPath("p", path).ok()) << path;
  }
}

TEST(ValidateJsonPathTest, RejectsInvalidPaths) {
  for (const char* path : {"", "a", "a.b", ".a", "$.", "$..x", "$.a.", "$a", "$ .a", "$.a b", "$.a[x]", "$.a[]",
                           "$.a[1", "$.a[-1]", "$.a[1.5]", "$.a[0]b", "$.*", "$['a']", "$.a\"b", "$.a$",
                           "$.a[1234567890]", "@.a", "$.é"}) {
    Status status = ValidateJsonPath("context_match[0].path", path);
    ASSERT_FALSE(status.ok()) << path;
    EXPECT_EQ(status.code(), StatusCode::kValidation) << path;
    EXPECT_EQ(status.field(), "context_match[0].path") << path;
  }
}

TEST(ValidateJsonPathTest, LengthLimit) {
  std::string ok = "$." + std::string(510, 'a');
  EXPECT_TRUE(ValidateJsonPath("p", ok).ok());
  EXPECT_FALSE(ValidateJsonPath("p", ok + "a").ok());
}

}  // namespace
}  // namespace cairn::model
