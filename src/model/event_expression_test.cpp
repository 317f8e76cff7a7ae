// Conditions (`when`) and input expressions over events (event_expression.h), and how selectors
// and subscriptions carry them.
#include "model/event_expression.h"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>

#include "model/selector.h"
#include "model/subscription.h"

namespace cairn::model {
namespace {

namespace json = boost::json;

Event TaskEvent(std::string type, std::string_view context, std::optional<std::string_view> before_context = {}) {
  Event e;
  e.seq = 7;
  e.type = std::move(type);
  e.breadcrumb_id = "t1";
  e.version = 3;
  e.schema_name = "task.v1";
  e.title = "Write docs";
  e.tags = {"urgent"};
  e.path = "projects/p1/tasks/t1";
  e.created_by = "alice";
  e.at = 1'795'225'252'000'000;
  e.context = json::parse(context);
  if (before_context) {
    e.before = std::make_shared<const json::value>(json::object{{"id", "t1"}, {"title", "Write docs"},
                                                                {"version", 2}, {"context", json::parse(*before_context)}});
  }
  return e;
}

Selector Parse(std::string_view selector) {
  auto parsed = ParseSelector(json::parse(selector), Limits{});
  EXPECT_TRUE(parsed.ok()) << parsed.status().ToString();
  return parsed.ok() ? *parsed : Selector{};
}

TEST(EventExpressionTest, ATransitionIsToldFromAStateByBefore) {
  Selector became_done = Parse(R"j({"path": "projects/*/tasks/*",
      "when": "record.context.status == 'done' && (before == null || before.context.status != 'done')"})j");
  ASSERT_TRUE(became_done.condition);
  EXPECT_TRUE(became_done.condition->references_before());
  EXPECT_TRUE(Matches(became_done, TaskEvent("breadcrumb.updated", R"({"status": "done"})", R"({"status": "todo"})")));
  EXPECT_FALSE(Matches(became_done, TaskEvent("breadcrumb.updated", R"({"status": "done", "note": 1})", R"({"status": "done"})")));
  EXPECT_FALSE(Matches(became_done, TaskEvent("breadcrumb.updated", R"({"status": "todo"})", R"({"status": "done"})")));
  EXPECT_TRUE(Matches(became_done, TaskEvent("breadcrumb.created", R"({"status": "done"})")));  // before is null
  // The cheap conditions come first: another path never reaches the expression.
  Event elsewhere = TaskEvent("breadcrumb.updated", R"({"status": "done"})", R"({"status": "todo"})");
  elsewhere.path = "projects/p1/notes/n1";
  EXPECT_FALSE(Matches(became_done, elsewhere));
}

TEST(EventExpressionTest, EventAndRecordFieldsAreThereAndADeleteSeesTheRecordAsBefore) {
  auto s = ParseSelector(json::object{{"when",
      "event.type == 'breadcrumb.deleted' && event.actor == 'alice' && event.seq == 7 && "
      "'urgent' in record.tags && record.path.startsWith('projects/') && before.title == record.title && "
      "timestamp(event.timestamp) > timestamp('2026-01-01T00:00:00Z')"}}, Limits{}).value();
  EXPECT_TRUE(Matches(s, TaskEvent("breadcrumb.deleted", R"({"status": "todo"})")));
  EXPECT_FALSE(Matches(s, TaskEvent("breadcrumb.updated", R"({"status": "todo"})", R"({})")));
}

TEST(EventExpressionTest, AnErrorOrANonBoolIsNoMatchAndCounted) {
  uint64_t errors = ExpressionErrors();
  Selector missing = Parse(R"({"when": "record.context.nope == 1"})");
  EXPECT_FALSE(Matches(missing, TaskEvent("breadcrumb.created", R"({})")));
  Selector not_bool = Parse(R"({"when": "record.title"})");
  EXPECT_FALSE(Matches(not_bool, TaskEvent("breadcrumb.created", R"({})")));
  EXPECT_EQ(ExpressionErrors(), errors + 2);
}

TEST(EventExpressionTest, BadExpressionsAreRefusedNamingTheFieldAndPosition) {
  auto bad = ParseSelector(json::parse(R"({"when": "record.context.("})"), Limits{});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().field(), "when");
  EXPECT_NE(bad.status().message().find("column"), std::string::npos) << bad.status().message();
  auto unknown = ParseSelector(json::parse(R"({"when": "task.done"})"), Limits{});
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().field(), "when");
  EXPECT_FALSE(ParseSelector(json::parse(R"({"when": 1})"), Limits{}).ok());
  EXPECT_FALSE(ParseSelector(json::parse(R"({"when": ")" + std::string(5000, 'a') + R"("})"), Limits{}).ok());
  auto query = ParseSelectorQuery({{"when", "record.context.x > ("}}, {}, Limits{});
  ASSERT_FALSE(query.ok());
  EXPECT_EQ(query.status().field(), "when");
}

TEST(EventExpressionTest, SelectorsKeepTheirConditionThroughJson) {
  Selector s = Parse(R"({"schema_name": "task.v1", "when": "record.version > 1"})");
  auto again = ParseSelector(SelectorToJson(s), Limits{});
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, s);
  EXPECT_TRUE(again->condition);
  auto query = ParseSelectorQuery({{"schema_name", "task.v1"}, {"when", "record.version > 1"}}, {}, Limits{});
  ASSERT_TRUE(query.ok());
  EXPECT_EQ(*query, s);
}

TEST(EventExpressionTest, TriggerSubscriptionsMapTheEventToAnInput) {
  json::array entries{json::object{
      {"role", "trigger"}, {"schema_name", "task.v1"}, {"when", "record.context.status == 'done'"},
      {"input", "{'task': record.id, 'project': record.path.split('/')[1], 'was': before.context.status}"}}};
  auto subs = ParseSubscriptions(entries, "s", Limits{});
  ASSERT_TRUE(subs.ok()) << subs.status().ToString();
  ASSERT_TRUE((*subs)[0].input_expression);
  auto input = (*subs)[0].input_expression->Evaluate(TaskEvent("breadcrumb.updated", R"({"status": "done"})", R"({"status": "todo"})"));
  ASSERT_TRUE(input.ok()) << input.status().ToString();
  EXPECT_EQ(*input, json::parse(R"({"task": "t1", "project": "p1", "was": "todo"})"));
  auto again = ParseSubscriptions(json::array{SubscriptionToJson((*subs)[0])}, "s", Limits{});
  ASSERT_TRUE(again.ok());
  EXPECT_EQ((*again)[0], (*subs)[0]);

  auto on_context = ParseSubscriptions(json::parse(R"([{"role": "context", "schema_name": "n.v1", "input": "1"}])"), "s", Limits{});
  ASSERT_FALSE(on_context.ok());
  EXPECT_EQ(on_context.status().field(), "s[0].input");
  auto when_context = ParseSubscriptions(json::parse(R"([{"role": "context", "schema_name": "n.v1", "when": "true"}])"), "s", Limits{});
  ASSERT_FALSE(when_context.ok());
  EXPECT_EQ(when_context.status().field(), "s[0].when");
  auto bad_input = ParseSubscriptions(json::parse(R"([{"role": "trigger", "schema_name": "n.v1", "input": "{"}])"), "s", Limits{});
  ASSERT_FALSE(bad_input.ok());
  EXPECT_EQ(bad_input.status().field(), "s[0].input");
}

}  // namespace
}  // namespace cairn::model
