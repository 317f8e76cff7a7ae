// Subscriptions (subscription.h) and tool definitions (tool_definition.h): parsing, defaults and
// the errors that name the bad part.
#include <gtest/gtest.h>

#include <boost/json/parse.hpp>

#include "model/subscription.h"
#include "model/tool_definition.h"

namespace cairn::model {
namespace {

namespace json = boost::json;

Event MakeEvent(std::string type, std::string schema, json::value context) {
  Event e;
  e.type = std::move(type);
  e.schema_name = std::move(schema);
  e.context = std::move(context);
  return e;
}

TEST(SubscriptionTest, DefaultsAndExplicitFields) {
  auto subs = ParseSubscriptions(json::parse(R"([
      {"schema_name": "user.message.v1"},
      {"schema_name": "browser.page.context.v1", "role": "context"},
      {"any_tags": ["note"], "role": "context", "key": "notes", "fetch": {"method": "recent", "limit": 5}},
      {"schema_name": "x.v1", "role": "context", "fetch": "event_data"},
      {"schema_name": "m.v1", "role": "context", "key": "history", "fetch": "recent", "same_tag_prefix": "session:"}])"),
                                 "selectors", Limits{});
  ASSERT_TRUE(subs.ok()) << subs.status().ToString();
  ASSERT_EQ(subs->size(), 5u);
  EXPECT_EQ((*subs)[4].same_tag_prefix, "session:");
  EXPECT_TRUE((*subs)[0].same_tag_prefix.empty());
  EXPECT_EQ((*subs)[0].role, SubscriptionRole::kTrigger);
  EXPECT_EQ((*subs)[0].key, "user.message.v1");
  EXPECT_EQ((*subs)[1].role, SubscriptionRole::kContext);
  EXPECT_EQ((*subs)[1].fetch, FetchMethod::kLatest);
  EXPECT_EQ((*subs)[1].key, "browser.page.context.v1");
  EXPECT_EQ((*subs)[2].fetch, FetchMethod::kRecent);
  EXPECT_EQ((*subs)[2].limit, 5u);
  EXPECT_EQ((*subs)[2].key, "notes");
  EXPECT_EQ((*subs)[3].fetch, FetchMethod::kEventData);
  auto again = ParseSubscriptions(json::array{SubscriptionToJson((*subs)[2])}, "s", Limits{});
  ASSERT_TRUE(again.ok());
  EXPECT_EQ((*again)[0], (*subs)[2]);
  auto history = ParseSubscriptions(json::array{SubscriptionToJson((*subs)[4])}, "s", Limits{});
  ASSERT_TRUE(history.ok());
  EXPECT_EQ((*history)[0], (*subs)[4]);
}

TEST(SubscriptionTest, SearchAndVectorFetchesTakeALimitAndReadBack) {
  auto subs = ParseSubscriptions(json::parse(R"([
      {"schema_name": "note.v1", "role": "context", "key": "similar", "fetch": "vector", "limit": 5},
      {"schema_name": "note.v1", "role": "context", "key": "matching", "fetch": {"method": "search", "limit": 3}}])"),
                                 "selectors", Limits{});
  ASSERT_TRUE(subs.ok()) << subs.status().ToString();
  EXPECT_EQ((*subs)[0].fetch, FetchMethod::kVector);
  EXPECT_EQ((*subs)[0].limit, 5u);
  EXPECT_EQ((*subs)[1].fetch, FetchMethod::kSearch);
  EXPECT_EQ((*subs)[1].limit, 3u);
  for (const auto& sub : *subs) {
    EXPECT_EQ(SubscriptionToJson(sub).at("limit"), static_cast<int64_t>(sub.limit));
    auto again = ParseSubscriptions(json::array{SubscriptionToJson(sub)}, "s", Limits{});
    ASSERT_TRUE(again.ok()) << again.status().ToString();
    EXPECT_EQ((*again)[0], sub);
  }
}

