#include "model/selector.h"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <cstdint>
#include <limits>
#include <string>

#include "model/context_rule_eval.h"

namespace cairn::model {
namespace {

namespace json = boost::json;

Event SampleEvent() {
  Event e;
  e.seq = 7;
  e.type = "breadcrumb.updated";
  e.breadcrumb_id = "b1";
  e.version = 2;
  e.schema_name = "note.v1";
  e.title = "t";
  e.tags = {"a", "b"};
  e.path = "users/u1/chats/c1";
  e.owner_id = "o";
  e.created_by = "u";
  e.context = json::parse(R"({"n":5, "f":2.5, "one":1, "onef":1.0, "ones":"1", "t":true, "z":null,
      "s":"hello/world", "pct":"50%_off", "list":["k", 1, {"x":[1,2]}], "pq":{"p":1,"q":2},
      "obj":{"a":{"b":[10, 20, {"c":"deep"}]}}, "big":9007199254740993})");
  return e;
}

Result<Selector> Parse(std::string_view text, const Limits& limits = {}) {
  return ParseSelector(json::parse(text), limits);
}

// Every op, matching and not, on SampleEvent(). `rule` is one context_match rule.
TEST(SelectorMatchTest, ContextRules) {
  const std::pair<const char*, bool> cases[] = {
      // eq: numbers by value, no coercion across kinds, structures by value.
      {R"({"path":"$.n","op":"eq","value":5})", true},
      {R"({"path":"$.n","value":5.0})", true},
      {R"({"path":"$.onef","value":1})", true},
      {R"({"path":"$.n","value":6})", false},
      {R"({"path":"$.one","value":"1"})", false},
      {R"({"path":"$.ones","value":"1"})", true},
      {R"({"path":"$.ones","value":1})", false},
      {R"({"path":"$.t","value":true})", true},
      {R"({"path":"$.t","value":1})", false},
      {R"({"path":"$.one","value":true})", false},
      {R"({"path":"$.z","value":null})", true},
      {R"({"path":"$.missing","value":null})", false},
      {R"({"path":"$.pq","value":{"q":2,"p":1.0}})", true},
      {R"({"path":"$.pq","value":{"p":1}})", false},
      {R"({"path":"$.pq","value":{"p":1,"q":2,"r":3}})", false},
      {R"({"path":"$.list[2]","value":{"x":[1,2]}})", true},
      {R"({"path":"$.list[2]","value":{"x":[2,1]}})", false},
      {R"({"path":"$.big","value":9007199254740992.0})", false},  // exact, not via double
      // ne: true on a missing path.
      {R"({"path":"$.n","op":"ne","value":6})", true},
      {R"({"path":"$.n","op":"ne","value":5.0})", false},
      {R"({"path":"$.ones","op":"ne","value":1})", true},
      {R"({"path":"$.missing","op":"ne","value":1})", true},
      // Ordering: numbers with numbers, strings with strings (byte order), else false.
      {R"({"path":"$.n","op":"gt","value":4})", true},
      {R"({"path":"$.n","op":"gt","value":5})", false},
      {R"({"path":"$.f","op":"gt","value":2})", true},
      {R"({"path":"$.big","op":"gt","value":9007199254740992.0})", true},
      {R"({"path":"$.s","op":"gt","value":"a"})", true},
      {R"({"path":"$.n","op":"gt","value":"4"})", false},
      {R"({"path":"$.ones","op":"gt","value":0})", false},
      {R"({"path":"$.missing","op":"gt","value":0})", false},
      {R"({"path":"$.n","op":"gte","value":5.0})", true},
      {R"({"path":"$.n","op":"gte","value":5.5})", false},
      {R"({"path":"$.f","op":"lt","value":3})", true},
      {R"({"path":"$.f","op":"lt","value":2.5})", false},
      {R"({"path":"$.s","op":"lt","value":"z"})", true},
      {R"({"path":"$.t","op":"lt","value":2})", false},
      {R"({"path":"$.one","op":"lte","value":1.0})", true},
      {R"({"path":"$.onef","op":"lte","value":0.5})", false},
      // in / contains / contains_any.
      {R"({"path":"$.n","op":"in","value":[1,5]})", true},
      {R"({"path":"$.n","op":"in","value":["5"]})", false},
      {R"({"path":"$.one","op":"in","value":[1.0]})", true},
      {R"({"path":"$.missing","op":"in","value":[null]})", false},
      {R"({"path":"$.list","op":"contains","value":"k"})", true},
      {R"({"path":"$.list","op":"contains","value":1.0})", true},
      {R"({"path":"$.list","op":"contains","value":{"x":[1,2]}})", true},
      {R"({"path":"$.list","op":"contains","value":"q"})", false},
      {R"({"path":"$.list","op":"contains","value":"1"})", false},
      {R"({"path":"$.s","op":"contains","value":"lo/wo"})", true},
      {R"({"path":"$.s","op":"contains","value":"xyz"})", false},
      {R"({"path":"$.n","op":"contains","value":5})", false},
      {R"({"path":"$.list","op":"contains_any","value":["q","k"]})", true},
      {R"({"path":"$.list","op":"contains_any","value":["q",2]})", false},
      {R"({"path":"$.s","op":"contains_any","value":["nope","world"]})", true},
      // exists: a null value exists.
      {R"({"path":"$.z","op":"exists"})", true},
      {R"({"path":"$.missing","op":"exists"})", false},
      {R"({"path":"$.missing","op":"exists","value":false})", true},
      {R"({"path":"$.n","op":"exists","value":false})", false},
      // prefix: strings only; LIKE wildcards are literal.
      {R"({"path":"$.s","op":"prefix","value":"hello/"})", true},
      {R"({"path":"$.s","op":"prefix","value":""})", true},
      {R"({"path":"$.s","op":"prefix","value":"world"})", false},
      {R"({"path":"$.pct","op":"prefix","value":"50%_"})", true},
      {R"({"path":"$.pct","op":"prefix","value":"5_%"})", false},
      {R"({"path":"$.n","op":"prefix","value":"5"})", false},
      {R"({"path":"$.missing","op":"prefix","value":""})", false},
      // Nested paths and array indices.
      {R"({"path":"$.obj.a.b[0]","value":10})", true},
      {R"({"path":"$.obj.a.b[2].c","value":"deep"})", true},
      {R"({"path":"$.obj.a.b[1]","op":"gt","value":20})", false},
      {R"({"path":"$.obj.a.b[3]","op":"exists"})", false},
      {R"({"path":"$.obj.a[0]","op":"exists"})", false},    // index into an object
      {R"({"path":"$.list.x","op":"exists"})", false},      // name into an array
      {R"({"path":"$[0]","op":"exists"})", false},
      {R"({"path":"$","op":"exists"})", true},
      {R"({"path":"$.list[2].x[1]","value":2})", true},
  };
  Event event = SampleEvent();
  for (const auto& [rule, expected] : cases) {
    auto selector = Parse(std::string(R"({"context_match":[)") + rule + "]}");
    ASSERT_TRUE(selector.ok()) << rule << ": " << selector.status().ToString();
    EXPECT_EQ(Matches(*selector, event), expected) << rule;
  }
}

TEST(SelectorMatchTest, FieldsOtherThanContext) {
  const std::pair<const char*, bool> cases[] = {
      {"{}", true},
      {R"({"schema_name":"note.v1"})", true},
      {R"({"schema_name":"note.v2"})", false},
      {R"({"any_tags":["x","b"]})", true},
      {R"({"any_tags":["x","y"]})", false},
      {R"({"all_tags":["a","b"]})", true},
      {R"({"all_tags":[]})", true},
      {R"({"all_tags":["a","c"]})", false},
      {R"({"types":["breadcrumb.updated"]})", true},
      {R"({"types":["breadcrumb.created","breadcrumb.deleted"]})", false},
      {R"({"path":"users/u1/chats/c1"})", true},
      {R"({"path":"users/*/chats/*"})", true},
      {R"({"path":"users/**"})", true},
      {R"({"path":"**/c1"})", true},
      {R"({"path":"users/u2/**"})", false},
      {R"({"path":"users/*"})", false},
      {R"({"schema_name":"note.v1","any_tags":["b"],"all_tags":["a"],"path":"users/**/c1",
          "types":["breadcrumb.updated"],"context_match":[{"path":"$.n","value":5},{"path":"$.t","value":true}]})", true},
      {R"({"schema_name":"note.v1","any_tags":["b"],"all_tags":["a"],"path":"users/**/c1",
          "types":["breadcrumb.updated"],"context_match":[{"path":"$.n","value":5},{"path":"$.t","value":false}]})", false},
  };
  Event event = SampleEvent();
  for (const auto& [text, expected] : cases) {
    auto selector = Parse(text);
    ASSERT_TRUE(selector.ok()) << text << ": " << selector.status().ToString();
    EXPECT_EQ(Matches(*selector, event), expected) << text;
  }
}

