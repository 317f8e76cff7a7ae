#include "model/secret_ref.h"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

namespace cairn::model {
namespace {

namespace json = boost::json;

TEST(SecretRefTest, ParsesLiteralsAndReferences) {
  auto literal = ParseSecretOrValue(json::parse(R"("abc")"), "f", 10, false);
  ASSERT_TRUE(literal.ok());
  EXPECT_FALSE(literal->is_reference());
  EXPECT_EQ(literal->value, "abc");
  auto ref = ParseSecretOrValue(json::parse(R"({"secret":"API_KEY"})"), "f", 10, false);
  ASSERT_TRUE(ref.ok());
  EXPECT_EQ(ref->secret_name, "API_KEY");
  auto prefixed = ParseSecretOrValue(json::parse(R"({"secret":"T","prefix":"Bearer "})"), "f", 10, true);
  ASSERT_TRUE(prefixed.ok());
  EXPECT_EQ(prefixed->value, "Bearer ");
  EXPECT_EQ(json::serialize(SecretOrValueToJson(*prefixed)), R"({"secret":"T","prefix":"Bearer "})");
}

TEST(SecretRefTest, BadShapesNameTheField) {
  struct Case {
    const char* json;
    const char* field;
  };
  for (const Case& c : std::vector<Case>{{R"({"secret":7})", "f.secret"},
                                         {R"({"secret":"a/b"})", "f.secret"},
                                         {R"({"secret":""})", "f.secret"},
                                         {R"({"name":"X"})", "f.name"},
                                         {R"({})", "f"},
                                         {R"({"secret":"X","prefix":"P"})", "f.prefix"},
                                         {R"(7)", "f"},
                                         {R"("a\nb")", "f"},
                                         {R"("")", "f"}}) {
    auto parsed = ParseSecretOrValue(json::parse(c.json), "f", 10, false);
    ASSERT_FALSE(parsed.ok()) << c.json;
    EXPECT_EQ(parsed.status().code(), StatusCode::kValidation) << c.json;
    EXPECT_EQ(parsed.status().field(), c.field) << c.json << ": " << parsed.status().message();
  }
}

TEST(SecretRefTest, HeadersRefuseWhatCairnSetsAndBadNames) {
  EXPECT_EQ(ParseHeaderList(json::parse(R"({"Content-Type":"x"})"), "headers").status().field(), "headers.Content-Type");
  EXPECT_EQ(ParseHeaderList(json::parse(R"({"X-Cairn-Signature":"x"})"), "headers").status().field(),
            "headers.X-Cairn-Signature");
  EXPECT_EQ(ParseHeaderList(json::parse(R"({"bad name":"x"})"), "headers").status().field(), "headers.bad name");
  EXPECT_EQ(ParseHeaderList(json::parse(R"({"A":"x","a":"y"})"), "headers").status().field(), "headers.a");
  EXPECT_EQ(ParseHeaderList(json::parse(R"({"A":{"secret":"X","extra":1}})"), "headers").status().field(), "headers.A.extra");
  auto ok = ParseHeaderList(json::parse(R"({"Authorization":{"secret":"T","prefix":"Bearer "},"X-Plain":"v"})"), "headers");
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ(json::serialize(HeaderListToJson(*ok)), R"({"Authorization":{"secret":"T","prefix":"Bearer "},"X-Plain":"v"})");
}

TEST(SecretRefTest, ResolvesAtUseAndRedactsWhatItHandsOut) {
  std::string current = "first-value";
  SecretResolver resolve = [&current](const std::string& tenant, const std::string& name) -> Result<std::string> {
    if (tenant == "acme" && name == "T") return current;
    return Status::NotFound("no such secret");
  };
  HeaderList headers = {{"Authorization", SecretOrValue{"Bearer ", "T"}}, {"X-Plain", SecretOrValue{"v", ""}}};
  SecretRedactor redact;
  auto resolved = ResolveHeaders(headers, "acme", resolve, &redact);
  ASSERT_TRUE(resolved.ok());
  EXPECT_EQ((*resolved)[0].second, "Bearer first-value");
  EXPECT_EQ((*resolved)[1].second, "v");
  EXPECT_EQ(redact("echo first-value"), "echo [secret:T]");
  current = "rotated-value";  // a rotation: the next use sees the new value
  EXPECT_EQ(ResolveHeaders(headers, "acme", resolve, nullptr)->front().second, "Bearer rotated-value");
  auto missing = ResolveHeaders(headers, "globex", resolve, nullptr);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().reason(), "secret_not_found");
  EXPECT_NE(missing.status().message().find("'T'"), std::string::npos) << missing.status().message();
  auto none = ResolveSecretOrValue(SecretOrValue{"", "T"}, "acme", nullptr, "x", nullptr);
  EXPECT_EQ(none.status().reason(), "secret_not_found");
}

}  // namespace
}  // namespace cairn::model
