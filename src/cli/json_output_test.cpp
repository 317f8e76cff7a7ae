#include "cli/json_output.h"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>

namespace cairn::cli {
namespace {

namespace json = boost::json;

TEST(JsonOutputTest, PrettyIndentsAndKeepsMemberOrder) {
  const json::value value = json::parse(R"({"id":"x","tags":["a","b"],"context":{"z":1,"a":[{}],"e":[]},"n":null})");
  EXPECT_EQ(PrettyJson(value),
            "{\n"
            "  \"id\": \"x\",\n"
            "  \"tags\": [\n"
            "    \"a\",\n"
            "    \"b\"\n"
            "  ],\n"
            "  \"context\": {\n"
            "    \"z\": 1,\n"
            "    \"a\": [\n"
            "      {}\n"
            "    ],\n"
            "    \"e\": []\n"
            "  },\n"
            "  \"n\": null\n"
            "}");
}

TEST(JsonOutputTest, ScalarsAndEscaping) {
  EXPECT_EQ(PrettyJson(json::parse(R"("a\"b\n\u0001")")), R"("a\"b\n\u0001")");
  EXPECT_EQ(PrettyJson(json::parse("1.5")), "1.5");
  EXPECT_EQ(PrettyJson(json::parse("2.0")), "2.0");
  EXPECT_EQ(PrettyJson(json::parse("-0.001")), "-0.001");
  EXPECT_EQ(PrettyJson(json::parse("1e300")), "1e+300");
  EXPECT_EQ(PrettyJson(json::parse("-7")), "-7");
  EXPECT_EQ(PrettyJson(json::parse("18446744073709551615")), "18446744073709551615");
  EXPECT_EQ(PrettyJson(json::parse("true")), "true");
  EXPECT_EQ(PrettyJson(json::parse(R"({"k\"":"v"})")), "{\n  \"k\\\"\": \"v\"\n}");
}

TEST(JsonOutputTest, CompactIsOneLine) {
  const json::value value = json::parse(R"({"a": [1, 2.5], "b": {"c": "d"}, "e": [], "f": {}})");
  EXPECT_EQ(FormatJson(value, true), R"({"a":[1,2.5],"b":{"c":"d"},"e":[],"f":{}})");
  EXPECT_EQ(FormatJson(value, false), PrettyJson(value));
}

}  // namespace
}  // namespace cairn::cli
