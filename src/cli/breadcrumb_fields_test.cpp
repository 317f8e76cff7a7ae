#include "cli/breadcrumb_fields.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "base/time_format.h"
#include "support/temp_dir.h"

namespace cairn::cli {
namespace {

namespace json = boost::json;

const int64_t kNow = *ParseRfc3339Micros("2030-01-01T00:00:00Z");

ParsedArgs Parse(bool for_update, const std::vector<std::string>& args) {
  auto parsed = ArgParser("x", BreadcrumbFieldOptions(for_update), "ID", 0, 1).Parse(args);
  EXPECT_TRUE(parsed.ok()) << parsed.status().ToString();
  return parsed.ok() ? *parsed : ParsedArgs{};
}

Result<json::object> Create(const std::vector<std::string>& args, const std::string& stdin_text = "") {
  std::istringstream in(stdin_text);
  return BuildCreateBody(Parse(false, args), in, kNow);
}

Result<json::object> Update(const std::vector<std::string>& args, const std::string& stdin_text = "") {
  std::istringstream in(stdin_text);
  return BuildUpdateBody(Parse(true, args), in, kNow);
}

TEST(BuildCreateBodyTest, MapsEveryOption) {
  auto body = Create({"--title", "Buy milk", "--schema", "note.v1", "--description", "d", "--tag", "a", "--tag", "b",
                      "--context", R"({"qty":2})", "--path", "home/todo/1", "--ttl", "1h", "--visibility", "private",
                      "--sensitivity", "pii", "--llm-hints", R"({"exclude":["qty"]})"});
  ASSERT_TRUE(body.ok()) << body.status().ToString();
  EXPECT_EQ(json::value(*body), json::parse(R"({
    "title":"Buy milk","schema_name":"note.v1","description":"d","path":"home/todo/1","visibility":"private",
    "sensitivity":"pii","tags":["a","b"],"context":{"qty":2},"llm_hints":{"exclude":["qty"]},
    "ttl":"2030-01-01T01:00:00.000000Z"})"));
}

TEST(BuildCreateBodyTest, TitleOnlyIsMinimal) {
  auto body = Create({"--title", "t"});
  ASSERT_TRUE(body.ok());
  EXPECT_EQ(json::serialize(*body), R"({"title":"t"})");
}

TEST(BuildCreateBodyTest, TitleIsRequired) {
  auto body = Create({"--tag", "a"});
  ASSERT_FALSE(body.ok());
  EXPECT_EQ(body.status().message(), "--title is required");
}

TEST(BuildCreateBodyTest, ContextFromStdin) {
  auto body = Create({"--title", "t", "--context", "-"}, R"([1, "two", {"three": 3}])");
  ASSERT_TRUE(body.ok()) << body.status().ToString();
  EXPECT_EQ(body->at("context"), json::parse(R"([1,"two",{"three":3}])"));

  auto file_dash = Create({"--title", "t", "--context-file", "-"}, "42");
  ASSERT_TRUE(file_dash.ok());
  EXPECT_EQ(file_dash->at("context"), json::value(42));
}

TEST(BuildCreateBodyTest, ContextFromFile) {
  test_support::TempDir dir("cairn-cli-test");
  const std::string path = dir.Join("ctx.json");
  std::ofstream(path) << R"({"from":"file"})";

  auto body = Create({"--title", "t", "--context-file", path});
  ASSERT_TRUE(body.ok()) << body.status().ToString();
  EXPECT_EQ(body->at("context"), json::parse(R"({"from":"file"})"));

  auto missing = Create({"--title", "t", "--context-file", path + ".missing"});
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("cannot open"), std::string::npos) << missing.status().message();

  std::ofstream(path) << "{not json";
  auto bad = Create({"--title", "t", "--context-file", path});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("--context-file '" + path + "': malformed JSON"), std::string::npos)
      << bad.status().message();
}

TEST(BuildCreateBodyTest, RejectsBadInput) {
  struct Case {
    std::vector<std::string> args;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {{"--title", "t", "--context", "{"}, "--context value: malformed JSON"},
      {{"--title", "t", "--context", "{} x"}, "--context value"},
      {{"--title", "t", "--context", "{}", "--context-file", "f"}, "either --context or --context-file"},
      {{"--title", "t", "--context", "-", "--llm-hints", "-"}, "only one option can read standard input"},
      {{"--title", "t", "--ttl", "soon"}, "--ttl 'soon'"},
      {{"--title", "t", "--llm-hints", "nope"}, "--llm-hints value"},
  };
  for (const auto& c : cases) {
    auto body = Create(c.args);
    ASSERT_FALSE(body.ok()) << c.expected;
    EXPECT_EQ(body.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(body.status().message().find(c.expected), std::string::npos) << body.status().message();
  }
}

TEST(BuildUpdateBodyTest, OnlyGivenFieldsAndClears) {
  auto body = Update({"--title", "new", "--clear", "schema", "--clear", "tags", "--clear", "llm-hints", "--clear", "ttl"});
  ASSERT_TRUE(body.ok()) << body.status().ToString();
  EXPECT_EQ(json::value(*body),
            json::parse(R"({"title":"new","schema_name":null,"tags":[],"llm_hints":null,"ttl":null})"));

  auto tags = Update({"--tag", "x"});
  ASSERT_TRUE(tags.ok());
  EXPECT_EQ(json::serialize(*tags), R"({"tags":["x"]})");
}

TEST(BuildUpdateBodyTest, RejectsNothingContradictionsAndUnknownFields) {
  auto nothing = Update({});
  ASSERT_FALSE(nothing.ok());
  EXPECT_NE(nothing.status().message().find("nothing to update"), std::string::npos);

  auto contradiction = Update({"--path", "a/b", "--clear", "path"});
  ASSERT_FALSE(contradiction.ok());
  EXPECT_NE(contradiction.status().message().find("--clear path contradicts --path"), std::string::npos);

  auto unknown = Update({"--clear", "title"});
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("--clear title: not a field that can be cleared"), std::string::npos);
}

TEST(BreadcrumbFieldOptionsTest, UpdateAndCreateDiffer) {
  auto names = [](bool update) {
    std::vector<std::string> out;
    for (const auto& option : BreadcrumbFieldOptions(update)) out.push_back(option.name);
    return out;
  };
  const auto create = names(false);
  const auto update = names(true);
  EXPECT_NE(std::find(create.begin(), create.end(), "idempotency-key"), create.end());
  EXPECT_EQ(std::find(create.begin(), create.end(), "if-match"), create.end());
  EXPECT_NE(std::find(update.begin(), update.end(), "if-match"), update.end());
  EXPECT_NE(std::find(update.begin(), update.end(), "clear"), update.end());
}

}  // namespace
}  // namespace cairn::cli