TEST(SelectorMatchTest, EventWithoutPathOrSchemaOrTags) {
  Event event = SampleEvent();
  event.path.reset();
  event.schema_name.reset();
  event.tags.clear();
  EXPECT_TRUE(Matches(Selector{}, event));
  for (const char* text : {R"({"path":"**"})", R"({"schema_name":"note.v1"})", R"({"any_tags":["a"]})",
                           R"({"all_tags":["a"]})"}) {
    EXPECT_FALSE(Matches(*Parse(text), event)) << text;
  }
}

TEST(SelectorMatchTest, EmptyTypesMeanEveryBreadcrumbEvent) {
  Event event = SampleEvent();
  for (const char* type : {"breadcrumb.created", "breadcrumb.updated", "breadcrumb.deleted"}) {
    event.type = type;
    EXPECT_TRUE(Matches(Selector{}, event)) << type;
  }
  event.type = "ping";
  EXPECT_FALSE(Matches(Selector{}, event));
}

TEST(PathGlobTest, Segments) {
  const std::tuple<const char*, const char*, bool> cases[] = {
      {"a/b", "a/b", true},          {"a/b", "a/b/c", false},       {"a/b", "a", false},
      {"a/*/c", "a/b/c", true},      {"a/*/c", "a/c", false},       {"a/*/c", "a/b/x/c", false},
      {"a/**", "a", true},           {"a/**", "a/b/c", true},       {"a/**", "ab", false},
      {"**/c", "c", true},           {"**/c", "a/b/c", true},       {"**/c", "a/b/cd", false},
      {"a/**/c", "a/c", true},       {"a/**/c", "a/x/c", true},     {"a/**/c", "a/x/y/z/c", true},
      {"a/**/c", "a/x/y/z/d", false}, {"a/**/c", "b/c", false},     {"a/**/c", "a/c/x", false},
      {"**", "x/y", true},           {"**", "", true},              {"*", "x", true},
      {"*", "x/y", false},           {"*", "", false},              {"*/**/*", "a", false},
      {"*/**/*", "a/b", true},       {"a/**/b/**/c", "a/b/x/b/c", true}, {"a/**/b/*", "a/x/b/y/b/z", true},
      {"a/**/b/*", "a/x/b/y/b", false}, {"a/**/b/*", "a/b", false},  {"a*", "a*", true},
  };
  for (const auto& [glob, path, expected] : cases) {
    EXPECT_EQ(PathGlobMatches(glob, path), expected) << glob << " vs " << path;
  }
}

