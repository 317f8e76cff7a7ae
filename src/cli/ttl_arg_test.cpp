#include "cli/ttl_arg.h"

#include <gtest/gtest.h>

#include "base/time_format.h"

namespace cairn::cli {
namespace {

const int64_t kNow = *ParseRfc3339Micros("2030-01-01T00:00:00Z");

TEST(ResolveTtlTest, Rfc3339PassesThroughUnchanged) {
  EXPECT_EQ(*ResolveTtl("2031-05-06T07:08:09+02:00", kNow), "2031-05-06T07:08:09+02:00");
  EXPECT_EQ(*ResolveTtl("2029-01-01T00:00:00.5Z", kNow), "2029-01-01T00:00:00.5Z");  // the server judges the past
}

TEST(ResolveTtlTest, DurationsAreAddedToNow) {
  EXPECT_EQ(*ResolveTtl("90s", kNow), "2030-01-01T00:01:30.000000Z");
  EXPECT_EQ(*ResolveTtl("30m", kNow), "2030-01-01T00:30:00.000000Z");
  EXPECT_EQ(*ResolveTtl("1h30m", kNow), "2030-01-01T01:30:00.000000Z");
  EXPECT_EQ(*ResolveTtl("7d", kNow), "2030-01-08T00:00:00.000000Z");
  EXPECT_EQ(*ResolveTtl("2w", kNow), "2030-01-15T00:00:00.000000Z");
}

TEST(ResolveTtlTest, RejectsEverythingElse) {
  for (const char* bad : {"", "0s", "10", "h", "1x", "1h 2m", "-5m", "1.5h", "99999999999999999999s", "999999999w",
                          "tomorrow", "2030-13-01T00:00:00Z"}) {
    auto ttl = ResolveTtl(bad, kNow);
    EXPECT_FALSE(ttl.ok()) << bad;
    if (!ttl.ok()) {
      EXPECT_EQ(ttl.status().code(), StatusCode::kInvalidArgument);
      EXPECT_NE(ttl.status().message().find("RFC 3339"), std::string::npos);
    }
  }
}

}  // namespace
}  // namespace cairn::cli
