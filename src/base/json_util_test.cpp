#include "base/json_util.h"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <limits>
#include <utility>
#include <string>

namespace cairn {
namespace {

namespace json = boost::json;

std::string Nested(size_t depth) {  // depth levels of arrays around 1: "[[1]]" for 2
  return std::string(depth, '[') + "1" + std::string(depth, ']');
}

TEST(ParseJsonTest, ParsesWellFormedValues) {
  auto parsed = ParseJson(R"({"a":[1,2,{"b":null}],"c":"x"})", 64);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->at("c").as_string(), "x");
  EXPECT_EQ(parsed->at("a").as_array().size(), 3u);
  EXPECT_TRUE(ParseJson("42", 64).ok());
  EXPECT_TRUE(ParseJson("  \"s\"  ", 64).ok());  // surrounding whitespace is not garbage
}

TEST(ParseJsonTest, RejectsMalformedJson) {
  for (const char* text : {"", "{", "{\"a\":}", "[1,]", "{\"a\":1,}", "{'a':1}", "nul", "// c\n1", "01", "{a:1}"}) {
    auto parsed = ParseJson(text, 64);
    ASSERT_FALSE(parsed.ok()) << text;
    EXPECT_EQ(parsed.status().code(), StatusCode::kInvalidArgument) << text;
  }
}

TEST(ParseJsonTest, RejectsTrailingGarbage) {
  for (const char* text : {"{} x", "1 2", "[1]]", "{}{}", "\"a\"b"}) {
    auto parsed = ParseJson(text, 64);
    ASSERT_FALSE(parsed.ok()) << text;
    EXPECT_EQ(parsed.status().code(), StatusCode::kInvalidArgument) << text;
  }
}

TEST(ParseJsonTest, DepthExactlyAtTheLimitIsAccepted) {
  for (size_t limit : {1u, 2u, 10u, 64u}) {
    auto parsed = ParseJson(Nested(limit), limit);
    ASSERT_TRUE(parsed.ok()) << "limit " << limit << ": " << parsed.status().ToString();
    EXPECT_EQ(JsonDepth(*parsed), limit);
  }
  std::string objects = R"({"a":{"b":{"c":1}}})";  // depth 3
  EXPECT_TRUE(ParseJson(objects, 3).ok());
}

TEST(ParseJsonTest, DepthOneOverTheLimitIsRejected) {
  for (size_t limit : {1u, 2u, 10u, 64u}) {
    auto parsed = ParseJson(Nested(limit + 1), limit);
    ASSERT_FALSE(parsed.ok()) << "limit " << limit;
    EXPECT_EQ(parsed.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(parsed.status().message().find("deeper"), std::string::npos) << parsed.status().message();
  }
  EXPECT_FALSE(ParseJson(R"({"a":{"b":{"c":1}}})", 2).ok());
  EXPECT_FALSE(ParseJson(R"({"a":[{"c":1}]})", 2).ok());
  EXPECT_TRUE(ParseJson("1", 0).ok());  // a scalar has depth 0
  EXPECT_FALSE(ParseJson("[]", 0).ok());
}

TEST(ParseJsonTest, RejectsInvalidUtf8) {
  const std::string cases[] = {
      std::string("\"\xff\""),               // never valid
      std::string("\"\xc3\""),               // truncated 2-byte sequence
      std::string("\"\xc0\xaf\""),           // overlong encoding of '/'
      std::string("\"\xed\xa0\x80\""),       // UTF-16 surrogate encoded in UTF-8
      std::string("{\"k\xfe\":1}"),          // in a key
  };
  for (const auto& text : cases) {
    auto parsed = ParseJson(text, 64);
    ASSERT_FALSE(parsed.ok()) << text;
    EXPECT_EQ(parsed.status().code(), StatusCode::kInvalidArgument);
  }
  auto valid = ParseJson("\"h\xc3\xa9llo \xe2\x82\xac \xf0\x9f\x98\x80\"", 64);  // é € 😀
  ASSERT_TRUE(valid.ok()) << valid.status().ToString();
  EXPECT_EQ(valid->as_string(), "h\xc3\xa9llo \xe2\x82\xac \xf0\x9f\x98\x80");
}

TEST(ParseJsonTest, RejectsNumbersBeyondTheRangeOfADoubleNamingTheirPath) {
  const std::pair<std::string, std::string> cases[] = {
      {"1e400", "$"},
      {"-1e400", "$"},
      {R"({"n":1e400})", "$.n"},
      {R"({"context":{"a":[1,2,-1e309]}})", "$.context.a[2]"},
      {R"({"odd key":{"x y":[0,1E999]}})", R"($["odd key"]["x y"][1])"},
      {"[" + std::string(400, '9') + "]", "$[0]"},  // 400 digits: beyond 1.8e308 too
  };
  for (const auto& [text, path] : cases) {
    auto parsed = ParseJson(text, 64);
    ASSERT_FALSE(parsed.ok()) << text;
    EXPECT_EQ(parsed.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(parsed.status().message().find("number out of range at " + path + ":"), std::string::npos)
        << text << " -> " << parsed.status().message();
  }
}

TEST(ParseJsonTest, AcceptsTheExtremesThatStayFinite) {
  for (const char* text : {"1.7976931348623157e308", "-1.7976931348623157e308", "1e-400", "4.9e-324",
                           "123456789012345678901234567890", "18446744073709551615", "-9223372036854775808"}) {
    auto parsed = ParseJson(text, 64);
    ASSERT_TRUE(parsed.ok()) << text << ": " << parsed.status().ToString();
    // What was accepted serialises to text that parses back to the same value.
    auto again = ParseJson(json::serialize(*parsed), 64);
    ASSERT_TRUE(again.ok()) << text;
    EXPECT_EQ(*again, *parsed) << text;
  }
}

TEST(FindNonFiniteNumberTest, FindsValuesBuiltInCode) {
  json::value clean = json::parse(R"({"a":[1,2.5,{"b":null}],"c":"1e400"})");
  EXPECT_EQ(FindNonFiniteNumber(clean), std::nullopt);
  EXPECT_TRUE(CheckFiniteNumbers(clean, "context").ok());
  json::value built = clean;
  built.as_object()["a"].as_array()[2].as_object()["b"] = std::numeric_limits<double>::infinity();
  EXPECT_EQ(FindNonFiniteNumber(built), "$.a[2].b");
  built.as_object()["a"].as_array()[2].as_object()["b"] = std::numeric_limits<double>::quiet_NaN();
  Status refused = CheckFiniteNumbers(built, "context");
  EXPECT_EQ(refused.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(refused.message(), "context: number out of range at $.a[2].b (JSON numbers must be finite)");
}

TEST(CanonicalJsonTest, KeyOrderDoesNotMatter) {
  json::value a = json::parse(R"({"b":1,"a":2,"c":{"z":true,"y":null}})");
  json::value b = json::parse(R"({"c":{"y":null,"z":true},"a":2,"b":1})");
  EXPECT_EQ(CanonicalJson(a), CanonicalJson(b));
  EXPECT_EQ(CanonicalJson(a), R"({"a":2,"b":1,"c":{"y":null,"z":true}})");
}

TEST(CanonicalJsonTest, SortsNestedObjectsInsideArraysAndKeepsArrayOrder) {
  json::value v = json::parse(R"( [ {"b" : 1, "a" : [3, 2, {"d":1,"c":2}]}, "x" , true ] )");
  EXPECT_EQ(CanonicalJson(v), R"([{"a":[3,2,{"c":2,"d":1}],"b":1},"x",true])");
  // The same double written differently serialises the same way.
  EXPECT_EQ(CanonicalJson(json::parse("[1.5]")), CanonicalJson(json::parse("[1.50]")));
  EXPECT_EQ(CanonicalJson(json::parse("[1.5]")), CanonicalJson(json::parse("[15e-1]")));
  // Arrays are ordered: a different order is a different document.
  EXPECT_NE(CanonicalJson(json::parse("[1,2]")), CanonicalJson(json::parse("[2,1]")));
}

TEST(CanonicalJsonTest, SortsKeysByBytesAndEscapesStrings) {
  json::value v = json::parse(R"({"b":1,"B":2,"a\"q":"line\nnext","":0})");
  EXPECT_EQ(CanonicalJson(v), R"({"":0,"B":2,"a\"q":"line\nnext","b":1})");
}

TEST(CanonicalJsonTest, Scalars) {
  EXPECT_EQ(CanonicalJson(json::value(nullptr)), "null");
  EXPECT_EQ(CanonicalJson(json::value(true)), "true");
  EXPECT_EQ(CanonicalJson(json::value(-7)), "-7");
  EXPECT_EQ(CanonicalJson(json::value("s")), "\"s\"");
  EXPECT_EQ(CanonicalJson(json::object()), "{}");
  EXPECT_EQ(CanonicalJson(json::array()), "[]");
}

TEST(Sha256ChecksumTest, KnownVectors) {
  EXPECT_EQ(Sha256Checksum("abc"), "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(Sha256Checksum(""), "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

TEST(Sha256ChecksumTest, CanonicalContextsHashEqually) {
  std::string a = Sha256Checksum(CanonicalJson(json::parse(R"({"x":1,"y":[1,2]})")));
  std::string b = Sha256Checksum(CanonicalJson(json::parse(R"({"y":[1,2],"x":1})")));
  std::string c = Sha256Checksum(CanonicalJson(json::parse(R"({"y":[2,1],"x":1})")));
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  EXPECT_EQ(a.size(), 7u + 64u);
}

TEST(JsonDepthTest, CountsNesting) {
  EXPECT_EQ(JsonDepth(json::value(1)), 0u);
  EXPECT_EQ(JsonDepth(json::value("s")), 0u);
  EXPECT_EQ(JsonDepth(json::value(nullptr)), 0u);
  EXPECT_EQ(JsonDepth(json::parse("[]")), 1u);
  EXPECT_EQ(JsonDepth(json::parse("{}")), 1u);
  EXPECT_EQ(JsonDepth(json::parse("[[1]]")), 2u);
  EXPECT_EQ(JsonDepth(json::parse(R"({"a":1,"b":{"c":[[]]},"d":[]})")), 4u);  // deepest branch counts
  EXPECT_EQ(JsonDepth(ParseJson(Nested(50), 50).value()), 50u);
}

TEST(JsonKindNameTest, NamesEveryKind) {
  EXPECT_EQ(JsonKindName(json::value(nullptr)), "null");
  EXPECT_EQ(JsonKindName(json::value(false)), "boolean");
  EXPECT_EQ(JsonKindName(json::value(1)), "number");
  EXPECT_EQ(JsonKindName(json::value(1u)), "number");
  EXPECT_EQ(JsonKindName(json::value(1.5)), "number");
  EXPECT_EQ(JsonKindName(json::value("s")), "string");
  EXPECT_EQ(JsonKindName(json::array()), "array");
  EXPECT_EQ(JsonKindName(json::object()), "object");
}

}  // namespace
}  // namespace cairn
