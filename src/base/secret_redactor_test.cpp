#include "base/secret_redactor.h"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

namespace cairn {
namespace {

constexpr char kValue[] = "s3cr3t/value+with spaces&\"quotes\"";

SecretRedactor WithValue() {
  SecretRedactor redact;
  redact.AddSecret("TOKEN", kValue);
  return redact;
}

TEST(SecretRedactorTest, ReplacesTheRawValueAndItsJsonEscaping) {
  SecretRedactor redact = WithValue();
  EXPECT_EQ(redact(std::string("a ") + kValue + " b " + kValue), "a [secret:TOKEN] b [secret:TOKEN]");
  std::string json_text = boost::json::serialize(boost::json::object{{"v", kValue}});
  EXPECT_EQ(redact(json_text), R"({"v":"[secret:TOKEN]"})");
}

TEST(SecretRedactorTest, ReplacesBase64AtEveryOffsetAndBothAlphabets) {
  SecretRedactor redact = WithValue();
  for (std::string prefix : {"", "u", "us", "user:"}) {
    std::string encoded = Base64Encode(prefix + kValue + "-tail");
    std::string out = redact("Basic " + encoded);
    EXPECT_NE(out.find("[secret:TOKEN]"), std::string::npos) << prefix << ": " << out;
    // What is left of the encoding cannot be decoded back to the value: no 8 characters of the
    // value's own encoding survive.
    EXPECT_LT(out.size(), std::string("Basic ").size() + encoded.size()) << out;
  }
  std::string plain = Base64Encode(kValue);
  EXPECT_EQ(redact(plain), "[secret:TOKEN]");
  std::string url = plain;
  for (char& c : url) c = c == '+' ? '-' : c == '/' ? '_' : c;
  while (!url.empty() && url.back() == '=') url.pop_back();
  EXPECT_EQ(redact(url), "[secret:TOKEN]");
}

TEST(SecretRedactorTest, ReplacesPercentEncodings) {
  SecretRedactor redact;
  redact.AddSecret("K", "a b/c");
  EXPECT_EQ(redact("?k=a%20b%2Fc&x=a%20b%2fc&y=a+b%2Fc"), "?k=[secret:K]&x=[secret:K]&y=[secret:K]");
}

TEST(SecretRedactorTest, Base64KnownVectors) {
  EXPECT_EQ(Base64Encode(""), "");
  EXPECT_EQ(Base64Encode("f"), "Zg==");
  EXPECT_EQ(Base64Encode("fo"), "Zm8=");
  EXPECT_EQ(Base64Encode("foo"), "Zm9v");
  EXPECT_EQ(Base64Encode("foobar"), "Zm9vYmFy");
}

TEST(SecretRedactorTest, RedactsJsonValuesAndStatusesKeepingTheirShape) {
  SecretRedactor redact = WithValue();
  auto redacted = redact.RedactJson(boost::json::object{{"out", std::string("v=") + kValue}});
  ASSERT_TRUE(redacted.ok());
  EXPECT_EQ(boost::json::serialize(*redacted), R"({"out":"v=[secret:TOKEN]"})");
  Status failed = Status::NotFound(std::string("no ") + kValue).WithReason("why");
  Status out = redact.RedactStatus(failed);
  EXPECT_EQ(out.code(), StatusCode::kNotFound);
  EXPECT_EQ(out.reason(), "why");
  EXPECT_EQ(out.message(), "no [secret:TOKEN]");
}

TEST(SecretRedactorTest, AnEmptyRedactorChangesNothing) {
  SecretRedactor redact;
  redact.Add("", "x");
  EXPECT_TRUE(redact.empty());
  EXPECT_EQ(redact("anything"), "anything");
}

}  // namespace
}  // namespace cairn
