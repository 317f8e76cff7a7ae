#include "base/time_format.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

namespace cairn {
namespace {

constexpr int64_t kSecond = 1'000'000;
constexpr int64_t kExample = 1795225252LL * kSecond + 123456;  // 2026-11-21T01:40:52.123456Z

TEST(FormatRfc3339MicrosTest, SixFractionalDigitsAndZ) {
  EXPECT_EQ(FormatRfc3339Micros(kExample), "2026-11-21T01:40:52.123456Z");
  EXPECT_EQ(FormatRfc3339Micros(0), "1970-01-01T00:00:00.000000Z");
  EXPECT_EQ(FormatRfc3339Micros(1), "1970-01-01T00:00:00.000001Z");
  EXPECT_EQ(FormatRfc3339Micros(1709251199LL * kSecond + 999999), "2024-02-29T23:59:59.999999Z");
  EXPECT_EQ(FormatRfc3339Micros(951868800LL * kSecond), "2000-03-01T00:00:00.000000Z");
}

TEST(FormatRfc3339MicrosTest, BeforeTheEpoch) {
  EXPECT_EQ(FormatRfc3339Micros(-1), "1969-12-31T23:59:59.999999Z");
  EXPECT_EQ(FormatRfc3339Micros(-kSecond), "1969-12-31T23:59:59.000000Z");
}

TEST(ParseRfc3339MicrosTest, ParsesZulu) {
  EXPECT_EQ(ParseRfc3339Micros("2026-11-21T01:40:52.123456Z"), kExample);
  EXPECT_EQ(ParseRfc3339Micros("1970-01-01T00:00:00Z"), 0);
  EXPECT_EQ(ParseRfc3339Micros("2026-11-21t01:40:52.123456z"), kExample);  // lowercase t and z
  EXPECT_EQ(ParseRfc3339Micros("2026-11-21 01:40:52.123456Z"), kExample);  // space separator
}

TEST(ParseRfc3339MicrosTest, RoundTrip) {
  for (int64_t micros : {int64_t{0}, int64_t{1}, kExample, int64_t{1709251199LL * kSecond + 999999},
                         int64_t{4102444800LL * kSecond + 500000}, int64_t{-1}}) {
    std::string text = FormatRfc3339Micros(micros);
    EXPECT_EQ(ParseRfc3339Micros(text), micros) << text;
  }
}

TEST(ParseRfc3339MicrosTest, NumericOffsets) {
  EXPECT_EQ(ParseRfc3339Micros("2026-11-21T03:40:52.123456+02:00"), kExample);
  EXPECT_EQ(ParseRfc3339Micros("2026-11-20T20:10:52.123456-05:30"), kExample);
  EXPECT_EQ(ParseRfc3339Micros("2026-11-21T01:40:52.123456+00:00"), kExample);
  EXPECT_EQ(ParseRfc3339Micros("2026-11-21T01:40:52.123456-00:00"), kExample);
  // An offset that crosses midnight and the year.
  EXPECT_EQ(ParseRfc3339Micros("1970-01-01T01:00:00+02:00"), -3600 * kSecond);
}

TEST(ParseRfc3339MicrosTest, FewerOrMoreFractionalDigits) {
  int64_t whole = 1795225252LL * kSecond;
  EXPECT_EQ(ParseRfc3339Micros("2026-11-21T01:40:52Z"), whole);
  EXPECT_EQ(ParseRfc3339Micros("2026-11-21T01:40:52.1Z"), whole + 100000);
  EXPECT_EQ(ParseRfc3339Micros("2026-11-21T01:40:52.12Z"), whole + 120000);
  EXPECT_EQ(ParseRfc3339Micros("2026-11-21T01:40:52.000123Z"), whole + 123);
  EXPECT_EQ(ParseRfc3339Micros("2026-11-21T01:40:52.1234567Z"), whole + 123456);    // truncated
  EXPECT_EQ(ParseRfc3339Micros("2026-11-21T01:40:52.123456999Z"), whole + 123456);  // 9 digits, truncated
  EXPECT_EQ(ParseRfc3339Micros("2026-11-21T01:40:52.1234567891Z"), std::nullopt);   // 10 digits
  EXPECT_EQ(ParseRfc3339Micros("2026-11-21T01:40:52.Z"), std::nullopt);             // no digits
}

TEST(ParseRfc3339MicrosTest, InvalidDates) {
  for (const char* text : {"2026-02-30T00:00:00Z", "2026-02-29T00:00:00Z", "2026-13-01T00:00:00Z",
                           "2026-00-10T00:00:00Z", "2026-04-31T00:00:00Z", "2026-01-00T00:00:00Z",
                           "2026-01-01T24:00:00Z", "2026-01-01T23:60:00Z", "2026-01-01T23:59:61Z",
                           "2026-01-01T00:00:00+24:00", "2026-01-01T00:00:00+01:60"}) {
    EXPECT_EQ(ParseRfc3339Micros(text), std::nullopt) << text;
  }
  EXPECT_TRUE(ParseRfc3339Micros("2024-02-29T00:00:00Z").has_value());  // a leap year
}

TEST(ParseRfc3339MicrosTest, NothingPastTheLastFourDigitYear) {
  auto last = ParseRfc3339Micros("9999-12-31T23:59:59.999999Z");
  ASSERT_TRUE(last.has_value());
  EXPECT_EQ(*last, kLastRfc3339Micros);
  EXPECT_EQ(FormatRfc3339Micros(*last), "9999-12-31T23:59:59.999999Z");
  // A leap second or a negative offset on the last day lands in year 10000: refused rather than
  // formatted back as an earlier time.
  EXPECT_EQ(ParseRfc3339Micros("9999-12-31T23:59:60Z"), std::nullopt);
  EXPECT_EQ(ParseRfc3339Micros("9999-12-31T23:00:00-01:00"), std::nullopt);
  EXPECT_TRUE(ParseRfc3339Micros("9999-12-31T23:00:00+01:00").has_value());
  // The same at the other end: a positive offset on the first day lands in year -1.
  EXPECT_EQ(ParseRfc3339Micros("0000-01-01T00:00:00Z"), kFirstRfc3339Micros);
  EXPECT_EQ(ParseRfc3339Micros("0000-01-01T00:00:00+00:01"), std::nullopt);
}

TEST(ParseRfc3339MicrosTest, Garbage) {
  for (const char* text : {"", "now", "2026", "2026-11-21", "2026-11-21T", "2026-11-21T01:40Z", "26-11-21T01:40:52Z",
                           "2026/11/21T01:40:52Z", "2026-11-21T01:40:52Zjunk", " 2026-11-21T01:40:52Z",
                           "2026-11-21T01:40:52Z ", "2026-1-21T01:40:52Z", "2026-11-21X01:40:52Z",
                           "2026-11-21T01:40:52+0200", "2026-11-21T01:40:52+02", "+2026-11-21T01:40:52Z",
                           "2026-11-21T01:40:52.12a3Z", "1795225252"}) {
    EXPECT_EQ(ParseRfc3339Micros(text), std::nullopt) << text;
  }
}

TEST(ParseRfc3339MicrosTest, MissingZone) {
  EXPECT_EQ(ParseRfc3339Micros("2026-11-21T01:40:52"), std::nullopt);
  EXPECT_EQ(ParseRfc3339Micros("2026-11-21T01:40:52.123456"), std::nullopt);
}

}  // namespace
}  // namespace cairn