TEST(ContextRuleEvalTest, ExactNumberComparison) {
  auto cmp = [](const json::value& a, const json::value& b) { return CompareJsonNumbers(a, b); };
  constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();
  EXPECT_EQ(cmp(json::value(int64_t{1}), json::value(1.0)), 0);
  EXPECT_EQ(cmp(json::value(int64_t{-3}), json::value(-2.5)), -1);
  EXPECT_EQ(cmp(json::value(-2.5), json::value(int64_t{-3})), 1);
  EXPECT_EQ(cmp(json::value(int64_t{-1}), json::value(uint64_t{0})), -1);
  EXPECT_EQ(cmp(json::value(kMax), json::value(0x1p64)), -1);
  EXPECT_EQ(cmp(json::value(kMax), json::value(int64_t{-1})), 1);
  EXPECT_EQ(cmp(json::value(std::numeric_limits<int64_t>::min()), json::value(-0x1p63)), 0);
  EXPECT_TRUE(JsonEquals(json::parse(R"({"a":[1,{"b":null}],"c":"x"})"), json::parse(R"({"c":"x","a":[1.0,{"b":null}]})")));
  EXPECT_FALSE(JsonEquals(json::parse("[1,2]"), json::parse("[2,1]")));
  EXPECT_FALSE(JsonEquals(json::value(nullptr), json::value(false)));
}