TEST(SubscriptionTest, AQueryExpressionComputesTheSearchTextAndReadsBack) {
  auto subs = ParseSubscriptions(json::parse(R"([
      {"schema_name": "note.v1", "role": "context", "key": "similar", "fetch": "vector", "query": "record.context.question"},
      {"schema_name": "note.v1", "role": "context", "key": "matching",
       "fetch": {"method": "search", "limit": 3, "query": "record.title + ' ' + record.context.topic"}}])"),
                                 "selectors", Limits{});
  ASSERT_TRUE(subs.ok()) << subs.status().ToString();
  EXPECT_EQ((*subs)[0].query, "record.context.question");
  ASSERT_NE((*subs)[1].query_expression, nullptr);
  Event trigger;
  trigger.type = "breadcrumb.created";
  trigger.title = "ferry";
  trigger.context = json::parse(R"({"question": "when does it leave?", "topic": "harbour"})");
  EXPECT_EQ((*subs)[0].query_expression->Evaluate(trigger).value(), json::value("when does it leave?"));
  EXPECT_EQ((*subs)[1].query_expression->Evaluate(trigger).value(), json::value("ferry harbour"));
  for (const auto& sub : *subs) {
    EXPECT_EQ(SubscriptionToJson(sub).at("query"), json::value(sub.query));
    auto again = ParseSubscriptions(json::array{SubscriptionToJson(sub)}, "s", Limits{});
    ASSERT_TRUE(again.ok()) << again.status().ToString();
    EXPECT_EQ((*again)[0], sub);
    EXPECT_NE((*again)[0].query_expression, nullptr);
  }
  EXPECT_FALSE(SubscriptionToJson(ParseSubscriptions(json::parse(R"([{"schema_name": "a.v1"}])"), "s", Limits{})->front())
                   .contains("query"));
}

TEST(SubscriptionTest, AKeyTakenFromTheLongestSchemaNameReadsBack) {
  const std::string schema(Limits{}.max_schema_name_bytes, 's');
  auto subs = ParseSubscriptions(json::parse(R"([{"schema_name":")" + schema + R"(","role":"context"}])"), "s", Limits{});
  ASSERT_TRUE(subs.ok()) << subs.status().ToString();
  EXPECT_EQ((*subs)[0].key, schema);
  auto again = ParseSubscriptions(json::array{SubscriptionToJson((*subs)[0])}, "s", Limits{});
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ((*again)[0], (*subs)[0]);
  auto too_long = ParseSubscriptions(
      json::parse(R"([{"schema_name":"x.v1","key":")" + std::string(kMaxSubscriptionKeyBytes + 1, 'k') + R"("}])"), "s",
      Limits{});
  EXPECT_EQ(too_long.status().code(), StatusCode::kValidation);
  auto reserved = ParseSubscriptions(json::parse(R"([{"schema_name":"trigger","role":"context"}])"), "s", Limits{});
  EXPECT_EQ(reserved.status().code(), StatusCode::kValidation);
  EXPECT_EQ(reserved.status().field(), "s[0].key");
}

