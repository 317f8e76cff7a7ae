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

// --- QueryReader ---

void ExpectBadParameter(const Status& status, const std::string& field) {
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << status.ToString();
  EXPECT_EQ(status.field(), field) << status.ToString();
}

TEST(QueryReaderTest, RefusesUnknownAndRepeatedSingleValuedParametersByName) {
  const QueryParams ok = {{"limit", "5"}, {"tag", "a"}, {"tag", "b"}};
  EXPECT_TRUE(QueryReader::Open(ok, {"limit", "cursor"}, {"tag"}).ok());
  ExpectBadParameter(QueryReader::Open({{"colour", "red"}}, {"limit"}).status(), "colour");
  ExpectBadParameter(QueryReader::Open({{"limit", "1"}, {"cursor", "c"}, {"limit", "1"}}, {"limit", "cursor"}).status(),
                     "limit");  // even with the same value twice
  ExpectBadParameter(QueryReader::Open({{"limit", "1"}}, {}).status(), "limit");
  // The message says what the route takes.
  auto unknown = QueryReader::Open({{"curser", "x"}}, {"limit", "cursor"}, {"tag"});
  EXPECT_NE(unknown.status().message().find("limit, cursor, tag"), std::string::npos) << unknown.status().ToString();
  EXPECT_NE(QueryReader::Open({{"x", "1"}}, {}).status().message().find("takes none"), std::string::npos);

  HttpRequest none;
  EXPECT_TRUE(NoQueryParameters(none).ok());
  none.query = {{"", ""}};  // "?" followed by "&" or "=": still a parameter, named ""
  ExpectBadParameter(NoQueryParameters(none), "");
}

TEST(QueryReaderTest, TypedValues) {
  const QueryParams params = {{"name", "x"},      {"empty", ""},     {"order", "asc"},  {"flag", "true"},
                              {"off", "false"},   {"n", "42"},       {"limit", "7"},    {"cursor", "abc123"},
                              {"id", "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"}};
  auto q = QueryReader::Open(params, {"name", "empty", "order", "flag", "off", "n", "limit", "cursor", "id"});
  ASSERT_TRUE(q.ok()) << q.status().ToString();
  EXPECT_EQ(*q->Text("name").value(), "x");
  EXPECT_FALSE(q->Text("absent").value().has_value());
  ExpectBadParameter(q->Text("empty").status(), "empty");
  EXPECT_EQ(*q->OneOf("order", {"asc", "desc"}).value(), "asc");
  ExpectBadParameter(q->OneOf("name", {"asc", "desc"}).status(), "name");
  EXPECT_TRUE(*q->Bool("flag").value());
  EXPECT_FALSE(*q->Bool("off").value());
  ExpectBadParameter(q->Bool("name").status(), "name");
  EXPECT_EQ(*q->Integer("n", 0, 100).value(), 42);
  ExpectBadParameter(q->Integer("n", 0, 41).status(), "n");
  EXPECT_EQ(q->Limit(50, 1000).value(), 7u);
  EXPECT_EQ(*q->Cursor("cursor").value(), "abc123");
  EXPECT_EQ(*q->Uuid("id").value(), "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b");
  ExpectBadParameter(q->Uuid("cursor").status(), "cursor");
  EXPECT_EQ(QueryReader::Open({}, {"limit"})->Limit(50, 1000).value(), 50u);
}

TEST(QueryReaderTest, MalformedNumbersLimitsAndCursorsAreRefused) {
  for (const char* bad : {"0", "1001", "-1", "+5", " 5", "5 ", "ten", "", "5x", "0x10", "1e3", "99999999999999999999"}) {
    const QueryParams params = {{"limit", bad}};
    ExpectBadParameter(QueryReader::Open(params, {"limit"})->Limit(50, 1000).status(), "limit");
  }
  for (std::string bad : {std::string(), std::string(257, 'c'), std::string("a b"), std::string("\x01"),
                          std::string("caf\xC3\xA9")}) {
    const QueryParams params = {{"cursor", bad}};
    ExpectBadParameter(QueryReader::Open(params, {"cursor"})->Cursor("cursor").status(), "cursor");
  }
}

TEST(QueryReaderTest, ValidationFromSharedValidatorsBecomesABadParameter) {
  Status converted = AsParameterError(Status::Validation("types[1]", "unknown type"));
  EXPECT_EQ(converted.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(converted.field(), "types[1]");
  EXPECT_EQ(converted.message(), "types[1]: unknown type");
  EXPECT_EQ(AsParameterError(Status::NotFound("x")).code(), StatusCode::kNotFound);
  EXPECT_TRUE(AsParameterError(Status::Ok()).ok());
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
    // The field names the parameter (or, for a context rule, its part).
    EXPECT_EQ(query.status().field().substr(0, param.first.size()), param.first) << query.status().ToString();
  }
}

}  // namespace
}  // namespace cairn::server