void ExpectBad(const Result<Selector>& result, const std::string& field, std::string_view context) {
  ASSERT_FALSE(result.ok()) << context;
  EXPECT_EQ(result.status().code(), StatusCode::kValidation) << context;
  EXPECT_EQ(result.status().field(), field) << context << ": " << result.status().ToString();
}

TEST(ParseSelectorTest, MalformedSelectorsNameTheBadPart) {
  const std::pair<const char*, const char*> cases[] = {
      {"[]", "selector"},
      {"null", "selector"},
      {R"({"colour":"red"})", "colour"},
      {R"({"schema_name":1})", "schema_name"},
      {R"({"schema_name":null})", "schema_name"},
      {R"({"schema_name":"bad name"})", "schema_name"},
      {R"({"any_tags":"a"})", "any_tags"},
      {R"({"any_tags":[]})", "any_tags"},
      {R"({"any_tags":["a",1]})", "any_tags[1]"},
      {R"({"any_tags":["a",""]})", "any_tags[1]"},
      {R"({"all_tags":{"a":1}})", "all_tags"},
      {R"({"all_tags":[null]})", "all_tags[0]"},
      {R"({"path":1})", "path"},
      {R"({"path":null})", "path"},
      {R"({"path":""})", "path"},
      {R"({"path":"a/*b"})", "path"},
      {R"({"path":"a/b*"})", "path"},
      {R"({"path":"a/***"})", "path"},
      {R"({"path":"a//b"})", "path"},
      {R"({"path":"/a"})", "path"},
      {R"({"path":"a/"})", "path"},
      {R"({"path":"a b"})", "path"},
      {R"({"path":"a?"})", "path"},
      {R"({"context_match":"x"})", "context_match"},
      {R"({"context_match":[{"path":"$.a","value":1},{"path":"$.b","op":"like","value":1}]})", "context_match[1].op"},
      {R"({"context_match":[{"path":"$.a[x]","value":1}]})", "context_match[0].path"},
      {R"({"context_match":[{"path":"a.b","value":1}]})", "context_match[0].path"},
      {R"({"context_match":[{"path":"$.a","op":"prefix","value":1}]})", "context_match[0].value"},
      {R"({"context_match":[{"path":"$.a","op":"in","value":[]}]})", "context_match[0].value"},
      {R"({"types":"breadcrumb.created"})", "types"},
      {R"({"types":[]})", "types"},
      {R"({"types":[1]})", "types[0]"},
      {R"({"types":["breadcrumb.created","ping"]})", "types[1]"},
  };
  for (const auto& [text, field] : cases) ExpectBad(Parse(text), field, text);
  Limits limits;
  limits.max_tags = 2;
  ExpectBad(Parse(R"({"all_tags":["a","b","c"]})", limits), "all_tags", "too many tags");
  EXPECT_TRUE(Parse(R"({"all_tags":["a","b","a"]})", limits).ok());  // duplicates collapse
}

TEST(ParseSelectorTest, RoundTripsThroughJson) {
  const char* text = R"({"schema_name":"note.v1","any_tags":["x","y"],"all_tags":["a"],"path":"a/**/c",
      "context_match":[{"path":"$.n","op":"gte","value":5},{"path":"$.e","op":"exists"},
                       {"path":"$.s","op":"prefix","value":"he"},{"path":"$.o","value":{"k":[1,null]}}],
      "types":["breadcrumb.deleted","breadcrumb.created"]})";
  auto first = Parse(text);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  json::object out = SelectorToJson(*first);
  auto second = ParseSelector(out, {});
  ASSERT_TRUE(second.ok()) << second.status().ToString() << " " << json::serialize(out);
  EXPECT_EQ(*second, *first);
  EXPECT_EQ(out.at("context_match").as_array()[1], json::parse(R"({"path":"$.e","op":"exists","value":true})"));
  EXPECT_TRUE(SelectorToJson(Selector{}).empty());
  EXPECT_EQ(*ParseSelector(SelectorToJson(Selector{}), {}), Selector{});
}