TEST(SubscriptionTest, BadEntriesNameTheirField) {
  struct Case {
    const char* json;
    const char* field;
  } cases[] = {
      {R"({})", "selectors"},
      {R"([1])", "selectors[0]"},
      {R"([{"schema_name": "a.v1", "role": "both"}])", "selectors[0].role"},
      {R"([{"any_tags": ["x"]}])", "selectors[0].key"},
      {R"([{"schema_name": "a.v1", "key": "trigger"}])", "selectors[0].key"},
      {R"([{"schema_name": "a.v1", "role": "context", "fetch": "semantic"}])", "selectors[0].fetch"},
      {R"([{"schema_name": "a.v1", "role": "context", "fetch": {"method": "vector", "limit": 101}}])",
       "selectors[0].fetch.limit"},
      {R"([{"schema_name": "a.v1", "fetch": "nearest"}])", "selectors[0].fetch"},
      {R"([{"schema_name": "a.v1", "fetch": {"limit": 3}}])", "selectors[0].fetch.method"},
      {R"([{"schema_name": "a.v1", "limit": 0}])", "selectors[0].limit"},
      {R"([{"schema_name": "a.v1", "types": ["breadcrumb.moved"]}])", "selectors[0].types[0]"},
      {R"([{"schema_name": "a.v1", "colour": "red"}])", "selectors[0].colour"},
      {R"([{"schema_name": "a.v1", "same_tag_prefix": "session:"}])", "selectors[0].same_tag_prefix"},
      {R"([{"schema_name": "a.v1", "role": "context", "same_tag_prefix": ""}])", "selectors[0].same_tag_prefix"},
      {R"([{"schema_name": "a.v1", "role": "context"}, {"schema_name": "a.v1", "role": "context"}])",
       "selectors[1].key"},
      {R"([{"schema_name": "a.v1", "priority": 1001}])", "selectors[0].priority"},
      {R"([{"schema_name": "a.v1", "priority": 1.5}])", "selectors[0].priority"},
      {R"([{"schema_name": "a.v1", "priority": "high"}])", "selectors[0].priority"},
      {R"([{"schema_name": "a.v1", "comment": 7}])", "selectors[0].comment"},
      // query: a CEL string, for context selectors fetching by search or vector only.
      {R"([{"schema_name": "a.v1", "role": "context", "fetch": "vector", "query": 7}])", "selectors[0].query"},
      {R"([{"schema_name": "a.v1", "role": "context", "fetch": "vector", "query": "record.("}])", "selectors[0].query"},
      {R"([{"schema_name": "a.v1", "role": "context", "fetch": {"method": "search", "query": "1 +"}}])",
       "selectors[0].fetch.query"},
      {R"([{"schema_name": "a.v1", "role": "context", "fetch": "recent", "query": "record.title"}])", "selectors[0].query"},
      {R"([{"schema_name": "a.v1", "role": "context", "query": "record.title"}])", "selectors[0].query"},
      {R"([{"schema_name": "a.v1", "fetch": "vector", "query": "record.title"}])", "selectors[0].query"},
  };
  for (const auto& c : cases) {
    auto parsed = ParseSubscriptions(json::parse(c.json), "selectors", Limits{});
    ASSERT_FALSE(parsed.ok()) << c.json;
    EXPECT_EQ(parsed.status().code(), StatusCode::kValidation) << c.json;
    EXPECT_EQ(parsed.status().field(), c.field) << c.json << " -> " << parsed.status().message();
  }
}

TEST(SubscriptionTest, CommentAndPriorityAreKeptAndReadBack) {
  auto subs = ParseSubscriptions(
      json::parse(R"([{"schema_name": "a.v1", "comment": "the page the user is on", "priority": -5}])"), "s", Limits{});
  ASSERT_TRUE(subs.ok()) << subs.status().ToString();
  EXPECT_EQ((*subs)[0].comment, "the page the user is on");
  EXPECT_EQ((*subs)[0].priority, -5);
  auto again = ParseSubscriptions(json::array{SubscriptionToJson((*subs)[0])}, "s", Limits{});
  ASSERT_TRUE(again.ok());
  EXPECT_EQ((*again)[0], (*subs)[0]);
  EXPECT_FALSE(SubscriptionToJson(Subscription{}).contains("priority")) << "the default is not written out";
}

TEST(SubscriptionTest, TriggersIgnoreDeletionsUnlessAsked) {
  auto subs = ParseSubscriptions(
      json::parse(R"([{"schema_name": "a.v1"}, {"schema_name": "a.v1", "types": ["breadcrumb.deleted"]},
                      {"schema_name": "a.v1", "role": "context", "key": "c"}])"),
      "s", Limits{});
  ASSERT_TRUE(subs.ok());
  EXPECT_TRUE(TriggerMatches((*subs)[0], MakeEvent("breadcrumb.created", "a.v1", json::object{})));
  EXPECT_TRUE(TriggerMatches((*subs)[0], MakeEvent("breadcrumb.updated", "a.v1", json::object{})));
  EXPECT_FALSE(TriggerMatches((*subs)[0], MakeEvent("breadcrumb.deleted", "a.v1", json::object{})));
  EXPECT_FALSE(TriggerMatches((*subs)[0], MakeEvent("breadcrumb.created", "b.v1", json::object{})));
  EXPECT_TRUE(TriggerMatches((*subs)[1], MakeEvent("breadcrumb.deleted", "a.v1", json::object{})));
  EXPECT_FALSE(TriggerMatches((*subs)[2], MakeEvent("breadcrumb.created", "a.v1", json::object{})));
}

