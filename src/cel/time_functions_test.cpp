#include "cel/time_functions.h"

#include <gtest/gtest.h>

namespace cairn::cel {
namespace {

TEST(CelTime, ParsesAndFormatsTimestamps) {
  auto t = ParseTimestamp("2009-02-13T23:31:30.120Z");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->seconds, 1234567890);
  EXPECT_EQ(t->nanos, 120000000);
  EXPECT_EQ(FormatTimestamp(*t), "2009-02-13T23:31:30.12Z");
  EXPECT_EQ(FormatTimestamp(*ParseTimestamp("1969-12-31T23:59:59-01:00")), "1970-01-01T00:59:59Z");
  EXPECT_EQ(FormatTimestamp(*ParseTimestamp("0001-01-01T00:00:00Z")), "0001-01-01T00:00:00Z");
  EXPECT_FALSE(ParseTimestamp("2009-02-29T00:00:00Z")) << "not a leap year";
  EXPECT_FALSE(ParseTimestamp("2009-02-13 23:31:30Z"));
  EXPECT_FALSE(ParseTimestamp("2009-02-13T23:31:30"));
  EXPECT_FALSE(ParseTimestamp("0000-12-31T23:59:59Z")) << "before year 1";
}

TEST(CelTime, ParsesAndFormatsDurations) {
  EXPECT_EQ(FormatDuration(*ParseDuration("1h1m1.5s")), "3661.5s");
  EXPECT_EQ(FormatDuration(*ParseDuration("-1.5s")), "-1.5s");
  EXPECT_EQ(FormatDuration(*ParseDuration("300ms")), "0.3s");
  EXPECT_EQ(FormatDuration(*ParseDuration("1us1ns")), "0.000001001s");
  EXPECT_EQ(FormatDuration(*ParseDuration("0")), "0s");
  EXPECT_FALSE(ParseDuration("1d"));
  EXPECT_FALSE(ParseDuration("s"));
  EXPECT_FALSE(ParseDuration("10000000000s")) << "beyond int64 nanoseconds";
}

TEST(CelTime, GettersHonourFixedOffsetsAndZones) {
  Timestamp t = *ParseTimestamp("2009-02-13T23:31:30Z");
  EXPECT_EQ(TimestampField(t, TimeField::kDayOfWeek, "").int_value(), 5);
  EXPECT_EQ(TimestampField(t, TimeField::kHours, "+02:00").int_value(), 1);
  EXPECT_EQ(TimestampField(t, TimeField::kDate, "+02:00").int_value(), 14);
  EXPECT_EQ(TimestampField(t, TimeField::kDayOfYear, "").int_value(), 43);
  EXPECT_EQ(TimestampField(t, TimeField::kHours, "America/Chicago").int_value(), 17);
  EXPECT_TRUE(TimestampField(t, TimeField::kHours, "Mars/Olympus").is_error());
  EXPECT_TRUE(TimestampField(t, TimeField::kHours, "../../etc/passwd").is_error());
}

}  // namespace
}  // namespace cairn::cel