// An ephemeral agent.token as the SSE stream matches it: seq 0, tags, context = its data, no
// schema_name and no path.
Event TokenEvent() {
  Event e;
  e.type = std::string(kAgentTokenEventType);
  e.owner_id = "o";
  e.tags = {"session:s1", "agent:a"};
  e.context = json::parse(R"({"execution_id":"x1","agent_id":"a","delta":"Hel"})");
  return e;
}

TEST(SelectorMatchTest, AgentTokensOnlyWhenTheirTypeIsNamed) {
  const std::pair<const char*, bool> cases[] = {
      {"{}", false},  // empty types: the stored types only
      {R"({"types":["breadcrumb.created","breadcrumb.updated","breadcrumb.deleted"]})", false},
      {R"({"types":["agent.token"]})", true},
      {R"({"types":["breadcrumb.created","agent.token"]})", true},
      {R"({"types":["agent.token"],"any_tags":["x","session:s1"]})", true},
      {R"({"types":["agent.token"],"any_tags":["session:s2"]})", false},
      {R"({"types":["agent.token"],"all_tags":["session:s1","agent:a"]})", true},
      {R"({"types":["agent.token"],"all_tags":["session:s1","agent:b"]})", false},
      {R"({"types":["agent.token"],"context_match":[{"path":"$.agent_id","value":"a"}]})", true},
      {R"({"types":["agent.token"],"context_match":[{"path":"$.delta","op":"prefix","value":"He"}]})", true},
      {R"({"types":["agent.token"],"context_match":[{"path":"$.agent_id","value":"b"}]})", false},
      // An ephemeral event has no schema_name and no path: such conditions never match it.
      {R"({"types":["agent.token"],"schema_name":"agent.token"})", false},
      {R"({"types":["agent.token"],"path":"**"})", false},
  };
  Event token = TokenEvent();
  for (const auto& [text, expected] : cases) {
    auto selector = Parse(text);
    ASSERT_TRUE(selector.ok()) << text << ": " << selector.status().ToString();
    EXPECT_EQ(Matches(*selector, token), expected) << text;
  }
  // And a selector naming only agent.token matches no stored event.
  EXPECT_FALSE(Matches(*Parse(R"({"types":["agent.token"]})"), SampleEvent()));
  EXPECT_TRUE(Matches(*Parse(R"({"types":["breadcrumb.updated","agent.token"]})"), SampleEvent()));
}

TEST(SelectorMatchTest, StoredAndEphemeralSelection) {
  EXPECT_TRUE(SelectsStoredEvents(Selector{}));
  EXPECT_FALSE(SelectsEphemeralEvents(Selector{}));
  EXPECT_FALSE(SelectsStoredEvents(*Parse(R"({"types":["agent.token"]})")));
  EXPECT_TRUE(SelectsEphemeralEvents(*Parse(R"({"types":["agent.token"]})")));
  EXPECT_TRUE(SelectsStoredEvents(*Parse(R"({"types":["breadcrumb.deleted","agent.token"]})")));
  EXPECT_TRUE(SelectsEphemeralEvents(*Parse(R"({"types":["breadcrumb.deleted","agent.token"]})")));
  EXPECT_TRUE(SelectsStoredEvents(*Parse(R"({"types":["breadcrumb.deleted"]})")));
  EXPECT_FALSE(SelectsEphemeralEvents(*Parse(R"({"types":["breadcrumb.deleted"]})")));
  EXPECT_TRUE(IsEphemeralEventType("agent.token"));
  EXPECT_FALSE(IsEphemeralEventType("breadcrumb.created"));
  EXPECT_TRUE(IsStoredEventType("breadcrumb.created"));
  EXPECT_FALSE(IsStoredEventType("agent.token"));
}