TEST(ToolDefinitionTest, MinimalProcessToolGetsDefaults) {
  auto def = ParseToolDefinition(json::parse(R"({"name": "wc", "runtime": "process", "command": ["wc", "-c"]})"),
                                 Limits{});
  ASSERT_TRUE(def.ok()) << def.status().ToString();
  EXPECT_EQ(def->timeout_ms, 30000);
  EXPECT_EQ(def->concurrency, 4);
  EXPECT_EQ(def->input_schema, json::parse(R"({"type":"object"})"));
  ASSERT_EQ(def->subscriptions.size(), 1u);
  const Subscription& trigger = def->subscriptions[0];
  EXPECT_TRUE(TriggerMatches(trigger, MakeEvent("breadcrumb.created", "tool.request.v1", json::parse(R"({"tool":"wc"})"))));
  EXPECT_FALSE(TriggerMatches(trigger, MakeEvent("breadcrumb.created", "tool.request.v1", json::parse(R"({"tool":"ls"})"))));
  EXPECT_FALSE(TriggerMatches(trigger, MakeEvent("breadcrumb.updated", "tool.request.v1", json::parse(R"({"tool":"wc"})"))));
  EXPECT_EQ(ToolPath("wc"), "tools/wc");
}

TEST(ToolDefinitionTest, BuiltinDefaultsToItsName) {
  auto def = ParseToolDefinition(json::parse(R"({"name": "echo", "runtime": "builtin"})"), Limits{});
  ASSERT_TRUE(def.ok());
  EXPECT_EQ(def->builtin, "echo");
}

TEST(ToolDefinitionTest, MistakesAreNamed) {
  struct Case {
    const char* json;
    const char* field;
  } cases[] = {
      {R"([])", "context"},
      {R"({"runtime": "builtin"})", "context.name"},
      {R"({"name": "a b", "runtime": "builtin"})", "context.name"},
      {R"({"name": "t"})", "context.runtime"},
      {R"({"name": "t", "runtime": "lambda"})", "context.runtime"},
      {R"({"name": "t", "runtime": "process"})", "context.command"},
      {R"({"name": "t", "runtime": "process", "command": []})", "context.command"},
      {R"({"name": "t", "runtime": "http"})", "context.url"},
      {R"({"name": "t", "runtime": "http", "url": "ftp://x"})", "context.url"},
      {R"({"name": "t", "runtime": "builtin", "command": ["ls"]})", "context.command"},
      {R"({"name": "t", "runtime": "builtin", "timeout_ms": 0})", "context.timeout_ms"},
      {R"({"name": "t", "runtime": "builtin", "concurrency": 65})", "context.concurrency"},
      {R"({"name": "t", "runtime": "builtin", "input_schema": {"type": "strng"}})", "context.input_schema.type"},
      {R"({"name": "t", "runtime": "builtin", "subscriptions": {"selectors": [{"schema_name": "a.v1", "role": "context"}]}})",
       "context.subscriptions.selectors"},
      {R"({"name": "t", "runtime": "builtin", "subscriptions": {"selectors": [{"schema_name": "a.v1", "fetch": "nearest"}]}})",
       "context.subscriptions.selectors[0].fetch"},
      {R"({"name": "t", "runtime": "builtin", "colour": 1})", "context.colour"},
  };
  for (const auto& c : cases) {
    auto parsed = ParseToolDefinition(json::parse(c.json), Limits{});
    ASSERT_FALSE(parsed.ok()) << c.json;
    EXPECT_EQ(parsed.status().code(), StatusCode::kValidation) << c.json;
    EXPECT_EQ(parsed.status().field(), c.field) << c.json << " -> " << parsed.status().message();
  }
}

TEST(ToolDefinitionTest, RequestsAreChecked) {
  EXPECT_TRUE(ValidateToolRequest(json::parse(R"({"tool": "echo", "input": {"a": 1}})")).ok());
  EXPECT_TRUE(ValidateToolRequest(json::parse(R"({"tool": "nope"})")).ok());  // unknown tools are answered, not refused
  EXPECT_EQ(ValidateToolRequest(json::parse(R"({"input": {}})")).field(), "context.tool");
  EXPECT_EQ(ValidateToolRequest(json::parse(R"({"tool": 3})")).field(), "context.tool");
  EXPECT_EQ(ValidateToolRequest(json::parse(R"({"tool": "echo", "request_id": ""})")).field(), "context.request_id");
  EXPECT_EQ(ValidateToolRequest(json::parse(R"({"tool": "echo", "extra": 1})")).field(), "context.extra");
}

}  // namespace
}  // namespace cairn::model
