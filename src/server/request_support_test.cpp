#include "server/request_support.h"

#include <gtest/gtest.h>

namespace cairn::server {
namespace {

HttpRequest WithHeader(std::string name, std::string value) {
  HttpRequest request;
  request.headers.emplace_back(std::move(name), std::move(value));
  return request;
}

HttpRequest WithQuery(std::vector<std::pair<std::string, std::string>> query) {
  HttpRequest request;
  request.query = std::move(query);
  return request;
}

TEST(ParseJsonBodyTest, RequiresJsonContentType) {
  HttpRequest request = WithHeader("content-type", "text/plain");
  request.body = "{}";
  EXPECT_EQ(ParseJsonBody(request, {}).status().code(), StatusCode::kUnsupportedMediaType);
  request.headers.clear();
  EXPECT_EQ(ParseJsonBody(request, {}).status().code(), StatusCode::kUnsupportedMediaType);
}

TEST(ParseJsonBodyTest, AcceptsCharsetParameterAndAnyCase) {
  HttpRequest request = WithHeader("content-type", "Application/JSON; charset=utf-8");
  request.body = R"({"a":1})";
  auto parsed = ParseJsonBody(request, {});
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->at("a").as_int64(), 1);
}

TEST(ParseJsonBodyTest, RejectsEmptyMalformedAndTooDeepBodies) {
  HttpRequest request = WithHeader("content-type", "application/json");
  EXPECT_EQ(ParseJsonBody(request, {}).status().code(), StatusCode::kInvalidArgument);
  request.body = "{\"a\":";
  EXPECT_EQ(ParseJsonBody(request, {}).status().code(), StatusCode::kInvalidArgument);
  model::Limits limits;
  limits.max_json_depth = 3;
  request.body = "[[[[1]]]]";
  EXPECT_EQ(ParseJsonBody(request, limits).status().code(), StatusCode::kInvalidArgument);
}

TEST(WriteContextTest, ActorDefaultsToAnonymousAndIsValidated) {
  EXPECT_EQ(WriteContextFrom(HttpRequest{})->actor, "anonymous");
  EXPECT_EQ(WriteContextFrom(WithHeader("x-cairn-actor", "agent:7"))->actor, "agent:7");
  EXPECT_FALSE(WriteContextFrom(WithHeader("x-cairn-actor", std::string(129, 'a'))).ok());
  EXPECT_FALSE(WriteContextFrom(WithHeader("x-cairn-actor", "bad\x01")).ok());
}

TEST(IfMatchTest, AcceptsBareQuotedAndWeakVersions) {
  EXPECT_FALSE(ParseIfMatch(HttpRequest{})->has_value());
  EXPECT_EQ(**ParseIfMatch(WithHeader("if-match", "3")), 3);
  EXPECT_EQ(**ParseIfMatch(WithHeader("if-match", "\"4\"")), 4);
  EXPECT_EQ(**ParseIfMatch(WithHeader("if-match", "W/\"5\"")), 5);
  EXPECT_FALSE(ParseIfMatch(WithHeader("if-match", "*"))->has_value());
  for (const char* bad : {"", "abc", "\"\"", "0", "-1", "3x", "**"}) {
    EXPECT_EQ(ParseIfMatch(WithHeader("if-match", bad)).status().code(), StatusCode::kInvalidArgument) << bad;
  }
}

TEST(ListQueryTest, ParsesEveryParameter) {
  auto query = ParseListQuery(WithQuery({{"schema_name", "note.v1"},
                                         {"tag", "a"},
                                         {"tag", "b"},
                                         {"all_tags", "c,d"},
                                         {"any_tags", "x,y"},
                                         {"path_prefix", "users/u1"},
                                         {"context_match", R"([{"path":"$.n","op":"gt","value":1}])"},
                                         {"order", "asc"},
                                         {"limit", "10"},
                                         {"include_context", "true"}}),
                              {});
  ASSERT_TRUE(query.ok()) << query.status().ToString();
  EXPECT_EQ(query->schema_name, "note.v1");
  EXPECT_EQ(query->all_tags, (std::vector<std::string>{"a", "b", "c", "d"}));
  EXPECT_EQ(query->any_tags, (std::vector<std::string>{"x", "y"}));
  EXPECT_EQ(query->path_prefix, "users/u1");
  ASSERT_EQ(query->context_match.size(), 1u);
  EXPECT_EQ(query->context_match[0].op, model::RuleOp::kGt);
  EXPECT_EQ(query->order, model::SortOrder::kOldestFirst);
  EXPECT_EQ(query->limit, 10u);
  EXPECT_TRUE(query->include_context);
}

TEST(ListQueryTest, RejectsRepeatedParametersExceptTag) {
  EXPECT_EQ(ParseListQuery(WithQuery({{"limit", "1"}, {"limit", "2"}}), {}).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_TRUE(ParseListQuery(WithQuery({{"tag", "a"}, {"tag", "b"}}), {}).ok());
}

TEST(ListQueryTest, DefaultsAreNewestFirstFiftyWithoutContext) {
  auto query = ParseListQuery(HttpRequest{}, {});
  ASSERT_TRUE(query.ok());
  EXPECT_EQ(query->limit, 50u);
  EXPECT_EQ(query->order, model::SortOrder::kNewestFirst);
  EXPECT_FALSE(query->include_context);
}

TEST(ListQueryTest, RejectsBadParametersAsBadRequest) {
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"limit", "0"},          {"limit", "1001"},         {"limit", "ten"},  {"order", "up"},
      {"include_context", "1"}, {"context_match", "{"},   {"context_match", R"({"path":"a","op":"eq","value":1})"},
      {"cursor", ""},          {"schema_name", "bad name"}, {"path", "/abs"}, {"colour", "red"},
      {"tag", ""},             {"any_tags", ""},          {"all_tags", "a,,b"}};
  for (const auto& param : bad) {
    auto query = ParseListQuery(WithQuery({param}), {});
    EXPECT_EQ(query.status().code(), StatusCode::kInvalidArgument) << param.first << "=" << param.second;
  }
}

}  // namespace
}  // namespace cairn::server