TEST(ParseSelectorTest, AcceptsTheAgentTokenType) {
  auto parsed = Parse(R"({"types":["agent.token","breadcrumb.created","agent.token"]})");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->types, (std::vector<std::string>{"agent.token", "breadcrumb.created"}));  // duplicates collapse
  EXPECT_EQ(*ParseSelector(SelectorToJson(*parsed), {}), *parsed);
  ExpectBad(Parse(R"({"types":["agent.tokens"]})"), "types[0]", "agent.tokens");
  ExpectBad(Parse(R"({"types":["agent.*"]})"), "types[0]", "agent.*");
}

using Params = std::vector<std::pair<std::string, std::string>>;

TEST(ParseSelectorQueryTest, AcceptsTheAgentTokenType) {
  auto only = ParseSelectorQuery({{"types", "agent.token"}, {"any_tags", "session:s1"}}, {}, {});
  ASSERT_TRUE(only.ok()) << only.status().ToString();
  EXPECT_EQ(only->types, (std::vector<std::string>{"agent.token"}));
  auto both = ParseSelectorQuery({{"types", "breadcrumb.created,agent.token"}}, {}, {});
  ASSERT_TRUE(both.ok()) << both.status().ToString();
  EXPECT_EQ(both->types, (std::vector<std::string>{"breadcrumb.created", "agent.token"}));
  ExpectBad(ParseSelectorQuery({{"types", "breadcrumb.created,token"}}, {}, {}), "types[1]", "token");
}

TEST(ParseSelectorQueryTest, EveryParameter) {
  Params params = {{"schema_name", "note.v1"}, {"any_tags", "x,b"},  {"tag", "a"},  {"since", "3"},
                   {"tag", "b"},               {"all_tags", "b,a"}, {"path", "users/**"},
                   {"types", "breadcrumb.updated,breadcrumb.created"},
                   {"context_match", R"([{"path":"$.n","op":"gte","value":5}])"}, {"selector_id", "s1"}};
  auto s = ParseSelectorQuery(params, {"since", "selector_id"}, {});
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->schema_name, "note.v1");
  EXPECT_EQ(s->any_tags, (std::vector<std::string>{"x", "b"}));
  EXPECT_EQ(s->all_tags, (std::vector<std::string>{"a", "b"}));  // merged, duplicates collapse
  EXPECT_EQ(s->path, "users/**");
  EXPECT_EQ(s->types, (std::vector<std::string>{"breadcrumb.updated", "breadcrumb.created"}));
  ASSERT_EQ(s->context_match.size(), 1u);
  EXPECT_EQ(s->context_match[0].op, RuleOp::kGte);
  EXPECT_TRUE(Matches(*s, SampleEvent()));
  auto none = ParseSelectorQuery({}, {}, {});
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(*none, Selector{});
}

TEST(ParseSelectorQueryTest, MalformedParametersNameTheBadPart) {
  const std::pair<Params, const char*> cases[] = {
      {{{"colour", "red"}}, "colour"},
      {{{"since", "1"}}, "since"},  // only ignored when the caller says so
      {{{"path", "a"}, {"path", "b"}}, "path"},
      {{{"types", "breadcrumb.created,"}}, "types[1]"},
      {{{"types", ""}}, "types[0]"},
      {{{"types", "breadcrumb.*"}}, "types[0]"},
      {{{"any_tags", "a,,b"}}, "any_tags[1]"},
      {{{"any_tags", ""}}, "any_tags[0]"},
      {{{"tag", ""}}, "tag"},
      {{{"path", "a/*b"}}, "path"},
      {{{"path", ""}}, "path"},
      {{{"context_match", "{"}}, "context_match"},
      {{{"context_match", R"({"path":"$.a","op":"nope","value":1})"}}, "context_match.op"},
      {{{"context_match", R"([{"path":"$.a"},{"path":"$.a.","op":"eq","value":1}])"}}, "context_match[0].value"},
      {{{"schema_name", "bad name"}}, "schema_name"},
  };
  for (const auto& [params, field] : cases) {
    ExpectBad(ParseSelectorQuery(params, {"selector_id"}, {}), field, params[0].first + "=" + params[0].second);
  }
}

}  // namespace
}  // namespace cairn::model
