#include "cel/program.h"

#include <gtest/gtest.h>

#include <boost/json.hpp>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

namespace cairn::cel {
namespace {

namespace json = boost::json;

const Declarations kVars = {{"event"}, {"record"}, {"before"}, {"item"}, {"index", Type::kInt}};

Program MustCompile(std::string_view source, const CompileOptions& options = {}) {
  auto program = Program::Compile(source, kVars, options);
  EXPECT_TRUE(program.ok()) << source << ": " << program.status().message();
  return std::move(program).value();
}

TEST(CelProgram, EvaluatesAConditionAgainstBorrowedJson) {
  json::value record = json::parse(R"({"context": {"status": "done", "tags": ["urgent", "x"]}})");
  json::value before = json::parse(R"({"context": {"status": "open"}})");
  Program p = MustCompile("record.context.status == 'done' && before.context.status != 'done' && 'urgent' in record.context.tags");
  Activation activation;
  activation.Bind("record", &record).Bind("before", &before);
  auto matched = p.EvaluateBool(activation);
  ASSERT_TRUE(matched.ok()) << matched.status().message();
  EXPECT_TRUE(*matched);
  before.as_object()["context"].as_object()["status"] = "done";
  Activation second;
  second.Bind("record", &record).Bind("before", &before);
  EXPECT_FALSE(*p.EvaluateBool(second));
}

TEST(CelProgram, TheStringHelpersOfTheStringsExtensionThatPathsNeed) {
  json::value record = json::parse(R"({"path": "projects/p1/tasks/t9", "title": "  Ship It  "})");
  Activation activation;
  activation.Bind("record", &record);
  auto json = MustCompile("[record.path.split('/')[1], record.path.split('/').size(), record.title.trim().lowerAscii(), "
                          "'ab'.upperAscii(), 'a-b-'.split('-'), 'hé'.split('')]")
                  .EvaluateJson(activation);
  ASSERT_TRUE(json.ok()) << json.status().message();
  EXPECT_EQ(*json, json::parse(R"(["p1", 4, "ship it", "AB", ["a", "b", ""], ["h", "é"]])"));
  EXPECT_FALSE(Program::Compile("record.path.split(1)", kVars).ok());
  EXPECT_FALSE(Program::Compile("record.path.trim('x')", kVars).ok());
}

TEST(CelProgram, SelectsThroughJsonAndOwnedMapsAlike) {
  json::value record = json::parse(R"({"a": {"b": {"c": "deep"}, "s": "text", "n": null}})");
  Activation activation;
  activation.Bind("record", &record);
  auto eval = [&](std::string_view source) { return MustCompile(source).Evaluate(activation); };
  EXPECT_EQ(eval("record.a.b.c").text(), "deep");
  EXPECT_EQ(eval("{'x': record.a}.x.b.c").text(), "deep") << "an owned map in the middle of the chain";
  EXPECT_EQ(eval("{'x': {'y': record.a.b}}.x.y.c").text(), "deep");
  EXPECT_TRUE(eval("record.a.s.c").is_error()) << "selecting from a string";
  EXPECT_TRUE(eval("record.a.n.c").is_error()) << "selecting from null";
  EXPECT_TRUE(eval("record.a.missing.c").is_error());
  json::value nested = "end";
  for (int i = 0; i < 40; ++i) {
    json::object wrap;
    wrap["k"] = std::move(nested);
    nested = std::move(wrap);
  }
  json::value holder = json::object{{"root", nested}};
  Activation deep;
  deep.Bind("record", &holder);
  std::string chain = "record.root";
  for (int i = 0; i < 40; ++i) chain += ".k";
  EXPECT_EQ(MustCompile(chain).Evaluate(deep).text(), "end") << "chains longer than one walk";
}

TEST(CelProgram, DeeplyNestedInputJsonNeitherCrashesNorRecursesWithoutBound) {
  json::value deep = json::array{};
  for (int i = 0; i < 5000; ++i) deep = json::array{std::move(deep)};
  json::value copy = deep;
  Activation activation;
  activation.Bind("record", &deep).Bind("before", &copy);
  Value equal = MustCompile("record == before").Evaluate(activation);
  ASSERT_EQ(equal.kind(), Kind::kBool);
  EXPECT_FALSE(equal.bool_value()) << "beyond kMaxValueNesting, lists compare unequal";
  EXPECT_FALSE(MustCompile("record").EvaluateJson(activation).ok());
  // Iterative destruction is Boost.JSON's business; unwind the test's own values without recursion.
  while (deep.is_array() && !deep.as_array().empty()) deep = json::value(std::move(deep.as_array()[0]));
  while (copy.is_array() && !copy.as_array().empty()) copy = json::value(std::move(copy.as_array()[0]));
}

TEST(CelProgram, OneProgramEvaluatesFromManyThreadsAtOnce) {
  Program p = MustCompile("record.tags.exists(t, t == 'urgent') && [1, 2, 3].map(x, x * index).size() == 3 && 'a' + 'b' == 'ab'");
  json::value record = json::parse(R"({"tags": ["x", "urgent"]})");
  std::vector<std::thread> threads;
  std::atomic<int> matched{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      json::value index = t;
      for (int i = 0; i < 500; ++i) {
        Activation activation;
        activation.Bind("record", &record).Bind("index", &index);
        if (*p.EvaluateBool(activation)) ++matched;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(matched.load(), 2000);
}

TEST(CelProgram, ReportsTheVariablesItReferences) {
  Program p = MustCompile("record.a == 1 || [1, 2].exists(record, record == index)");
  EXPECT_EQ(p.referenced_variables(), (std::vector<std::string>{"record", "index"}));
  EXPECT_TRUE(p.References("index"));
  EXPECT_FALSE(p.References("before"));
  // A comprehension variable shadowing a declared name is not a reference to it.
  Program q = MustCompile("[1].all(before, before > 0)");
  EXPECT_TRUE(q.referenced_variables().empty());
}

TEST(CelProgram, LoadsLazyVariablesOnlyWhenReadAndAtMostOnce) {
  Program p = MustCompile("event.kind == 'a' || (before.n + before.n > 1 && before.n < 10)");
  int loads = 0;
  json::value event = json::parse(R"({"kind": "a"})");
  Activation shortcut;
  shortcut.Bind("event", &event).BindLazy("before", [&]() -> Result<json::value> {
    ++loads;
    return json::parse(R"({"n": 3})");
  });
  EXPECT_TRUE(*p.EvaluateBool(shortcut));
  EXPECT_EQ(loads, 0) << "the left operand decided; `before` must not load";

  event.as_object()["kind"] = "b";
  Activation full;
  full.Bind("event", &event).BindLazy("before", [&]() -> Result<json::value> {
    ++loads;
    return json::parse(R"({"n": 3})");
  });
  EXPECT_TRUE(*p.EvaluateBool(full));
  EXPECT_EQ(loads, 1) << "three reads of `before`, one load";
}

TEST(CelProgram, AFailedLoadIsAnEvaluationError) {
  Program p = MustCompile("before.n == 1");
  Activation activation;
  activation.BindLazy("before", []() -> Result<json::value> { return Status::NotFound("no history"); });
  auto result = p.EvaluateBool(activation);
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.status().message().find("no history"), std::string::npos);
}

TEST(CelProgram, CompileErrorsNameTheLineAndColumn) {
  CompileDiagnostic diagnostic;
  auto p = Program::Compile("record.a == 1 &&\n  nope.b", kVars, {}, &diagnostic);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(diagnostic.line, 2);
  EXPECT_EQ(diagnostic.column, 3);
  EXPECT_NE(p.status().message().find("line 2, column 3"), std::string::npos) << p.status().message();
  EXPECT_NE(p.status().message().find("nope"), std::string::npos);
}

TEST(CelProgram, RefusesUnsupportedFeaturesByName) {
  struct Case {
    const char* source;
    const char* mentions;
  };
  for (auto c : {Case{"Msg{a: 1}", "message construction"}, Case{"record.?a", "optional"},
                 Case{"pkg.Type", "qualified names"}, Case{"record.frobnicate()", "unknown function"},
                 Case{"1 + 'a'", "no matching overload"}, Case{"if", "reserved"}}) {
    CompileDiagnostic diagnostic;
    auto p = Program::Compile(c.source, kVars, {}, &diagnostic);
    ASSERT_FALSE(p.ok()) << c.source;
    EXPECT_NE(diagnostic.message.find(c.mentions), std::string::npos) << c.source << ": " << diagnostic.message;
  }
}

TEST(CelProgram, ErrorsAreValuesAndLogicAbsorbsThem) {
  Activation activation;
  json::value record = json::parse(R"({"n": 0})");
  activation.Bind("record", &record);
  EXPECT_TRUE(MustCompile("1 / record.n").Evaluate(activation).is_error());
  EXPECT_TRUE(MustCompile("record.missing").Evaluate(activation).is_error());
  EXPECT_TRUE(MustCompile("9223372036854775807 + record.n + 1").Evaluate(activation).is_error());
  // Commutative short-circuit: a decisive operand wins on either side of an error.
  EXPECT_FALSE(*MustCompile("1 / record.n == 1 && false").EvaluateBool(activation));
  EXPECT_FALSE(*MustCompile("false && 1 / record.n == 1").EvaluateBool(activation));
  EXPECT_TRUE(*MustCompile("record.missing || true").EvaluateBool(activation));
  EXPECT_FALSE(MustCompile("record.missing || false").EvaluateBool(activation).ok());
}

TEST(CelProgram, EvaluateBoolRefusesNonBoolResults) {
  Activation activation;
  auto result = MustCompile("1 + 2").EvaluateBool(activation);
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.status().message().find("int"), std::string::npos);
}

TEST(CelProgram, UnboundDeclaredVariableIsAnEvaluationError) {
  Activation activation;
  EXPECT_TRUE(MustCompile("record").Evaluate(activation).is_error());
}

TEST(CelProgram, ResultsConvertToJson) {
  json::value record = json::parse(R"({"items": [{"id": 1, "done": true}, {"id": 2, "done": false}], "big": 18446744073709551615})");
  Activation activation;
  activation.Bind("record", &record);
  auto as_json = [&](std::string_view source) {
    auto out = MustCompile(source).EvaluateJson(activation);
    EXPECT_TRUE(out.ok()) << source << ": " << out.status().message();
    return out.ok() ? json::serialize(*out) : std::string("<error>");
  };
  EXPECT_EQ(as_json("record.items.filter(i, i.done).map(i, i.id)"), "[1]");
  EXPECT_EQ(as_json("{'a': [1u, 2.5, null], 1: true}"), R"({"a":[1,2.5E0,null],"1":true})");
  EXPECT_EQ(as_json("record.big"), "18446744073709551615");
  EXPECT_EQ(as_json("timestamp('2009-02-13T23:31:30.5+01:00')"), R"("2009-02-13T22:31:30.5Z")");
  EXPECT_EQ(as_json("duration('1m30.5s')"), R"("90.5s")");
  EXPECT_EQ(as_json("b'hi!'"), R"("aGkh")");
  EXPECT_EQ(as_json("record.items[1]"), R"({"id":2,"done":false})");
  EXPECT_FALSE(MustCompile("1.0 / 0.0").EvaluateJson(activation).ok()) << "infinity has no JSON form";
  EXPECT_FALSE(MustCompile("record.nope").EvaluateJson(activation).ok());
}

TEST(CelProgram, JsonNumbersKeepTheirCelTypes) {
  json::value record = json::parse(R"({"i": -3, "u": 18446744073709551615, "d": 1.5})");
  Activation activation;
  activation.Bind("record", &record);
  EXPECT_TRUE(*MustCompile("type(record.i) == int && type(record.u) == uint && type(record.d) == double").EvaluateBool(activation));
  EXPECT_TRUE(*MustCompile("record.i == -3.0 && record.d > record.i").EvaluateBool(activation));
}

TEST(CelProgram, RefusesSourceBeyondTheLengthLimit) {
  CompileOptions options;
  options.limits.max_source_bytes = 10;
  EXPECT_FALSE(Program::Compile("1 + 2 + 3 + 4", kVars, options).ok());
  EXPECT_TRUE(Program::Compile("1 + 2", kVars, options).ok());
}

TEST(CelProgram, RefusesNestingBeyondTheDepthLimitWithoutRecursingIntoIt) {
  std::string deep(5000, '(');
  deep += "1" + std::string(5000, ')');
  auto p = Program::Compile(deep, kVars);
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("nested deeper"), std::string::npos);
  std::string chain = "1";
  for (int i = 0; i < 300; ++i) chain += " + 1";
  EXPECT_FALSE(Program::Compile(chain, kVars).ok()) << "a long left-nested chain is deep too";
  std::string ors = "false";
  for (int i = 0; i < 1000; ++i) ors += " || false";
  EXPECT_TRUE(Program::Compile(ors, kVars).ok()) << "|| chains are balanced, so they stay shallow";
}

TEST(CelProgram, EnforcesTheCostBudget) {
  CompileOptions options;
  options.limits.max_cost = 1000;
  Program p = MustCompile("[1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(a, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(b, "
                          "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(c, a + b + c > 0)))",
                          options);
  Activation activation;
  Value v = p.Evaluate(activation);
  ASSERT_TRUE(v.is_error());
  EXPECT_NE(v.error_message().find("budget"), std::string::npos);
  options.limits.max_cost = 1'000'000;
  Activation again;
  EXPECT_TRUE(*MustCompile(p.source(), options).EvaluateBool(again));
}

TEST(CelProgram, ChargesConcatenationByTheSizeOfItsResult) {
  // Each + copies a list of 1000: a handful of nodes must not buy unbounded copying.
  CompileOptions options;
  options.limits.max_cost = 5000;
  json::value record = json::parse("{}");
  json::array big;
  for (int i = 0; i < 1000; ++i) big.push_back(i);
  record.as_object()["l"] = big;
  Activation activation;
  activation.Bind("record", &record);
  EXPECT_FALSE(MustCompile("record.l + record.l", options).Evaluate(activation).is_error());
  Value v = MustCompile("record.l + record.l + record.l + record.l + record.l", options).Evaluate(activation);
  ASSERT_TRUE(v.is_error());
  EXPECT_NE(v.error_message().find("budget"), std::string::npos);
}

TEST(CelProgram, BoundsTheSizeOfProducedStringsAndLists) {
  CompileOptions options;
  options.limits.max_string_bytes = 8;
  options.limits.max_collection_size = 4;
  Activation activation;
  EXPECT_TRUE(MustCompile("item + item + item", options).Evaluate(activation).is_error()) << "unbound is an error too";
  json::value item = "abcd";
  activation.Bind("item", &item);
  EXPECT_TRUE(MustCompile("item + item", options).Evaluate(activation).kind() == Kind::kString);
  EXPECT_TRUE(MustCompile("item + item + item", options).Evaluate(activation).is_error());
  EXPECT_TRUE(MustCompile("[item, item, item] + [item, item]", options).Evaluate(activation).is_error());
}

TEST(CelProgram, CompilesConstantRegexesOnceAndRefusesBadOnes) {
  EXPECT_FALSE(Program::Compile("item.matches('(')", kVars).ok());
  EXPECT_FALSE(Program::Compile("item.matches('(a{1,1000}){1,1000}')", kVars).ok()) << "program size bound";
  json::value item = "order-1234";
  Activation activation;
  activation.Bind("item", &item);
  EXPECT_TRUE(*MustCompile("item.matches('^order-[0-9]+$')").EvaluateBool(activation));
  // A pattern known only at run time is compiled at evaluation, with the same bounds.
  json::value bad = "(";
  activation.Bind("event", &bad);
  EXPECT_TRUE(MustCompile("item.matches(event)").Evaluate(activation).is_error());
}

TEST(CelProgram, TypeCheckingCanBeTurnedOff) {
  EXPECT_FALSE(Program::Compile("'a' && true", kVars).ok());
  CompileOptions unchecked;
  unchecked.type_check = false;
  auto p = Program::Compile("false && 'a'", kVars, unchecked);
  ASSERT_TRUE(p.ok());
  Activation activation;
  EXPECT_FALSE(*p->EvaluateBool(activation));
  EXPECT_FALSE(Program::Compile("nope", kVars, unchecked).ok()) << "unknown names stay compile errors";
}

TEST(CelProgram, MacrosIterateJsonListsAndMapKeys) {
  json::value record = json::parse(R"({"m": {"a": 1, "b": 2}, "l": [3, 4, 5]})");
  Activation activation;
  activation.Bind("record", &record);
  EXPECT_TRUE(*MustCompile("record.m.all(k, k in ['a', 'b']) && record.m.exists_one(k, record.m[k] == 2)").EvaluateBool(activation));
  EXPECT_TRUE(*MustCompile("record.l.map(x, x > 3, x * 2) == [8, 10] && size(record.l.filter(x, x % 2 == 1)) == 2").EvaluateBool(activation));
  EXPECT_TRUE(*MustCompile("has(record.m.a) && !has(record.m.c)").EvaluateBool(activation));
}

}  // namespace
}  // namespace cairn::cel
